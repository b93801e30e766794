/**
 * @file Tensors the user holds: ndarrays and Float64Arrays, in and out of wengert.
 *
 * At the API boundary a tensor is an `ndarray` (the npm package; any strides, any
 * offset) or a bare `Float64Array` (1-D). Inside, every tensor is a contiguous
 * row-major Float64Array with its dims (`Dense`); strided views are copied in that
 * order when they enter. (Traced tensors: traced.ts.)
 */
import ndarray from "ndarray";
import type { NdArray as AnyNdArray } from "ndarray";
import { pooledCopy, showDims, size, type Dims } from "@wengert/ops";
import { InputTypeError } from "../errors.js";
import type { Shape } from "../structure.js";
import { atCallSite } from "./callsite.js";

/** An ndarray as wengert hands them back: float64 data. Any numeric ndarray is accepted. */
export type NdArray = AnyNdArray<Float64Array>;
export type { AnyNdArray };

/** A tensor's value inside wengert: contiguous row-major data and its dims. */
export interface Dense {
  readonly dims: Dims;
  readonly data: Float64Array;
}

/** Duck-typed ndarray check (ndarray's views are generated classes, one per dtype and rank). */
export function isNdArray(v: unknown): v is AnyNdArray {
  if (typeof v !== "object" || v === null) return false;
  const o = v as Partial<AnyNdArray>;
  return Array.isArray(o.shape) && Array.isArray(o.stride) && typeof o.offset === "number" && o.data !== undefined && typeof o.dtype === "string";
}

/** A tensor the user holds, not traced. */
export type ConcreteTensor = AnyNdArray | Float64Array;

export function isConcreteTensor(v: unknown): v is ConcreteTensor {
  return v instanceof Float64Array || isNdArray(v);
}

/** Which kind of container a tensor came in (and its cotangent goes back in). */
export type Container = "ndarray" | "float64array";

/** The structure of a tensor the user holds: its dims and its container. */
export function concreteShape(v: ConcreteTensor): Shape {
  if (v instanceof Float64Array) return { kind: "tensor", dims: [v.length], container: "float64array" };
  return { kind: "tensor", dims: [...v.shape], container: "ndarray" };
}

const NUMERIC = new Set(["float64", "float32", "int8", "int16", "int32", "uint8", "uint8_clamped", "uint16", "uint32", "array", "generic"]);

/** The user's tensor as contiguous row-major float64 data: a view when it already is, else a copy (read it; copy to keep). */
export function toDense(v: ConcreteTensor, where: string): Dense {
  const common = plainDense(v);
  if (common !== null) return common;
  return readView(v as AnyNdArray, where);
}

/**
 * `toDense` of the common tensors, or null: a Float64Array, or (what wengert hands back,
 * and most of what users build) a vector or matrix over all of a Float64Array, row-major,
 * from its start, which reads every element inside its data (badView has nothing to find).
 */
export function plainDense(v: ConcreteTensor): Dense | null {
  if (v instanceof Float64Array) return { dims: [v.length], data: v };
  const whole = v.data;
  if (whole instanceof Float64Array && v.offset === 0 && v.dtype === "float64") {
    const { shape, stride } = v;
    if (shape.length === 1 && shape[0] === whole.length && stride[0] === 1) return { dims: [shape[0]], data: whole };
    const [m, n] = shape;
    if (shape.length === 2 && stride[1] === 1 && stride[0] === n && Number.isInteger(m) && Number.isInteger(n) && m >= 0 && n >= 0 && m * n === whole.length) {
      return { dims: [m, n], data: whole };
    }
  }
  return null;
}

/** Any other ndarray, checked: a view of its data when contiguous, else a copy. */
function readView(v: AnyNdArray, where: string): Dense {
  if (!NUMERIC.has(v.dtype)) throw new InputTypeError(`${where} is an ndarray of dtype ${v.dtype}; wengert computes in float64 and reads numeric dtypes only.`);
  const bad = badView(v);
  if (bad !== null) throw new InputTypeError(`${where} is an ndarray of shape ${showDims(v.shape)} ${bad.problem}${atCallSite()}. ${bad.fix}.`);
  const dims = [...v.shape];
  const n = size(dims);
  const rank = dims.length;
  if (rank === 0) return { dims, data: Float64Array.of(Number(v.get())) };
  // a contiguous row-major view over a Float64Array: no copy (nor a buffer for one)
  if (v.data instanceof Float64Array && rowMajor(dims, v.stride)) {
    return { dims, data: v.offset === 0 && v.data.length === n ? v.data : v.data.subarray(v.offset, v.offset + n) };
  }
  const data = new Float64Array(n);
  // walk the view by its strides, writing in row-major order
  const src = v.data as ArrayLike<number> & { get?: (i: number) => number };
  const read = typeof src.get === "function" && !(ArrayBuffer.isView(src) || Array.isArray(src)) ? (i: number) => src.get!(i) : (i: number) => src[i];
  const idx = new Int32Array(rank);
  let off = v.offset;
  for (let o = 0; o < n; o++) {
    data[o] = Number(read(off));
    for (let ax = rank - 1; ax >= 0; ax--) {
      idx[ax]++;
      off += v.stride[ax];
      if (idx[ax] < dims[ax]) break;
      off -= v.stride[ax] * dims[ax];
      idx[ax] = 0;
    }
  }
  return { dims, data };
}

/**
 * Why the view `v` cannot be read, or null. The ndarray package checks nothing, and
 * data shorter than the shape would be read past its end (undefined: NaN values, and a
 * gradient over a buffer the view covers only in part). Every tensor the user holds is
 * read here, so this is the one check. Negative strides (`.step(-1)`) are fine while
 * every element lies inside the data.
 */
function badView(v: AnyNdArray): { problem: string; fix: string } | null {
  const { shape, stride, offset } = v;
  const build = "Build it as ndarray(data, shape) and take views with its methods (pick, lo, hi, step, transpose)";
  if (!shape.every((d) => Number.isInteger(d) && d >= 0)) return { problem: "whose dims are not all sizes (non-negative integers)", fix: build };
  if (stride.length !== shape.length || !stride.every(Number.isInteger) || !Number.isInteger(offset)) {
    return { problem: `whose stride [${stride.map(String).join(", ")}] and offset ${offset} are not integers, one stride per axis`, fix: build };
  }
  const length = (v.data as { length?: unknown }).length;
  if (size(shape) === 0 || typeof length !== "number") return null;
  // the first and last positions of data that the view reads
  let lo = offset;
  let hi = offset;
  for (let i = 0; i < shape.length; i++) {
    const reach = stride[i] * (shape[i] - 1);
    if (reach < 0) lo += reach;
    else hi += reach;
  }
  if (lo >= 0 && hi < length) return null;
  const problem =
    `whose elements lie at data[${lo}] to data[${hi}] (offset ${offset}, stride ${showDims(stride)}), ` +
    `but its data has ${length} element${length === 1 ? "" : "s"}`;
  if (lo < 0) return { problem, fix: "A negative stride needs an offset at the axis's last element (as .step(-1) sets it); fix its stride or offset" };
  const fix =
    `Give it data of at least ${hi + 1} elements (ndarray(data, shape) needs data.length ≥ the product of the dims), ` +
    `or fix its shape, stride or offset`;
  return { problem, fix };
}

function rowMajor(dims: Dims, stride: readonly number[]): boolean {
  let k = 1;
  for (let i = dims.length - 1; i >= 0; i--) {
    if (dims[i] !== 1 && stride[i] !== k) return false;
    k *= dims[i];
  }
  return true;
}

/**
 * A copy of `d` that a trace owns (an input's or a literal's value, so that the user's
 * buffer may change afterwards), taken from the buffer pool: the tape hands its buffers
 * back to the pool when the derivative has been read, so a copy made with `slice`
 * would add a buffer to the pool on every call, one the pool never hands out again.
 */
export function ownedCopy(d: Dense): Dense {
  return { dims: d.dims, data: pooledCopy(d.data) };
}

/**
 * ndarray's view classes for rank 1 and 2 (the package generates one per dtype and rank),
 * taken from the first view of each rank made: `ndarray(data, dims)` looks the class up
 * by the data's dtype (Object.prototype.toString) on every call, a fifth of an untraced
 * operation's cost on 14 elements. The classes take (data, shape…, stride…, offset).
 * Not at load: ndarray makes its classes with `new Function`, which a page's
 * Content-Security-Policy may forbid, and a program of reals makes no ndarray.
 */
type View1d = new (data: Float64Array, n: number, s: number, offset: number) => NdArray;
type View2d = new (data: Float64Array, m: number, n: number, sm: number, sn: number, offset: number) => NdArray;
let view1d: View1d | null = null;
let view2d: View2d | null = null;

/** A row-major ndarray over `data` (not copied), as `ndarray(data, [...dims])` makes it. */
export function denseNdarray(data: Float64Array, dims: Dims): NdArray {
  if (dims.length === 1) {
    if (view1d !== null) return new view1d(data, dims[0], 1, 0);
    const v = ndarray(data, [dims[0]]);
    view1d = v.constructor as View1d;
    return v;
  }
  if (dims.length === 2) {
    if (view2d !== null) return new view2d(data, dims[0], dims[1], dims[1], 1, 0);
    const v = ndarray(data, [dims[0], dims[1]]);
    view2d = v.constructor as View2d;
    return v;
  }
  return ndarray(data, [...dims]);
}

/**
 * A value handed back to the user: an ndarray over a copy, or a Float64Array copy; over
 * `d.data` itself when `copy` is false (a buffer nothing else holds).
 */
export function fromDense(d: Dense, container: Container, copy = true): ConcreteTensor {
  const data = copy ? d.data.slice() : d.data;
  return container === "float64array" && d.dims.length === 1 ? data : denseNdarray(data, d.dims);
}
