/**
 * @file A primitive's arguments over a batch of lanes, as its batching rule (ops.ts's
 * `batch`, vmap's analogue of JAX's batching rules) sees them: a lane axis in front of
 * each batched argument, one value for every lane otherwise.
 *
 * A rule computes every lane at once with the primitive's own kernel on the lanes side
 * by side (the lane axis one more batch axis, the others shifted by one), so that each
 * lane's elements are the numbers a call per lane computes: kernels combine a result
 * element's operands in an order that does not depend on the axes before it (gemm.ts,
 * reduce.ts). The helpers here place the lane axis.
 */
import * as K from "./kernels.js";
import type { Dims } from "./dims.js";
import type { Buf } from "./op.js";

/** A primitive's arguments over `lanes` lanes. */
export interface LaneArgs {
  readonly lanes: number;
  /** A batched argument: its lanes side by side (lane l at l · its size; a column of `lanes` numbers for a real); else one value. */
  readonly args: readonly Buf[];
  /** Each argument's dims at one lane (without the lane axis). */
  readonly dims: readonly Dims[];
  readonly batched: readonly boolean[];
}

/** Argument k's dims with the lane axis in front, padded with 1s after it to `rank` axes besides: [w, 1, …, 1, …d]. */
export function laneDims(a: LaneArgs, k: number, rank = a.dims[k].length): Dims {
  const d = a.dims[k];
  return [a.lanes, ...Array<number>(rank - d.length).fill(1), ...d];
}

/** Argument k's dims as it broadcasts against a lane's result of `rank` axes: laneDims where batched, its own (one value for every lane) otherwise. */
export const alignedDims = (a: LaneArgs, k: number, rank: number): Dims => (a.batched[k] ? laneDims(a, k, rank) : a.dims[k]);

/**
 * The primitive's own kernel on arguments that broadcast (elementwise, where, matmul's
 * batch axes): the lane axis is one more leading axis of the output, each batched
 * argument's dims padded with 1s to meet it.
 */
export function broadcastLanes(forward: (args: readonly Buf[], dims: readonly Dims[], out: Dims) => Buf, a: LaneArgs, out: Dims): Float64Array {
  const rank = out.length;
  return forward(a.args, a.args.map((_, k) => alignedDims(a, k, rank)), [a.lanes, ...out]) as Float64Array;
}

/** Argument k with its lane axis: itself when batched, else a fresh copy per lane (the caller releases it, see `owned`). */
export function withLanes(a: LaneArgs, k: number): Float64Array {
  const x = a.args[k];
  if (a.batched[k]) return x as Float64Array;
  return K.broadcastTo(x, a.dims[k], [a.lanes, ...a.dims[k]]);
}

/** Whether withLanes(a, k) made a copy, which the rule gives back to the pool after use. */
export const owned = (a: LaneArgs, k: number): boolean => !a.batched[k];

/** Every axis of a lane's tensor one further out: axis i is i + 1 with the lanes in front. */
export const shifted = (axes: readonly number[]): number[] => axes.map((i) => i + 1);
