/**
 * Nearest centroids by the single-precision filter (simd-nearest.ts) against the plain
 * definition, kmeans.hpp's loop: each point's first nearest centroid by the distances
 * computed directly in double precision, and that distance to the bit. On random shapes
 * (point counts off the 16-point steps, odd d, odd k), near-ties (centroids mirrored
 * about points, duplicated centroids, points on centroids), data far from the origin and
 * tiny data; the points the filter leaves are few on random data.
 */
import { describe, expect, it } from "vitest";
import { nearestCentroids, PointSet } from "../src/tensor/simd-nearest.js";
import { randomArray, randomInt, rng } from "./random.js";

/** kmeans.hpp's loop: the first least of the distances Σ_l (p_l − c_l)² from 0, and that distance. */
function reference(P: Float64Array, C: Float64Array, n: number, k: number, d: number): { at: number[]; dist: number[] } {
  const at: number[] = [];
  const dist: number[] = [];
  for (let i = 0; i < n; i++) {
    let closest = Infinity;
    let arg = 0;
    for (let j = 0; j < k; j++) {
      let s = 0;
      for (let l = 0; l < d; l++) s += (P[i * d + l] - C[j * d + l]) * (P[i * d + l] - C[j * d + l]);
      if (s < closest) [closest, arg] = [s, j];
    }
    at.push(arg);
    dist.push(closest);
  }
  return { at, dist };
}

/** The filter's results where it settles the point; how many it leaves. */
function check(P: Float64Array, C: Float64Array, n: number, k: number, d: number, label: string): number {
  const at = new Int32Array(n);
  const dist = new Float64Array(n);
  const unsettled = nearestCentroids(new PointSet(P, n, d), C, k, at, dist);
  expect(unsettled, label).not.toBeNull();
  const want = reference(P, C, n, k, d);
  const left = new Set(unsettled);
  for (let i = 0; i < n; i++) {
    if (left.has(i)) continue;
    expect(at[i], `${label}: point ${i}`).toBe(want.at[i]);
    expect(Object.is(dist[i], want.dist[i]), `${label}: distance of point ${i}`).toBe(true);
  }
  return left.size;
}

describe("nearestCentroids", () => {
  it("settles points as kmeans.hpp's loop chooses them, with its distances to the bit: random shapes, near-ties, scales", () => {
    const next = rng(41);
    for (let t = 0; t < 150; t++) {
      const [n, k, d] = [randomInt(next, 1, 70), randomInt(next, 1, 25), randomInt(next, 1, 19)];
      const scale = [1, 1e6, 1e-30, 2 ** 39][t % 4];
      const P = randomArray(next, n * d).map((x) => x * scale);
      const C = randomArray(next, k * d).map((x) => x * scale);
      // a centroid on a point, a duplicated centroid, and two mirrored about a point (an exact or near tie)
      if (k > 1) C.copyWithin((k - 1) * d, 0, d);
      C.set(P.subarray(0, d), 0);
      if (k > 3) {
        const v = randomArray(next, d).map((x) => x * 1e-3 * scale);
        for (let l = 0; l < d; l++) {
          C[d + l] = P[(n - 1) * d + l] + v[l];
          C[2 * d + l] = P[(n - 1) * d + l] - v[l];
        }
      }
      check(P, C, n, k, d, `${n}×${k}×${d} at ${scale}`);
    }
  });

  it("leaves few points on GradBench-like data (uniform points, the centroids the last k of them)", () => {
    const next = rng(42);
    for (const [n, k, d] of [
      [1000, 10, 8],
      [2000, 100, 16],
      [1000, 300, 3],
    ]) {
      const P = Float64Array.from({ length: n * d }, next);
      const C = P.slice((n - k) * d);
      expect(check(P, C, n, k, d, `${n}×${k}×${d}`)).toBeLessThan(n / 50);
    }
  });

  it("keeps each set's points as given at construction, sets used in turn", () => {
    const next = rng(43);
    const [n, k, d] = [50, 7, 5];
    const sets = [0, 1].map(() => Float64Array.from({ length: n * d }, next));
    const made = sets.map((P) => new PointSet(P, n, d));
    const C = Float64Array.from({ length: k * d }, next);
    const wants = sets.map((P) => reference(P.slice(), C, n, k, d));
    sets.forEach((P) => P.fill(0));
    for (let round = 0; round < 3; round++) {
      made.forEach((set, s) => {
        const at = new Int32Array(n);
        const unsettled = new Set(nearestCentroids(set, C, k, at));
        for (let i = 0; i < n; i++) if (!unsettled.has(i)) expect(at[i]).toBe(wants[s].at[i]);
      });
    }
  });

  it("writes no distances unless asked, and declines coordinates it does not take (non-finite, beyond 2⁴⁰)", () => {
    const P = Float64Array.from([0, 0, 1, 1, 2, 2]);
    const at = new Int32Array(3);
    expect(nearestCentroids(new PointSet(P, 3, 2), Float64Array.from([0, 0, 3, 3]), 2, at)).toEqual([]);
    expect([...at]).toEqual([0, 0, 1]);
    for (const bad of [NaN, Infinity, 2 ** 41]) {
      expect(nearestCentroids(new PointSet(P, 3, 2), Float64Array.from([0, bad]), 1, at)).toBeNull();
      expect(nearestCentroids(new PointSet(Float64Array.from([bad, 0]), 1, 2), Float64Array.from([0, 0]), 1, at)).toBeNull();
    }
  });
});
