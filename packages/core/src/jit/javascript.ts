/**
 * @file Primitives as JavaScript source: the emitter that turns a rule into code.
 *
 * Reverse rules are written against an emitter (ops/scalar.ts); run with this one, a
 * rule returns the source of an expression computing its contribution. So compiled
 * code uses the very rules of scalar.ts, and the same floating-point operations in the
 * same order as the numeric emitter: the same numbers, to the last bit. Arithmetic is
 * written with JavaScript's operators, Math's functions by name; any other kernel is
 * called as `K[code]`, the kernel table the generated function is given.
 */
import { BINARY_NAMES, UNARY_NAMES, type PredicateName } from "@wengert/ops";
import type { CodeEmitter } from "../trace/lifted.js";
import { CODE, FIRST_PRIMITIVE, primitiveOf, scalarSpec } from "../trace/opcodes.js";

/** A number as a JavaScript literal that reads back as the same double (−0 included). */
export function literal(c: number): string {
  if (Object.is(c, -0)) return "(-0)";
  return c < 0 ? `(${c})` : String(c);
}

/** An identifier, or one array element with a plain index (`v[3+7*r0]`): safe to repeat. */
const SIMPLE = /^(?:[A-Za-z_$][\w$]*(?:\[[\w$+\-*]*\])?|\d[\w.+-]*|\(-?[\w.+-]+\))$/;

const INFIX = { add: "+", sub: "-", mul: "*", div: "/" } as const;

/** The source of primitive `code` applied to the expressions a (and b, for a binary one). */
function sourceOf(code: number): (a: string, b: string) => string {
  const { name } = primitiveOf(code);
  const spec = scalarSpec(code);
  const byName = (Math as unknown as Record<string, unknown>)[name] === spec.forward;
  if (spec.arity === 1) {
    if (code === CODE.neg) return (x) => `(-${x})`;
    if (code === CODE.square) return (x) => (SIMPLE.test(x) ? `(${x} * ${x})` : `K[${code}](${x}, 0)`);
    return byName ? (x) => `Math.${name}(${x})` : (x) => `K[${code}](${x}, 0)`;
  }
  if (name in INFIX) return (a, b) => `(${a} ${INFIX[name as keyof typeof INFIX]} ${b})`;
  return byName ? (a, b) => `Math.${name}(${a}, ${b})` : (a, b) => `K[${code}](${a}, ${b})`;
}

const sources: ((a: string, b: string) => string)[] = [];

/** The emitter whose values are JavaScript expressions; `apply` covers user primitives (by their kernels, `K[code]`). */
export const javascript: CodeEmitter<string> = (() => {
  const apply = (code: number, a: string, b: string): string => (sources[code] ??= sourceOf(code))(a, b);
  const e: Record<string, unknown> = { lit: literal, apply, context: "compiled code (compileGrad)" };
  for (const name of UNARY_NAMES) e[name] = (x: string) => apply(CODE[name], x, x);
  for (const name of BINARY_NAMES) e[name] = (a: string, b: string) => apply(CODE[name], a, b);
  return e as CodeEmitter<string>;
})();

/**
 * The source of a reverse sweep written out (a function `name(params)` that ends in `from`):
 * from instruction `from` down, past those without a cotangent (`has[i]` 0) and those
 * that are no primitive, a `switch` with one case per primitive the sweep writes out; it
 * returns the first instruction it has no case for (a user primitive's), -1 at the end.
 * `head` declares `op`, `a`, `b` and what the cases read; each case sees `i`, its
 * cotangent `c` (the expression `ct`), and the arguments `x`, `y`.
 */
export function reverseSwitch(o: { name: string; params: string; head: readonly string[]; has: string; ct: string; cases: readonly string[] }): string {
  return `
return function ${o.name}(${o.params}) {
  ${o.head.join("\n  ")}
  for (let i = from; i >= 0; i--) {
    if (!${o.has}[i] || op[i] < ${FIRST_PRIMITIVE}) continue;
    const c = ${o.ct};
    const x = a[i];
    const y = b[i];
    switch (op[i]) {
      ${o.cases.join("\n      ")}
      default:
        return i;
    }
  }
  return -1;
};`;
}

/** The predicates as JavaScript operators (the same tests as ops/predicates.ts). */
export const COMPARISON: { readonly [K in PredicateName]: string } = { lt: "<", le: "<=", gt: ">", ge: ">=", eq: "===", ne: "!==" };

let codeAllowed: boolean | undefined;

/**
 * Whether code may be made at run time here: a page's Content-Security-Policy without
 * 'unsafe-eval' makes `new Function` throw an EvalError, and then
 * wengert runs its interpreted paths instead (the same numbers).
 */
export function mayMakeCode(): boolean {
  if (codeAllowed === undefined) {
    try {
      codeAllowed = typeof new Function("") === "function";
    } catch {
      codeAllowed = false;
    }
  }
  return codeAllowed;
}

/**
 * Functions made from generated source, kept by their source: a term traced again by a later
 * call has the same code. Bounded (cleared at `limit`): a program that makes ever new code
 * compiles it again rather than keeping all of it.
 */
export function codeCache<T>(limit = 256): (source: string, make: () => T) => T {
  const made = new Map<string, T>();
  return (source, make) => {
    let f = made.get(source);
    if (f === undefined) {
      if (made.size >= limit) made.clear();
      made.set(source, (f = make()));
    }
    return f;
  };
}
