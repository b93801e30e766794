/**
 * @file Inputs shaped like those GradBench's evals send, for `pnpm bench` and tests:
 * deterministic (@wengert/ops's seeded generator), at two sizes: `quick` (well under a second per
 * function) and full (the eval's largest default workload, or close to it).
 *
 * Sizes from the evals' run.py defaults: lse n up to 1 280 000; llsq n up to 16 392,
 * m = 128; det ℓ up to 11; ode n up to 100 000, s up to 100; kmeans k up to 1000,
 * n up to 100 000, d 8 or 16 (centroids are the last k points, so no cluster is empty);
 * gmm d up to 64, k up to 100, n = 1000. From ADBench's data files: ba from
 * ba1 (n = 49, m = 7776, p = 31 843) up; ht's hand of 544 vertices with c = 100 up to
 * 100 000 points; lstm l 2 or 4, c 1024 or 4096, b = 14. particle and saddle take one
 * standard input each ({"w": 0}, {"start": [1, 1]}).
 */
import { rng } from "@wengert/ops";

const vector = (n: number, rand: () => number): number[] => Array.from({ length: n }, rand);

export function lseInput(n: number, seed = 31337): { x: number[] } {
  return { x: vector(n, rng(seed)) };
}

export function llsqInput(n: number, m: number, seed = 31337): { x: number[]; n: number } {
  return { x: vector(m, rng(seed)), n };
}

export function detInput(ell: number, seed = 31337): { A: number[]; ell: number } {
  return { A: vector(ell * ell, rng(seed)), ell };
}

export function odeInput(n: number, s: number, seed = 31337): { x: number[]; s: number } {
  return { x: vector(n, rng(seed)), s };
}

export function kmeansInput(n: number, k: number, d: number, seed = 31337): { points: number[][]; centroids: number[][] } {
  const rand = rng(seed);
  const points = Array.from({ length: n }, () => vector(d, rand));
  return { points, centroids: points.slice(-k).map((p) => p.slice()) };
}

/** A standard normal deviate from uniform draws (Box–Muller). */
export const normal = (rand: () => number): number => Math.sqrt(-2 * Math.log(rand() + 1e-300)) * Math.cos(2 * Math.PI * rand());

/** A rows × cols array of draws of `f`. */
export const table = (rows: number, cols: number, f: () => number): number[][] => Array.from({ length: rows }, () => Array.from({ length: cols }, f));

/** gmm's input, as GradBench's evals/gmm/run.py generates it (alpha, q, l and x normal; mu uniform). */
export interface GmmJson {
  d: number;
  k: number;
  n: number;
  x: number[][];
  m: number;
  gamma: number;
  alpha: number[];
  mu: number[][];
  q: number[][];
  l: number[][];
}

export function gmmInput(d: number, k: number, n: number, seed = 31337, gamma = 1, m = 0): GmmJson {
  const r = rng(seed);
  return {
    d, k, n, m, gamma,
    x: table(n, d, () => normal(r)),
    alpha: Array.from({ length: k }, () => normal(r)),
    mu: table(k, d, r),
    q: table(k, d, () => normal(r)),
    l: table(k, (d * (d - 1)) / 2, () => normal(r)),
  };
}

/** ba's input, as GradBench sends it: one camera, point, weight and feature, which ba.hpp replicates over n cameras, m points, p observations. */
export interface BaJson { n: number; m: number; p: number; cam: number[]; x: number[]; w: number; feat: number[] }

export function baInput(n: number, m: number, p: number): BaJson {
  return { n, m, p, cam: [0.1, -0.2, 0.3, 0.5, 0.4, -3, 400, 1.5, -2.5, 1e-3, -2e-6], x: [0.3, 0.7, 2.0], w: 0.8, feat: [10, -20] };
}

type Mat = number[][];
const mm = (A: Mat, B: Mat): Mat => A.map((r) => B[0].map((_, j) => r.reduce((s, a, k) => s + a * B[k][j], 0)));

/** ht's input (evals/ht/README.md); `us` is empty for the simple variant. */
export interface HtJson {
  theta: number[];
  data: {
    model: {
      bone_count: number;
      bone_names: string[];
      parents: number[];
      base_relatives: Mat[];
      inverse_base_absolutes: Mat[];
      base_positions: Mat;
      weights: Mat;
      triangles: number[][];
      is_mirrored: boolean;
    };
    correspondences: number[];
    points: Mat;
  };
  us: number[][];
}

/** A synthetic hand shaped like ADBench's: 22 bones, M vertices (ADBench's: 544), M − 2 triangles, N points. */
export function htInput(N: number, M: number, complicated: boolean, seed = 31337, mirrored = false): HtJson {
  const r = rng(seed);
  const u = () => 2 * r() - 1;
  const B = 22;
  const rotation = (): Mat => {
    const [a, b] = [u(), u()];
    return mm(
      [[Math.cos(b), -Math.sin(b), 0], [Math.sin(b), Math.cos(b), 0], [0, 0, 1]],
      [[1, 0, 0], [0, Math.cos(a), -Math.sin(a)], [0, Math.sin(a), Math.cos(a)]],
    );
  };
  const rigid = (): Mat => {
    const R = rotation();
    return [[...R[0], u()], [...R[1], u()], [...R[2], u()], [0, 0, 0, 1]];
  };
  const T = M - 2;
  return {
    theta: Array.from({ length: 26 }, () => 0.5 * u()),
    data: {
      model: {
        bone_count: B,
        bone_names: Array.from({ length: B }, (_, i) => `bone${i}`),
        parents: Array.from({ length: B }, (_, i) => (i === 0 ? -1 : Math.floor(r() * i))),
        base_relatives: Array.from({ length: B }, rigid),
        inverse_base_absolutes: Array.from({ length: B }, rigid),
        base_positions: Array.from({ length: M }, () => [u(), u(), u(), 1]),
        weights: Array.from({ length: M }, () => {
          const w = Array.from({ length: B }, () => (r() < 0.25 ? r() : 0));
          const s = w.reduce((a, b) => a + b, 0) || 1;
          return w.map((v) => v / s);
        }),
        triangles: Array.from({ length: T }, () => [0, 1, 2].map(() => Math.floor(r() * M))),
        is_mirrored: mirrored,
      },
      correspondences: Array.from({ length: N }, () => Math.floor(r() * (complicated ? T : M))),
      points: table(N, 3, u),
    },
    us: complicated ? Array.from({ length: N }, () => [r(), 0.5 * r()]) : [],
  };
}

/** lstm's input (evals/lstm/README.md): l layers, c characters, b entries per character. */
export interface LstmJson { main_params: number[][]; extra_params: number[][]; state: number[][]; sequence: number[][] }

export function lstmInput(l: number, c: number, b: number, seed = 31337): LstmJson {
  const r = rng(seed);
  const u = () => 2 * r() - 1;
  return { main_params: table(2 * l, 4 * b, u), extra_params: table(3, b, u), state: table(2 * l, b, u), sequence: table(c, b, u) };
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
 * s = 100) and ~3 s per call (kmeans: n = 100 000, k = 1000, d = 16); gmm at d = 32,
 * k = 50, n = 1000; ba at ba1's size; ht (complicated) at c = 10 000, as its Jacobian
 * takes ~2 s per call at c = 100 000; lstm at l = 2, c = 1024). particle and saddle have
 * one input, GradBench's, in both modes (their `rr` takes ~0.75 s and ~0.5 s per call).
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
  gmm: (quick) => {
    const [d, k, n] = quick ? [10, 25, 1000] : [32, 50, 1000];
    return { description: `d=${d},k=${k},n=${n}`, input: gmmInput(d, k, n) };
  },
  ba: (quick) => {
    const [n, m, p] = quick ? [10, 1000, 4000] : [49, 7776, 31_843];
    return { description: `n=${n},m=${m},p=${p}`, input: baInput(n, m, p) };
  },
  ht: (quick) => {
    const c = quick ? 100 : 10_000;
    return { description: `complicated,c=${c},vertices=544`, input: htInput(c, 544, true) };
  },
  lstm: (quick) => {
    const [l, c, b] = quick ? [2, 256, 14] : [2, 1024, 14];
    return { description: `l=${l},c=${c},b=${b}`, input: lstmInput(l, c, b) };
  },
  particle: () => ({ description: "w=0", input: { w: 0 } }),
  saddle: () => ({ description: "start=[1,1]", input: { start: [1, 1] } }),
  // ---- end of the other six ----
};
