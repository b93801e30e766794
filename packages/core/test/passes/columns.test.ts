/**
 * The pool of tape columns (trace/columns.ts) holds what the current work needs: a call
 * as long as the last allocates no column, however long the trace (a trace of a million
 * steps takes more than the pool's floor of 64 MiB), and columns returned longest ago
 * make room for new ones. Counted, not timed: fresh allocations off the heap are what set
 * off V8's full collections (measured in the bench's 2N/N table).
 */
import { describe, expect, it } from "vitest";
import { add, grad, mul, scan, sin, type Scalar } from "../../src/index.js";
import { columnBound, columnStats, giveColumn, keptBytes, takeColumn } from "../../src/trace/columns.js";

const chain = (n: number) => (x: Scalar) => {
  let y = x;
  for (let i = 0; i < n; i++) y = add(mul(0.9, y), mul(0.1, sin(y)));
  return y;
};

describe("tape columns", () => {
  it("a second grad of a trace larger than 64 MiB of columns allocates none", () => {
    // 6·10⁵ steps: 2.4·10⁶ instructions, columns of 4·2²⁰ entries (92 MiB, and the sweep's 40 MiB)
    grad(chain(600_000), 0.3);
    const made = columnStats.madeBytes;
    grad(chain(600_000), 0.3);
    expect(columnStats.madeBytes - made).toBe(0);
    // a shorter call after it reuses the same columns
    grad(chain(100_000), 0.3);
    expect(columnStats.madeBytes - made).toBe(0);
  });
  it("grads of several lengths in turn, a scan between them, allocate no column once each length has run", () => {
    // the bench's 2N/N sequence (scan-probe.ts): each length's gradient, then the same as a
    // scan, whose trace is a few instructions; up and down in turn. Each length taking columns
    // of its own, grown by doubling from the scan's, overflowed the pool: every round made
    // columns again (tens of MiB off the heap, which set off full collections of a large heap)
    const scanned = (n: number) => (x: Scalar) => scan((y: Scalar): [Scalar] => [add(mul(0.9, y), mul(0.1, sin(y)))], x, n)[0];
    const lengths = [50_000, 100_000, 250_000, 500_000];
    const round = (order: number[]): void => {
      for (const n of order) {
        grad(chain(n), 0.3);
        grad(scanned(n), 0.3);
      }
    };
    round(lengths);
    round([...lengths].reverse());
    const made = columnStats.madeBytes;
    for (let r = 0; r < 2; r++) {
      round(lengths);
      round([...lengths].reverse());
    }
    // the long traces' columns all come from the pool (on the old code, 14 MiB were made again);
    // what is made is the first columns of a short tape per scan, 64 entries (1.4 KiB): the
    // scan's body, traced every call (a new closure), keeps its tape with the scan's term
    expect(columnStats.madeBytes - made).toBeLessThanOrEqual(16 * 64 * 22);
  });
  it("the columns returned longest ago make room for new ones", () => {
    const length = 2 ** 20 + 1; // 8 MiB
    const old = Array.from({ length: Math.ceil(columnBound() / (8 * length)) + 1 }, () => new Float64Array(length));
    for (const c of old) giveColumn(c);
    expect(keptBytes()).toBeLessThanOrEqual(columnBound());
    const fresh = new Float64Array(2 ** 20 + 3);
    giveColumn(fresh);
    // kept, though the pool was full of an older size; the oldest of those made room
    expect(takeColumn(Float64Array, 2 ** 20 + 3)).toBe(fresh);
    const back = old.map(() => takeColumn(Float64Array, length));
    expect(back.includes(old[0])).toBe(false);
    expect(back.includes(old[old.length - 1])).toBe(true);
  });
});
