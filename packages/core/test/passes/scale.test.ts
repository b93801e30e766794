/**
 * Size and depth: derivative terms linear in the trace (counted), no stack overflow
 * on a 10^6-step program, and the printed form of small terms.
 */
import { describe, expect, it } from "vitest";
import { add, derivativeOf, grad, mul, rd, sin, traceOf, cos, type Scalar } from "../../src/index.js";

import { chain, chainDerivative } from "../helpers/cases.js";

describe("linear size", () => {
  it("the derivative term has at most a constant factor more instructions than the trace", () => {
    for (const n of [10, 100, 1000, 10000]) {
      const trace = traceOf(chain(n), 0.3).primitives;
      const derivative = derivativeOf(chain(n), 0.3, 1).primitives;
      expect(trace).toBe(4 * n);
      // per step the reverse sweep adds ct·0.9, ct·0.1, cos y, ·cos y, and one + where
      // the two cotangent contributions to y meet
      expect(derivative - trace).toBe(5 * n);
    }
  });

  it("a value used many times costs one + per extra use, not a copy of the term", () => {
    const uses = (k: number) => (x: Scalar): Scalar => {
      let s: Scalar = 0;
      for (let i = 0; i < k; i++) s = add(s, mul(x, i + 1));
      return s;
    };
    const extra = (k: number) => derivativeOf(uses(k), 2, 1).primitives - traceOf(uses(k), 2).primitives;
    // k − 1 products ct·(i+1) (x·1 is x itself) and k − 1 sums of contributions
    expect(extra(1000)).toBe(2 * 1000 - 2);
    expect(extra(2000)).toBe(2 * 2000 - 2);
    expect(grad(uses(100), 2)).toBe((100 * 101) / 2);
  });

  it("nested rd adds a derivative term linear in the inner trace to the outer trace", () => {
    const inner = (x: Scalar) => rd(chain(1000), x, 1) as Scalar;
    const outerTrace = traceOf(inner, 0.3).primitives;
    // the inner trace replayed (4 per step) and its reverse sweep (5 per step), less the
    // two instructions folded away at the last step, where the seed is the literal 1
    expect(outerTrace).toBe(9 * 1000 - 2);
  });
});

describe("depth", () => {
  it("differentiates a 10^6-step program without overflowing the stack", () => {
    const n = 1_000_000;
    expect(grad(chain(n), 0.3)).toBeCloseTo(chainDerivative(n, 0.3), 12);
  });

  it("prints and evaluates long terms iteratively", () => {
    const term = traceOf(chain(200_000), 0.3);
    expect(String(term).split("\n").length).toBe(2 + 4 * 200_000 + 1);
    expect(term.evaluate(0.5)).toBeCloseTo(chain(200_000)(0.5) as number, 12);
  });

  it("second derivative of a 10^5-step program (nested rd over a long trace)", () => {
    const n = 100_000;
    const h = 1e-4;
    const d2 = grad((x: Scalar) => grad(chain(n), x), 0.3);
    const fdiff = (chainDerivative(n, 0.3 + h) - chainDerivative(n, 0.3 - h)) / (2 * h);
    expect(d2).toBeCloseTo(fdiff, 6);
  });
});

describe("printing", () => {
  it("shows the trace term in the paper's notation", () => {
    const f = (p: [Scalar, Scalar]) => [add(mul(p[0], 2), sin(p[1])), cos(p[0])];
    expect(String(traceOf(f, [1, 2]))).toMatchInlineSnapshot(`
      "x : real × real.
      let ⟨v0:real, v1:real⟩ = x in
      let v3:real = mul(v0, 2) in
      let v4:real = sin(v1) in
      let v5:real = v3 + v4 in
      let v6:real = cos(v0) in
      ⟨v5, v6⟩"
    `);
    expect(String(derivativeOf((x: Scalar) => mul(x, sin(x)), 1, 1))).toMatchInlineSnapshot(`
      "x : real.
      let v0:real = x in
      W : real.
      let v3:real = W in
      let v1:real = sin(v0) in
      let v2:real = mul(v0, v1) in
      let v4:real = mul(v3, v1) in
      let v5:real = mul(v3, v0) in
      let v6:real = cos(v0) in
      let v7:real = mul(v5, v6) in
      let v8:real = v4 + v7 in
      v8"
    `);
  });
});
