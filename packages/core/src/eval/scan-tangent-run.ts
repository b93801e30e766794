/**
 * @file A scanTangent instruction's value for a body of reals: the forward sweep of a scan
 * (diff/scan-tangent.ts) run as compiled code, each run of iterations sharing a pattern of
 * present tangents one call of that pattern's compiled block (jit/scan-code.ts), the
 * carries and their tangents in locals. The same statements as the interpreted sweep, so
 * the same numbers to the last bit.
 */
import type { Buf } from "@wengert/ops";
import { flatXs, xArgCount, type ScanParams } from "../trace/scan-ops.js";
import type { Runs } from "../diff/runs.js";
import { byStructure, compiledTangent, type CompiledTangent, type TangentBlock } from "../jit/scan-code.js";

/** What the forward sweep of a scan was planned to be (diff/scan-tangent.ts planTangent). */
export interface TangentSweep {
  readonly patterns: readonly TangentBlock[];
  readonly at: Runs;
  /** Offsets of the present tangents in the result: per written slot (r·|obs| + s), per carry leaf; -1 absent. */
  readonly obsOffset: Int32Array;
  readonly carryOffset: Int32Array;
  readonly length: number;
}

/** Counters for tests: compiled block calls made by forward sweeps since set. */
export const tangentStats = { calls: 0 };

/**
 * The scanTangent's value: the scan's arguments, then the tangents of those in `hasArg`,
 * give the present tangents packed as the plan lays them out.
 */
export function tangentReals(p: ScanParams, plan: TangentSweep, hasArg: Uint8Array, values: readonly Buf[]): Float64Array {
  const { body, n, layout } = p;
  const { nc, nx, np } = body;
  const nobs = layout.obs.length;
  const xArgs = xArgCount(p);
  const ofArg: (Buf | null)[] = new Array<Buf | null>(hasArg.length).fill(null);
  let next = hasArg.length;
  for (let a = 0; a < hasArg.length; a++) if (hasArg[a]) ofArg[a] = values[next++];
  const P = Float64Array.from(values.slice(nc + xArgs, nc + xArgs + np) as number[]);
  const PT = Float64Array.from({ length: np }, (_, q) => (ofArg[nc + xArgs + q] as number | null) ?? 0);
  // x and its tangents where they are: a stacked scan's in its packed value and that value's tangent, else one argument per leaf and iteration
  let X: Float64Array;
  let XT: Float64Array;
  let XA: Int32Array;
  let XS: number;
  if (p.stacked !== undefined) {
    X = values[nc] as Float64Array;
    XT = (ofArg[nc] as Float64Array | null) ?? new Float64Array(0);
    XA = p.stacked.at;
    XS = p.stacked.step;
  } else {
    X = flatXs(p, values);
    XT = new Float64Array(n * nx);
    for (let e = 0; e < n * nx; e++) XT[e] = (ofArg[nc + e] as number | null) ?? 0;
    XA = Int32Array.from({ length: nx }, (_, l) => l);
    XS = nx;
  }
  // the carries, then their tangents (an absent one is read by no pattern)
  const st = new Float64Array(2 * nc);
  for (let k = 0; k < nc; k++) {
    st[k] = values[k] as number;
    st[nc + k] = (ofArg[k] as number | null) ?? 0;
  }
  const out = new Float64Array(plan.length);
  const obs = layout.obs.join(",");
  for (let r = 0; r < n; ) {
    const t = plan.patterns[plan.at.at(r)];
    const end = Math.min(n, plan.at.end(r) + 1);
    // made once per body structure and pattern: a body traced again by a later call runs the same code
    const run: CompiledTangent = byStructure(body, `T${obs}|${t.ins.join(",")}`, () => compiledTangent(t, body, nobs));
    run(r, end, st, X, P, XT, XA, XS, PT, out, plan.obsOffset);
    tangentStats.calls++;
    r = end;
  }
  for (let k = 0; k < nc; k++) if (plan.carryOffset[k] >= 0) out[plan.carryOffset[k]] = st[nc + k];
  return out;
}
