/**
 * @file Inputs shaped like those GradBench's evals send, for `pnpm bench` and tests:
 * deterministic (a seeded generator), at two sizes: `quick` (well under a second per
 * function) and full (the eval's largest default workload, or close to it).
 *
 * Sizes from the evals' run.py defaults: lse n up to 1 280 000; llsq n up to 16 392,
 * m = 128; det ℓ up to 11; ode n up to 100 000, s up to 100; kmeans k up to 1000,
 * n up to 100 000, d 8 or 16 (centroids are the last k points, so no cluster is empty).
 */

/** A deterministic uniform [0, 1) generator (mulberry32). */
export function uniform(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const vector = (n: number, rand: () => number): number[] => Array.from({ length: n }, rand);

export function lseInput(n: number, seed = 31337): { x: number[] } {
  return { x: vector(n, uniform(seed)) };
}

export function llsqInput(n: number, m: number, seed = 31337): { x: number[]; n: number } {
  return { x: vector(m, uniform(seed)), n };
}

export function detInput(ell: number, seed = 31337): { A: number[]; ell: number } {
  return { A: vector(ell * ell, uniform(seed)), ell };
}

export function odeInput(n: number, s: number, seed = 31337): { x: number[]; s: number } {
  return { x: vector(n, uniform(seed)), s };
}

export function kmeansInput(n: number, k: number, d: number, seed = 31337): { points: number[][]; centroids: number[][] } {
  const rand = uniform(seed);
  const points = Array.from({ length: n }, () => vector(d, rand));
  return { points, centroids: points.slice(-k).map((p) => p.slice()) };
}

export interface SampleInput {
  /** As GradBench's `description` field: the workload's size, e.g. "n=1280000". */
  readonly description: string;
  readonly input: unknown;
}

/**
 * A sample input for each eval: `quick` for development, else the size `pnpm bench`
 * reports (the eval's largest default workload where wengert does it in about a second;
 * smaller for ode and kmeans, whose largest take ~12 s and 5 GB (ode: n = 100 000,
 * s = 100) and ~3 s per call (kmeans: n = 100 000, k = 1000, d = 16)).
 */
export const SAMPLE_INPUTS: Readonly<Record<string, (quick: boolean) => SampleInput>> = {
  hello: () => ({ description: "x=3", input: 3 }),
  lse: (quick) => {
    const n = quick ? 100_000 : 1_280_000;
    return { description: `n=${n}`, input: lseInput(n) };
  },
  llsq: (quick) => {
    const n = quick ? 1024 : 16_392;
    return { description: `n=${n},m=128`, input: llsqInput(n, 128) };
  },
  det: (quick) => {
    const ell = quick ? 9 : 11;
    return { description: `${ell}`, input: detInput(ell) };
  },
  ode: (quick) => {
    const [n, s] = quick ? [10_000, 10] : [10_000, 100];
    return { description: `n=${n},s=${s}`, input: odeInput(n, s) };
  },
  kmeans: (quick) => {
    const [n, k, d] = quick ? [10_000, 100, 8] : [100_000, 100, 16];
    return { description: `k=${k},n=${n},d=${d}`, input: kmeansInput(n, k, d) };
  },
  // ---- the other six evals (gmm, ba, ht, lstm, particle, saddle): one line each here ----
  // ---- end of the other six ----
};
