/**
 * @file A scan reading traced reals captured from an enclosing trace (a step size passed into
 * a jitted function, not a literal of its trace): a gradient with respect to the loop's other
 * inputs computes no cotangent for them (reverse-plan.ts `unneeded`), and its numbers are the
 * same, to the bit, as with those reals written in as literals and as the gradient unjitted;
 * where their cotangents are wanted (a gradient with respect to them too), they are computed
 * as before, the same numbers as unjitted.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { add, concat, grad, index, jit, mul, scan, shapeOf, slice, sum, type Operand, type Scalar, type TensorArg } from "../../src/index.js";
import { expectSame } from "../helpers/same-bits.js";
import { random, rng } from "../helpers/tensors.js";

/** One Runge–Kutta-like step of GradBench's ode system, its step size h (and h/2) read as given. */
function step(x: TensorArg, h: Operand, half: Operand): (y: Operand) => Operand {
  const n = shapeOf(x)[0];
  const x0 = slice(x, [0], [1]);
  const rhs = (v: Operand): Operand => concat([x0, mul(slice(x, [1], [n]), slice(v as TensorArg, [0], [n - 1])) as TensorArg], 0);
  return (y) => {
    const k1 = rhs(y);
    const k2 = rhs(add(y, mul(half, k1)));
    return add(y, mul(h, add(k1, mul(2, k2))));
  };
}

const solve = (x: TensorArg, s: number, h: Operand, half: Operand): TensorArg => {
  const f = step(x, h, half);
  return scan((y: Operand): [Operand] => [f(y)], new Float64Array(shapeOf(x)[0]) as Operand, s)[0] as TensorArg;
};

const last = (x: TensorArg, s: number, h: Operand, half: Operand): Scalar => index(solve(x, s, h, half), shapeOf(x)[0] - 1) as Scalar;

describe("scan: captured traced reals", () => {
  it("property: a gradient that does not reach them equals the one with them as literals and the one unjitted, to the bit", () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 30 }), fc.integer({ min: 1, max: 12 }), fc.integer(), (n, s, seed) => {
        const r = rng(seed);
        const h = 2 / s;
        const passed = jit(([x, hh, half]: [TensorArg, Scalar, Scalar]) => grad((w: TensorArg): Scalar => last(w, s, hh, half), x));
        const literal = jit((x: TensorArg) => grad((w: TensorArg): Scalar => last(w, s, h, h / 2), x));
        for (let call = 0; call < 4; call++) {
          const x = random(r, n);
          const want = grad((w: TensorArg): Scalar => last(w, s, h, h / 2), x);
          expectSame(passed([x, h, h / 2]), want);
          expectSame(literal(x), want);
        }
        expect(passed.stats.traces).toBe(1);
      }),
      { numRuns: 20 },
    );
  });

  it("property: where their cotangents are wanted too, the same numbers as unjitted", () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 20 }), fc.integer({ min: 1, max: 8 }), fc.integer(), (n, s, seed) => {
        const r = rng(seed);
        const f = ([w, hh]: [TensorArg, Scalar]): Scalar => add(sum(solve(w, s, hh, mul(hh, 0.5))), last(w, s, hh, hh)) as Scalar;
        const both = jit((p: [TensorArg, Scalar]) => grad(f, p));
        for (let call = 0; call < 3; call++) {
          const p: [Float64Array, number] = [random(r, n), 2 / s + 0.01 * call];
          expectSame(both(p), grad(f, p));
        }
      }),
      { numRuns: 15 },
    );
  });
});
