/**
 * @file The shape of a tensor primitive's declaration, and the emitter its rules use.
 *
 * Elementwise primitives need no declaration here: the scalar ones (scalar.ts) apply
 * to tensors elementwise with broadcasting, and their rules, written with primitives,
 * then compute with tensors (the sweeps sum a contribution back to its argument's
 * shape where the argument was broadcast). A tensor primitive adds a shape rule, a
 * kernel and explicit tangent rules, with static parameters (axes, a permutation,
 * indices) kept apart from its tensor arguments.
 */
import type { Emitter } from "../scalar.js";
import type { PredicateName } from "../predicates.js";
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

export interface TensorOp<P = never> {
  readonly kind: "tensor";
  /** Number of arguments, or -1 for any number (concat, pack, embed). */
  readonly arity: number;
  /** The output's dims, or a message saying why the arguments do not fit. */
  readonly shape: (dims: readonly Dims[], params: P) => Dims | string;
  /** The output's value: a fresh buffer (core's `compute` reads one of dims [] as its element, a real). */
  readonly forward: (args: readonly Buf[], dims: readonly Dims[], params: P, out: Dims) => Buf;
  /** The contribution to argument `k` (the paper's `op_r`, per argument). */
  readonly reverse: <A>(e: TensorEmitter<A>, k: number, args: readonly A[], y: A, ct: A, params: P) => Contribution<A>;
  /** The output's tangent from the arguments' tangents (null: zero). */
  readonly tangent: <A>(e: TensorEmitter<A>, args: readonly A[], y: A, tangents: readonly (A | null)[], params: P) => A | null;
  /** Which arguments carry no derivative (the mask of `where`). */
  readonly constantArgs?: readonly number[];
  /** A tie met by the forward computation (several maximal elements), described; or null. */
  readonly tie?: (args: readonly Buf[], dims: readonly Dims[], params: P, y: Buf) => string | null;
  /** The parameters, for printing trace terms. */
  readonly show?: (params: P) => string;
}

export interface ReduceParams {
  readonly axes: readonly number[];
  readonly keepdims: boolean;
}

export interface ConvDims extends ConvParams {
  /** The dims of the result (the input's for the input adjoint, the filter's for the filter adjoint). */
  readonly dims: Dims;
}

/** Primitives as methods over `A`, tensors included: what tensor rules are written with. */
export type TensorEmitter<A> = Emitter<A> & {
  dims(x: A): Dims;
  zeros(dims: Dims): A;
  sum(x: A, axes: readonly number[], keepdims: boolean): A;
  max(x: A, axes: readonly number[], keepdims: boolean): A;
  min(x: A, axes: readonly number[], keepdims: boolean): A;
  logsumexp(x: A, axes: readonly number[], keepdims: boolean): A;
  logSoftmax(x: A, axes: readonly number[]): A;
  reshape(x: A, dims: Dims): A;
  broadcastTo(x: A, dims: Dims): A;
  transpose(x: A, perm: readonly number[]): A;
  matmul(a: A, b: A): A;
  slice(x: A, starts: readonly number[], ends: readonly number[]): A;
  index(x: A, at: readonly number[]): A;
  embed(dims: Dims, pieces: readonly A[], starts: readonly (readonly number[])[]): A;
  pack(xs: readonly A[]): A;
  gather(x: A, indices: Int32Array, axis: number): A;
  scatterAdd(t: A, indices: Int32Array, values: A, axis: number): A;
  concat(xs: readonly A[], axis: number): A;
  where(mask: A, a: A, b: A): A;
  /** A 0/1 tensor decided now on concrete values, with no derivative: `pred(a, b)` elementwise. */
  decide(pred: PredicateName, a: A, b: A): A;
  conv2d(x: A, w: A, p: ConvParams): A;
  conv2dInput(g: A, w: A, p: ConvDims): A;
  conv2dFilter(x: A, g: A, p: ConvDims): A;
};
