/**
 * gather and scatterAdd keep their own copy of the indices a caller passes (api/index-copies.ts):
 * the same copy for a vector passed again unchanged (what was found about it, its range and
 * the lane plans made with it, is found again), a new one once the caller has written it.
 */
import ndarray from "ndarray";
import { describe, expect, it } from "vitest";
import { gather, scatterAdd, type NdArray } from "../../src/index.js";
import { indexCopyStats } from "../../src/api/index-copies.js";

const V = ndarray(Float64Array.of(1, 2, 3, 4, 5, 6), [3, 2]);

describe("the library's copies of index vectors", () => {
  it("one copy for a vector passed again unchanged (an Int32Array, a Float64Array, an array)", () => {
    for (const indices of [Int32Array.of(2, 0, 2), Float64Array.of(2, 0, 2), [2, 0, 2]]) {
      const made = indexCopyStats.made;
      for (let k = 0; k < 3; k++) expect(Array.from((gather(V, indices) as NdArray).data)).toEqual([5, 6, 1, 2, 5, 6]);
      expect(indexCopyStats.made - made).toBe(1);
    }
  });

  it("a vector written since its copy was made: a new copy, the new indices read", () => {
    const indices = Int32Array.of(0, 1);
    expect(Array.from((gather(V, indices) as NdArray).data)).toEqual([1, 2, 3, 4]);
    indices[1] = 2;
    const made = indexCopyStats.made;
    expect(Array.from((gather(V, indices) as NdArray).data)).toEqual([1, 2, 5, 6]);
    expect(Array.from((scatterAdd(ndarray(new Float64Array(6), [3, 2]), indices, ndarray(Float64Array.of(1, 1, 1, 1), [2, 2])) as NdArray).data)).toEqual([
      1, 1, 0, 0, 1, 1,
    ]);
    expect(indexCopyStats.made - made).toBe(1);
  });

  it("a non-integer written into a kept vector is reported as before", () => {
    const indices = [0, 1];
    gather(V, indices);
    indices[0] = 0.5;
    expect(() => gather(V, indices)).toThrow(/0\.5/);
  });
});
