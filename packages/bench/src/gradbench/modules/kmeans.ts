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
 * each point (`assign`: plain loops over the n·k distances, the first nearest on a tie,
 * as std::min keeps it). Given that choice f is Σᵢ ‖Pᵢ − C_{a(i)}‖², a few tensor
 * operations (gather, sub, square, sum) that wengert traces and differentiates; it is
 * what a trace of the min records, without keeping the n × k distances on the tape
 * (10⁸ of them at the eval's largest size).
 *
 * `dir` needs J and H·1 (= diag H here): one forward-over-reverse pass gives both,
 * `jvp` of `grad` in the direction of all ones.
 *
 * Input `{points: double[][], centroids: double[][]}` (plus min_runs…); `cost` gives a
 * number, `dir` a k × d array.
 */
import ndarray from "ndarray";
import { div, gather, grad, jvp, square, sub, sum, type NdArray, type Scalar, type TensorArg } from "@wengert/core";
import { defineFunction } from "../define.js";
import { field, InputError, matrix, record } from "../json.js";
import type { EvalModule } from "../module.js";

export interface KmeansInput {
  readonly points: NdArray;
  readonly centroids: NdArray;
}

/** For each point, the index of its nearest centroid (squared Euclidean distance; the first on a tie). */
export function assign(points: NdArray, centroids: NdArray): Int32Array {
  const [n, d] = points.shape;
  const k = centroids.shape[0];
  const P = points.data as Float64Array;
  const C = centroids.data as Float64Array;
  const a = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const p = i * d;
    let best = Infinity;
    let arg = 0;
    for (let j = 0; j < k; j++) {
      const c = j * d;
      let dist = 0;
      // partial sums only grow: once at `best`, this centroid cannot be strictly nearer
      for (let l = 0; l < d && dist < best; l++) {
        const e = P[p + l] - C[c + l];
        dist += e * e;
      }
      if (dist < best) {
        best = dist;
        arg = j;
      }
    }
    a[i] = arg;
  }
  return a;
}

/** Σᵢ ‖Pᵢ − C_{a(i)}‖²: the cost for the assignment `a`. */
export function assignedCost(points: NdArray, centroids: TensorArg, a: Int32Array): Scalar {
  return sum(square(sub(points, gather(centroids, a, 0))));
}

const prepare = (input: unknown): KmeansInput => {
  const r = record(input);
  const P = matrix(field(r, "points"), "points");
  const C = matrix(field(r, "centroids"), "centroids");
  if (C.rows === 0) throw new InputError("there are no centroids");
  if (P.rows > 0 && P.cols !== C.cols) throw new InputError(`points have ${P.cols} coordinates, centroids ${C.cols}`);
  return { points: ndarray(P.data, [P.rows, C.cols]), centroids: ndarray(C.data, [C.rows, C.cols]) };
};

export const kmeans: EvalModule = {
  cost: defineFunction({
    prepare,
    run: ({ points, centroids }: KmeansInput) => assignedCost(points, centroids, assign(points, centroids)),
  }),
  dir: defineFunction({
    prepare,
    run: ({ points, centroids }: KmeansInput) => {
      const a = assign(points, centroids);
      const ones = ndarray(new Float64Array(centroids.size).fill(1), centroids.shape.slice());
      const [J, H1] = jvp((c) => grad((c2) => assignedCost(points, c2, a), c), centroids, ones);
      return div(J as NdArray, H1 as NdArray);
    },
  }),
};
