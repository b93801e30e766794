/**
 * The tensor buffer pool takes back only the buffers it handed out, so it cannot grow
 * from call to call when a caller releases buffers made elsewhere.
 */
import { describe, expect, it } from "vitest";
import { alloc, poolStats, release } from "../src/index.js";

describe("buffer pool", () => {
  it("takes back a buffer alloc made, and hands it out again (zeroed unless dirty)", () => {
    const b = alloc(100);
    b.fill(7);
    const bytes = poolStats.bytes;
    release(b);
    expect(poolStats.bytes).toBe(bytes + 800);
    const again = alloc(100);
    expect(again).toBe(b);
    expect(again.every((x) => x === 0)).toBe(true);
    expect(poolStats.bytes).toBe(bytes);
    again.fill(3);
    release(again);
    expect(alloc(100, true)[0]).toBe(3);
  });
  it("leaves buffers made elsewhere to the garbage collector", () => {
    const bytes = poolStats.bytes;
    for (let i = 0; i < 10; i++) release(new Float64Array(100));
    release(alloc(100).slice());
    expect(poolStats.bytes).toBe(bytes);
  });
  it("keeps no views", () => {
    const bytes = poolStats.bytes;
    release(alloc(200).subarray(0, 100));
    expect(poolStats.bytes).toBe(bytes);
  });

  it("keeps small buffers too (a small tensor program makes many; a fresh one costs a microsecond)", () => {
    const b = alloc(3);
    const bytes = poolStats.bytes;
    release(b);
    expect(poolStats.bytes).toBe(bytes + 24);
    expect(alloc(3)).toBe(b);
    expect(poolStats.bytes).toBe(bytes);
  });
});
