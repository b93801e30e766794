/**
 * scan over decisions that change every few iterations (issue 21, item 3): the same
 * numbers as the loop written out, bit for bit, to third order, and a cost that grows
 * with the iterations only, counted as the buffer elements the runs reserve (a run's
 * buffers sized for the rest of the loop made it grow with n²).
 */
import { describe, expect, it } from "vitest";
import { add, grad, gt, hessian, jvp, mul, scan, sin, traceOf, type Scalar } from "../../src/index.js";
import { runBufferStats } from "../../src/api/scan-loop.js";
import { expectSame } from "../helpers/same-bits.js";

/** x alternates in sign every k iterations; the body's decision follows it (x = ±1 would fold a product). */
const pattern = (n: number, k: number): number[] => Array.from({ length: n }, (_, i) => (Math.floor(i / k) % 2 === 0 ? 2 : -2));
const body = (c: Scalar, x: Scalar): [Scalar, Scalar] => {
  const next = gt(mul(c, x), 0) ? add(mul(0.9, c), mul(0.2, sin(c))) : add(mul(0.8, c), mul(0.1, sin(mul(c, x))));
  return [next, mul(next, c)];
};
const scanned = (xs: number[]) => (c0: Scalar): Scalar => {
  const [c, ys] = scan(body, c0, xs);
  return add(c, ys.reduce((s: Scalar, y) => add(s, y), 0));
};
const loop = (xs: number[]) => (c0: Scalar): Scalar => {
  let c = c0;
  let s: Scalar = 0;
  for (const x of xs) {
    const [next, y] = body(c, x);
    c = next;
    s = add(s, y);
  }
  return add(c, s);
};

const g = (f: (x: Scalar) => Scalar) => (x: Scalar): Scalar => grad(f as never, x as never) as Scalar;

describe("scan whose decisions change every few iterations", () => {
  for (const k of [1, 2, 3, 5, 9, 70]) {
    it(`alternating every ${k}: value, grad, jvp, hessian and grad³ as the loop written out, bit for bit`, () => {
      const xs = pattern(k > 9 ? 400 : 120, k);
      const [s, l] = [scanned(xs), loop(xs)];
      expectSame(s(0.7), l(0.7));
      expectSame(grad(s as never, 0.7 as never), grad(l as never, 0.7 as never));
      expectSame(jvp(s as never, 0.7 as never, 1 as never), jvp(l as never, 0.7 as never, 1 as never));
      expectSame(hessian(s as never, 0.7 as never), hessian(l as never, 0.7 as never));
      expectSame(grad(g(g(s)) as never, 0.7 as never), grad(g(g(l)) as never, 0.7 as never));
    });
  }

  it("runs of a hundred: recorded as runs, each reserving buffers for what it ran (linear in n), not the rest of the loop", () => {
    const reserved = (n: number): number => {
      const before = runBufferStats.reserved;
      grad(scanned(pattern(n, 100)) as never, 0.7 as never);
      return runBufferStats.reserved - before;
    };
    // runs, not the loop written out: a y and a sum per iteration, the body's seven instructions not kept
    expect(traceOf(scanned(pattern(2000, 100)), 0.7).length).toBeLessThan(2000 * 3);
    const [r1, r2] = [reserved(2000), reserved(4000)];
    expect(r1).toBeGreaterThan(0);
    // the first run takes the whole loop (y, x and carries: 3 per iteration); each later one tries a body
    // that fails (a span of 100), then spans of 100 and 200: a constant per iteration (sized for the rest
    // of the loop, it was ~n)
    expect(r1 / 2000).toBeLessThan(20);
    expect(r2 / r1).toBeLessThan(2.2);
  });

  it("one long run reserves its length once (its carries), not again as it goes", () => {
    const before = runBufferStats.reserved;
    grad(((c: Scalar) => scan((y: Scalar): [Scalar] => [add(mul(0.9, y), mul(0.1, sin(y)))], c, 100_000)[0]) as never, 0.5 as never);
    expect(runBufferStats.reserved - before).toBeLessThan(100_000 + 10);
  });

  it("a loop from a literal carry: its first iteration's own run, then the rest in one span (the first run says nothing of the next)", () => {
    // c0 = 1 is a literal: the first iteration folds th · 1 as the loop written out does (a run of its own)
    const f = (th: Scalar): Scalar => scan((c: Scalar): [Scalar] => [add(mul(th, c), mul(0.1, sin(c)))], 1 as Scalar, 100_000)[0];
    const before = runBufferStats.reserved;
    const g1 = grad(f as never, 0.5 as never);
    // one iteration, then 99 999 carries reserved once (not spans 8, 16, … doubling to 131 072: twice as many)
    expect(runBufferStats.reserved - before).toBeLessThan(100_000 + 20);
    const written = (th: Scalar): Scalar => {
      let c: Scalar = 1;
      for (let i = 0; i < 100_000; i++) c = add(mul(th, c), mul(0.1, sin(c)));
      return c;
    };
    expectSame(g1, grad(written as never, 0.5 as never));
  });
});

