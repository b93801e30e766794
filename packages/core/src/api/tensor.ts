/**
 * @file Tensor primitives and the functions built from them, for users.
 *
 * Each takes tensors (ndarrays, Float64Arrays, traced tensors) and numbers freely: on
 * untraced values it computes at once (an ndarray, or a number for a scalar result);
 * on traced ones it records in the innermost trace among them. Parameters (axes, shapes,
 * indices) are checked here, so that a mistake is reported with the function's name,
 * the shapes, and the caller's place (ShapeError).
 */
import ndarray from "ndarray";
import { emptyAxis, normalizeAxes, normalizeAxis, showDims, size, type Dims } from "@wengert/ops";
import { CODE } from "../trace/opcodes.js";
import { isConcreteTensor, toDense, type ConcreteTensor, type NdArray } from "../trace/host-tensor.js";
import { isOperand, Real, Tensor, type Operand, type Scalar } from "../trace/traced.js";
import { shapeError } from "../trace/callsite.js";
import { applyBinary, applyGeneric } from "../trace/record.js";
import { describe } from "../structure.js";
import { indicesOf } from "./index-copies.js";
import type { ItemsOf, RealOf, TensorOf } from "./types.js";

/** A tensor argument: traced, or an ndarray / Float64Array the user holds. */
export type TensorArg = Tensor | ConcreteTensor;
/** A tensor result: traced when any argument is, else an ndarray. */
export type TensorResult = Tensor | NdArray;
/** A real result: traced when any argument is, else a number. */
export type RealResult = Scalar;

/** The dims of any operand (`[]` for a real). */
export function shapeOf(v: Operand): number[] {
  if (typeof v === "number" || v instanceof Real) return [];
  if (v instanceof Tensor) return [...v.dims];
  if (v instanceof Float64Array) return [v.length];
  if (isConcreteTensor(v)) return [...v.shape];
  throw shapeError("shapeOf", `the argument is ${describe(v)}, not a real or a tensor`);
}

function operand(name: string, v: unknown, what: string): Operand {
  if (!isOperand(v)) throw shapeError(name, `${what} is ${describe(v)}; expected a tensor (ndarray, Float64Array or traced), a number or a traced real`);
  return v;
}

const op = (name: keyof typeof CODE, args: readonly Operand[], params?: unknown): Operand => applyGeneric(CODE[name], args, params);

function axesOf(name: string, t: Operand, axis: number | readonly number[] | undefined): number[] {
  const r = normalizeAxes(axis, shapeOf(t).length);
  if (typeof r === "string") throw shapeError(name, `${r} (dims ${showDims(shapeOf(t))})`);
  return r;
}

function axisOf(name: string, rank: number, axis: number, dims: Dims): number {
  const r = normalizeAxis(axis, rank);
  if (typeof r === "string") throw shapeError(name, `${r} (dims ${showDims(dims)})`);
  return r;
}

/**
 * Reducing every axis (no `axis`) gives a real; reducing some gives a tensor, or a real
 * when none is left (as NumPy's 0-d arrays).
 */
type Reduce = {
  <T extends Operand>(t: T, axis?: undefined, keepdims?: false): RealOf<T>;
  <T extends Operand>(t: T, axis: number | readonly number[] | undefined, keepdims?: boolean): TensorOf<T> | RealOf<T>;
};

const reduction = (name: "sum" | "max" | "min" | "logsumexp"): Reduce =>
  ((t: unknown, axis?: number | readonly number[], keepdims = false) => {
    const x = operand(name, t, "the tensor");
    return op(name, [x], { axes: axesOf(name, x, axis), keepdims });
  }) as Reduce;

/** Σ over `axis` (a number, an array of them, or all when omitted). */
export const sum = reduction("sum");
/** The maximum over `axis`; its derivative is split evenly among tied maxima (reported as ties). */
export const max = reduction("max");
/** The minimum over `axis`; its derivative is split evenly among tied minima (reported as ties). */
export const min = reduction("min");
/** log Σ exp over `axis`, computed stably (shifted by the maximum). */
export const logsumexp = reduction("logsumexp");

/**
 * The mean over `axis`. Over an axis with no elements it is 0/0: a ShapeError, as for
 * max and min (NumPy gives NaN with a warning; a NaN here is always a mistake).
 */
export const mean: Reduce = ((t: unknown, axis?: number | readonly number[], keepdims = false) => {
  const x = operand("mean", t, "the tensor");
  const axes = axesOf("mean", x, axis);
  const d = shapeOf(x);
  const empty = emptyAxis(d, axes);
  if (empty >= 0) {
    throw shapeError(
      "mean",
      `the mean over axis ${empty}, which has no elements, is not defined (0/0); ` +
        "reduce over axes that have elements, or test for the empty case first",
      [d],
    );
  }
  const count = axes.reduce((n, a) => n * d[a], 1);
  return applyBinary(CODE.div, op("sum", [x], { axes, keepdims }), count);
}) as Reduce;

/** exp(t − logsumexp(t)) along `axis` (default the last). */
export function softmax<T extends TensorArg>(t: T, axis?: number): TensorOf<T>;
export function softmax(t: TensorArg, axis = -1): TensorResult {
  const x = operand("softmax", t, "the tensor");
  const ax = axisOf("softmax", shapeOf(x).length, axis, shapeOf(x));
  return applyGeneric(CODE.exp, [logSoftmaxAt(x, ax)], undefined) as TensorResult;
}

/** t − logsumexp(t) along `axis` (default the last): log-probabilities, stably. */
export function logSoftmax<T extends TensorArg>(t: T, axis?: number): TensorOf<T>;
export function logSoftmax(t: TensorArg, axis = -1): TensorResult {
  const x = operand("logSoftmax", t, "the tensor");
  return logSoftmaxAt(x, axisOf("logSoftmax", shapeOf(x).length, axis, shapeOf(x))) as TensorResult;
}

function logSoftmaxAt(x: Operand, axis: number): Operand {
  return op("logSoftmax", [x], { axes: [axis] });
}

/** The same elements read with other dims; one entry may be -1 (inferred). */
export function reshape<T extends TensorArg | Scalar>(t: T, shape: readonly number[]): TensorOf<T> | RealOf<T>;
export function reshape(t: TensorArg | Scalar, shape: readonly number[]): TensorResult | RealResult {
  const x = operand("reshape", t, "the tensor");
  const n = size(shapeOf(x));
  const known = shape.filter((d) => d !== -1);
  if (shape.some((d) => !Number.isInteger(d) || d < -1) || shape.length - known.length > 1) {
    throw shapeError("reshape", `the shape ${showDims(shape)} is not a list of sizes (at most one -1)`);
  }
  const rest = size(known);
  const dims = shape.map((d) => (d === -1 ? (rest === 0 ? 0 : n / rest) : d));
  if (!dims.every(Number.isInteger)) throw shapeError("reshape", `cannot reshape ${showDims(shapeOf(x))} (${n} elements) to ${showDims(shape)}`);
  return op("reshape", [x], { dims }) as TensorResult | RealResult;
}

/** Axes permuted (`perm[i]` is the source of axis i); reversed when omitted. */
export function transpose<T extends TensorArg>(t: T, perm?: readonly number[]): TensorOf<T>;
export function transpose(t: TensorArg, perm?: readonly number[]): TensorResult {
  const x = operand("transpose", t, "the tensor");
  const rank = shapeOf(x).length;
  const p = perm ?? Array.from({ length: rank }, (_, i) => rank - 1 - i);
  if (p.length !== rank || [...p].sort((u, v) => u - v).some((v, i) => v !== i)) {
    throw shapeError("transpose", `${showDims(p)} is not a permutation of the ${rank} axes of ${showDims(shapeOf(x))}`);
  }
  return op("transpose", [x], { perm: p }) as TensorResult;
}

/** t repeated to `shape` (NumPy broadcasting). */
export function broadcastTo<T extends TensorArg | Scalar>(t: T, shape: readonly number[]): TensorOf<T>;
export function broadcastTo(t: TensorArg | Scalar, shape: readonly number[]): TensorResult {
  const x = operand("broadcastTo", t, "the tensor");
  return op("broadcastTo", [x], { dims: [...shape] }) as TensorResult;
}

/**
 * Matrix product; batched over leading axes (broadcast); a 1-D argument is a vector, as
 * in NumPy (the product of two vectors is `dot`).
 */
export function matmul<A extends TensorArg, B extends TensorArg>(a: A, b: B): TensorOf<[A, B]>;
export function matmul(a: TensorArg, b: TensorArg): TensorResult {
  const x = operand("matmul", a, "argument 1");
  const y = operand("matmul", b, "argument 2");
  const xd = shapeOf(x);
  const yd = shapeOf(y);
  if (xd.length === 0 || yd.length === 0) throw shapeError("matmul", `matmul takes tensors, not reals (shapes ${showDims(xd)}, ${showDims(yd)}); use mul`);
  if (xd.length === 1 && yd.length === 1) {
    throw shapeError("matmul", `both arguments are vectors (${showDims(xd)}, ${showDims(yd)}); their product is a real: use dot`);
  }
  const k = xd[xd.length - 1];
  const kb = yd.length === 1 ? yd[0] : yd[yd.length - 2];
  if (k !== kb) throw shapeError("matmul", `inner dimensions differ: ${showDims(xd)} @ ${showDims(yd)} (${k} vs ${kb})`);
  const x2 = xd.length === 1 ? op("reshape", [x], { dims: [1, xd[0]] }) : x;
  const y2 = yd.length === 1 ? op("reshape", [y], { dims: [yd[0], 1] }) : y;
  const r = op("matmul", [x2, y2]);
  if (xd.length > 1 && yd.length > 1) return r as TensorResult;
  const rd = shapeOf(r);
  const dims = xd.length === 1 ? [...rd.slice(0, -2), rd[rd.length - 1]] : rd.slice(0, -1);
  return op("reshape", [r], { dims }) as TensorResult;
}

/** NumPy's dot for vectors and matrices: Σ aᵢbᵢ for two vectors, else the matrix product. */
export function dot<A extends TensorArg, B extends TensorArg>(a: A, b: B): TensorOf<[A, B]> | RealOf<[A, B]>;
export function dot(a: TensorArg, b: TensorArg): TensorResult | RealResult {
  const x = operand("dot", a, "argument 1");
  const y = operand("dot", b, "argument 2");
  const xd = shapeOf(x);
  const yd = shapeOf(y);
  if (xd.length === 1 && yd.length === 1) {
    if (xd[0] !== yd[0]) throw shapeError("dot", `vectors of lengths ${xd[0]} and ${yd[0]}`, [xd, yd]);
    return op("sum", [applyBinary(CODE.mul, x, y)], { axes: [0], keepdims: false }) as RealResult;
  }
  if (xd.length < 1 || yd.length < 1 || xd.length > 2 || yd.length > 2) {
    throw shapeError("dot", `dot takes vectors and matrices (got ${showDims(xd)} and ${showDims(yd)}); use matmul for batches`);
  }
  return matmul(x as TensorArg, y as TensorArg);
}


/** The outer product a bᵀ of two vectors. */
export function outer<A extends TensorArg, B extends TensorArg>(a: A, b: B): TensorOf<[A, B]>;
export function outer(a: TensorArg, b: TensorArg): TensorResult {
  const x = operand("outer", a, "argument 1");
  const y = operand("outer", b, "argument 2");
  const xd = shapeOf(x);
  const yd = shapeOf(y);
  if (xd.length !== 1 || yd.length !== 1) throw shapeError("outer", `outer takes two vectors (got ${showDims(xd)} and ${showDims(yd)})`);
  return applyBinary(CODE.mul, op("reshape", [x], { dims: [xd[0], 1] }), op("reshape", [y], { dims: [1, yd[0]] })) as TensorResult;
}

/** The box `starts ≤ i < ends` (one entry per axis). */
export function slice<T extends TensorArg>(t: T, starts: readonly number[], ends: readonly number[]): TensorOf<T>;
export function slice(t: TensorArg, starts: readonly number[], ends: readonly number[]): TensorResult {
  const x = operand("slice", t, "the tensor");
  return op("slice", [x], { starts: [...starts], ends: [...ends] }) as TensorResult;
}

/** One element, as a real: `index(v, i)` for a vector, `index(t, [i, j, …])` in general. */
export function index<T extends TensorArg>(t: T, i: number | readonly number[]): RealOf<T>;
export function index(t: TensorArg, i: number | readonly number[]): RealResult {
  const x = operand("index", t, "the tensor");
  const d = shapeOf(x);
  if (typeof i === "number" && d.length !== 1) {
    throw shapeError(
      "index",
      `a single index reads a vector, but the tensor has dims ${showDims(d)}; ` +
        "give one index per axis, or use slice or unstack for a row",
    );
  }
  return op("index", [x], { at: typeof i === "number" ? [i] : [...i] }) as RealResult;
}

/**
 * Indices: numbers the caller holds (a parameter of the instruction, kept in the trace as
 * they are now), or a traced vector of them, an input of the trace like any tensor (a
 * `jit`ted function's argument: each call reads its own), with no derivative.
 */
export type Indices = ArrayLike<number> | ConcreteTensor | Tensor;

/** The entries `indices` of `t` along `axis` (default 0). */
export function gather<T extends TensorArg>(t: T, indices: Indices, axis?: number): TensorOf<T>;
export function gather(t: TensorArg, indices: Indices, axis = 0): TensorResult {
  const x = operand("gather", t, "the tensor");
  const d = shapeOf(x);
  const ax = axisOf("gather", d.length, axis, d);
  if (indices instanceof Tensor) return op("gatherAt", [x, indices], { axis: ax }) as TensorResult;
  return op("gather", [x], { indices: indicesOf("gather", indices), axis: ax }) as TensorResult;
}

/** A copy of `t` with `values` added at `indices` along `axis` (repeated indices add up). */
export function scatterAdd<T extends TensorArg, V extends TensorArg>(t: T, indices: Indices, values: V, axis?: number): TensorOf<[T, V]>;
export function scatterAdd(t: TensorArg, indices: Indices, values: TensorArg, axis = 0): TensorResult {
  const x = operand("scatterAdd", t, "the tensor");
  const v = operand("scatterAdd", values, "values");
  const d = shapeOf(x);
  const ax = axisOf("scatterAdd", d.length, axis, d);
  if (indices instanceof Tensor) return op("scatterAddAt", [x, indices, v], { axis: ax }) as TensorResult;
  return op("scatterAdd", [x, v], { indices: indicesOf("scatterAdd", indices), axis: ax }) as TensorResult;
}

/** Tensors joined along an existing `axis` (default 0). */
export function concat<const Ts extends readonly TensorArg[]>(ts: Ts, axis?: number): TensorOf<ItemsOf<Ts>>;
export function concat(ts: readonly TensorArg[], axis = 0): TensorResult {
  if (!Array.isArray(ts) || ts.length === 0) throw shapeError("concat", "concat takes a non-empty array of tensors");
  const xs = ts.map((t, k) => operand("concat", t, `tensor ${k}`));
  const d = shapeOf(xs[0]);
  if (d.length === 0) throw shapeError("concat", "concat joins tensors along an axis; to make a vector of reals use stack");
  return op("concat", xs, { axis: axisOf("concat", d.length, axis, d) }) as TensorResult;
}

/** Tensors (or reals) of equal dims stacked along a new `axis` (default 0). */
export function stack<const Ts extends readonly (TensorArg | Scalar)[]>(ts: Ts, axis?: number): TensorOf<ItemsOf<Ts>>;
export function stack(ts: readonly (TensorArg | Scalar)[], axis = 0): TensorResult {
  if (!Array.isArray(ts) || ts.length === 0) throw shapeError("stack", "stack takes a non-empty array of tensors or reals");
  const xs = ts.map((t, k) => operand("stack", t, `item ${k}`));
  const d = shapeOf(xs[0]);
  xs.forEach((x, k) => {
    if (showDims(shapeOf(x)) !== showDims(d)) throw shapeError("stack", `item ${k} has dims ${showDims(shapeOf(x))}, item 0 has ${showDims(d)}`);
  });
  const ax = axisOf("stack", d.length + 1, axis, d);
  if (d.length === 0) return op("pack", xs) as TensorResult;
  const dims = [...d.slice(0, ax), 1, ...d.slice(ax)];
  return op("concat", xs.map((x) => op("reshape", [x], { dims })), { axis: ax }) as TensorResult;
}

/** The pieces of `t` along `axis` (default 0), that axis removed: reals for a vector. */
export function unstack<T extends TensorArg>(t: T, axis?: number): (TensorOf<T> | RealOf<T>)[];
export function unstack(t: TensorArg, axis = 0): (TensorResult | RealResult)[] {
  const x = operand("unstack", t, "the tensor");
  const d = shapeOf(x);
  if (d.length === 0) throw shapeError("unstack", "unstack takes a tensor, not a real");
  const ax = axisOf("unstack", d.length, axis, d);
  if (d.length === 1) return Array.from({ length: d[0] }, (_, i) => op("index", [x], { at: [i] }) as RealResult);
  const rest = d.filter((_, i) => i !== ax);
  return Array.from({ length: d[ax] }, (_, i) => {
    const starts = d.map((_, k) => (k === ax ? i : 0));
    const ends = d.map((n, k) => (k === ax ? i + 1 : n));
    return op("reshape", [op("slice", [x], { starts, ends })], { dims: rest }) as TensorResult;
  });
}

/**
 * `mask ? a : b` elementwise (broadcasting). The mask is a decision already taken (a
 * predicate's result, or any 0/1 tensor); the gradient flowing to the branch not
 * taken is exactly zero, never NaN, even where that branch is NaN or infinite.
 */
export function where<A extends TensorArg | Scalar, B extends TensorArg | Scalar>(mask: ConcreteTensor | readonly number[], a: A, b: B): TensorOf<[A, B]>;
export function where(mask: ConcreteTensor | readonly number[], a: TensorArg | Scalar, b: TensorArg | Scalar): TensorResult {
  if (mask instanceof Tensor || mask instanceof Real) {
    throw shapeError("where", "the mask is a traced value; a mask is a decision on concrete values: make it with lt, gt, … (which give an ndarray)");
  }
  const m = Array.isArray(mask) ? Float64Array.from(mask) : mask;
  if (!isConcreteTensor(m)) throw shapeError("where", `the mask is ${describe(mask)}; expected an ndarray, Float64Array or array of 0/1`);
  const dense = toDense(m, "where's mask");
  const bits = dense.data.map((v) => (v !== 0 ? 1 : 0));
  return op("where", [ndarray(bits, [...dense.dims]) as ConcreteTensor, operand("where", a, "argument 2"), operand("where", b, "argument 3")]) as TensorResult;
}

/** conv2d's stride and padding. */
export interface Conv2dOptions {
  /** Step between windows: one number for both axes, or [height, width] (default 1). */
  readonly stride?: number | readonly [number, number];
  /** Zeros added on each side: one number, or [height, width] (default 0). */
  readonly padding?: number | readonly [number, number];
}

/** 2-D convolution (cross-correlation, as in deep learning): NCHW input, OIHW weights. */
export function conv2d<X extends TensorArg, W extends TensorArg>(x: X, w: W, options?: Conv2dOptions): TensorOf<[X, W]>;
export function conv2d(x: TensorArg, w: TensorArg, options: Conv2dOptions = {}): TensorResult {
  const pair = (v: number | readonly [number, number] | undefined, dflt: number, what: string, min: number): [number, number] => {
    const p: [number, number] = v === undefined ? [dflt, dflt] : typeof v === "number" ? [v, v] : [v[0], v[1]];
    if (!p.every((n) => Number.isInteger(n) && n >= min)) {
      throw shapeError("conv2d", `${what} ${JSON.stringify(v)} must be an integer ≥ ${min} or a pair of them`);
    }
    return p;
  };
  const params = { stride: pair(options.stride, 1, "stride", 1), padding: pair(options.padding, 0, "padding", 0) };
  return op("conv2d", [operand("conv2d", x, "the input"), operand("conv2d", w, "the weights")], params) as TensorResult;
}
