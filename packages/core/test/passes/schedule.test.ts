/**
 * @file jit/schedule.ts: values read once are computed right before their reader, the
 * order stays topological, and a value read twice, or pinned, stays where it is.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { abs, add, mul, square, sub, type Scalar } from "../../src/index.js";
import { trace } from "../../src/api/tracing.js";
import { compileForward } from "../../src/jit/forward.js";
import { sinkSingleUses } from "../../src/jit/schedule.js";

/** A program of `reads` (per instruction, up to two earlier ones, or −1). */
const schedule = (reads: readonly (readonly [number, number])[], pinned: readonly number[] = []) => {
  const n = reads.length;
  const marked = new Uint8Array(n);
  for (const i of pinned) marked[i] = 1;
  return Array.from(sinkSingleUses({ emitted: new Uint8Array(n).fill(1), reads: Int32Array.from(reads.flat()), pinned: marked }));
};

describe("sinkSingleUses", () => {
  it("sinks a value read once to its reader, after what is sunk to that; one read twice stays", () => {
    // 2 = f(0), 3 = g(1), 4 = h(3), 5 = k(2, 3): 0, 1 and 2 read once, 3 twice, 4 and 5 never
    const reads: [number, number][] = [[-1, -1], [-1, -1], [0, -1], [1, -1], [3, -1], [2, 3]];
    expect(schedule(reads)).toEqual([1, 3, 4, 0, 2, 5]);
    expect(schedule(reads, [2])).toEqual([0, 2, 1, 3, 4, 5]);
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
    const reads = new Int32Array(2 * n).fill(-1);
    for (let i = 1; i < n; i++) reads[2 * i] = i - 1;
    const order = sinkSingleUses({ emitted: new Uint8Array(n).fill(1), reads, pinned: new Uint8Array(n) });
    expect(order.length).toBe(n);
    expect(order[0]).toBe(0);
    expect(order[n - 1]).toBe(n - 1);
  });

  it("a kink check reads its argument computed: x − 1 under abs (computed again there from x) and read once, by a square after it", () => {
    // abs(d) computes d = x0 − 1 again from x0, so its statement does not read d; its kink
    // check does, and the square's statement is d's only other reader: d must not be sunk past the check
    const f = ([x0, x1]: Scalar[]) => {
      const d = sub(x0, 1);
      return add(abs(d), mul(square(d), x1));
    };
    const t = trace("test", f as never, [3, 2], {}, "evaluate");
    const { replay } = compileForward(t.term, t.trace.guards, true, t.term.output.atoms, [[3, 2]])!;
    expect(replay([[2.5, 2]])).toEqual([f([2.5, 2])]);
    // at d = 0, abs's kink: the trace does not hold there
    expect(replay([[1, 2]])).toBeNull();
  });
});

