/**
 * @file What a tensor primitive's declaration (ops.ts) speaks of: the values its kernel
 * and rules see, its parameters, and how an emitter's method for it is written.
 *
 * Elementwise primitives need no declaration there: the scalar ones (scalar.ts) apply
 * to tensors elementwise with broadcasting, and their rules, written with primitives,
 * then compute with tensors (the sweeps sum a contribution back to its argument's
 * shape where the argument was broadcast). A tensor primitive adds a shape rule, a
 * kernel and explicit tangent rules, with static parameters (axes, a permutation,
 * indices) kept apart from its tensor arguments.
 */
import type { ConvParams } from "./kernels.js";
import type { Dims } from "./dims.js";

/** A value as kernels see it: a number for a scalar, else a contiguous row-major buffer. */
export type Buf = number | Float64Array;

/**
 * A cotangent contribution: a value shaped like the argument, the symbolic zero, or a
 * piece of one (zero except `piece` at `start`). Pieces from many `index` or `slice`
 * instructions on one tensor are gathered by the sweep into one `embed`, so reading
 * every element of an n-vector costs O(n) to differentiate, not O(n²).
 */
export type Contribution<A> = A | null | { readonly piece: A; readonly start: readonly number[] };

export interface ReduceParams {
  readonly axes: readonly number[];
  readonly keepdims: boolean;
}

export interface ConvDims extends ConvParams {
  /** The dims of the result (the input's for the input adjoint, the filter's for the filter adjoint). */
  readonly dims: Dims;
}

export interface SliceParams {
  readonly starts: readonly number[];
  readonly ends: readonly number[];
}
export interface EmbedParams {
  readonly dims: Dims;
  readonly starts: readonly (readonly number[])[];
}
export interface GatherParams {
  readonly indices: Int32Array;
  readonly axis: number;
}

declare const ARG: unique symbol;

/**
 * A tensor argument in the signature of an emitter's method (`e.sum(x, axes,
 * keepdims)` is `[x: Arg, axes: readonly number[], keepdims: boolean]`): whatever values
 * the emitter has, a variable of a trace or a series. A declaration's `call` only moves
 * its arguments around, so it is written once for every kind of value.
 */
export interface Arg {
  readonly [ARG]: true;
}

/** A method's signature with the emitter's value type `A` in place of `Arg`. */
export type Instantiate<T, A> = T extends Arg ? A : T extends readonly unknown[] ? { [I in keyof T]: Instantiate<T[I], A> } : T;

/** An emitter method's arguments as the instruction it records: the primitive's tensor arguments and its parameters. */
export interface TensorCall<P> {
  readonly args: readonly Arg[];
  readonly params: P;
}
