/**
 * @file Forward mode on trace terms: `J·v` by one forward sweep.
 *
 * Each variable gets a tangent (a sink variable, or the symbolic zero), computed from
 * its arguments' tangents by the primitive's tangent rule, written with primitives like
 * the reverse rules, so forward mode nests under `rd` and `rd` under it. Scalar
 * primitives need no rule of their own: their reverse rule with the cotangent set to an
 * argument's tangent is that argument's contribution (see TangentRule in @wengert/ops);
 * on tensors, elementwise, a contribution from a broadcast argument is broadcast to the
 * output. Tensor primitives declare their tangent rules.
 */
import { broadcastDims, sameDims } from "@wengert/ops";
import { CODE, FIRST_PRIMITIVE, INPUT, IS_TENSOR_OP, primitiveOf, scalarSpec, tensorSpec } from "../trace/opcodes.js";
import { emitterFor } from "../trace/emitter.js";
import type { Trace } from "../trace/tracer.js";
import type { TraceTerm } from "../trace/term.js";
import { activity, liveness, place, type Emitted, type Placement } from "./place.js";
import { scanTangents } from "./scan-tangent.js";
import { nestedScanTangents, withTangentResiduals } from "./scan-tangent-nested.js";
import { keepsScans, unrolled } from "./unroll.js";
import { hasScans, scanCodes, type ScanParams } from "../trace/scan-ops.js";

const ADD = CODE.add;

/** Emit the tangents of C's outputs given `tangents` of its inputs (by input index). */
export function pushforward(term: TraceTerm, sink: Trace, tangents: readonly number[], placement: Placement | null): Emitted {
  // emitted where it will be differentiated again: the loops written out (unroll.ts), but for
  // scans whose forward sweep can be scans again (scan-tangent-nested.ts)
  const nest = stackedIn(term) ? undefined : (p: ScanParams) => withTangentResiduals(p, pushforward);
  ({ term, placement } = unrolled(term, placement, sink, nest));
  const tape = term.tape;
  const { op, a, x, length: n } = tape;
  const at = place(term, sink, placement);
  const active = activity(term);
  const live = liveness(term);
  const rule = tangentRule(term, sink, at);

  // dt[i]: the sink variable holding v_i's tangent; -1 is the symbolic zero.
  const dt = new Int32Array(n).fill(-1);
  // at the outermost level (or into a trace only evaluated), a scan's tangents are a scan (scan-tangent.ts)
  // and where it will be differentiated again, a scan kept is pushed forward as scans (scan-tangent-nested.ts)
  const scans = keepsScans(term, sink, placement) ? scanTangents(term, sink, at, pushforward) : nestedScanTangents(term, sink, at, pushforward);
  for (let i = 0; i < n; i++) {
    if (op[i] === INPUT) {
      dt[i] = tangents[a[i]];
      continue;
    }
    if (op[i] < FIRST_PRIMITIVE || !active[i] || !live[i]) continue;
    if (scans !== null && scans.at(i, dt)) continue;
    if (sink.checksNaN()) sink.context = `the tangent rule of ${primitiveOf(op[i]).name} (for v${i})`;
    dt[i] = rule(i, dt);
  }
  sink.context = "";
  const e = emitterFor(sink);
  return {
    outputs: term.output.atoms.map((v) => at[v]),
    results: term.output.atoms.map((v) => (dt[v] >= 0 ? dt[v] : x[v] === 0 ? sink.constant(0) : e.zeros(tape.dims(v)))),
    present: term.output.atoms.map((v) => dt[v] >= 0),
  };
}

/**
 * The tangent rule of instruction i (a primitive) of a term placed at `at` in `sink`:
 * from its arguments' tangents in dt (sink variables, -1 the symbolic zero), the sink
 * variable of its tangent, or -1 where it is the symbolic zero.
 */
export function tangentRule(term: TraceTerm, sink: Trace, at: Int32Array): (i: number, dt: Int32Array) => number {
  const tape = term.tape;
  const { op, a, b, x } = tape;
  const e = emitterFor(sink);
  const sum = (x: number | null, y: number | null): number => (x === null || x < 0 ? (y ?? -1) : y === null || y < 0 ? x : sink.record(ADD, x, y));
  return (i, dt) => {
    if (IS_TENSOR_OP[op[i]]) {
      const args = tape.args(i);
      const ts = args.map((v) => (dt[v] < 0 ? null : dt[v]));
      if (ts.every((t) => t === null)) return -1;
      return tensorSpec(op[i]).tangent(e, args.map((v) => at[v]), at[i], ts, tape.params(i)) ?? -1;
    }
    const spec = scalarSpec(op[i]);
    const ta = dt[a[i]] < 0 ? null : dt[a[i]];
    let t: number;
    if (spec.arity === 1) {
      if (ta === null) return -1;
      t = (spec.tangent ? spec.tangent(e, [at[a[i]]], at[i], [ta]) : spec.reverse(e, at[a[i]], at[i], ta)) ?? -1;
    } else {
      const tb = dt[b[i]] < 0 ? null : dt[b[i]];
      if (ta === null && tb === null) return -1;
      if (spec.tangent) t = spec.tangent(e, [at[a[i]], at[b[i]]], at[i], [ta, tb]) ?? -1;
      else {
        const da = ta === null ? null : spec.reverse[0](e, at[a[i]], at[b[i]], at[i], ta);
        const db = tb === null ? null : spec.reverse[1](e, at[a[i]], at[b[i]], at[i], tb);
        t = sum(da, db);
      }
    }
    if (x[i] !== 0 && t >= 0) {
      // elementwise on tensors: a broadcast argument's contribution has its own dims
      const want = tape.dims(i);
      const got = sink.tape.dims(t);
      if (!sameDims(got, want)) {
        const d = broadcastDims(got, want);
        if (typeof d !== "string") t = e.broadcastTo(t, want);
      }
    }
    return t;
  };
}

/**
 * Whether the term holds a stacked scan (a reverse sweep emitted as scans): it reads its
 * forward scan's packed value as laid out, so that scan's layout stays as it is (written out).
 */
function stackedIn(term: TraceTerm): boolean {
  const tape = term.tape;
  if (!hasScans(tape)) return false;
  const code = scanCodes().scan;
  for (let i = 0; i < tape.length; i++) if (tape.op[i] === code && (tape.params(i) as ScanParams).stacked !== undefined) return true;
  return false;
}
