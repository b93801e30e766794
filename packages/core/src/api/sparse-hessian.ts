/**
 * @file A Hessian of reals inside a trace (jit's, vmap's, an rd's): its columns emitted
 * by basis-columns.ts, each only what its input reaches, on one shared sweep along 0.
 *
 * Column i of the Hessian is the tangent of grad's term along e_i (forward over reverse).
 * One sweep per column emits the whole tangent term n times, n² instructions for
 * rosenbrock, most of them 0·c; basis-columns.ts emits the sweep along 0 once and in
 * each column the few instructions x_i reaches, the same numbers to the bit (NaN·0 and
 * the sign of zero included): O(n) instructions, and a compiled Hessian whose entries
 * are mostly one value per row (jit/forward.ts copies those rows from templates).
 */
import { basisColumns } from "../diff/basis-columns.js";
import { countLeaves, leafShapes, unflatten } from "../structure.js";
import { Real } from "../trace/traced.js";
import type { TracedFn } from "./tracing.js";
import { emitTransformed, isOutermost } from "./transform.js";

/**
 * The Hessian (rows of columns, jacfwd's layout) from the trace of `x ↦ grad f(x)` of a
 * function of reals inside an enclosing trace; null where it is not this file's to do
 * (tensors, the outermost level: jacobian.ts computes those; checkNaN, asked by hessian or
 * by the trace it emits into, whose message names the tangent rule and column where a NaN
 * first appears: one sweep per column, as before).
 */
export function sparseHessian(traced: TracedFn): unknown {
  const { term } = traced;
  const xs = term.params[0].shape;
  const out = term.output.shape;
  const reals = leafShapes(xs).every((s) => s.kind === "real") && leafShapes(out).every((s) => s.kind === "real");
  if (!reals || term.tape.tensorCount > 0 || isOutermost(traced, [])) return null;
  if (traced.trace.settings.checkNaN || traced.point.some((p) => p instanceof Real && p.trace.checksNaN())) return null;
  const n = countLeaves(xs);
  const m = countLeaves(out);
  const { results } = emitTransformed(traced, basisColumns, {
    extra: { name: "*", shape: { kind: "tuple", items: [] }, leaves: [] },
    resultShape: { kind: "tuple", items: Array.from({ length: n }, () => out) },
    keep: "trace",
  });
  // result k·m + j is ∂(grad f)_j/∂x_k: row j of the Hessian
  const rows = Array.from({ length: m }, (_, j) => unflatten(xs, Array.from({ length: n }, (_, k) => results[k * m + j])));
  return unflatten(out, rows);
}
