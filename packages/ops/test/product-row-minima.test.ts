/**
 * Row minima of an affine map of a matrix product: the shared-memory SIMD path equals
 * gemm then rowMinima to the bit (the product left in the kernel's memory, not copied out
 * and in), on random shapes (row counts off the blocks, column counts off the vectors),
 * ties, special values, into given arrays, and below the SIMD sizes.
 */
import { describe, expect, it } from "vitest";
import { gemm } from "../src/tensor/gemm.js";
import { productRowMinima } from "../src/tensor/product-row-minima.js";
import { rowMinima, type RowMinima } from "../src/tensor/row-minima.js";
import { randomArray, randomInt, rng, sameBits } from "./random.js";

const same = (a: RowMinima, b: RowMinima): boolean => sameBits(a.least, b.least) && sameBits(a.second, b.second) && sameBits(a.at, b.at);

/** gemm, then rowMinima of its product: the definition productRowMinima keeps. */
function separately(a: Float64Array, b: Float64Array, n: number, k: number, m: number, bias: Float64Array, scale: number): RowMinima {
  const x = new Float64Array(n * m);
  gemm(a, 0, b, 0, x, 0, n, k, m);
  return rowMinima({ x, rows: n, cols: m, bias, scale });
}

describe("productRowMinima", () => {
  it("equals gemm then rowMinima to the bit: random shapes, ties (repeated columns of b), special values", () => {
    const next = rng(31);
    const specials = [NaN, Infinity, -Infinity, -0, 0];
    for (let t = 0; t < 200; t++) {
      const [n, k, m] = [randomInt(next, 1, 70), randomInt(next, 0, 17), randomInt(next, 1, 23)];
      const a = randomArray(next, n * k);
      const b = randomArray(next, k * m);
      // a repeated column: two centroids alike, a tie the first keeps
      if (m > 1) for (let p = 0; p < k; p++) b[p * m + m - 1] = b[p * m];
      if (t % 4 === 0 && n * k > 0) a[randomInt(next, 0, n * k - 1)] = specials[randomInt(next, 0, specials.length - 1)];
      const bias = randomArray(next, m);
      const want = separately(a, b, n, k, m, bias, -2);
      expect(same(productRowMinima({ a, b, n, k, m, bias, scale: -2 }), want), `${n}×${k}×${m}`).toBe(true);
    }
  });

  it("writes into the arrays given, block after block, at kmeans' sizes", () => {
    const next = rng(32);
    const into = { least: new Float64Array(1000), second: new Float64Array(1000), at: new Int32Array(1000) };
    for (const [n, k, m] of [[1000, 8, 10], [1000, 16, 10], [333, 8, 100]]) {
      const a = randomArray(next, n * k);
      const b = randomArray(next, k * m);
      const bias = randomArray(next, m);
      const out = productRowMinima({ a, b, n, k, m, bias, scale: -2 }, into);
      expect(out).toBe(into);
      const want = separately(a, b, n, k, m, bias, -2);
      expect(sameBits(out.least.subarray(0, n), want.least) && sameBits(out.second.subarray(0, n), want.second) && sameBits(out.at.subarray(0, n), want.at)).toBe(true);
    }
  });
});
