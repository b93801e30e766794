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

/**
 * From this many elements of b (2 MB, past a core's L2 here), a product of fewer rows than
 * a SIMD block (fewRows) stays in JavaScript: the SIMD kernel would copy all of b into wasm
 * memory and then read it again, padding a to a block of rows, for one to three multiply-adds
 * per element of b; one pass over b in JavaScript costs less than that copy. The shapes:
 * llsq's gradient, a row times a tall b ([1×16 392]·[16 392×128]: 1.6 against 7.0 ms), and
 * ht's skinning, three rows times a wide one ([3×88]·[88×10 000]: 1.0 against 2.2 ms).
 * Below it, b stays in the cache from the copy to the kernel and SIMD wins (3×128·128×128:
 * 9 against 18 µs); with fewer than four rows of b (k < 4) there is no four-row pass.
 */
const FEW_ROWS_FROM = 1 << 18;

/** r[ro…] = a[ao…] (n×k) · b[bo…] (k×m), row-major: r's block is overwritten. */
export function gemm(a: Float64Array, ao: number, b: Float64Array, bo: number, r: Float64Array, ro: number, n: number, k: number, m: number): void {
  if (m === 1) return gemv(a, ao, b, bo, r, ro, n, k);
  if (n < 4 && k >= 4 && k * m >= FEW_ROWS_FROM) return fewRows(a, ao, b, bo, r, ro, n, k, m);
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
 * i-k-j loop loads and stores one per product), added to it one after another, in p order. Leftover columns
 * of a go one at a time, leftover rows to fewRows.
 */
export function jsGemm(a: Float64Array, ao: number, b: Float64Array, bo: number, r: Float64Array, ro: number, n: number, k: number, m: number): void {
  r.fill(0, ro, ro + (n - (n % 4)) * m);
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
  if (i < n) fewRows(a, ao + i * k, b, bo, r, ro + i * m, n - i, k, m);
}

/**
 * r[ro…] = a[ao…] (n×k, n ≤ 3) · b[bo…] (k×m), all n rows in one pass over b: four rows
 * of b per step, as jsGemm's blocks take them, each element of r added to left to right in
 * p order (the definition, to the bit). jsGemm's leftover rows, and gemm's few rows against
 * a large b (FEW_ROWS_FROM). A row at a time would read b once per row.
 */
export function fewRows(a: Float64Array, ao: number, b: Float64Array, bo: number, r: Float64Array, ro: number, n: number, k: number, m: number): void {
  r.fill(0, ro, ro + n * m);
  const k4 = k - (k % 4);
  const r0 = ro, r1 = r0 + m, r2 = r1 + m;
  const a0 = ao, a1 = a0 + k, a2 = a1 + k;
  for (let p = 0; p < k4; p += 4) {
    const s0 = a[a0 + p], s1 = a[a0 + p + 1], s2 = a[a0 + p + 2], s3 = a[a0 + p + 3];
    const q0 = bo + p * m;
    if (n === 1) {
      for (let j = 0, q = q0; j < m; j++, q++) r[r0 + j] = r[r0 + j] + s0 * b[q] + s1 * b[q + m] + s2 * b[q + 2 * m] + s3 * b[q + 3 * m];
      continue;
    }
    const t0 = a[a1 + p], t1 = a[a1 + p + 1], t2 = a[a1 + p + 2], t3 = a[a1 + p + 3];
    if (n === 2) {
      for (let j = 0, q = q0; j < m; j++, q++) {
        const x0 = b[q], x1 = b[q + m], x2 = b[q + 2 * m], x3 = b[q + 3 * m];
        r[r0 + j] = r[r0 + j] + s0 * x0 + s1 * x1 + s2 * x2 + s3 * x3;
        r[r1 + j] = r[r1 + j] + t0 * x0 + t1 * x1 + t2 * x2 + t3 * x3;
      }
      continue;
    }
    const u0 = a[a2 + p], u1 = a[a2 + p + 1], u2 = a[a2 + p + 2], u3 = a[a2 + p + 3];
    for (let j = 0, q = q0; j < m; j++, q++) {
      const x0 = b[q], x1 = b[q + m], x2 = b[q + 2 * m], x3 = b[q + 3 * m];
      r[r0 + j] = r[r0 + j] + s0 * x0 + s1 * x1 + s2 * x2 + s3 * x3;
      r[r1 + j] = r[r1 + j] + t0 * x0 + t1 * x1 + t2 * x2 + t3 * x3;
      r[r2 + j] = r[r2 + j] + u0 * x0 + u1 * x1 + u2 * x2 + u3 * x3;
    }
  }
  for (let i = 0; i < n; i++) {
    const ri = ro + i * m, ai = ao + i * k;
    for (let p = k4; p < k; p++) {
      const s = a[ai + p], q0 = bo + p * m;
      for (let j = 0; j < m; j++) r[ri + j] += s * b[q0 + j];
    }
  }
}
