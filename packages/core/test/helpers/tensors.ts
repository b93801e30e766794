/**
 * @file Plain-JS helpers of the tensor test suites: a seeded generator, reading any
 * number / Float64Array / ndarray (any strides) as row-major elements, and a tolerant
 * elementwise comparison that names the first mismatches.
 */
import ndarray from "ndarray";
import { expect } from "vitest";
import type { NdArray } from "../../src/index.js";

// the seeded generator (mulberry32) of @wengert/ops, the one the whole workspace uses
export { rng } from "@wengert/ops";

export const sizeOf = (d: readonly number[]): number => d.reduce((a, b) => a * b, 1);

export const isNd = (v: unknown): v is NdArray =>
  typeof v === "object" && v !== null && !(v instanceof Float64Array) && Array.isArray((v as NdArray).shape) && Array.isArray((v as NdArray).stride);

/** Row-major elements of a number, Float64Array or ndarray (read through `get`, any strides). */
export function flat(v: unknown): number[] {
  if (typeof v === "number") return [v];
  if (v instanceof Float64Array) return Array.from(v);
  if (!isNd(v)) throw new Error(`not a value: ${String(v)}`);
  const d = v.shape;
  if (d.length === 0) return [Number(v.get())];
  const out: number[] = [];
  const idx = new Array<number>(d.length).fill(0);
  for (let k = 0; k < sizeOf(d); k++) {
    out.push(Number(v.get(...idx)));
    for (let ax = d.length - 1; ax >= 0; ax--) {
      if (++idx[ax] < d[ax]) break;
      idx[ax] = 0;
    }
  }
  return out;
}

/** `n` numbers uniform in [−scale, scale) from the seeded generator `r`. */
export const randArr = (n: number, r: () => number, scale = 1): number[] => Array.from({ length: n }, () => scale * (2 * r() - 1));
/** n numbers drawn as randArr draws them, in a Float64Array (a tensor's data). */
export const random = (r: () => number, n: number, scale = 1): Float64Array => Float64Array.from({ length: n }, () => scale * (2 * r() - 1));

/** An ndarray over a copy of `data`. */
export const nd = (data: ArrayLike<number>, dims: number[]): NdArray => ndarray(Float64Array.from(data), dims);

/** `expectClose(got, want, rtol?, atol?, what?)` with a suite's default tolerances. */
export function closeWithin(rtolDefault: number, atolDefault: number) {
  return (got: readonly number[], want: readonly number[], rtol = rtolDefault, atol = atolDefault, what = "value"): void => {
    expect(got.length, `${what}: length`).toBe(want.length);
    const bad = got.flatMap((g, i) => (Math.abs(g - want[i]) <= atol + rtol * Math.abs(want[i]) ? [] : [`${what}[${i}]: got ${g}, expected ${want[i]}`]));
    expect(bad.slice(0, 8)).toEqual([]);
  };
}
