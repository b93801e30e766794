/**
 * @file The one seeded generator of the workspace: reproducible numbers for checkGrad's
 * directions, the benchmark's inputs and the tests' random cases.
 */

/** mulberry32: a seeded generator of numbers uniform in [0, 1), the same sequence for the same seed. */
export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
