/** @file Seeded random arrays for the kernel tests (the same cases on every run), and bitwise equality. */

/** The seeded generator (mulberry32) of src/random.ts. */
export { rng } from "../src/random.js";

/** n numbers uniform in [−1, 1). */
export const randomArray = (next: () => number, n: number): Float64Array => Float64Array.from({ length: n }, () => 2 * next() - 1);

/** An integer uniform in [lo, hi]. */
export const randomInt = (next: () => number, lo: number, hi: number): number => lo + Math.floor(next() * (hi - lo + 1));

/** Equal element for element, NaN equal to NaN and −0 apart from 0 (what "to the bit" means here). */
export function sameBits(a: ArrayLike<number>, b: ArrayLike<number>): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return false;
  return true;
}
