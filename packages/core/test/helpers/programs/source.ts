/**
 * @file Random programs (expr.ts) as text of the paper's language: the interpolation
 * tests run this text and compare it with run.ts on the same program, and every property
 * test names a failing program by it. Every compound term is parenthesized; a loop is a
 * local recursive function (the language's only loop) of the whole scope.
 */
import type { Expr, Program } from "./expr.js";
import { lit } from "./ops.js";

const SYMBOL = { lt: "<", le: "<=", gt: ">", ge: ">=" } as const;

/** rep(v, n) = sin(rep(v, n − 1)) + v / 2, as run.ts computes it. */
const REP = "letrec rep(v: real, n: real): real = if n < 0.5 then v else sin(rep(v, n - 1)) + 0.5 * v in\n";

/** The text of `e` in a scope whose entries are named `names`. */
export function show(e: Expr, names: readonly string[]): string {
  const n = names.length;
  const s = (x: Expr, more: readonly string[] = []) => show(x, [...names, ...more]);
  switch (e.k) {
    case "var":
      return names[((e.i % n) + n) % n];
    case "const":
      return `(${lit(e.c)})`;
    case "op":
      return e.op.text(e.args.map((a) => s(a)));
    case "let":
      return `(let v${n} = ${s(e.a)} in ${s(e.body, [`v${n}`])})`;
    case "proj":
      return `${e.first ? "fst" : "snd"}(<${s(e.a)}, ${s(e.b)}>)`;
    case "tuple":
      return `(let <v${n}, w${n}> = <${s(e.a)}, ${s(e.b)}> in ${s(e.body, [`v${n}`, `w${n}`])})`;
    case "if": {
      const cond = e.infix ? `${s(e.l)} ${SYMBOL[e.pred]} ${s(e.r)}` : `${e.pred}(${s(e.l)}, ${s(e.r)})`;
      return `(if ${cond} then ${s(e.t)} else ${s(e.e)})`;
    }
    case "for": {
      // functions have no free variables (Fig. 1): the loop takes the whole scope as parameters
      const [loop, acc, next, count] = [`loop${n}`, `v${n}`, `w${n}`, `c${n}`];
      const params = [...names, acc, count].map((x) => `${x}: real`).join(", ");
      const exit = e.exit === null ? "" : `if ${s(e.exit, [next])} < 0 then ${next} else `;
      const step = `(let ${next} = ${s(e.body, [acc])} in ${exit}${loop}(${[...names, next].join(", ")}, ${count} - 1))`;
      return `(letrec ${loop}(${params}): real = if ${count} < 0.5 then ${acc} else ${step} in ${loop}(${[...names, s(e.init)].join(", ")}, ${e.n}))`;
    }
    case "call":
      return `h(${s(e.a)}, ${s(e.b)})`;
    case "rep":
      return `rep(${s(e.a)}, ${e.n})`;
    case "grad":
      return `grad_{${s(e.at)}}(y${n}: real. ${s(e.body, [`y${n}`])})`;
    case "rd":
      return `(${s(e.seed)}).rd_{${s(e.at)}}(y${n}. ${s(e.body, [`y${n}`])})`;
    case "fd":
      return `(${s(e.dir)}).fd_{${s(e.at)}}(y${n}: real. ${s(e.body, [`y${n}`])})`;
  }
}

/** The names of a program's first m inputs. */
export const inputNames = (m: number): string[] => Array.from({ length: m }, (_, i) => `x${i}`);

/** The definitions in front of a program's outputs (h when it has one, and rep). */
export const prelude = (p: Program): string => (p.h === null ? "" : `letrec h(u: real, w: real): real = ${show(p.h, ["u", "w"])} in\n`) + REP;

/** The steps and outputs' text over inputs `names`: lets, then one term or a tuple of them. */
export function body(p: Program, names: readonly string[]): string {
  const scope = [...names];
  const lets = p.steps.map((e) => {
    const text = `let v${scope.length} = ${show(e, scope)} in `;
    scope.push(`v${scope.length}`);
    return text;
  });
  const outs = p.outputs.map((e) => show(e, scope));
  return lets.join("") + (outs.length === 1 ? outs[0] : `<${outs.join(", ")}>`);
}

/** The whole program as a term with free variables `names` (its prelude and its outputs). */
export const source = (p: Program, names: readonly string[]): string => `${prelude(p)}${body(p, names)}`;
