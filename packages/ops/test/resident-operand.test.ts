/**
 * residentOperand (src/tensor/simd-exp.ts): a copy of x held in the exp kernels' memory,
 * which logsumexp's passes read in place. The passes on it give the bits they give on an
 * ordinary copy of x (reduce's logsumexp and logSoftmax, over one group or several), they copy
 * nothing, and the view keeps its numbers through the other passes (columns' too) and later resident
 * operands (each in a memory of its own), and shows the passes what is written to it.
 */
import { describe, expect, it } from "vitest";
import { exp } from "../src/exp.js";
import { EXP_SIMD_FROM, residentOperand } from "../src/tensor/simd-exp.js";
import { logSoftmax, map, reduce, scaledExp } from "../src/tensor/kernels.js";
import { randomInt, rng, sameBits } from "./random.js";

const specials = [NaN, Infinity, -Infinity, 0, -0, 5e-324, -1e308, 750, -750];

function randomOperand(next: () => number, n: number, trial: number): Float64Array {
  // spreads past exp's ±700 and, some trials, special values
  const spread = [1, 30, 1000][trial % 3];
  const special = trial % 4 === 0 ? 0.01 : 0;
  return Float64Array.from({ length: n }, () => (next() < special ? specials[randomInt(next, 0, specials.length - 1)] : spread * (2 * next() - 1)));
}

/** logsumexp and logSoftmax of x as `rows` rows, concatenated. */
function passes(x: Float64Array, rows: number): Float64Array {
  const dims = [rows, x.length / rows];
  return Float64Array.from([...reduce(x, dims, [1], "logsumexp"), ...logSoftmax(x, dims, [1])]);
}

describe("residentOperand", () => {
  it("holds x's numbers, and logsumexp's passes on it give what they give on a copy of x, to the bit", () => {
    const next = rng(51);
    for (let trial = 0; trial < 60; trial++) {
      const rows = [1, 1, 2, 3][trial % 4];
      const n = rows * randomInt(next, 1, 3000);
      const x = randomOperand(next, n, trial);
      const held = residentOperand(x);
      expect(held).not.toBe(x);
      expect(sameBits(held, x)).toBe(true);
      if (n >= EXP_SIMD_FROM) expect(held.buffer, "a view of the kernels' memory").not.toBe(x.buffer);
      expect(sameBits(passes(held, rows), passes(x.slice(), rows)), `trial ${trial}: ${rows} rows of ${n / rows}`).toBe(true);
    }
  });

  it("is read in place: logsumexp of it copies nothing", () => {
    const held = residentOperand(randomOperand(rng(52), 50_000, 1));
    const set = Float64Array.prototype.set;
    let copied = 0;
    Float64Array.prototype.set = function (this: Float64Array, ...args: Parameters<typeof set>) {
      copied += (args[0] as ArrayLike<number>).length;
      return set.apply(this, args);
    };
    try {
      reduce(held, [held.length], [0], "logsumexp");
    } finally {
      Float64Array.prototype.set = set;
    }
    expect(copied).toBe(0);
  });

  it("keeps its numbers through the other passes and later resident operands, and the passes see writes to it", () => {
    const next = rng(53);
    const x = randomOperand(next, 4001, 1);
    const held = residentOperand(x);
    const want = passes(x, 1);
    // other operands through the same memory, and one long enough for a larger memory
    for (const n of [300, 4001, 9000, 300_001]) {
      const y = randomOperand(next, n, 2);
      expect(sameBits(map(y, exp), Float64Array.from(y, exp))).toBe(true);
      scaledExp(y, [n], 1, [], 2, [], [n]);
      passes(y, 1);
      // logsumexp down columns (its own passes, x and the results copied in)
      reduce(y.subarray(0, 40 * Math.floor(n / 40)), [Math.floor(n / 40), 40], [0], "logsumexp");
      passes(residentOperand(y), 1);
      expect(sameBits(held, x), `after operands of ${n}`).toBe(true);
      expect(sameBits(passes(held, 1), want), `after operands of ${n}`).toBe(true);
    }
    // the passes on the held operand itself, and their outputs
    expect(sameBits(map(held, exp), Float64Array.from(x, exp))).toBe(true);
    expect(sameBits(scaledExp(held, [held.length], 3, [], 0.5, [], [held.length]), Float64Array.from(x, (v) => 0.5 * exp(v - 3)))).toBe(true);
    expect(sameBits(held, x)).toBe(true);
    held[17] = 900;
    held[4000] = -0;
    expect(sameBits(passes(held, 1), passes(held.slice(), 1))).toBe(true);
  });
});
