/**
 * indexVector: an index tensor's entries as positions along an axis, refused with the
 * first entry that is none (a fraction, NaN, ±∞, negative, the axis' length or beyond).
 */
import { describe, expect, it } from "vitest";
import { IndexValueError } from "../src/index.js";
import { indexVector } from "../src/tensor/index-tensor.js";

describe("indexVector", () => {
  it("reads whole numbers within the axis as they are", () => {
    expect([...indexVector("gatherAt", Float64Array.of(0, 3, 3, 1, -0), 4, 0)]).toEqual([0, 3, 3, 1, 0]);
    expect(indexVector("gatherAt", new Float64Array(0), 0, 0).length).toBe(0);
  });

  it.each([[1.5], [NaN], [Infinity], [-1], [4], [2 ** 31]])("refuses %s, naming it, its position, the axis and the fix", (bad) => {
    let e: unknown;
    try {
      indexVector("scatterAddAt", Float64Array.of(0, 1, bad), 4, 1);
    } catch (x) {
      e = x;
    }
    expect(e).toBeInstanceOf(IndexValueError);
    expect((e as Error).message).toBe(
      `scatterAddAt: index ${bad} (position 2) is not a position along axis 1 of length 4; the index tensor must hold whole numbers from 0 to 3`,
    );
  });
});
