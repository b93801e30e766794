/**
 * The tensor buffer pool keeps no more buffers of a length than it made of it, so it
 * cannot grow from call to call when a caller releases buffers made elsewhere.
 */
import { describe, expect, it } from "vitest";
import { alloc, poolStats, release } from "../src/index.js";
import { SLAB_MAX } from "../src/tensor/pool.js";

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
  it("keeps no more buffers of a length than alloc made of it: buffers made elsewhere, released every call, do not add up", () => {
    const length = 4321; // no other test uses it
    const bytes = poolStats.bytes;
    for (let i = 0; i < 10; i++) release(new Float64Array(length));
    expect(poolStats.bytes).toBe(bytes); // alloc made none of this length
    const [a, b] = [alloc(length), alloc(length)];
    for (let i = 0; i < 10; i++) release(new Float64Array(length));
    expect(poolStats.bytes).toBe(bytes + 2 * 8 * length); // two made, two kept
    release(a);
    release(b);
    expect(poolStats.bytes).toBe(bytes + 2 * 8 * length);
  });
  it("keeps no views", () => {
    // held out, so the pool would take back a buffer of each view's length: only the view guard refuses them
    const held = [100, 2].map((n) => alloc(n));
    const bytes = poolStats.bytes;
    const whole = alloc(200);
    release(whole.subarray(0, 100)); // a view off V8's heap, from the start
    release(whole.subarray(100)); // at an offset
    release(alloc(9).subarray(1, 3)); // a short one at an offset
    expect(poolStats.bytes).toBe(bytes);
    held.forEach(release); // while whole buffers of those lengths are
    expect(poolStats.bytes).toBe(bytes + 8 * (100 + 2));
  });

  it("keeps small buffers too (a small tensor program makes many; a fresh one costs a microsecond)", () => {
    const b = alloc(3);
    const bytes = poolStats.bytes;
    release(b);
    expect(poolStats.bytes).toBe(bytes + 24);
    expect(alloc(3)).toBe(b);
    expect(poolStats.bytes).toBe(bytes);
  });

  it("cuts small buffers from shared slabs: zeroed, apart, each a buffer of its own to the pool", () => {
    const n = 14;
    const cells = Array.from({ length: 3000 }, () => alloc(n));
    // a slab holds many cells: far fewer ArrayBuffers than buffers (each off the heap costs a malloc and a scavenge's sweep)
    expect(new Set(cells.map((c) => c.buffer)).size).toBeLessThan(cells.length / 10);
    cells.forEach((c, i) => c.fill(i));
    // no two overlap: each still holds what was written into it
    cells.forEach((c, i) => expect(c.every((x) => x === i)).toBe(true));
    expect(cells.every((c) => c.length === n)).toBe(true);
    const bytes = poolStats.bytes;
    release(cells[5]);
    expect(poolStats.bytes).toBe(bytes + 8 * n);
    const again = alloc(n);
    expect(again).toBe(cells[5]);
    expect(again.every((x) => x === 0)).toBe(true);
  });
  it("keeps no views into a slab other than its cells", () => {
    const held = [10, 21].map((n) => alloc(n)); // as above
    const cell = alloc(20);
    const bytes = poolStats.bytes;
    release(cell.subarray(1, 11)); // inside a cell
    release(cell.subarray(0, 10)); // a cell's start, not its length
    release(new Float64Array(cell.buffer, 0, 21)); // a slab's start, another length
    // a cell's length, straddling two cells (a slab holds hundreds of cells of 20)
    release(new Float64Array(cell.buffer, cell.byteOffset > 0 ? cell.byteOffset - 8 : 8, 20));
    expect(poolStats.bytes).toBe(bytes);
    [...held, cell].forEach(release);
    expect(poolStats.bytes).toBe(bytes + 8 * (10 + 21 + 20));
    // above the slabs' lengths, buffers are their own as before
    expect(alloc(SLAB_MAX + 1).byteLength).toBe(alloc(SLAB_MAX + 1).buffer.byteLength);
  });
});

