/**
 * `fit`, and the demo's half-moons network trained with it (examples/half-moons.ts): the
 * same losses as the demo's hand-written loop, to the bit, and the demo's printed values.
 */
import ndarray from "ndarray";
import { describe, expect, it, vi } from "vitest";
import { add, mul, square, sub, valueAndGrad, type NdArray, type Scalar } from "@wengert/core";
import { adam, fit, sgd, OptimOptionsError } from "../src/index.js";
import { correct, crossEntropy, initialNet, train, type Net } from "../examples/half-moons.js";

describe("fit", () => {
  // the demo's least-squares line through four points, on a record of parameters
  const data = [[0, 1], [1, 3.1], [2, 4.9], [3, 7.2]];
  const loss = (p: { w: Scalar; b: Scalar }) => data.reduce<Scalar>((s, [x, y]) => add(s, square(sub(add(mul(p.w, x), p.b), y))), 0);

  it("steps updates, steps + 1 losses, the reports at every k steps and the last", () => {
    const reports: number[] = [];
    const r = fit(loss, { w: 0, b: 0 }, sgd(0.05), { steps: 300, every: 100, onProgress: ({ step }) => void reports.push(step) });
    expect(r.steps).toBe(300);
    expect(r.stopped).toBe("steps");
    expect(r.losses).toHaveLength(301);
    expect(reports).toEqual([0, 100, 200, 300]);
    // least squares in closed form: w = 2.04, b = 0.99
    expect(r.params.w).toBeCloseTo(2.04, 3);
    expect(r.params.b).toBeCloseTo(0.99, 2);
  });

  it("the same numbers as the loop written by hand with valueAndGrad", () => {
    let p = { w: 0, b: 0 };
    const losses: number[] = [];
    for (let i = 0; i <= 20; i++) {
      const [l, g] = valueAndGrad(loss, p);
      losses.push(l);
      if (i < 20) p = { w: p.w - 0.05 * g.w, b: p.b - 0.05 * g.b };
    }
    const r = fit(loss, { w: 0, b: 0 }, sgd(0.05), { steps: 20 });
    expect(r.losses).toEqual(losses);
    expect(r.params).toEqual(p);
  });

  it("stops at gradTol, or when onProgress returns false; logs when asked", () => {
    const converged = fit(loss, { w: 0, b: 0 }, adam(0.1), { steps: 100_000, gradTol: 1e-6 });
    expect(converged.stopped).toBe("gradTol");
    expect(converged.steps).toBeLessThan(100_000);
    const stopped = fit(loss, { w: 0, b: 0 }, sgd(0.05), { steps: 100, every: 10, onProgress: ({ step }) => step < 30 });
    expect([stopped.stopped, stopped.steps]).toEqual(["onProgress", 30]);
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    fit(loss, { w: 0, b: 0 }, sgd(0.05), { steps: 4, every: 2, log: true });
    expect(log.mock.calls.map((c) => String(c[0]).replace(/loss.*/, ""))).toEqual(["fit: step 0  ", "fit: step 2  ", "fit: step 4  "]);
    log.mockRestore();
  });

  it("options are checked", () => {
    expect(() => fit(loss, { w: 0, b: 0 }, sgd(0.1), { steps: -1 })).toThrow(/fit: steps is -1/);
    expect(() => fit(loss, { w: 0, b: 0 }, sgd(0.1), { step: 10 } as never)).toThrow(OptimOptionsError);
  });
});

describe("the demo's half-moons network, trained with fit and sgd (examples/half-moons.ts)", () => {
  it("equals the demo's hand-written loop, to the bit", () => {
    // the demo's training code (packages/core/src/demo/main.ts), for 30 steps
    const step = (p: Net, g: Net, rate: number): Net => {
      const move = (a: NdArray, d: NdArray) => ndarray(a.data.map((v, i) => v - rate * d.data[i]), a.shape);
      return { W1: move(p.W1, g.W1), b1: move(p.b1, g.b1), W2: move(p.W2, g.W2), b2: move(p.b2, g.b2) };
    };
    let net = initialNet;
    const losses: number[] = [];
    for (let i = 0; i <= 30; i++) {
      const [l, gnet] = valueAndGrad(crossEntropy, net);
      losses.push(l);
      net = step(net, gnet, 0.5);
    }
    expect(train({ steps: 30 }).losses).toEqual(losses);
  });

  it("reaches the demo's printed losses and classifies all 200 points", () => {
    const printed: string[] = [];
    const { correct: right, net } = train({ report: (s, l) => printed.push(`${s}: ${+l.toFixed(5)}`) });
    // `pnpm demo` prints these
    expect(printed).toEqual(["0: 0.8227", "300: 0.06691", "600: 0.02642", "900: 0.01556", "1200: 0.01056", "1500: 0.00772"]);
    expect(right).toBe(200);
    expect(correct(initialNet)).toBeLessThan(200);
    expect(net.W1.shape).toEqual([2, 16]);
  });
});
