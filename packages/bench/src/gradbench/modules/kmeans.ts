/**
 * @file GradBench's `kmeans` eval: the k-means cost and a Newton direction.
 *
 * As kmeans.hpp, the cost of centroids C (k × d) for points P (n × d) is
 *
 *     f(C) = Σᵢ minⱼ ‖Pᵢ − Cⱼ‖²
 *
 * and `dir` is J ⊘ diag(H): the gradient divided elementwise by the Hessian's diagonal
 * (the Hessian is diagonal: coordinates of different centroids, or different coordinates
 * of one, do not interact).
 *
 * The minimum is a decision on values, as an `if` is: which centroid is nearest to
 * each point (`assign`: the first nearest on a tie, as std::min keeps it; found with a
 * matrix product of the points and centroids, checked by the direct distances where
 * rounding could tell two centroids apart). Given that choice f is Σᵢ ‖Pᵢ − C_{a(i)}‖², a few tensor
 * operations (gather, sub, square, sum) that wengert traces and differentiates; it is
 * what a trace of the min records, without keeping the n × k distances on the tape
 * (10⁸ of them at the eval's largest size).
 *
 * `cost` adds as kmeans.hpp does, each point's distance over its coordinates in order,
 * then the points' in order (`pointCost`), so its value is the C++ reference's to the bit;
 * ops' assignedDistances computes those distances two points to a SIMD vector over points
 * kept in the kernel's memory (`PointSet`), and the n distances are added here.
 *
 * `dir` needs J and H·1 (= diag H here): one forward-over-reverse pass gives both,
 * `jvp` of `grad` in the direction of all ones.
 *
 * Input `{points: double[][], centroids: double[][]}` (plus min_runs…); `cost` gives a
 * number, `dir` a k × d array.
 */
import ndarray from "ndarray";
import { div, gather, grad, jit, jvp, square, sub, sum, type Indices, type NdArray, type Scalar, type TensorArg } from "@wengert/core";
import { nearestCentroids, PointSet, productRowMinima } from "@wengert/ops";
import { defineFunction } from "../define.js";
import { field, InputError, matrix, record } from "../json.js";
import type { EvalModule } from "../module.js";

export interface KmeansInput {
  readonly points: NdArray;
  readonly centroids: NdArray;
  /** The points, kept in the nearest-centroid kernels' memory from call to call. */
  readonly set: PointSet;
  readonly compiled: Compiled;
}

/**
 * Points per product in `assign`: ⌊BLOCK / k⌋ of them (at least MIN_ROWS) against every
 * centroid, 256 KB of results that stay in the cache from the product to the scan for the
 * least. Blocks of 256 points whatever k made 40 small products at k = 10 and n = 10⁴,
 * each paying the operation's fixed cost and its copies into the SIMD kernel's memory.
 */
const BLOCK = 32768;
const MIN_ROWS = 256;

/**
 * For each point, the index of its nearest centroid (squared Euclidean distance; the first
 * on a tie, as std::min keeps it), the same choice as kmeans.hpp's loop over the n·k
 * distances. With the points as a `PointSet`, ops' nearestCentroids ranks the centroids
 * in single precision (twice the SIMD lanes) and settles almost every point; the few it
 * leaves (near-ties) and every point without a set go to `exactAssign`. Into `dist` when
 * given: each point's distance to its choice, as kmeans.hpp's euclid_dist_2 computes it.
 */
export function assign(points: NdArray, centroids: NdArray, set?: PointSet, dist?: Float64Array): Int32Array {
  const k = centroids.shape[0];
  const [n, d] = points.shape;
  const P = points.data as Float64Array;
  const C = centroids.data as Float64Array;
  const a = new Int32Array(n);
  const unsettled = set === undefined ? null : nearestCentroids(set, C, k, a, dist);
  if (unsettled === null) {
    a.set(exactAssign(points, centroids));
    if (dist !== undefined) for (let i = 0; i < n; i++) dist[i] = distance(P, i * d, C, a[i] * d, d);
    return a;
  }
  if (unsettled.length === 0) return a;
  // the points the single-precision filter leaves (near-ties): kmeans.hpp's loop where they are few, else exactAssign
  if (unsettled.length * k * d <= DIRECT_UP_TO) {
    for (const i of unsettled) {
      let best = Infinity;
      let arg = 0;
      for (let j = 0; j < k; j++) {
        const e = distance(P, i * d, C, j * d, d);
        if (e < best) {
          best = e;
          arg = j;
        }
      }
      a[i] = arg;
      if (dist !== undefined) dist[i] = best;
    }
    return a;
  }
  const rest = new Float64Array(unsettled.length * d);
  unsettled.forEach((i, r) => rest.set(P.subarray(i * d, (i + 1) * d), r * d));
  const decided = exactAssign(ndarray(rest, [unsettled.length, d]), centroids);
  unsettled.forEach((i, r) => {
    a[i] = decided[r];
    if (dist !== undefined) dist[i] = distance(P, i * d, C, a[i] * d, d);
  });
  return a;
}

/** Terms (points × centroids × coordinates) up to which assign decides the filter's unsettled points by kmeans.hpp's loop: less than exactAssign's setup. */
const DIRECT_UP_TO = 65536;

/** kmeans.hpp's euclid_dist_2: Σ_l (p_l − c_l)² from 0 in order, p at P[p…] and c at C[c…]. */
function distance(P: Float64Array, p: number, C: Float64Array, c: number, d: number): number {
  let s = 0;
  for (let l = 0; l < d; l++) {
    const e = P[p + l] - C[c + l];
    s += e * e;
  }
  return s;
}

/**
 * assign's choice computed in double precision: ‖p − c‖² = ‖p‖² − 2 p·c + ‖c‖², and ‖p‖²
 * is the same for every centroid: the nearest centroid minimises s_j = ‖c_j‖² − 2 p·c_j,
 * whose p·c_j for a block of points are one product with Cᵀ (the n·k·d multiply-adds at
 * gemm's speed, not a scalar loop's). s_j differs from the distance computed directly by
 * rounding only, at most `slack` (a bound on both roundings: about d + 2 terms of size
 * ≤ ‖p‖² + ‖c‖² each); the centroids whose s_j lies within twice that of the least are
 * candidates (almost always one), and among them the distance computed as kmeans.hpp does
 * decides, so the choice is that loop's, near-ties and points on a centroid (GradBench's
 * centroids are points) included. The least s_j, where it is and the second least come
 * from ops' `productRowMinima`: the product and the scan by SIMD kernels in one memory
 * (the products are never copied out), the comparisons without branches (a loop's
 * mispredicted on random points).
 */
function exactAssign(points: NdArray, centroids: NdArray): Int32Array {
  const [n, d] = points.shape;
  const k = centroids.shape[0];
  const P = points.data as Float64Array;
  const C = centroids.data as Float64Array;
  const a = new Int32Array(n);
  if (n === 0) return a;
  // Cᵀ (d × k): the product's second operand
  const Ct = new Float64Array(d * k);
  for (let j = 0; j < k; j++) for (let l = 0; l < d; l++) Ct[l * k + j] = C[j * d + l];
  const cn = new Float64Array(k);
  let cnMax = 0;
  for (let j = 0; j < k; j++) {
    let s = 0;
    for (let l = 0; l < d; l++) s += C[j * d + l] * C[j * d + l];
    cn[j] = s;
    cnMax = Math.max(cnMax, s);
  }
  // p·c_j as the product computed it (gemm.ts: from 0, in order of the coordinates), for the rare rows with more than one candidate
  const dot = (p: number, c: number): number => {
    let s = 0;
    for (let l = 0; l < d; l++) s += P[p + l] * C[c + l];
    return s;
  };
  const norms = squaredNorms(P, n, d);
  // unit roundoff 2⁻⁵³ times the d + 2 roundings of each form, times 8 for safety
  const unit = 8 * (d + 2) * 2 ** -53;
  const block = Math.max(MIN_ROWS, Math.floor(BLOCK / k));
  const most = Math.min(block, n);
  const found = { least: new Float64Array(most), second: new Float64Array(most), at: new Int32Array(most) };
  for (let i0 = 0; i0 < n; i0 += block) {
    const rows = Math.min(block, n - i0);
    // s_j = ‖c_j‖² + (−2)·(p·c_j), the same number as ‖c_j‖² − 2 p·c_j (scaling by 2 is exact)
    const { least, second, at } = productRowMinima({ a: P.subarray(i0 * d, (i0 + rows) * d), b: Ct, n: rows, k: d, m: k, bias: cn, scale: -2 }, found);
    for (let r = 0; r < rows; r++) {
      const p = (i0 + r) * d;
      const pn = norms[i0 + r];
      // least is NaN where an s_j is: then every centroid is a candidate
      const cut = least[r] + 2 * unit * 2 * (pn + cnMax);
      // one candidate (almost always): it is the choice, without a second pass over the k
      if (second[r] > cut) {
        a[i0 + r] = at[r];
        continue;
      }
      // else every centroid within the cut (all of them where an s_j is NaN) by the direct distance
      let best = Infinity;
      let arg = 0;
      for (let j = 0; j < k; j++) {
        if (cn[j] - 2 * dot(p, j * d) > cut) continue;
        const dist = distance(P, p, C, j * d, d);
        if (dist < best) {
          best = dist;
          arg = j;
        }
      }
      a[i0 + r] = arg;
    }
  }
  return a;
}

/**
 * ‖p‖² of each of the n rows of P (n × d), in a loop of its own: in assign's, whose
 * `direct` closes over P and d, each read went through the closure's context. The norms
 * only bound rounding (`cut` in assign, with a factor 8 to spare), so their own order of
 * additions is free: four running sums, not one chain of dependent additions (a row of
 * 16 took as long as the SIMD product of it with every centroid at k = 10).
 */
function squaredNorms(P: Float64Array, n: number, d: number): Float64Array {
  const out = new Float64Array(n);
  const d4 = d - (d % 4);
  for (let i = 0, p = 0; i < n; i++, p += d) {
    let s0 = 0;
    let s1 = 0;
    let s2 = 0;
    let s3 = 0;
    for (let l = p; l < p + d4; l += 4) {
      s0 += P[l] * P[l];
      s1 += P[l + 1] * P[l + 1];
      s2 += P[l + 2] * P[l + 2];
      s3 += P[l + 3] * P[l + 3];
    }
    for (let l = p + d4; l < p + d; l++) s0 += P[l] * P[l];
    out[i] = s0 + s1 + (s2 + s3);
  }
  return out;
}

/**
 * Σᵢ ‖Pᵢ − C_{a(i)}‖²: the cost for the assignment `a`, written as Σᵢ ‖C_{a(i)} − Pᵢ‖²
 * (the same numbers: negation is exact, and (−e)² = e²). The centroids are sub's first
 * argument so that its cotangent reaches the gather as it is, where as the second it
 * would be negated first: a pass over the n × d differences fewer in the gradient, two
 * in `dir`'s forward-over-reverse.
 */
export function assignedCost(points: NdArray, centroids: TensorArg, a: Indices): Scalar {
  return sum(square(sub(gather(centroids, a, 0), points)));
}

/**
 * Σᵢ (Σ_l (P_il − C_{a(i),l})²): the cost for the assignment `a` in kmeans.hpp's order of
 * additions (each point's coordinates in order, then the points in order: sums of the
 * last axis, then of all), the definition `cost` computes. Its gradient is assignedCost's.
 */
export function pointCost(points: NdArray, centroids: TensorArg, a: Indices): Scalar {
  return sum(sum(square(sub(points, gather(centroids, a, 0))), 1));
}

/**
 * The cost (pointCost) at the centroids, each point at its nearest: each point's distance
 * as assign finds it (ops' kernel computes it beside the choice), added in order.
 */
function cost({ points, centroids, set }: KmeansInput): number {
  const dist = new Float64Array(set.n);
  assign(points, centroids, set, dist);
  let total = 0;
  for (let i = 0; i < dist.length; i++) total += dist[i];
  return total;
}

/** The centroids and the assignment (as positions in a tensor), the argument of the jitted function. */
interface Assigned {
  readonly centroids: TensorArg;
  readonly at: TensorArg;
}

/** The direction of one prepared input, jitted (see `compile`). */
interface Compiled {
  readonly dir: (x: Assigned) => NdArray;
}

/**
 * The direction for the assignment `at`, `jit`ted once per prepared input (GradBench
 * evaluates one input again and again), as its JAX tool jits. The assignment is an
 * argument, not captured: gather then takes it as a traced index tensor, an input of the
 * trace, so a replay reads each call's own assignment (a captured one would be baked into
 * the trace). The first call traces (its time counts in GradBench's mean); later ones
 * replay the trace on pooled buffers, the gathers and scatters as loops reading the
 * centroids in place (jit/chains.ts), instead of a fresh n × d buffer per operation.
 */
function compile(points: NdArray, centroids: NdArray): Compiled {
  const ones = ndarray(new Float64Array(centroids.size).fill(1), centroids.shape.slice());
  return {
    dir: jit((x: Assigned) => {
      const [J, H1] = jvp((c) => grad((c2) => assignedCost(points, c2, x.at as Indices), c), x.centroids, ones);
      return div(J, H1);
    }) as unknown as Compiled["dir"],
  };
}

const prepare = (input: unknown): KmeansInput => {
  const r = record(input);
  const P = matrix(field(r, "points"), "points");
  const C = matrix(field(r, "centroids"), "centroids");
  if (C.rows === 0) throw new InputError("there are no centroids");
  if (P.rows > 0 && P.cols !== C.cols) throw new InputError(`points have ${P.cols} coordinates, centroids ${C.cols}`);
  const points = ndarray(P.data, [P.rows, C.cols]);
  const centroids = ndarray(C.data, [C.rows, C.cols]);
  return { points, centroids, set: new PointSet(P.data, P.rows, C.cols), compiled: compile(points, centroids) };
};

/** The argument of the jitted function: the centroids, and each point's nearest one. */
const assigned = ({ points, centroids, set }: KmeansInput): Assigned => ({ centroids, at: new Float64Array(assign(points, centroids, set)) });

export const kmeans: EvalModule = {
  cost: defineFunction({ prepare, run: cost }),
  dir: defineFunction({ prepare, run: (input: KmeansInput) => input.compiled.dir(assigned(input)) }),
};
