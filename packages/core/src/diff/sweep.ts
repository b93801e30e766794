/**
 * @file The reverse sweep on numbers: `W.R_V(x. C)` evaluated without being built.
 *
 * At the outermost `rd`, when nothing will inspect the derivative term, building it
 * only to evaluate it at once is wasted work. This runs the same rules in the same
 * order as differentiate.ts, with the numeric emitter (kernels on numbers) in place of
 * a symbolic one, over the values recorded while tracing: the derivative term's value,
 * with no instruction emitted. Tests hold it equal to evaluating the built term.
 * For terms of reals only (`tape.tensorCount === 0`); tensors go through
 * differentiate.ts, whose sink evaluates as it emits.
 */
import { numeric } from "@wengert/ops";
import { NaNError } from "../errors.js";
import { ARITY, FIRST_PRIMITIVE, INPUT, primitiveOf, scalarSpec } from "../trace/opcodes.js";
import type { TraceTerm } from "../trace/term.js";
import { activity } from "./place.js";


/**
 * The cotangents of C's inputs for output cotangents `seeds`, as numbers. With
 * `checkNaN`, the first rule whose contribution is NaN or infinite is named.
 */
export function reverseSweep(term: TraceTerm, seeds: readonly number[], checkNaN: { caller: string } | null): number[] {
  const { op, a, b, val, length: n } = term.tape;
  const active = activity(term);
  const ct = new Float64Array(n);
  const has = new Uint8Array(n);
  const accumulate = (v: number, c: number | null, i: number): void => {
    if (c === null || !active[v]) return;
    if (checkNaN && !Number.isFinite(c)) {
      throw new NaNError(
        `${checkNaN.caller}: checkNaN: the reverse rule of ${primitiveOf(op[i]).name} (for v${i}) gave ${c} for its argument v${v} ` +
          `(argument values ${[val[a[i]], val[b[i]]].slice(0, ARITY[op[i]]).join(", ")}; inputs: real).`,
      );
    }
    if (has[v]) ct[v] += c;
    else {
      ct[v] = c;
      has[v] = 1;
    }
  };
  term.output.atoms.forEach((v, j) => accumulate(v, seeds[j], v));
  for (let i = n - 1; i >= 0; i--) {
    if (!has[i] || op[i] < FIRST_PRIMITIVE) continue;
    const spec = scalarSpec(op[i]);
    const c = ct[i];
    if (spec.arity === 1) {
      accumulate(a[i], spec.reverse(numeric, val[a[i]], val[i], c), i);
    } else {
      if (active[a[i]]) accumulate(a[i], spec.reverse[0](numeric, val[a[i]], val[b[i]], val[i], c), i);
      if (active[b[i]]) accumulate(b[i], spec.reverse[1](numeric, val[a[i]], val[b[i]], val[i], c), i);
    }
  }
  const results: number[] = [];
  for (let i = 0; i < n; i++) if (op[i] === INPUT) results[a[i]] = has[i] ? ct[i] : 0;
  return results;
}
