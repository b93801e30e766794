/**
 * Masked cotangents of scans of tensors (diff/cotangent-mask.ts): where the loop written out
 * masks a cotangent from block to block (a tensor the loop returns read by `index` or `slice`
 * after it, a `where` in the body), the scan's sweep passes the mask with it, so nested
 * derivatives are scans (their terms' sizes do not grow with the iterations) with the loop's
 * numbers, bit for bit, to third order: masks that settle at once (an elementwise body), late
 * (ode's shift: one element more per step until the vector is covered) and never within the
 * loop. A NaN of the forward values outside the mask (sqrt of a negative) stays out of the
 * derivatives, as in the loop, at first order too.
 */
import { describe, expect, it } from "vitest";
import { add, concat, grad, hessian, index, mul, scan, sin, slice, sqrt, sum, where, type Operand, type Scalar, type TensorArg } from "../../src/index.js";
import { expectSame } from "../helpers/same-bits.js";
import { expectSameOverPoints, expectSameToThirdOrder, nestedSizes, type F } from "../helpers/nested.js";

const T = (v: unknown): TensorArg => v as TensorArg;
type Step = (y: TensorArg, a: Scalar, m: number) => Operand;

/** y shifted by one along the axis, its first element kept (ode's right-hand side reads y so). */
const shift = (y: TensorArg, m: number): TensorArg => T(concat([slice(y, [0], [1]), slice(y, [0], [m - 1])], 0));
const odd = (m: number): Float64Array => Float64Array.from({ length: m }, (_, i) => i % 2);

const STEPS: Record<string, Step> = {
  "elementwise (the mask settles at once)": (y, a) => add(y, mul(0.1, mul(a, sin(y)))),
  "sqrt, NaN outside the mask": (y, a) => add(y, mul(0.1, mul(a, sqrt(y)))),
  "ode's shift (one element more per step)": (y, a, m) => add(y, mul(0.1, mul(a, sin(shift(y, m))))),
  "a where on a fixed mask in the body": (y, a, m) => add(y, mul(0.1, mul(a, where(odd(m), sin(y), y)))),
};

/** Elements 1, −2, 3, 4, −5, … : sqrt of the negative ones is NaN. */
const start = (m: number): Float64Array => Float64Array.from({ length: m }, (_, i) => (i % 3 === 1 ? -(i + 1) : i + 1));

type Read = (y: TensorArg, m: number) => Scalar;
const last: Read = (y, m) => index(y, [m - 1]) as Scalar;
const firstTwo: Read = (y) => sum(T(slice(y, [0], [2]))) as Scalar;

/** f(θ) = read(y) after n steps from θ₀·start, a = θ₁: as a scan, and the loop written out. */
function scanAndLoop(step: Step, m: number, read: Read, options: { nested?: "scan" } = {}): { S: (n: number) => F; L: (n: number) => F } {
  const S = (n: number): F => (th) => read(T(scan((y: Operand) => [step(T(y), th[1], m)], mul(th[0], start(m)) as Operand, n, options)[0]), m);
  const L = (n: number): F => (th) => {
    let y = mul(th[0], start(m)) as Operand;
    for (let i = 0; i < n; i++) y = step(T(y), th[1], m);
    return read(T(y), m);
  };
  return { S, L };
}

const TH = [0.3, 0.8];

describe("masked cotangents of scans of tensors", () => {
  for (const [name, step] of Object.entries(STEPS)) {
    it(`${name}: the loop's numbers to third order, masks that settle at once or late (m = 4, 8) and never (m = 64, 20 steps)`, () => {
      for (const [n, m] of [[40, 4], [40, 8], [20, 64]]) {
        // second orders nest (nested "scan" would throw were the loop written out); third orders write the sweep's scan out
        const nests = scanAndLoop(step, m, last, { nested: "scan" }).S(n);
        const { S, L } = scanAndLoop(step, m, last);
        expectSame(grad(nests, TH), grad(L(n), TH));
        expectSame(hessian(nests, TH), hessian(L(n), TH));
        expectSameToThirdOrder(S(n), L(n), TH, [1, 0.5]);
      }
    });
  }

  it("a slice read after the loop, and vmap and jit of grad∘grad: the loop's numbers", () => {
    const { S, L } = scanAndLoop(STEPS["ode's shift (one element more per step)"], 6, firstTwo);
    expectSame(hessian(scanAndLoop(STEPS["ode's shift (one element more per step)"], 6, firstTwo, { nested: "scan" }).S(30), TH), hessian(L(30), TH));
    expectSameToThirdOrder(S(30), L(30), TH, [1, 0.5]);
    const byIndex = scanAndLoop(STEPS["sqrt, NaN outside the mask"], 4, last);
    expectSameOverPoints(byIndex.S(30), byIndex.L(30), [0.3, 0.5]);
  });

  it("first order: a NaN outside the index stays out of the gradient, as in the loop", () => {
    const { S, L } = scanAndLoop(STEPS["sqrt, NaN outside the mask"], 4, last);
    const g = grad(S(40), TH) as number[];
    expect(g.every(Number.isFinite)).toBe(true);
    expectSame(g, grad(L(40), TH));
  });

  it("nests where the masks settle: the terms of a nested derivative keep as many instructions at n = 100 as at 10⁴", () => {
    for (const step of Object.values(STEPS)) {
      const { S } = scanAndLoop(step, 4, last, { nested: "scan" });
      expect(nestedSizes(S(10_000), TH)).toEqual(nestedSizes(S(100), TH));
    }
  });
});
