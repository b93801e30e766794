/**
 * @file The forward sweep on numbers: `J·v` evaluated without building its term.
 *
 * What sweep.ts is to differentiate.ts, this is to pushforward.ts: at the outermost
 * `jvp` (and so `hvp`, `hessian`, `jacfwd`), when nothing will inspect the tangent term,
 * the same tangent rules run with the numeric emitter over the values recorded while
 * tracing. For terms of reals only; tests hold it equal to the symbolic sweep.
 */
import { numeric } from "@wengert/ops";
import { FIRST_PRIMITIVE, INPUT, scalarSpec } from "../trace/opcodes.js";
import type { TraceTerm } from "../trace/term.js";

/** The tangents of C's outputs for input tangents `tangents` (by input index). */
export function tangentSweep(term: TraceTerm, tangents: readonly number[]): number[] {
  const { op, a, b, val, length: n } = term.tape;
  // dt[i]: v_i's tangent; has[i]: whether it is nonzero symbolically (0 otherwise)
  const dt = new Float64Array(n);
  const has = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const code = op[i];
    if (code === INPUT) {
      dt[i] = tangents[a[i]];
      has[i] = 1;
      continue;
    }
    if (code < FIRST_PRIMITIVE) continue;
    const spec = scalarSpec(code);
    if (spec.arity === 1) {
      if (!has[a[i]]) continue;
      const t = spec.tangent ? spec.tangent(numeric, [val[a[i]]], val[i], [dt[a[i]]]) : spec.reverse(numeric, val[a[i]], val[i], dt[a[i]]);
      if (t !== null) {
        dt[i] = t;
        has[i] = 1;
      }
      continue;
    }
    const ha = has[a[i]];
    const hb = has[b[i]];
    if (!ha && !hb) continue;
    let t: number | null;
    if (spec.tangent) t = spec.tangent(numeric, [val[a[i]], val[b[i]]], val[i], [ha ? dt[a[i]] : null, hb ? dt[b[i]] : null]);
    else {
      const da = ha ? spec.reverse[0](numeric, val[a[i]], val[b[i]], val[i], dt[a[i]]) : null;
      const db = hb ? spec.reverse[1](numeric, val[a[i]], val[b[i]], val[i], dt[b[i]]) : null;
      t = da === null ? db : db === null ? da : da + db;
    }
    if (t !== null) {
      dt[i] = t;
      has[i] = 1;
    }
  }
  return term.output.atoms.map((v) => (has[v] ? dt[v] : 0));
}
