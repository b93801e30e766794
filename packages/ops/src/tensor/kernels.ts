/**
 * @file Forward kernels on contiguous row-major Float64Array buffers; the elementwise
 * ones (elementwise.ts) and reductions (reduce.ts) are in files of their own and
 * exported from here too.
 *
 * No allocation per element: each kernel allocates its output once and loops. General
 * cases walk the output with an odometer (one counter per axis) and per-argument
 * strides, 0 along broadcast axes; common cases (same shapes, a scalar operand, the
 * last axis) have straight loops.
 */
import { gemm } from "./gemm.js";
import { alloc, pooledCopy } from "./pool.js";
import { size, strides, type Dims } from "./dims.js";
import { odometer, odometerRows } from "./odometer.js";
import { pattern } from "./elementwise.js";

export { ARITH, UNARY_ARITH, map, zip } from "./elementwise.js";
export { countEqual, logSoftmax, reduce, type Reduction } from "./reduce.js";
export { scaledExp } from "./scaled-exp.js";

/** `mask ? a : b` elementwise with broadcasting. */
export function select(mask: Float64Array, md: Dims, a: number | Float64Array, ad: Dims, b: number | Float64Array, bd: Dims, out: Dims): Float64Array {
  const r = alloc(size(out), true);
  const A = typeof a === "number" ? Float64Array.of(a) : a;
  const B = typeof b === "number" ? Float64Array.of(b) : b;
  const n = r.length;
  if (mask.length === n && (A.length === n || A.length === 1) && (B.length === n || B.length === 1)) {
    // no broadcasting but of scalars: a straight loop
    const sa = A.length === 1 && n !== 1;
    const sb = B.length === 1 && n !== 1;
    for (let i = 0; i < n; i++) r[i] = mask[i] !== 0 ? A[sa ? 0 : i] : B[sb ? 0 : i];
    return r;
  }
  odometer(out, [md, ad, bd], (o, offs) => (r[o] = mask[offs[0]] !== 0 ? A[offs[1]] : B[offs[2]]));
  return r;
}

/** From this many elements a row is copied by `set` (a view and a memcpy) rather than a loop. */
const BLOCK_ROW = 64;

/**
 * r[o…o+m) = x[at…at+m): a long row one block copy (TypedArray#set), a short one not worth
 * its subarray four elements per step (one per step, gathering kmeans' rows of d = 16
 * spent as long on the loop's counting as on the moves).
 */
function copyRow(r: Float64Array, o: number, x: Float64Array, at: number, m: number): void {
  if (m >= BLOCK_ROW) {
    r.set(x.subarray(at, at + m), o);
    return;
  }
  let j = 0;
  for (; j + 3 < m; j += 4) {
    r[o + j] = x[at + j];
    r[o + j + 1] = x[at + j + 1];
    r[o + j + 2] = x[at + j + 2];
    r[o + j + 3] = x[at + j + 3];
  }
  for (; j < m; j++) r[o + j] = x[at + j];
}

/** `x` repeated to dims `out` (it broadcasts to them). */
export function broadcastTo(x: number | Float64Array, xd: Dims, out: Dims): Float64Array {
  const r = alloc(size(out), true);
  if (typeof x === "number") return r.fill(x);
  if (x.length === 1) return r.fill(x[0]);
  // a row repeated (a bias): copies; each element along the last axis (a column): a loop
  // (rows are short here: a call to fill per row costs more than it saves)
  const p = pattern(xd, out);
  const m = out[out.length - 1];
  if (p === "row") for (let o = 0; o < r.length; o += x.length) r.set(x, o);
  else if (p === "column") for (let i = 0, o = 0; o < r.length; i++) for (let j = 0, v = x[i]; j < m; j++) r[o++] = v;
  else {
    // any other broadcast (an axis inserted in the middle, as sum's reverse rule over a
    // middle axis makes): a row of the result at a time, x read at its stride along it
    // (1, or 0 where the last axis is broadcast), not a callback per element
    odometerRows(out, [xd], (o, offs, along) => {
      const at = offs[0];
      if (along[0] === 0) r.fill(x[at], o, o + m);
      else copyRow(r, o, x, at, m);
    });
  }
  return r;
}

/**
 * Batched matrix product: [..., n, k] @ [..., k, m] → [..., n, m], batch axes broadcast.
 * Where every batch shares one B and A is not broadcast (a stack of matrices times one
 * matrix: a Gaussian mixture's factors times the points), the batches' rows are
 * contiguous in A and in the result: one product of all of them, whose elements are the
 * same sums (gemm.ts), and B is copied into the SIMD kernel's memory once, not per batch.
 */
export function matmul(a: Float64Array, ad: Dims, b: Float64Array, bd: Dims, out: Dims): Float64Array {
  const n = ad[ad.length - 2];
  const k = ad[ad.length - 1];
  const m = bd[bd.length - 1];
  const r = alloc(size(out), true);
  const batch = out.slice(0, -2);
  if (batch.length === 0) gemm(a, 0, b, 0, r, 0, n, k, m);
  else if (size(bd) === k * m && size(ad) === size(batch) * n * k) gemm(a, 0, b, 0, r, 0, size(batch) * n, k, m);
  else odometer(batch, [ad.slice(0, -2), bd.slice(0, -2)], (o, offs) => gemm(a, offs[0] * n * k, b, offs[1] * k * m, r, o * n * m, n, k, m));
  return r;
}

/** Axes permuted: result axis i is `x`'s axis perm[i]. */
export function transpose(x: Float64Array, xd: Dims, perm: readonly number[]): Float64Array {
  const out = perm.map((p) => xd[p]);
  const rank = out.length;
  const r = alloc(x.length, true);
  if (rank >= 2 && swapsLastTwo(perm)) {
    // matrices transposed one by one (the reverse rule of matmul makes these)
    const rows = xd[rank - 2];
    const cols = xd[rank - 1];
    for (let o = 0; o < x.length; o += rows * cols) transposeMatrix(x, r, o, rows, cols);
    return r;
  }
  const xs = strides(xd);
  const ps = perm.map((p) => xs[p]);
  const idx = new Int32Array(rank);
  let off = 0;
  for (let o = 0; o < r.length; o++) {
    r[o] = x[off];
    for (let ax = rank - 1; ax >= 0; ax--) {
      idx[ax]++;
      off += ps[ax];
      if (idx[ax] < out[ax]) break;
      off -= ps[ax] * out[ax];
      idx[ax] = 0;
    }
  }
  return r;
}

const swapsLastTwo = (perm: readonly number[]): boolean => {
  const n = perm.length;
  for (let i = 0; i < n - 2; i++) if (perm[i] !== i) return false;
  return perm[n - 2] === n - 1 && perm[n - 1] === n - 2;
};

/**
 * r[o…] (cols×rows) = x[o…] (rows×cols)ᵀ. Four rows of x are read at a time, so each
 * step writes four neighbouring elements of r (one cache line) where a plain loop writes
 * one, a whole row of r apart at each step (square tiles write part of a line at a
 * time). Columns go in bands of TILE, so the rows of r a band writes stay in cache
 * while its source rows are read.
 */
const TILE = 64;
function transposeMatrix(x: Float64Array, r: Float64Array, o: number, rows: number, cols: number): void {
  for (let j0 = 0; j0 < cols; j0 += TILE) {
    const j1 = Math.min(j0 + TILE, cols);
    let i = 0;
    for (; i + 3 < rows; i += 4) {
      const f0 = o + i * cols, f1 = f0 + cols, f2 = f1 + cols, f3 = f2 + cols;
      for (let j = j0, to = o + j0 * rows + i; j < j1; j++, to += rows) {
        r[to] = x[f0 + j];
        r[to + 1] = x[f1 + j];
        r[to + 2] = x[f2 + j];
        r[to + 3] = x[f3 + j];
      }
    }
    for (; i < rows; i++) {
      const f = o + i * cols;
      for (let j = j0, to = o + j0 * rows + i; j < j1; j++, to += rows) r[to] = x[f + j];
    }
  }
}

/** Copy the box `starts ≤ index < ends` out of `x`. */
export function slice(x: Float64Array, xd: Dims, starts: readonly number[], ends: readonly number[]): Float64Array {
  const out = ends.map((e, i) => e - starts[i]);
  const xs = strides(xd);
  const base = starts.reduce((s, st, i) => s + st * xs[i], 0);
  const r = alloc(size(out), true);
  let o = 0;
  const rank = out.length;
  if (rank === 0) return Float64Array.of(x[base]);
  const idx = new Int32Array(rank);
  const inner = out[rank - 1];
  const rows = r.length / Math.max(inner, 1);
  let off = base;
  for (let row = 0; row < rows && inner > 0; row++) {
    copyRow(r, o, x, off, inner);
    o += inner;
    for (let ax = rank - 2; ax >= 0; ax--) {
      idx[ax]++;
      off += xs[ax];
      if (idx[ax] < out[ax]) break;
      off -= xs[ax] * out[ax];
      idx[ax] = 0;
    }
  }
  return r;
}

/** Add `piece` (dims `pd`, same rank as `out`, or a scalar) into `r` at `starts`. */
export function addAt(r: Float64Array, out: Dims, piece: number | Float64Array, pd: Dims, starts: readonly number[]): void {
  const rs = strides(out);
  const base = starts.reduce((s, st, i) => s + st * rs[i], 0);
  if (typeof piece === "number") {
    r[base] += piece;
    return;
  }
  const rank = pd.length;
  if (rank === 0) {
    r[base] += piece[0];
    return;
  }
  const idx = new Int32Array(rank);
  const inner = pd[rank - 1];
  const rows = piece.length / Math.max(inner, 1);
  let off = base;
  let p = 0;
  for (let row = 0; row < rows && inner > 0; row++) {
    for (let j = 0; j < inner; j++) r[off + j] += piece[p++];
    for (let ax = rank - 2; ax >= 0; ax--) {
      idx[ax]++;
      off += rs[ax];
      if (idx[ax] < pd[ax]) break;
      off -= rs[ax] * pd[ax];
      idx[ax] = 0;
    }
  }
}

/** `x` with axis `axis` replaced by the entries `indices` of it. */
export function gather(x: Float64Array, xd: Dims, indices: ArrayLike<number>, axis: number): Float64Array {
  const outer = size(xd.slice(0, axis));
  const inner = size(xd.slice(axis + 1));
  const len = xd[axis];
  const r = alloc(outer * indices.length * inner, true);
  if (inner === 1) return gatherElements(r, x, outer, len, indices);
  const m = indices.length;
  for (let p = 0, o = 0; p < outer; p++) {
    for (let q = 0; q < m; q++, o += inner) copyRow(r, o, x, (p * len + indices[q]) * inner, inner);
  }
  return r;
}

/** r[o …] += x[s …], `inner` elements, four per step as copyRow (each element still one addition, in the same order). */
function addRow(r: Float64Array, o: number, x: Float64Array, s: number, inner: number): void {
  let j = 0;
  for (; j + 3 < inner; j += 4) {
    r[o + j] += x[s + j];
    r[o + j + 1] += x[s + j + 1];
    r[o + j + 2] += x[s + j + 2];
    r[o + j + 3] += x[s + j + 3];
  }
  for (; j < inner; j++) r[o + j] += x[s + j];
}

/** gather along the last axis: one element per index, without an inner loop of one (ht gathers its points so). */
function gatherElements(r: Float64Array, x: Float64Array, outer: number, len: number, indices: ArrayLike<number>): Float64Array {
  const n = indices.length;
  for (let p = 0; p < outer; p++) {
    const base = p * len;
    const o = p * n;
    for (let q = 0; q < n; q++) r[o + q] = x[base + indices[q]];
  }
  return r;
}

/** A copy of `t` with `values` (gathered shape) added at `indices` along `axis`. */
export function scatterAdd(t: Float64Array, td: Dims, indices: ArrayLike<number>, values: Float64Array, axis: number): Float64Array {
  const r = pooledCopy(t);
  const outer = size(td.slice(0, axis));
  const inner = size(td.slice(axis + 1));
  const len = td[axis];
  const m = indices.length;
  for (let p = 0, v = 0; p < outer; p++) {
    for (let q = 0; q < m; q++, v += inner) addRow(r, (p * len + indices[q]) * inner, values, v, inner);
  }
  return r;
}

/** Tensors joined along `axis` (all other dims equal). */
export function concat(xs: readonly Float64Array[], dims: readonly Dims[], axis: number, out: Dims): Float64Array {
  const r = alloc(size(out), true);
  const outer = size(out.slice(0, axis));
  const chunks = dims.map((d) => size(d.slice(axis)));
  let o = 0;
  for (let p = 0; p < outer; p++) {
    for (let k = 0; k < xs.length; k++) {
      const chunk = chunks[k];
      // short pieces element by element: a subarray per piece cost more than the copy (GradBench gmm's [k, d, 1 + d])
      if (chunk < SHORT_PIECE) copyPiece(r, o, xs[k], p * chunk, chunk);
      else r.set(xs[k].subarray(p * chunk, (p + 1) * chunk), o);
      o += chunk;
    }
  }
  return r;
}

/** Pieces of concat shorter than this are copied by a loop, not by subarray and set. */
const SHORT_PIECE = 32;

function copyPiece(r: Float64Array, o: number, x: Float64Array, from: number, n: number): void {
  for (let j = 0; j < n; j++) r[o + j] = x[from + j];
}

export interface ConvParams {
  readonly stride: readonly [number, number];
  readonly padding: readonly [number, number];
}

/**
 * The one loop nest of 2-D convolution (NCHW input, OIHW weights), used three ways:
 * `y += x ⋆ w` (forward), `x̄ += ȳ ⋆ᵀ w` (adjoint in x), `w̄ += x ⋆ᵀ ȳ` (adjoint in w).
 * Each is bilinear, and each is the transpose of the others in one argument.
 */
export function convLoops(
  mode: "forward" | "input" | "filter",
  x: Float64Array,
  xd: Dims,
  w: Float64Array,
  wd: Dims,
  y: Float64Array,
  yd: Dims,
  p: ConvParams,
): void {
  const [N, C, H, W] = xd;
  const [O, , KH, KW] = wd;
  const [, , OH, OW] = yd;
  const [sh, sw] = p.stride;
  const [ph, pw] = p.padding;
  for (let n = 0; n < N; n++) {
    for (let o = 0; o < O; o++) {
      for (let c = 0; c < C; c++) {
        for (let kh = 0; kh < KH; kh++) {
          for (let kw = 0; kw < KW; kw++) {
            const wi = ((o * C + c) * KH + kh) * KW + kw;
            for (let oh = 0; oh < OH; oh++) {
              const h = oh * sh - ph + kh;
              if (h < 0 || h >= H) continue;
              const xrow = ((n * C + c) * H + h) * W;
              const yrow = ((n * O + o) * OH + oh) * OW;
              for (let ow = 0; ow < OW; ow++) {
                const ww = ow * sw - pw + kw;
                if (ww < 0 || ww >= W) continue;
                if (mode === "forward") y[yrow + ow] += x[xrow + ww] * w[wi];
                else if (mode === "input") x[xrow + ww] += y[yrow + ow] * w[wi];
                else w[wi] += x[xrow + ww] * y[yrow + ow];
              }
            }
          }
        }
      }
    }
  }
}
