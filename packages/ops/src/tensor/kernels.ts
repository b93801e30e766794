/**
 * @file Forward kernels on contiguous row-major Float64Array buffers.
 *
 * No allocation per element: each kernel allocates its output once and loops. General
 * cases walk the output with an odometer (one counter per axis) and per-argument
 * strides, 0 along broadcast axes; common cases (same shapes, a scalar operand, the
 * last axis) have straight loops.
 */
import { alloc } from "./pool.js";
import { broadcastStrides, size, strides, type Dims } from "./dims.js";

/** `f` applied to every element. */
export function map(x: Float64Array, f: (x: number) => number): Float64Array {
  const out = alloc(x.length, true);
  for (let i = 0; i < x.length; i++) out[i] = f(x[i]);
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
  if (typeof a === "number" || a.length === 1) {
    const s = typeof a === "number" ? a : a[0];
    if (typeof b === "number") r.fill(f(s, b));
    else if (b.length === n && f === MUL) for (let i = 0; i < n; i++) r[i] = s * b[i];
    else if (b.length === n && f === SUB) for (let i = 0; i < n; i++) r[i] = s - b[i];
    else if (b.length === n) for (let i = 0; i < n; i++) r[i] = f(s, b[i]);
    else odometer(out, [bd], (o, offs) => (r[o] = f(s, b[offs[0]])));
    return r;
  }
  if (typeof b === "number" || b.length === 1) {
    const s = typeof b === "number" ? b : b[0];
    if (a.length === n && f === MUL) for (let i = 0; i < n; i++) r[i] = a[i] * s;
    else if (a.length === n && f === ADD) for (let i = 0; i < n; i++) r[i] = a[i] + s;
    else if (a.length === n && f === SUB) for (let i = 0; i < n; i++) r[i] = a[i] - s;
    else if (a.length === n && f === DIV) for (let i = 0; i < n; i++) r[i] = a[i] / s;
    else if (a.length === n) for (let i = 0; i < n; i++) r[i] = f(a[i], s);
    else odometer(out, [ad], (o, offs) => (r[o] = f(a[offs[0]], s)));
    return r;
  }
  if (a.length === n && b.length === n && ad.length === bd.length) {
    if (!arithmetic(r, a, b, f)) for (let i = 0; i < n; i++) r[i] = f(a[i], b[i]);
    return r;
  }
  // the two common broadcasts without an odometer: a bias row ([m] against [n, m]) and
  // a column ([n, 1] against [n, m])
  const pa = a.length === n ? "full" : pattern(ad, out);
  const pb = b.length === n ? "full" : pattern(bd, out);
  const m = out[out.length - 1];
  if (pa === "full" && pb === "row") {
    for (let o = 0; o < n; o += b.length) for (let j = 0; j < b.length; j++) r[o + j] = f(a[o + j], b[j]);
  } else if (pa === "row" && pb === "full") {
    for (let o = 0; o < n; o += a.length) for (let j = 0; j < a.length; j++) r[o + j] = f(a[j], b[o + j]);
  } else if (pa === "full" && pb === "column") {
    for (let i = 0, o = 0; o < n; i++) for (let j = 0; j < m; j++, o++) r[o] = f(a[o], b[i]);
  } else if (pa === "column" && pb === "full") {
    for (let i = 0, o = 0; o < n; i++) for (let j = 0; j < m; j++, o++) r[o] = f(a[i], b[o]);
  } else odometer(out, [ad, bd], (o, offs) => (r[o] = f(a[offs[0]], b[offs[1]])));
  return r;
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

/**
 * The four arithmetic kernels on same-shape buffers as straight loops: a call through
 * `f` per element is a megamorphic call V8 cannot inline, and these four are most of
 * what derivatives compute. `f` is compared by identity with scalar.ts's kernels.
 */
function arithmetic(r: Float64Array, a: Float64Array, b: Float64Array, f: (a: number, b: number) => number): boolean {
  const n = r.length;
  if (f === ARITH.add) for (let i = 0; i < n; i++) r[i] = a[i] + b[i];
  else if (f === ARITH.mul) for (let i = 0; i < n; i++) r[i] = a[i] * b[i];
  else if (f === ARITH.sub) for (let i = 0; i < n; i++) r[i] = a[i] - b[i];
  else if (f === ARITH.div) for (let i = 0; i < n; i++) r[i] = a[i] / b[i];
  else return false;
  return true;
}

/** The scalar kernels `arithmetic` recognizes (set by scalar.ts's table). */
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
    if (contiguous) blocks(x, xd, axes, (o, i) => (out[o] += Math.exp(x[i] - m[o])), (o, from, to, step) => {
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
  blocks(x, xd, axes, step, (o, from, to, stride) => {
    // one output element from a strided run of x, in a local: the common cases' loop
    let acc = out[o];
    if (kind === "sum") for (let i = from; i < to; i += stride) acc += x[i];
    else if (kind === "max") for (let i = from; i < to; i += stride) acc = x[i] > acc || Number.isNaN(x[i]) ? x[i] : acc;
    else for (let i = from; i < to; i += stride) acc = x[i] < acc || Number.isNaN(x[i]) ? x[i] : acc;
    out[o] = acc;
  });
  return out;
}

/**
 * Visit x reduced over a contiguous block of axes, read as [A, R, B] (A: the axes before,
 * R: the reduced ones, B: those after). When B is 1 each output element is one run of x
 * (`run(o, from, to, 1)`); otherwise `step(o, i)` per element, in memory order.
 */
function blocks(
  x: Float64Array,
  xd: Dims,
  axes: readonly number[],
  step: (o: number, i: number) => void,
  run: (o: number, from: number, to: number, stride: number) => void,
): void {
  const A = size(xd.slice(0, axes[0] ?? xd.length));
  const R = size(xd.slice(axes[0] ?? xd.length, (axes[axes.length - 1] ?? -1) + 1));
  const B = x.length / Math.max(A * R, 1);
  if (B === 1) {
    for (let a = 0; a < A; a++) run(a, a * R, (a + 1) * R, 1);
    return;
  }
  for (let a = 0; a < A; a++) for (let r = 0; r < R; r++) for (let b = 0, i = (a * R + r) * B; b < B; b++, i++) step(a * B + b, i);
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
  const r = alloc(size(out));
  const batch = out.slice(0, -2);
  if (batch.length === 0) gemm(a, 0, b, 0, r, 0, n, k, m);
  else odometer(batch, [ad.slice(0, -2), bd.slice(0, -2)], (o, offs) => gemm(a, offs[0] * n * k, b, offs[1] * k * m, r, o * n * m, n, k, m));
  return r;
}

/**
 * r[ro…] += a[ao…] (n×k) · b[bo…] (k×m), row-major. i-k-j order, so the inner loop runs
 * along contiguous rows of b and r; four rows of a and four of b per pass keep sixteen
 * products in registers for each element of r loaded and stored (about 6× the plain
 * i-k-j loop on V8). Leftover rows and columns of a go one at a time.
 */
function gemm(a: Float64Array, ao: number, b: Float64Array, bo: number, r: Float64Array, ro: number, n: number, k: number, m: number): void {
  const k4 = k - (k % 4);
  let i = 0;
  for (; i + 3 < n; i += 4) {
    const r0 = ro + i * m, r1 = r0 + m, r2 = r1 + m, r3 = r2 + m;
    const a0 = ao + i * k, a1 = a0 + k, a2 = a1 + k, a3 = a2 + k;
    for (let p = 0; p < k4; p += 4) {
      const s0 = a[a0 + p], s1 = a[a0 + p + 1], s2 = a[a0 + p + 2], s3 = a[a0 + p + 3];
      const t0 = a[a1 + p], t1 = a[a1 + p + 1], t2 = a[a1 + p + 2], t3 = a[a1 + p + 3];
      const u0 = a[a2 + p], u1 = a[a2 + p + 1], u2 = a[a2 + p + 2], u3 = a[a2 + p + 3];
      const v0 = a[a3 + p], v1 = a[a3 + p + 1], v2 = a[a3 + p + 2], v3 = a[a3 + p + 3];
      const q0 = bo + p * m;
      for (let j = 0; j < m; j++) {
        const q = q0 + j;
        const x0 = b[q], x1 = b[q + m], x2 = b[q + 2 * m], x3 = b[q + 3 * m];
        r[r0 + j] += s0 * x0 + s1 * x1 + s2 * x2 + s3 * x3;
        r[r1 + j] += t0 * x0 + t1 * x1 + t2 * x2 + t3 * x3;
        r[r2 + j] += u0 * x0 + u1 * x1 + u2 * x2 + u3 * x3;
        r[r3 + j] += v0 * x0 + v1 * x1 + v2 * x2 + v3 * x3;
      }
    }
    for (let p = k4; p < k; p++) {
      const s = a[a0 + p], t = a[a1 + p], u = a[a2 + p], v = a[a3 + p], q0 = bo + p * m;
      for (let j = 0; j < m; j++) {
        const x = b[q0 + j];
        r[r0 + j] += s * x;
        r[r1 + j] += t * x;
        r[r2 + j] += u * x;
        r[r3 + j] += v * x;
      }
    }
  }
  for (; i < n; i++) {
    const r0 = ro + i * m;
    const a0 = ao + i * k;
    for (let p = 0; p < k; p++) {
      const s = a[a0 + p], q0 = bo + p * m;
      for (let j = 0; j < m; j++) r[r0 + j] += s * b[q0 + j];
    }
  }
}

/** Axes permuted: result axis i is `x`'s axis perm[i]. */
export function transpose(x: Float64Array, xd: Dims, perm: readonly number[]): Float64Array {
  const out = perm.map((p) => xd[p]);
  const xs = strides(xd);
  const ps = perm.map((p) => xs[p]);
  const r = alloc(x.length, true);
  const rank = out.length;
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
