/**
 * Row minima: the WebAssembly SIMD kernel and the JavaScript one equal each other and the
 * definition (the least of each row, its first column, the least of the others) to the
 * bit, on random shapes (odd row counts included) with ties, NaNs, infinities and −0.
 */
import { describe, expect, it } from "vitest";
import { jsRowMinima, rowMinima, type RowMinima, type RowMinimaArgs } from "../src/tensor/row-minima.js";
import { simdRowMinima } from "../src/tensor/simd-row-minima.js";
import { randomArray, randomInt, rng, sameBits } from "./random.js";

/** The definition, written another way: a stable sort of the row's columns by value, NaNs aside. */
function reference({ x, rows, cols, bias, scale }: RowMinimaArgs): RowMinima {
  const out = { least: new Float64Array(rows), second: new Float64Array(rows), at: new Int32Array(rows) };
  for (let i = 0; i < rows; i++) {
    const v = Array.from({ length: cols }, (_, j) => bias[j] + scale * x[i * cols + j]);
    const order = v.map((_, j) => j).filter((j) => !Number.isNaN(v[j]));
    order.sort((a, b) => (v[a] < v[b] ? -1 : v[a] > v[b] ? 1 : 0));
    const nan = order.length < cols;
    // a row of +∞ (or empty of numbers) keeps column 0, as the loop's `v < least` never holds
    const first = order.length > 0 && v[order[0]] < Infinity ? order[0] : 0;
    out.at[i] = first;
    out.least[i] = nan ? NaN : order.length > 0 ? v[order[0]] : Infinity;
    const others = order.filter((j) => j !== first);
    out.second[i] = others.length > 0 ? v[others[0]] : Infinity;
  }
  return out;
}

/** A case: values from a few distinct ones (ties), with NaN, ±∞ and −0 sprinkled in where `special`. */
function makeCase(next: () => number, rows: number, cols: number, special: boolean): RowMinimaArgs {
  const pool = [...randomArray(next, 4), 0, -0, ...(special ? [NaN, Infinity, -Infinity] : [])];
  const pick = () => (next() < 0.5 ? pool[randomInt(next, 0, pool.length - 1)] : 2 * next() - 1);
  return { x: Float64Array.from({ length: rows * cols }, pick), rows, cols, bias: Float64Array.from({ length: cols }, pick), scale: -2 };
}

function simd(args: RowMinimaArgs): RowMinima {
  const out = { least: new Float64Array(args.rows), second: new Float64Array(args.rows), at: new Int32Array(args.rows) };
  expect(simdRowMinima(args, out)).toBe(true); // Node 20 has wasm SIMD: the kernel must really run
  return out;
}

function js(args: RowMinimaArgs): RowMinima {
  const out = { least: new Float64Array(args.rows), second: new Float64Array(args.rows), at: new Int32Array(args.rows) };
  jsRowMinima(args, out);
  return out;
}

const same = (a: RowMinima, b: RowMinima): boolean => sameBits(a.least, b.least) && sameBits(a.second, b.second) && sameBits(a.at, b.at);

describe("rowMinima", () => {
  it("the SIMD kernel, the JavaScript one and the definition agree to the bit", () => {
    const next = rng(22);
    for (let c = 0; c < 200; c++) {
      const args = makeCase(next, randomInt(next, 1, 9), randomInt(next, 1, 12), c % 2 === 1);
      const want = reference(args);
      expect(same(js(args), want)).toBe(true);
      expect(same(simd(args), want)).toBe(true);
    }
  });

  it("finds the first least on ties and the second least apart from it", () => {
    const args = { x: Float64Array.of(1, 0, 0, 2, NaN, 0, 5, 5, 4), rows: 3, cols: 3, bias: Float64Array.of(0, 0, 0), scale: 1 };
    for (const out of [js(args), simd(args), rowMinima(args)]) {
      expect([...out.at]).toEqual([1, 2, 2]);
      expect([...out.least]).toEqual([0, NaN, 4]);
      expect([...out.second]).toEqual([0, 2, 5]);
    }
  });

  it("into arrays longer than the rows (a caller's, reused block after block): the same rows, the rest untouched", () => {
    const next = rng(9);
    const into = { least: new Float64Array(600).fill(7), second: new Float64Array(600).fill(7), at: new Int32Array(600).fill(7) };
    for (const rows of [513, 3, 200]) {
      const args = makeCase(next, rows, 5, true);
      const before = { least: into.least.slice(rows), second: into.second.slice(rows), at: into.at.slice(rows) };
      expect(rowMinima(args, into)).toBe(into);
      const head = { least: into.least.subarray(0, rows), second: into.second.subarray(0, rows), at: into.at.subarray(0, rows) };
      expect(same(head, reference(args))).toBe(true);
      expect(same({ least: into.least.subarray(rows), second: into.second.subarray(rows), at: into.at.subarray(rows) }, before)).toBe(true);
    }
  });

  it("rowMinima takes the SIMD kernel on large rows, the loop on small ones, with the same numbers", () => {
    const next = rng(7);
    for (const [rows, cols] of [[1001, 10], [3, 4], [257, 100]]) {
      const args = makeCase(next, rows, cols, true);
      expect(same(rowMinima(args), reference(args))).toBe(true);
    }
  });
});
