/**
 * @file jit/schedule.ts: values read once are computed right before their reader, the
 * order stays topological, and a value read twice, or pinned, stays where it is.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sinkSingleUses } from "../../src/jit/schedule.js";

/** A program of `reads` (per instruction, up to two earlier ones, or −1). */
const schedule = (reads: readonly (readonly [number, number])[], pinned: ReadonlySet<number> = new Set()) =>
  Array.from(sinkSingleUses({ length: reads.length, emitted: () => true, reads: (i, k) => reads[i][k], pinned: (i) => pinned.has(i) }));

describe("sinkSingleUses", () => {
  it("sinks a value read once to its reader, after what is sunk to that; one read twice stays", () => {
    // 2 = f(0), 3 = g(1), 4 = h(3), 5 = k(2, 3): 0, 1 and 2 read once, 3 twice, 4 and 5 never
    const reads: [number, number][] = [[-1, -1], [-1, -1], [0, -1], [1, -1], [3, -1], [2, 3]];
    expect(schedule(reads)).toEqual([1, 3, 4, 0, 2, 5]);
    expect(schedule(reads, new Set([2]))).toEqual([0, 2, 1, 3, 4, 5]);
  });

  it("a value read twice by one statement (x·x) is read once", () => {
    expect(schedule([[-1, -1], [-1, -1], [0, 0], [1, 2]])).toEqual([1, 0, 2, 3]);
  });

  it("property: every instruction once, each after what it reads", () => {
    const programs = fc.array(fc.tuple(fc.nat(), fc.nat(), fc.boolean(), fc.boolean()), { minLength: 1, maxLength: 40 }).map((xs) =>
      xs.map(([p, q, hasA, hasB], i): [number, number] => [hasA && i > 0 ? p % i : -1, hasB && i > 0 ? q % i : -1]),
    );
    fc.assert(
      fc.property(programs, (reads) => {
        const order = schedule(reads);
        expect([...order].sort((p, q) => p - q)).toEqual(reads.map((_, i) => i));
        const at = new Map(order.map((i, k) => [i, k]));
        reads.forEach(([p, q], i) => [p, q].forEach((y) => y >= 0 && expect(at.get(y)!).toBeLessThan(at.get(i)!)));
      }),
    );
  });

  it("a chain of 10⁶ values each read once: no stack overflow (an explicit stack)", () => {
    const n = 1_000_000;
    const order = sinkSingleUses({ length: n, emitted: () => true, reads: (i, k) => (k === 0 && i > 0 ? i - 1 : -1), pinned: () => false });
    expect(order.length).toBe(n);
    expect(order[0]).toBe(0);
    expect(order[n - 1]).toBe(n - 1);
  });
});
