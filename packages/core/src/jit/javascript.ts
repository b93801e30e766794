/**
 * @file Primitives as JavaScript source: the emitter that turns a rule into code.
 *
 * Reverse rules are written against an emitter (ops/emitter.ts); run with this one, a
 * rule returns the source of an expression computing its contribution. So compiled
 * code uses the very rules of scalar.ts, and the same floating-point operations in the
 * same order as the numeric emitter: the same numbers, to the last bit. Arithmetic is
 * written with JavaScript's operators, Math's functions by name; any other kernel is
 * called as `K[code]`, the kernel table the generated function is given.
 */
import { BINARY_NAMES, binaryOps, UNARY_NAMES, unaryOps, type Emitter, type PredicateName } from "@wengert/ops";
import { CODE } from "../trace/opcodes.js";

/** A number as a JavaScript literal that reads back as the same double (−0 included). */
export function literal(c: number): string {
  if (Object.is(c, -0)) return "(-0)";
  return c < 0 ? `(${c})` : String(c);
}

/** An identifier, or one array element with a plain index (`v[3+7*r0]`): safe to repeat. */
const SIMPLE = /^(?:[A-Za-z_$][\w$]*(?:\[[\w$+\-*]*\])?|\d[\w.+-]*|\(-?[\w.+-]+\))$/;

const INFIX = { add: "+", sub: "-", mul: "*", div: "/" } as const;

/** The emitter whose values are JavaScript expressions. */
export const javascript: Emitter<string> = (() => {
  const e: Record<string, unknown> = { lit: literal };
  for (const name of UNARY_NAMES) {
    const kernel = unaryOps[name].forward;
    const byName = (Math as unknown as Record<string, unknown>)[name] === kernel;
    e[name] =
      name === "neg"
        ? (x: string) => `(-${x})`
        : name === "square"
          ? (x: string) => (SIMPLE.test(x) ? `(${x} * ${x})` : `K[${CODE.square}](${x}, 0)`)
          : byName
            ? (x: string) => `Math.${name}(${x})`
            : (x: string) => `K[${CODE[name]}](${x}, 0)`;
  }
  for (const name of BINARY_NAMES) {
    const kernel = binaryOps[name].forward;
    const byName = (Math as unknown as Record<string, unknown>)[name] === kernel;
    e[name] =
      name in INFIX
        ? (a: string, b: string) => `(${a} ${INFIX[name as keyof typeof INFIX]} ${b})`
        : byName
          ? (a: string, b: string) => `Math.${name}(${a}, ${b})`
          : (a: string, b: string) => `K[${CODE[name]}](${a}, ${b})`;
  }
  return e as Emitter<string>;
})();

/** The predicates as JavaScript operators (the same tests as ops/predicates.ts). */
export const COMPARISON: { readonly [K in PredicateName]: string } = { lt: "<", le: "<=", gt: ">", ge: ">=", eq: "===", ne: "!==" };
