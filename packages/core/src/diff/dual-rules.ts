/**
 * @file hvp's reverse sweep over the built-in primitives, written out as code from the
 * primitive table: each reverse rule run on dual numbers (dual.ts) with no slot per
 * temporary.
 *
 * hvp-sweep.ts runs each reverse rule with the dual emitter, which keeps every
 * temporary dual in a slot of its columns. Written out, a rule's temporaries are local
 * variables instead, and the dispatch is one switch in the sweep's loop. The code is
 * the rule itself, run once with an emitter whose values are JavaScript names of duals
 * (value, tangent, kind): each primitive it calls becomes a call of `unaryDual` or
 * `binaryHeld`, the functions the dual emitter computes with, in the order the rule
 * calls them, so the numbers are the dual emitter's, to the bit. Where no code may be
 * made (mayMakeCode), every rule runs through the dual emitter.
 */
import { BINARY_NAMES, binaryOps, UNARY_NAMES, unaryOps, type Emitter } from "@wengert/ops";
import { CODE, FIRST_PRIMITIVE } from "../trace/opcodes.js";
import { literal, mayMakeCode, reverseSwitch } from "../jit/javascript.js";
import { binaryHeld, held, LITERAL, unaryDual, type DualColumns } from "./dual.js";

/** What a sweep over C with duals in `d` gives the written-out rules. */
export interface DualSweep {
  readonly op: ArrayLike<number>;
  readonly a: ArrayLike<number>;
  readonly b: ArrayLike<number>;
  /** C's length: the cotangent of variable u is in slot n + u. */
  readonly n: number;
  readonly d: DualColumns;
  readonly active: ArrayLike<number>;
  readonly hasCt: ArrayLike<number>;
  /** Add the dual (v, t, k) to u's cotangent (if u is active). */
  readonly accumulate: (u: number, v: number, t: number, k: number) => void;
}

/**
 * Run the reverse rules from instruction `from` down for every built-in scalar
 * primitive; returns the first instruction whose rule it does not write (a user
 * primitive's, or every one where no code may be made), or -1 at the end.
 */
export type DualRules = (s: DualSweep, from: number) => number;

export const dualRules: DualRules = mayMakeCode() ? writeDualRules() : firstPrimitive;

function firstPrimitive(s: DualSweep, from: number): number {
  for (let i = from; i >= 0; i--) if (s.hasCt[i] && s.op[i] >= FIRST_PRIMITIVE) return i;
  return -1;
}

/** A dual as the source of its three parts. */
interface Dual {
  readonly v: string;
  readonly t: string;
  readonly k: string;
}

/** The dual in slot `s` (an expression), read from the columns. */
function slot(s: string): Dual {
  return { v: `dv[${s}]`, t: `dt[${s}]`, k: `dk[${s}]` };
}

/**
 * The emitter whose values are duals in local variables: each primitive appends to
 * `lines` the statements computing it (into dual.ts's `held`, then into fresh locals).
 */
function dualSource(lines: string[]): Emitter<Dual> {
  let count = 0;
  const fresh = (call: string): Dual => {
    const j = count++;
    lines.push(`${call};`, `const v${j} = held.v, t${j} = held.t, k${j} = held.k;`);
    return { v: `v${j}`, t: `t${j}`, k: `k${j}` };
  };
  const e: Record<string, unknown> = { lit: (c: number): Dual => ({ v: literal(c), t: "0", k: String(LITERAL) }) };
  for (const name of UNARY_NAMES) e[name] = (x: Dual) => fresh(`unaryDual(${CODE[name]}, ${x.v}, ${x.t}, ${x.k})`);
  for (const name of BINARY_NAMES) e[name] = (a: Dual, b: Dual) => fresh(`binaryHeld(${CODE[name]}, ${a.v}, ${a.t}, ${a.k}, ${b.v}, ${b.t}, ${b.k})`);
  return e as Emitter<Dual>;
}

/** One rule's contribution to `u`, computed and added where u is active; nothing for a symbolic zero. */
function contribution(u: string, rule: (e: Emitter<Dual>) => Dual | null): string {
  const lines: string[] = [];
  const c = rule(dualSource(lines));
  if (c === null) return "";
  return `if (active[${u}]) {\n          ${[...lines, `acc(${u}, ${c.v}, ${c.t}, ${c.k});`].join("\n          ")}\n        }`;
}

function writeDualRules(): DualRules {
  const [x, y, out, ct] = [slot("x"), slot("y"), slot("i"), slot("c")];
  const cases: string[] = [];
  for (const name of UNARY_NAMES) {
    const rule = unaryOps[name].reverse;
    cases.push(`case ${CODE[name]}: { // ${name}\n        ${contribution("x", (e) => rule(e, x, out, ct))}\n        continue;\n      }`);
  }
  for (const name of BINARY_NAMES) {
    const [rx, ry] = binaryOps[name].reverse;
    const body = [contribution("x", (e) => rx(e, x, y, out, ct)), contribution("y", (e) => ry(e, x, y, out, ct))];
    cases.push(`case ${CODE[name]}: { // ${name}\n        ${body.join("\n        ")}\n        continue;\n      }`);
  }
  const source = reverseSwitch({
    name: "dualRules",
    params: "s, from",
    head: [
      "const { op, a, b, n, active, hasCt } = s;",
      "const acc = s.accumulate;",
      "// the columns stay where they are: nothing here adds a slot",
      "const dv = s.d.val, dt = s.d.tan, dk = s.d.kind;",
    ],
    has: "hasCt",
    ct: "n + i",
    cases,
  });
  return new Function("held", "unaryDual", "binaryHeld", source)(held, unaryDual, binaryHeld) as DualRules;
}
