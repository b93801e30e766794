/**
 * @file The matrix product of row-major blocks, `gemm`: its definition, its JavaScript
 * kernel, and the choice between that and the WebAssembly SIMD kernel (simd-gemm.ts).
 *
 * Definition, which both kernels follow to the bit: every element is the sum over p in
 * increasing order, starting from zero,
 *
 *   r[i][j] = (…((0 + a[i][0]·b[0][j]) + a[i][1]·b[1][j]) + …) + a[i][k−1]·b[k−1][j].
 *
 * Only the order of independent elements differs between the kernels, never the
 * additions within one, so switching kernel (by size, or where wasm SIMD is missing)
 * never changes a number.
 */
import { simdGemm } from "./simd-gemm.js";

/**
 * Below this many multiply-adds the JavaScript kernel wins: copying operands into wasm
 * memory and padding them to whole blocks costs more than the vectors save.
 */
const SIMD_FROM = 4096;

/** r[ro…] = a[ao…] (n×k) · b[bo…] (k×m), row-major: r's block is overwritten. */
export function gemm(a: Float64Array, ao: number, b: Float64Array, bo: number, r: Float64Array, ro: number, n: number, k: number, m: number): void {
  if (m === 1) return gemv(a, ao, b, bo, r, ro, n, k);
  if (n * k * m >= SIMD_FROM && simdGemm(a, ao, b, bo, r, ro, n, k, m)) return;
  jsGemm(a, ao, b, bo, r, ro, n, k, m);
}

/**
 * r[ro…] = a[ao…] (n×k) · b[bo…] (a column of k): each element a dot product, summed in
 * p order from zero as the definition says, four rows of a at a time sharing each element
 * of b. jsGemm's blocks run their inner loop along rows of b, of one element here (llsq's
 * T x: 2 ns per multiply-add, against about half a nanosecond for this loop).
 */
export function gemv(a: Float64Array, ao: number, b: Float64Array, bo: number, r: Float64Array, ro: number, n: number, k: number): void {
  let i = 0;
  for (; i + 3 < n; i += 4) {
    const a0 = ao + i * k, a1 = a0 + k, a2 = a1 + k, a3 = a2 + k;
    let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (let p = 0; p < k; p++) {
      const x = b[bo + p];
      s0 += a[a0 + p] * x;
      s1 += a[a1 + p] * x;
      s2 += a[a2 + p] * x;
      s3 += a[a3 + p] * x;
    }
    r[ro + i] = s0;
    r[ro + i + 1] = s1;
    r[ro + i + 2] = s2;
    r[ro + i + 3] = s3;
  }
  for (; i < n; i++) {
    const a0 = ao + i * k;
    let s = 0;
    for (let p = 0; p < k; p++) s += a[a0 + p] * b[bo + p];
    r[ro + i] = s;
  }
}

/**
 * The JavaScript kernel, and the reference for the SIMD one. i-k-j order, so the inner
 * loop runs along contiguous rows of b and r; four rows of a and four of b per pass keep
 * sixteen products in registers for each element of r loaded and stored (the plain
 * i-k-j loop loads and stores one per product), added to it one after another, in p order. Leftover rows and
 * columns of a go one at a time.
 */
export function jsGemm(a: Float64Array, ao: number, b: Float64Array, bo: number, r: Float64Array, ro: number, n: number, k: number, m: number): void {
  r.fill(0, ro, ro + n * m);
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
        // left to right: the products are added in p order (see the definition above)
        r[r0 + j] = r[r0 + j] + s0 * x0 + s1 * x1 + s2 * x2 + s3 * x3;
        r[r1 + j] = r[r1 + j] + t0 * x0 + t1 * x1 + t2 * x2 + t3 * x3;
        r[r2 + j] = r[r2 + j] + u0 * x0 + u1 * x1 + u2 * x2 + u3 * x3;
        r[r3 + j] = r[r3 + j] + v0 * x0 + v1 * x1 + v2 * x2 + v3 * x3;
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
