/**
 * Index vectors' ranges: the first entry outside an axis, as a plain scan finds it, and
 * each vector scanned once however many ops check it.
 */
import { describe, expect, it } from "vitest";
import { firstOutOfRange, indexRange, indexRangeStats } from "../src/tensor/index-range.js";
import { randomInt, rng } from "./random.js";

const plainFirst = (indices: Int32Array, length: number): number => {
  for (let k = 0; k < indices.length; k++) if (indices[k] < 0 || indices[k] >= length) return k;
  return -1;
};

describe("index ranges", () => {
  it("the first entry outside 0 … length − 1, as a plain scan finds it", () => {
    const r = rng(7);
    for (let t = 0; t < 200; t++) {
      const indices = Int32Array.from({ length: randomInt(r, 0, 12) }, () => randomInt(r, -2, 9));
      for (const length of [0, 1, 5, 8]) expect(firstOutOfRange(indices, length)).toBe(plainFirst(indices, length));
    }
  });

  it("a vector is scanned once, however many checks read its range", () => {
    const indices = Int32Array.of(3, 0, 2, 2);
    const before = indexRangeStats.scans;
    for (const length of [4, 3, 10, 4]) firstOutOfRange(indices, length);
    expect(indexRangeStats.scans - before).toBe(1);
    expect(indexRange(indices)).toEqual({ least: 0, greatest: 3 });
    expect(indexRange(new Int32Array(0))).toEqual({ least: Infinity, greatest: -Infinity });
  });
});
