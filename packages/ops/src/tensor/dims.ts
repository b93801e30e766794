/**
 * @file Shapes of tensors as plain arrays of dimensions, and the rules between them.
 *
 * A tensor's data is a contiguous row-major Float64Array; `dims` says how to read it.
 * A scalar has dims `[]`. Functions that check return a message (a string) instead of
 * throwing, so the caller can name the op and the place in its error.
 */
export type Dims = readonly number[];

export function size(dims: Dims): number {
  let n = 1;
  for (const d of dims) n *= d;
  return n;
}

/** Row-major strides: how far apart neighbours along each axis are in the buffer. */
export function strides(dims: Dims): number[] {
  const s = new Array<number>(dims.length);
  let k = 1;
  for (let i = dims.length - 1; i >= 0; i--) {
    s[i] = k;
    k *= dims[i];
  }
  return s;
}

/**
 * The flat offset of a box starting at `starts` in dims `d`, when the box spans whole rows
 * (axes past the first start at 0 with d's extent `inner`); else -1.
 */
export function contiguousStart(d: Dims, starts: readonly number[], inner: Dims): number {
  for (let i = 1; i < d.length; i++) if (starts[i] !== 0 || inner[i] !== d[i]) return -1;
  return d.length === 0 ? 0 : starts[0] * size(d.slice(1));
}

export function sameDims(a: Dims, b: Dims): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export function showDims(d: Dims): string {
  return `[${d.join(", ")}]`;
}

/** NumPy broadcasting: align trailing axes; sizes must agree or be 1. */
export function broadcastDims(a: Dims, b: Dims): Dims | string {
  // equal dims (most elementwise operations): a itself, no new array
  if (a === b || sameDims(a, b)) return a;
  const n = Math.max(a.length, b.length);
  const out = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    const da = i < n - a.length ? 1 : a[i - (n - a.length)];
    const db = i < n - b.length ? 1 : b[i - (n - b.length)];
    if (da !== db && da !== 1 && db !== 1) {
      return `shapes ${showDims(a)} and ${showDims(b)} do not broadcast (axis ${i} of the result: ${da} vs ${db})`;
    }
    out[i] = da === 1 ? db : da;
  }
  return out;
}

/**
 * Strides of `arg` read as a tensor of dims `out` it broadcasts to: 0 along axes it is
 * repeated on.
 */
export function broadcastStrides(arg: Dims, out: Dims): number[] {
  const s = strides(arg);
  const r = new Array<number>(out.length).fill(0);
  const off = out.length - arg.length;
  for (let i = 0; i < arg.length; i++) r[i + off] = arg[i] === 1 && out[i + off] !== 1 ? 0 : s[i];
  return r;
}

/** Axes as given by a user (a number, an array, or all when omitted), checked and sorted. */
export function normalizeAxes(axes: number | readonly number[] | undefined, rank: number): number[] | string {
  // every axis, or one: plain loops (a reduction on a small tensor costs little more than this)
  if (axes === undefined) {
    const all = new Array<number>(rank);
    for (let i = 0; i < rank; i++) all[i] = i;
    return all;
  }
  if (typeof axes === "number") {
    const a = normalizeAxis(axes, rank);
    return typeof a === "string" ? a : [a];
  }
  const list = [...axes];
  const seen = new Set<number>();
  for (const ax of list) {
    if (!Number.isInteger(ax) || ax < -rank || ax >= rank) return `axis ${ax} is out of range for a tensor of rank ${rank}`;
    const a = ax < 0 ? ax + rank : ax;
    if (seen.has(a)) return `axis ${ax} is given twice`;
    seen.add(a);
  }
  return [...seen].sort((x, y) => x - y);
}

export function normalizeAxis(axis: number, rank: number): number | string {
  if (!Number.isInteger(axis) || axis < -rank || axis >= rank) return `axis ${axis} is out of range for a tensor of rank ${rank}`;
  return axis < 0 ? axis + rank : axis;
}

/** The dims left after reducing `axes`: removed, or kept as 1 with `keepdims`. */
export function reducedDims(dims: Dims, axes: readonly number[], keepdims: boolean): number[] {
  const out: number[] = [];
  for (let i = 0; i < dims.length; i++) {
    if (!axes.includes(i)) out.push(dims[i]);
    else if (keepdims) out.push(1);
  }
  return out;
}

/** The first of `axes` along which `dims` has no elements, or -1: a reduction there has no elements to fold. */
export function emptyAxis(dims: Dims, axes: readonly number[]): number {
  return axes.find((a) => dims[a] === 0) ?? -1;
}

/** The axes of `big` that were added or stretched when `small` broadcast to it. */
export function broadcastAxes(small: Dims, big: Dims): number[] {
  const off = big.length - small.length;
  const axes: number[] = [];
  for (let i = 0; i < big.length; i++) if (i < off || (small[i - off] === 1 && big[i] !== 1)) axes.push(i);
  return axes;
}
