/**
 * scaledExp (src/tensor/scaled-exp.ts), c·exp(x − m): its one SIMD pass against the three
 * operations it stands for (x − m, exp, c·), to the bit, over random x of every range
 * (exp's ±700 and past it, ±∞, NaN), m and c; and with m and c broadcast along axes (the
 * three operations themselves).
 */
import { describe, expect, it } from "vitest";
import { exp } from "../src/exp.js";
import { EXP_SIMD_FROM } from "../src/tensor/simd-exp.js";
import { ARITH, map, scaledExp, zip } from "../src/tensor/kernels.js";
import { randomInt, rng, sameBits } from "./random.js";

/** The three operations: zip(c, map(zip(x, m, −), exp), ×). */
function threeOps(x: Float64Array, xd: number[], m: Float64Array, md: number[], c: Float64Array, cd: number[]): Float64Array {
  return zip(c, cd, map(zip(x, xd, m, md, xd, ARITH.sub), exp), xd, xd, ARITH.mul);
}

describe("scaledExp", () => {
  it("one element m and c: the SIMD pass equals the three operations, to the bit", () => {
    const next = rng(41);
    const specials = [NaN, Infinity, -Infinity, 0, -0, 1e308, -1e308];
    for (let trial = 0; trial < 60; trial++) {
      const n = randomInt(next, EXP_SIMD_FROM, EXP_SIMD_FROM + 300);
      const spread = [1, 50, 800][trial % 3];
      const special = (): number => specials[randomInt(next, 0, specials.length - 1)];
      const x = Float64Array.from({ length: n }, () => (trial % 4 === 0 && next() < 0.02 ? special() : spread * (2 * next() - 1)));
      const m = Float64Array.of(trial % 5 === 0 ? special() : spread * (2 * next() - 1));
      const c = Float64Array.of(trial % 7 === 0 ? 1 : 10 * (2 * next() - 1));
      const got = scaledExp(x, [n], m, [], c, [1], [n]);
      expect(sameBits(got, threeOps(x, [n], m, [1], c, [1])), `trial ${trial}: n ${n}, m ${m[0]}, c ${c[0]}`).toBe(true);
      // reals as numbers, the same
      expect(sameBits(scaledExp(x, [n], m[0], [], c[0], [], [n]), got)).toBe(true);
    }
  });

  it("m and c broadcast along an axis (a row's logsumexp and cotangent)", () => {
    const next = rng(42);
    const [rows, cols] = [5, 300];
    const x = Float64Array.from({ length: rows * cols }, () => 20 * next() - 10);
    const m = Float64Array.from({ length: rows }, () => 10 * next());
    const c = Float64Array.from({ length: rows }, () => next());
    const got = scaledExp(x, [rows, cols], m, [rows, 1], c, [rows, 1], [rows, cols]);
    for (let r = 0; r < rows; r++) {
      const want = Float64Array.from(x.subarray(r * cols, (r + 1) * cols), (v) => c[r] * exp(v - m[r]));
      expect(sameBits(got.subarray(r * cols, (r + 1) * cols), want), `row ${r}`).toBe(true);
    }
  });
});
