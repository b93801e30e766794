/**
 * taylor through a scan runs a scan of series (diff/series-term.ts): the loop's
 * coefficients, bit for bit, for chains, decisions that change part way, two carries, xs
 * of data where the tape folds (x · 1, x + (−0), x⁰), a time counter, traced xs, ys read,
 * checkpoint(f), and the stacked scans of a gradient traced inside taylor; and the series
 * kept to the end do not grow with the iterations (counted: written out, a series per
 * instruction and iteration).
 */
import { describe, expect, it } from "vitest";
import { add, checkpoint, exp, grad, lt, mul, NaNError, pow, scan, sin, sub, taylor, tanh, type Scalar } from "../../src/index.js";
import { seriesStats } from "../../src/diff/series-term.js";
import { expectSame } from "../helpers/same-bits.js";
import type { F } from "../helpers/nested.js";

type Step = (carry: Scalar[], x: Scalar[], a: Scalar) => Scalar[];

const STEPS: { name: string; step: Step; carry: number; xs?: number[][] }[] = [
  { name: "y ← exp(a·sin y)", step: ([y], _x, a) => [exp(mul(a, sin(y)))], carry: 1 },
  { name: "decisions that change part way", step: ([y], _x, a) => [lt(y, 1) ? add(y, mul(0.05, a)) : add(y, mul(0.01, exp(mul(-1, mul(a, y)))))], carry: 1 },
  {
    name: "two carries (Euler steps of Lotka–Volterra)",
    step: ([u, v], _x, a) => {
      const uv = mul(u, v);
      return [add(u, mul(0.01, sub(mul(a, u), uv))), add(v, mul(0.01, sub(uv, mul(3, v))))];
    },
    carry: 2,
  },
  {
    name: "xs of data where the tape folds (x · 1, x + (−0), x⁰)",
    step: ([y], [x], a) => [add(mul(tanh(mul(a, y)), x), add(pow(mul(a, 0.9), x), x))],
    carry: 1,
    xs: Array.from({ length: 40 }, (_, i) => [[0.25, 1, -0, 0.7, 0, 1.5][i % 6]]),
  },
  { name: "a time counter carried as a number", step: ([y, t], _x, a) => [add(y, mul(0.25, mul(a, sin(mul(y, t))))), add(t, 0.25)], carry: 2 },
];

/** f(θ) = Σ carry² + 0.01 Σ ys after the loop from θ's first leaves (a time counter from 0), a = θ's last: a scan, or the loop written out. */
function model({ step, carry, xs }: (typeof STEPS)[number], n: number): { scanned: F; loop: F } {
  const start = (th: Scalar[]): Scalar[] => (carry === 2 && step.length === 3 && STEPS[4].step === step ? [th[0], 0] : th.slice(0, carry));
  const out = (c: Scalar[], path: Scalar[]): Scalar => path.reduce<Scalar>((s, p) => add(s, mul(0.01, p)), c.reduce<Scalar>((s, e) => add(s, mul(e, e)), 0));
  const scanned: F = (th) => {
    const a = th[th.length - 1];
    const body = (c: Scalar[], x: Scalar[]): [Scalar[], Scalar] => {
      const next = step(c, x, a);
      return [next, next[0]];
    };
    const [c, path] = xs === undefined ? scan((c: Scalar[]) => body(c, []), start(th), n) : scan(body, start(th), xs);
    return out(c as Scalar[], path as unknown as Scalar[]);
  };
  const loop: F = (th) => {
    const a = th[th.length - 1];
    let c = start(th);
    const path: Scalar[] = [];
    for (let i = 0; i < (xs?.length ?? n); i++) {
      c = step(c, xs?.[i] ?? [], a);
      path.push(c[0]);
    }
    return out(c, path);
  };
  return { scanned, loop };
}

describe("taylor through a scan: the loop's coefficients, bit for bit", () => {
  for (const s of STEPS) {
    it(`${s.name}: orders 0 to 6, along two directions`, () => {
      const { scanned: S, loop: L } = model(s, 37);
      const th = s.carry === 2 && s !== STEPS[4] ? [1, 0.5, 1.5] : [0.3, 0.8];
      for (const v of [th.map((_, i) => 0.1 * (i + 1)), th.map((_, i) => (i === 0 ? 1 : 0))]) expectSame(taylor(S, th, v, 6), taylor(L, th, v, 6));
    });
  }
  it("traced xs, checkpoint(f), and a gradient traced inside taylor (its sweep stacked scans)", () => {
    const tracedXs: F = ([y0, a, b]) => scan((y: Scalar, x: Scalar) => [add(mul(a, sin(y)), x)], y0, [a, b, mul(a, b), a, b, a, b, b])[0];
    const tracedLoop: F = ([y0, a, b]) => [a, b, mul(a, b), a, b, a, b, b].reduce<Scalar>((y, x) => add(mul(a, sin(y)), x), y0);
    expectSame(taylor(tracedXs, [0.3, 0.8, 0.5], [0.1, 0.2, 0.3], 5), taylor(tracedLoop, [0.3, 0.8, 0.5], [0.1, 0.2, 0.3], 5));
    const layer = (y: Scalar, a: Scalar): Scalar => {
      let h = y;
      for (let i = 0; i < 5; i++) h = tanh(mul(a, h));
      return h;
    };
    const kept = checkpoint(layer);
    expectSame(
      taylor(([y, a]: Scalar[]) => kept(kept(y, a), a), [0.3, 0.9], [1, 0.5], 5),
      taylor(([y, a]: Scalar[]) => layer(layer(y, a), a), [0.3, 0.9], [1, 0.5], 5),
    );
    const { scanned: S, loop: L } = model(STEPS[0], 30);
    const dS = (th: Scalar[]): Scalar => (grad(S, th) as Scalar[])[1];
    const dL = (th: Scalar[]): Scalar => (grad(L, th) as Scalar[])[1];
    expectSame(taylor(dS, [0.3, 0.8], [0.1, 0.2], 4), taylor(dL, [0.3, 0.8], [0.1, 0.2], 4));
  });
  it("checkNaN through a scan (traced as its loop written out) names the instruction whose coefficient is not finite", () => {
    // along v = 10³⁰⁰, exp(y)'s first coefficient overflows where exp(y) passes 1.8·10⁸: y = 20, iteration 4
    const f = ([y0]: Scalar[]): Scalar => (scan((y: Scalar) => [add(y, 5), exp(y)], y0, 7)[1] as Scalar[]).reduce<Scalar>(add, 0);
    expect(taylor(f, [0], [1e300], 1)[1]).toBe(Infinity);
    expect(() => taylor(f, [0], [1e300], 1, { checkNaN: true })).toThrow(NaNError);
    expect(() => taylor(f, [0], [1e300], 1, { checkNaN: true })).toThrow(/the derivative of order 1 of exp \(for v\d+\) along v is Infinity \(argument values 20\)/);
  });
});

describe("taylor through a scan: series that do not grow with the iterations", () => {
  it("the series kept to the end are the same for n = 100 and 10⁴ (and a series per instruction written out)", () => {
    const chain = (n: number): F => ([y0, a]) => scan((y: Scalar) => [exp(mul(a, sin(y)))], y0, n)[0];
    const loop: F = ([y0, a]) => {
      let y = y0;
      for (let i = 0; i < 100; i++) y = exp(mul(a, sin(y)));
      return y;
    };
    taylor(chain(100), [0.3, 0.8], [0.1, 0.2], 5);
    const small = seriesStats.held;
    taylor(chain(10_000), [0.3, 0.8], [0.1, 0.2], 5);
    expect(seriesStats.held).toBe(small);
    taylor(loop, [0.3, 0.8], [0.1, 0.2], 5);
    expect(seriesStats.held).toBeGreaterThan(30 * small);
  });
});
