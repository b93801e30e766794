/**
 * The SIMD elementwise kernels against plain loops, to the bit: each operation with each
 * operand read whole, as a repeated row, a column or a scalar, at odd and even row
 * lengths, with special values; column sums adding the rows in order from zero.
 */
import { describe, expect, it } from "vitest";
import { simdArith, simdColumnSums, type Arith, type Layout } from "../src/tensor/simd-elementwise.js";
import { randomArray, randomInt, rng, sameBits } from "./random.js";

const OPS: Record<Arith, (a: number, b: number) => number> = {
  add: (a, b) => a + b,
  sub: (a, b) => a - b,
  mul: (a, b) => a * b,
  div: (a, b) => a / b,
};

/** Elements an operand of a layout holds for a result of rows × m. */
const length = (l: Layout, rows: number, m: number): number => (l === "whole" ? rows * m : l === "row" ? m : l === "column" ? rows : 1);
/** The element an operand of a layout gives to result element (i, j). */
const read = (x: Float64Array, l: Layout, i: number, j: number, m: number): number =>
  l === "whole" ? x[i * m + j] : l === "row" ? x[j] : l === "column" ? x[i] : x[0];

const specials = [NaN, Infinity, -Infinity, 0, -0, 5e-324, 1e308, -1];

describe("simdArith", () => {
  const layouts: [Layout, Layout][] = [
    ["whole", "whole"], ["whole", "scalar"], ["scalar", "whole"], ["whole", "row"], ["row", "whole"],
    ["whole", "column"], ["column", "whole"], ["row", "row"], ["row", "column"], ["column", "row"],
  ];
  it("every operation and layout equals the plain loop, to the bit", () => {
    const next = rng(21);
    for (const [name, f] of Object.entries(OPS) as [Arith, (a: number, b: number) => number][]) {
      for (const [la, lb] of layouts) {
        for (let t = 0; t < 6; t++) {
          const [rows, m] = [randomInt(next, 1, 9), randomInt(next, 1, 40)];
          const values = (n: number) => randomArray(next, n).map((v) => (next() < 0.1 ? specials[randomInt(next, 0, specials.length - 1)] : v));
          const a = values(length(la, rows, m));
          const b = values(length(lb, rows, m));
          const want = new Float64Array(rows * m);
          for (let i = 0; i < rows; i++) for (let j = 0; j < m; j++) want[i * m + j] = f(read(a, la, i, j, m), read(b, lb, i, j, m));
          const got = new Float64Array(rows * m).fill(7.5);
          expect(simdArith(name, got, a, la, b, lb, rows, m), "the kernel must really run").toBe(true);
          expect(sameBits(got, want), `${name} ${la}/${lb} ${rows}×${m}`).toBe(true);
        }
      }
    }
  });

  it("one buffer as both operands (a square) is copied once and read twice", () => {
    const x = randomArray(rng(22), 1001);
    const got = new Float64Array(1001);
    expect(simdArith("mul", got, x, "whole", x, "whole", 1, 1001)).toBe(true);
    expect(sameBits(got, Array.from(x, (v) => v * v))).toBe(true);
  });

  it("refuses two repeated operands and empty results", () => {
    const x = new Float64Array(4);
    expect(simdArith("add", x, x, "scalar", x, "column", 4, 1)).toBe(false);
    expect(simdArith("add", x, x, "whole", x, "whole", 0, 4)).toBe(false);
  });
});

describe("simdColumnSums", () => {
  it("adds the rows of each block in order, from zero, like the plain loop", () => {
    const next = rng(23);
    for (let t = 0; t < 40; t++) {
      const [blocks, rows, cols] = [randomInt(next, 1, 4), randomInt(next, 1, 30), randomInt(next, 1, 37)];
      const x = randomArray(next, blocks * rows * cols).map((v) => (next() < 0.05 ? specials[randomInt(next, 0, specials.length - 1)] : v));
      const want = new Float64Array(blocks * cols);
      for (let k = 0; k < blocks; k++) for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) want[k * cols + j] += x[(k * rows + i) * cols + j];
      const got = new Float64Array(blocks * cols).fill(7.5);
      expect(simdColumnSums(got, x, blocks, rows, cols)).toBe(true);
      expect(sameBits(got, want), `${blocks}×${rows}×${cols}`).toBe(true);
    }
  });
});
