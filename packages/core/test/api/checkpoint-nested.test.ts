/**
 * Nested derivatives of `checkpoint(f)` keep f as one instruction (diff/scan-single.ts):
 * grad∘grad, hessian, hvp, jvp∘grad and third orders give the numbers of f written out,
 * bit for bit, and the derivative terms have as many instructions whatever f's size
 * (counted, not timed).
 */
import { describe, expect, it } from "vitest";
import { add, checkpoint, derivativeOf, lt, mul, pow, sin, tanh, type Scalar } from "../../src/index.js";
import { expectSameToThirdOrder, gradNorm, nestedSizes, type F } from "../helpers/nested.js";

/** k steps of h ← tanh(a·h + b), b captured from the enclosing trace: a function of k·3 instructions. */
const layer =
  (k: number, b: Scalar) =>
  (y: Scalar, a: Scalar): Scalar => {
    let h = y;
    for (let i = 0; i < k; i++) h = tanh(add(mul(a, h), b));
    return h;
  };

/** Two checkpointed layers and a kinked tail, or the same written out. */
function model(k: number): { kept: F; plain: F } {
  const make =
    (wrap: (f: (y: Scalar, a: Scalar) => Scalar) => (y: Scalar, a: Scalar) => Scalar): F =>
    ([y0, a, b]) => {
      const f = wrap(layer(k, mul(b, 0.5)));
      const h = f(f(y0, a), add(a, 0.1));
      return lt(h, 0) ? mul(h, h) : sin(h);
    };
  return { kept: make(checkpoint), plain: make((f) => f) };
}

describe("nested derivatives of checkpoint(f)", () => {
  it("the numbers of f written out, to third order", () => {
    for (const th of [
      [0.3, 0.8, 0.2],
      [1.5, -0.7, 0.9],
    ]) {
      const { kept, plain } = model(6);
      expectSameToThirdOrder(kept, plain, th, [0.1, 0.2, 0.3]);
    }
  });
  it("a checkpoint returning several values, one an argument passed on, one a literal", () => {
    const pair = (y: Scalar, a: Scalar): [Scalar, Scalar, Scalar, number] => [sin(mul(a, y)), mul(y, y), y, 2];
    const kept = checkpoint(pair);
    const f = (g: typeof pair): F => ([y, a]) => {
      const [u, v, w, c] = g(y, a);
      return add(mul(u, v), mul(w, c));
    };
    expectSameToThirdOrder(f(kept), f(pair), [0.4, 1.3], [0.5, -0.25]);
  });
  it("a cotangent that is a seed passed on (y + 2a: ȳ is the seed), the block placed: the numbers of f written out", () => {
    const g = (y: Scalar, a: Scalar): Scalar => add(y, mul(a, 2));
    const kept = checkpoint(g);
    const f = (h: typeof g): F => ([y, a]) => sin(mul(h(mul(y, y), a), a));
    expectSameToThirdOrder(f(kept), f(g), [0.4, 1.3], [0.5, -0.25]);
  });
  it("literal arguments (a number 1 that the rules would fold, and 0.5): the numbers of f written out", () => {
    const g = (y: Scalar, c: Scalar, a: Scalar): Scalar => sin(mul(mul(y, c), pow(a, c)));
    const kept = checkpoint(g);
    const f = (h: typeof g): F => ([y, a]) => add(h(y, 1, a), h(mul(y, a), 0.5, a));
    expectSameToThirdOrder(f(kept), f(g), [0.4, 1.3], [0.5, -0.25]);
  });
  it("the derivative terms do not grow with f's instructions", () => {
    const th = [0.3, 0.8, 0.2];
    const small = nestedSizes(model(10).kept, th);
    expect(nestedSizes(model(1000).kept, th)).toEqual(small);
    const size = (f: F): number => derivativeOf(gradNorm(f), th, 1).length;
    expect(size(model(10).plain)).toBeGreaterThan(small[2]);
    expect(size(model(1000).plain)).toBeGreaterThan(50 * small[2]);
  });
});
