/**
 * @file One instruction over a block of lanes (vmap's evaluator, lanes.ts): a kernel
 * call for all of them, by the primitive's batching rule, where it has one.
 *
 * A tensor primitive's rule is declared with it (ops/tensor/ops.ts's `batch`, the
 * analogue of JAX's batching rules); a scalar primitive applied to tensors needs none
 * written: it is elementwise, so its kernel over the lanes side by side, the lane axis
 * broadcast in front, is its rule. A primitive without one (the convolutions, gatherAt and
 * scatterAddAt) runs lane by lane, each lane's result copied into its place.
 * Either way lane l's numbers are those of `compute` at lane l alone.
 */
import { alloc, broadcastLanes, release, size, type Buf, type Dims, type LaneArgs } from "@wengert/ops";
import { IS_TENSOR_OP, tensorSpec } from "../trace/opcodes.js";
import { compute } from "../trace/tape.js";

type Rule = (a: LaneArgs, params: unknown, out: Dims) => Float64Array;

const rules: (Rule | null)[] = [];

/** The batching rule of a primitive by code, or null (its kernel is called per lane). */
export function laneRule(code: number): Rule | null {
  let rule = rules[code];
  if (rule === undefined) {
    rule = IS_TENSOR_OP[code]
      ? ((tensorSpec(code).batch as Rule | undefined) ?? null)
      : (a, params, out) => broadcastLanes((args, dims, o) => compute(code, args, dims, params, o) as Float64Array, a, out);
    rules[code] = rule;
  }
  return rule;
}

/** Argument k of `a` at lane l alone. */
export function laneArg(a: LaneArgs, k: number, l: number): Buf {
  const x = a.args[k];
  if (!a.batched[k] || typeof x === "number") return x;
  if (a.dims[k].length === 0) return x[l];
  const w = size(a.dims[k]);
  return x.subarray(l * w, (l + 1) * w);
}

/**
 * Instruction `code` at every lane of `a`: the lanes' results side by side (lane l's at
 * l · size(out)), a fresh buffer of the pool. Lane by lane (no rule), the lanes where
 * `held` is 0 are skipped (their place is left zero).
 */
export function onLanes(code: number, a: LaneArgs, params: unknown, out: Dims, held: Uint8Array): Float64Array {
  const rule = laneRule(code);
  if (rule !== null) return rule(a, params, out);
  const width = size(out);
  const ys = alloc(a.lanes * width);
  for (let l = 0; l < a.lanes; l++) {
    if (!held[l]) continue;
    const y = compute(code, a.args.map((_, k) => laneArg(a, k, l)), a.dims, params, out);
    if (typeof y === "number") ys[l * width] = y;
    else {
      ys.set(y, l * width);
      release(y);
    }
  }
  return ys;
}
