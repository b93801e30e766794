/**
 * The SIMD exp (src/tensor/simd-exp.ts) against exp.ts's, to the bit: 10⁶ points over the
 * whole range and past it (exp.test.ts's sample: ±0, subnormals, ±∞, NaN, around ±700,
 * overflow and underflow, any bit pattern), pairs that mix the two ranges of the kernel;
 * logsumexp's passes against the plain definition (the first greatest element, the
 * exponentials added in four partial sums by position); and the kernels that use them (map, reduce, logSoftmax).
 *
 * The full check of 10⁷ points is this file with WENGERT_EXP_POINTS=10000000 (as for
 * exp.test.ts; its result is in packages/ops/results/exp-ulp.md).
 */
import { describe, expect, it } from "vitest";
import { exp } from "../src/exp.js";
import { EXP_SIMD_FROM, simdExp, simdMaxAndExpSums } from "../src/tensor/simd-exp.js";
import { logSoftmax, map, reduce } from "../src/tensor/kernels.js";
import { expSample } from "./exp-sample.js";
import { randomInt, rng, sameBits } from "./random.js";

/** exp.ts's exp at each element, the plain loop. */
const expEach = (x: ArrayLike<number>): Float64Array => Float64Array.from(x, exp);

/** The first place two buffers differ, for the message. */
function firstDifference(got: Float64Array, want: Float64Array, x: ArrayLike<number>): string {
  for (let i = 0; i < got.length; i++) if (!Object.is(got[i], want[i])) return `at x = ${x[i]}: ${got[i]}, exp.ts ${want[i]}`;
  return "none";
}

describe("simdExp", () => {
  const n = Number(process.env.WENGERT_EXP_POINTS ?? 1e6);
  it(`equals exp.ts to the bit on ${n} points of the whole range, in chunks of 10⁶`, { timeout: Math.max(120_000, n / 20) }, () => {
    const points = expSample(rng(31), n);
    const chunk = new Float64Array(1e6);
    for (let done = 0; done < n; done += chunk.length) {
      const len = Math.min(chunk.length, n - done);
      for (let i = 0; i < len; i++) chunk[i] = points.next().value as number;
      const x = chunk.subarray(0, len);
      const got = new Float64Array(len).fill(7.5);
      expect(simdExp(got, x), "the kernel must really run").toBe(true);
      const want = expEach(x);
      expect(sameBits(got, want), firstDifference(got, want, x)).toBe(true);
    }
  });

  it("pairs with one lane past ±700 (or NaN, ±∞) and one within, both orders, and odd lengths", () => {
    const beyond = [700.5, -700.5, 709.78, -745.13, 710.1, -746.1, NaN, Infinity, -Infinity, 1e300, -1e300];
    const within = [0, -0, 1, -1, 699.9, -699.9, 5e-324, 0.3];
    for (const b of beyond) {
      for (const w of within) {
        for (const x of [[b, w], [w, b], [w, b, w], [b, w, b], [b], [w]]) {
          const got = new Float64Array(x.length);
          expect(simdExp(got, Float64Array.from(x))).toBe(true);
          expect(sameBits(got, expEach(x)), `exp of ${x}`).toBe(true);
        }
      }
    }
  });

  it("works in place", () => {
    const x = Float64Array.from({ length: 1001 }, (_, i) => (i - 500) / 7);
    const want = expEach(x);
    expect(simdExp(x, x)).toBe(true);
    expect(sameBits(x, want)).toBe(true);
  });
});

/** reduce.ts's max: the first of the greatest elements, NaN as soon as one comes. */
function plainMax(v: ArrayLike<number>): number {
  let m = -Infinity;
  for (let i = 0; i < v.length; i++) if (!(v[i] <= m)) m = v[i];
  for (let i = 0; i < v.length; i++) if (Number.isNaN(v[i])) return v[i];
  return m;
}
/** Σ exp(v − m): element i added into partial sum i mod 4, in order from 0, then (s₀ + s₂) + (s₁ + s₃). */
function plainSum(v: ArrayLike<number>, m: number): number {
  const s = [0, 0, 0, 0];
  for (let i = 0; i < v.length; i++) s[i % 4] += exp(v[i] - m);
  return s[0] + s[2] + (s[1] + s[3]);
}

describe("simdMaxAndExpSums", () => {
  const specials = [NaN, Infinity, -Infinity, 0, -0, 5e-324, -1e308, 1, 750, -750];
  it("each group's max and Σ exp(x − max) in four partial sums equal the plain loops', to the bit", () => {
    const next = rng(32);
    for (let trial = 0; trial < 300; trial++) {
      const [groups, len] = [randomInt(next, 1, 4), randomInt(next, 1, 300)];
      // a spread of up to ±1000: exponentials past the kernel's ±700, subnormal and zero ones
      const spread = [1, 30, 1000][trial % 3];
      const special = trial % 5 === 0 ? 0.05 : 0;
      const x = Float64Array.from({ length: groups * len }, () => (next() < special ? specials[randomInt(next, 0, specials.length - 1)] : spread * (2 * next() - 1)));
      const m = new Float64Array(groups);
      const sums = new Float64Array(groups);
      expect(simdMaxAndExpSums(x, groups, len, m, sums), "the kernel must really run").toBe(true);
      for (let g = 0; g < groups; g++) {
        const v = x.subarray(g * len, (g + 1) * len);
        const wantMax = plainMax(v);
        expect(Object.is(m[g], wantMax) || (Number.isNaN(m[g]) && Number.isNaN(wantMax)), `max of group ${g} of ${Array.from(v)}`).toBe(true);
        const shift = Number.isFinite(wantMax) ? wantMax : 0;
        expect(sameBits([sums[g]], [plainSum(v, shift)]), `sum of group ${g}: ${len} elements, spread ${spread}`).toBe(true);
      }
    }
  });

  it("sums at the edge of the pass without exp's range check (every x − max ≥ −700) and past it, to the bit", () => {
    const next = rng(35);
    for (const low of [-699.9999, -700, -700.0000001, -701, -745.5, -1e308, -Infinity]) {
      for (const len of [2, 3, 9, 64, 301]) {
        const x = Float64Array.from({ length: len }, () => 3 * next() - 1);
        const at = randomInt(next, 0, len - 1);
        x[at] = low + 2; // the least, 700 and a bit below the greatest at most
        x[(at + 1) % len] = 2;
        const m = new Float64Array(1);
        const sums = new Float64Array(1);
        expect(simdMaxAndExpSums(x, 1, len, m, sums)).toBe(true);
        expect(sameBits([sums[0]], [plainSum(x, plainMax(x))]), `sum of ${len} elements down to ${low} below the max`).toBe(true);
      }
    }
  });

  it("of zeros, keeps the first one's sign, in either lane", () => {
    for (const v of [[-0, 0], [0, -0], [-1, -0, 0], [-1, 0, -0], [-0, -2, 0, -3], [-5, -4, -3, 0, -0, -0], [-5, -4, -3, -0, 0, 0, -1]]) {
      const m = new Float64Array(1);
      expect(simdMaxAndExpSums(Float64Array.from(v), 1, v.length, m, new Float64Array(1))).toBe(true);
      expect(Object.is(m[0], plainMax(v)), `max of ${v}`).toBe(true);
    }
  });
});

describe("the kernels on long buffers", () => {
  it("map(exp) above the SIMD threshold equals exp.ts elementwise", () => {
    const next = rng(33);
    for (const n of [EXP_SIMD_FROM, EXP_SIMD_FROM + 1, 4097]) {
      const x = Float64Array.from({ length: n }, () => 1500 * next() - 750);
      expect(sameBits(map(x, exp), expEach(x)), `n = ${n}`).toBe(true);
    }
  });

  it("logsumexp and logSoftmax over the last axis equal m + log Σ exp(x − m), the sum in four partial sums", () => {
    const next = rng(34);
    // the SIMD passes, and (below EXP_SIMD_FROM elements) reduce.ts's JavaScript loops
    for (const [rows, cols] of [[1, 5000], [3, 1001], [40, 64], [5, 7], [2, 101], [1, 3], [4, 1]]) {
      const x = Float64Array.from({ length: rows * cols }, () => 40 * next() - 20);
      x[cols - 1] = -0; // a row with a zero among others
      const lse = reduce(x, [rows, cols], [1], "logsumexp");
      const y = logSoftmax(x, [rows, cols], [1]);
      for (let r = 0; r < rows; r++) {
        const v = x.subarray(r * cols, (r + 1) * cols);
        const m = plainMax(v);
        const logSum = Math.log(plainSum(v, m));
        expect(Object.is(lse[r], m + logSum), `logsumexp of row ${r} of ${rows}×${cols}`).toBe(true);
        const want = Float64Array.from(v, (e) => e - m - logSum);
        expect(sameBits(y.subarray(r * cols, (r + 1) * cols), want), `logSoftmax of row ${r} of ${rows}×${cols}`).toBe(true);
      }
    }
  });
});
