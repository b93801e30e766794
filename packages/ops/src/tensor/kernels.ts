/**
 * @file Forward kernels on contiguous row-major Float64Array buffers.
 *
 * No allocation per element: each kernel allocates its output once and loops. General
 * cases walk the output with an odometer (one counter per axis) and per-argument
 * strides, 0 along broadcast axes; common cases (same shapes, a scalar operand, the
 * last axis) have straight loops.
 */
import { gemm } from "./gemm.js";
import { alloc } from "./pool.js";
import { broadcastStrides, size, strides, type Dims } from "./dims.js";

/**
 * `f` applied to every element. The transcendental kernels scalar.ts takes from `Math`
 * are recognized and called by name: V8 then calls its C implementation directly, where
 * a call through `f` (a megamorphic site, as map serves every unary primitive) costs as
 * much again. Same function, same numbers.
 */
export function map(x: Float64Array, f: (x: number) => number): Float64Array {
  const out = alloc(x.length, true);
  const n = x.length;
  if (f === Math.tanh) for (let i = 0; i < n; i++) out[i] = Math.tanh(x[i]);
  else if (f === Math.exp) for (let i = 0; i < n; i++) out[i] = Math.exp(x[i]);
  else if (f === Math.log) for (let i = 0; i < n; i++) out[i] = Math.log(x[i]);
  else for (let i = 0; i < n; i++) out[i] = f(x[i]);
  return out;
}

/**
 * Visit every index of `out` in row-major order, calling `body(o, offsets)` with the
 * flat output index and each argument's flat index (broadcasting by stride 0).
 */
function odometer(out: Dims, args: readonly Dims[], body: (o: number, offs: Int32Array) => void): void {
  const rank = out.length;
  const n = size(out);
  const st = args.map((d) => broadcastStrides(d, out));
  const offs = new Int32Array(args.length);
  const idx = new Int32Array(rank);
  for (let o = 0; o < n; o++) {
    body(o, offs);
    for (let ax = rank - 1; ax >= 0; ax--) {
      idx[ax]++;
      for (let k = 0; k < st.length; k++) offs[k] += st[k][ax];
      if (idx[ax] < out[ax]) break;
      for (let k = 0; k < st.length; k++) offs[k] -= st[k][ax] * out[ax];
      idx[ax] = 0;
    }
  }
}

/** `f(a, b)` elementwise with broadcasting; scalars are numbers. */
export function zip(
  a: number | Float64Array,
  ad: Dims,
  b: number | Float64Array,
  bd: Dims,
  out: Dims,
  f: (a: number, b: number) => number,
): Float64Array {
  const r = alloc(size(out), true);
  const n = r.length;
  const A = typeof a === "number" ? Float64Array.of(a) : a;
  const B = typeof b === "number" ? Float64Array.of(b) : b;
  // each argument whole (stride 1) or one element repeated (stride 0)
  if ((A.length === n || A.length === 1) && (B.length === n || B.length === 1)) {
    run(f, n, r, 0, A, 0, A.length === n ? 1 : 0, B, 0, B.length === n ? 1 : 0);
    return r;
  }
  // the two common broadcasts without an odometer: a bias row ([m] against [n, m]) and
  // a column ([n, 1] against [n, m]), one run per row of the result
  const pa = A.length === n ? "full" : pattern(ad, out);
  const pb = B.length === n ? "full" : pattern(bd, out);
  const m = out[out.length - 1];
  if (pa === "full" && pb === "row") for (let o = 0; o < n; o += B.length) run(f, B.length, r, o, A, o, 1, B, 0, 1);
  else if (pa === "row" && pb === "full") for (let o = 0; o < n; o += A.length) run(f, A.length, r, o, A, 0, 1, B, o, 1);
  else if (pa === "full" && pb === "column") for (let i = 0, o = 0; o < n; i++, o += m) run(f, m, r, o, A, o, 1, B, i, 0);
  else if (pa === "column" && pb === "full") for (let i = 0, o = 0; o < n; i++, o += m) run(f, m, r, o, A, i, 0, B, o, 1);
  else odometer(out, [ad, bd], (o, offs) => (r[o] = f(A[offs[0]], B[offs[1]])));
  return r;
}

/**
 * r[ro + i] = f(a[ao + i·as], b[bo + i·bs]) for i < len: strides 1 walk an argument, 0
 * repeat one element. The four arithmetic kernels get straight loops: a call through `f`
 * per element is a megamorphic call V8 cannot inline, and these four are most of what
 * derivatives compute. `f` is compared by identity with scalar.ts's kernels (ARITH).
 */
function run(
  f: (a: number, b: number) => number,
  len: number,
  r: Float64Array,
  ro: number,
  a: Float64Array,
  ao: number,
  as: number,
  b: Float64Array,
  bo: number,
  bs: number,
): void {
  const end = ro + len;
  if (f === ADD) for (let o = ro, p = ao, q = bo; o < end; o++, p += as, q += bs) r[o] = a[p] + b[q];
  else if (f === MUL) for (let o = ro, p = ao, q = bo; o < end; o++, p += as, q += bs) r[o] = a[p] * b[q];
  else if (f === SUB) for (let o = ro, p = ao, q = bo; o < end; o++, p += as, q += bs) r[o] = a[p] - b[q];
  else if (f === DIV) for (let o = ro, p = ao, q = bo; o < end; o++, p += as, q += bs) r[o] = a[p] / b[q];
  else for (let o = ro, p = ao, q = bo; o < end; o++, p += as, q += bs) r[o] = f(a[p], b[q]);
}

/**
 * How an argument of dims `d` repeats in a result of dims `out`: as a whole along
 * leading axes ("row": its dims are a suffix of out's), or each element along the last
 * axis ("column": out's dims with the last one 1); else "other".
 */
function pattern(d: Dims, out: Dims): "row" | "column" | "other" {
  const off = out.length - d.length;
  let suffix = true;
  for (let i = 0; i < d.length; i++) if (d[i] !== out[i + off] && !(d[i] === 1 && i < firstNonOne(d))) suffix = false;
  if (suffix) return "row";
  if (off === 0 && d[d.length - 1] === 1) {
    for (let i = 0; i < d.length - 1; i++) if (d[i] !== out[i]) return "other";
    return "column";
  }
  return "other";
}

/** The first axis of d whose size is not 1 (leading 1s broadcast like missing axes). */
function firstNonOne(d: Dims): number {
  let i = 0;
  while (i < d.length && d[i] === 1) i++;
  return i;
}

const ADD = (a: number, b: number) => a + b;
const SUB = (a: number, b: number) => a - b;
const MUL = (a: number, b: number) => a * b;
const DIV = (a: number, b: number) => a / b;

/** The scalar kernels `run` recognizes (scalar.ts's table uses these very functions). */
export const ARITH = { add: ADD, sub: SUB, mul: MUL, div: DIV };

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

/** `x` repeated to dims `out` (it broadcasts to them). */
export function broadcastTo(x: number | Float64Array, xd: Dims, out: Dims): Float64Array {
  const r = alloc(size(out), true);
  if (typeof x === "number") return r.fill(x);
  if (x.length === 1) return r.fill(x[0]);
  odometer(out, [xd], (o, offs) => (r[o] = x[offs[0]]));
  return r;
}

export type Reduction = "sum" | "max" | "min" | "logsumexp";

/**
 * Reduce `axes` (sorted) of `x`. The output has the kept axes in order; it is the same
 * buffer whether or not the caller keeps reduced axes as 1.
 */
export function reduce(x: Float64Array, xd: Dims, axes: readonly number[], kind: Reduction): Float64Array {
  const outDims = xd.map((d, i) => (axes.includes(i) ? 1 : d));
  const n = size(outDims);
  const out = alloc(n, true);
  out.fill(kind === "sum" ? 0 : kind === "min" ? Infinity : -Infinity);
  const contiguous = axes.length === 0 || axes[axes.length - 1] - axes[0] === axes.length - 1;
  if (kind === "logsumexp") {
    // log Σ exp(x) = m + log Σ exp(x − m), with m the max (0 where m is ±∞)
    const m = reduce(x, xd, axes, "max");
    for (let o = 0; o < n; o++) if (!Number.isFinite(m[o])) m[o] = 0;
    out.fill(0);
    if (contiguous) blocks(x, xd, axes, (o, i, len) => {
      for (let b = 0; b < len; b++) out[o + b] += Math.exp(x[i + b] - m[o + b]);
    }, (o, from, to, step) => {
      let s = 0;
      const mo = m[o];
      for (let i = from; i < to; i += step) s += Math.exp(x[i] - mo);
      out[o] = s;
    });
    else odometer(xd, [outDims], (i, offs) => (out[offs[0]] += Math.exp(x[i] - m[offs[0]])));
    for (let o = 0; o < n; o++) out[o] = m[o] + Math.log(out[o]);
    return out;
  }
  const step =
    kind === "sum"
      ? (o: number, i: number) => (out[o] += x[i])
      : kind === "max"
        ? (o: number, i: number) => (out[o] = x[i] > out[o] || Number.isNaN(x[i]) ? x[i] : out[o])
        : (o: number, i: number) => (out[o] = x[i] < out[o] || Number.isNaN(x[i]) ? x[i] : out[o]);
  if (!contiguous) {
    odometer(xd, [outDims], (i, offs) => step(offs[0], i));
    return out;
  }
  blocks(x, xd, axes, (o, i, len) => {
    // a run of x into a run of out: the loop per kind, not a call per element
    if (kind === "sum") addRun(out, o, x, i, len);
    else for (let b = 0; b < len; b++) step(o + b, i + b);
  }, (o, from, to, stride) => {
    // one output element from a strided run of x, in a local: the common cases' loop
    let acc = out[o];
    if (kind === "sum") for (let i = from; i < to; i += stride) acc += x[i];
    else if (kind === "max") for (let i = from; i < to; i += stride) acc = x[i] > acc || Number.isNaN(x[i]) ? x[i] : acc;
    else for (let i = from; i < to; i += stride) acc = x[i] < acc || Number.isNaN(x[i]) ? x[i] : acc;
    out[o] = acc;
  });
  return out;
}

/** out[o…o+len) += x[i…i+len), arrays as arguments (a closure's captured ones load slower). */
function addRun(out: Float64Array, o: number, x: Float64Array, i: number, len: number): void {
  for (let b = 0; b < len; b++) out[o + b] += x[i + b];
}

/**
 * Visit x reduced over a contiguous block of axes, read as [A, R, B] (A: the axes before,
 * R: the reduced ones, B: those after). When B is 1 each output element is one run of x
 * (`run(o, from, to, 1)`); otherwise `row(o, i, B)` reduces the run x[i…i+B) into
 * out[o…o+B) elementwise, the runs in memory order.
 */
function blocks(
  x: Float64Array,
  xd: Dims,
  axes: readonly number[],
  row: (o: number, i: number, len: number) => void,
  run: (o: number, from: number, to: number, stride: number) => void,
): void {
  const A = size(xd.slice(0, axes[0] ?? xd.length));
  const R = size(xd.slice(axes[0] ?? xd.length, (axes[axes.length - 1] ?? -1) + 1));
  const B = x.length / Math.max(A * R, 1);
  if (B === 1) {
    for (let a = 0; a < A; a++) run(a, a * R, (a + 1) * R, 1);
    return;
  }
  for (let a = 0; a < A; a++) for (let r = 0; r < R; r++) row(a * B, (a * R + r) * B, B);
}

/** How many elements of each reduced group equal the group's max (or min): > 1 is a tie. */
export function countEqual(x: Float64Array, xd: Dims, axes: readonly number[], y: Float64Array): Float64Array {
  const outDims = xd.map((d, i) => (axes.includes(i) ? 1 : d));
  const count = alloc(size(outDims));
  odometer(xd, [outDims], (i, offs) => {
    if (x[i] === y[offs[0]]) count[offs[0]]++;
  });
  return count;
}

/** Batched matrix product: [..., n, k] @ [..., k, m] → [..., n, m], batch axes broadcast. */
export function matmul(a: Float64Array, ad: Dims, b: Float64Array, bd: Dims, out: Dims): Float64Array {
  const n = ad[ad.length - 2];
  const k = ad[ad.length - 1];
  const m = bd[bd.length - 1];
  const r = alloc(size(out), true);
  const batch = out.slice(0, -2);
  if (batch.length === 0) gemm(a, 0, b, 0, r, 0, n, k, m);
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
 * r[o…] (cols×rows) = x[o…] (rows×cols)ᵀ, in TILE×TILE tiles: within a tile the reads
 * and the writes both stay in a few cache lines, where a plain loop strides through one
 * of them a whole row apart at each step.
 */
const TILE = 16;
function transposeMatrix(x: Float64Array, r: Float64Array, o: number, rows: number, cols: number): void {
  for (let i0 = 0; i0 < rows; i0 += TILE) {
    const i1 = Math.min(i0 + TILE, rows);
    for (let j0 = 0; j0 < cols; j0 += TILE) {
      const j1 = Math.min(j0 + TILE, cols);
      for (let j = j0; j < j1; j++) {
        const to = o + j * rows;
        for (let i = i0, from = o + i0 * cols + j; i < i1; i++, from += cols) r[to + i] = x[from];
      }
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
    for (let j = 0; j < inner; j++) r[o++] = x[off + j];
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
  let o = 0;
  for (let p = 0; p < outer; p++) {
    for (let q = 0; q < indices.length; q++) {
      const src = (p * len + indices[q]) * inner;
      for (let j = 0; j < inner; j++) r[o++] = x[src + j];
    }
  }
  return r;
}

/** A copy of `t` with `values` (gathered shape) added at `indices` along `axis`. */
export function scatterAdd(t: Float64Array, td: Dims, indices: ArrayLike<number>, values: Float64Array, axis: number): Float64Array {
  const r = t.slice();
  const outer = size(td.slice(0, axis));
  const inner = size(td.slice(axis + 1));
  const len = td[axis];
  let v = 0;
  for (let p = 0; p < outer; p++) {
    for (let q = 0; q < indices.length; q++) {
      const dst = (p * len + indices[q]) * inner;
      for (let j = 0; j < inner; j++) r[dst + j] += values[v++];
    }
  }
  return r;
}

/** Tensors joined along `axis` (all other dims equal). */
export function concat(xs: readonly Float64Array[], dims: readonly Dims[], axis: number, out: Dims): Float64Array {
  const r = alloc(size(out), true);
  const outer = size(out.slice(0, axis));
  let o = 0;
  for (let p = 0; p < outer; p++) {
    for (let k = 0; k < xs.length; k++) {
      const chunk = size(dims[k].slice(axis));
      r.set(xs[k].subarray(p * chunk, (p + 1) * chunk), o);
      o += chunk;
    }
  }
  return r;
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
