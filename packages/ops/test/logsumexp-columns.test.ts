/**
 * logsumexp and logSoftmax over leading or middle axes (x read as [A, R, B], B ≥ 2: each
 * output element a column, as GradBench gmm's logsumexp over the components of [k, n])
 * against the plain definition, to the bit: m the column's max (NaN as soon as one is met,
 * 0 where it is ±∞ or NaN), the exponentials added row by row from zero, m + log of the sum.
 * Above EXP_SIMD_FROM elements max and sums are simd-exp.ts's column passes (columnMax, columnExpSums),
 * below the JavaScript loop's.
 */
import { describe, expect, it } from "vitest";
import { exp } from "../src/exp.js";
import { EXP_SIMD_FROM } from "../src/tensor/simd-exp.js";
import { logSoftmax, reduce } from "../src/tensor/kernels.js";
import { randomInt, rng, sameBits } from "./random.js";

/** The plain definition over the middle axis of x as [A, R, B]: [m, log Σ exp(x − m)] per column. */
function plainColumns(x: Float64Array, A: number, R: number, B: number): [Float64Array, Float64Array] {
  const m = new Float64Array(A * B).fill(-Infinity);
  const s = new Float64Array(A * B);
  for (let a = 0; a < A; a++) {
    for (let b = 0; b < B; b++) {
      const o = a * B + b;
      for (let r = 0; r < R; r++) {
        const v = x[(a * R + r) * B + b];
        if (v > m[o] || Number.isNaN(v)) m[o] = v;
      }
      if (!Number.isFinite(m[o])) m[o] = 0;
      for (let r = 0; r < R; r++) s[o] += exp(x[(a * R + r) * B + b] - m[o]);
      s[o] = Math.log(s[o]);
    }
  }
  return [m, s];
}

describe("logsumexp over leading and middle axes", () => {
  it("equals m + log Σ exp(x − m) column by column, above and below the SIMD threshold", () => {
    const next = rng(41);
    const shapes: [number, number, number][] = [[1, 25, 1000], [1, 5, 60], [3, 4, 30], [2, 100, 2], [1, 2, EXP_SIMD_FROM / 2], [4, 3, 7]];
    for (let t = 0; t < 20; t++) shapes.push([randomInt(next, 1, 4), randomInt(next, 1, 40), randomInt(next, 2, 300)]);
    for (const [A, R, B] of shapes) {
      const x = Float64Array.from({ length: A * R * B }, () => 1600 * next() - 800);
      // columns with −∞, +∞, NaN, all −∞, and values past exp's range from their max
      const special = [-Infinity, Infinity, NaN, -0];
      for (let k = 0; k < Math.min(B, 8); k++) x[randomInt(next, 0, A * R - 1) * B + randomInt(next, 0, B - 1)] = special[k % 4];
      for (let i = 0; i < A * R; i++) x[i * B + (B - 1)] = -Infinity;
      const [m, logSum] = plainColumns(x, A, R, B);
      const dims = A === 1 ? [R, B] : [A, R, B];
      const axes = A === 1 ? [0] : [1];
      const lse = reduce(x, dims, axes, "logsumexp");
      expect(sameBits(lse, m.map((v, o) => v + logSum[o])), `logsumexp of ${A}×${R}×${B}`).toBe(true);
      const y = logSoftmax(x, dims, axes);
      const want = x.map((v, i) => {
        const o = Math.floor(i / (R * B)) * B + (i % B);
        return v - m[o] - logSum[o];
      });
      expect(sameBits(y, want), `logSoftmax of ${A}×${R}×${B}`).toBe(true);
    }
  });
});
