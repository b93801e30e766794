/**
 * The outermost reverse sweep made for one set of pooled columns (diff/sweep-specialised.ts):
 * a repeated grad comes to run it, and it gives the numbers of the derivative term built
 * and evaluated, to the bit, on the columns of whichever program traced into them last.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { add, defineOp, derivativeOf, grad, mul, rd, sin, type Scalar } from "../../src/index.js";
import { newton } from "../helpers/cases.js";
import { specialisedStats } from "../../src/diff/sweep-specialised.js";
import { opExpr, lines, varExpr } from "../helpers/programs/generate.js";
import { pick, SMOOTH, TABLE } from "../helpers/programs/ops.js";
import { outputsOf } from "../helpers/programs/run.js";

const same = (a: number, b: number) => expect(Object.is(a, b) || (Number.isNaN(a) && Number.isNaN(b)), `${a} vs ${b}`).toBe(true);

const sumOfNewton = (xs: readonly Scalar[]): Scalar => xs.reduce<Scalar>((s, x) => add(s, newton(x)), 0);

describe("the sweep made for a grad's columns", () => {
  it("is what a repeated grad comes to run, with the numbers of the first calls", () => {
    const xs = Array.from({ length: 300 }, (_, k) => 0.4 + k / 100);
    const first = grad(sumOfNewton, xs, { ties: "ignore" }) as number[];
    const before = { ...specialisedStats };
    for (let call = 0; call < 6; call++) {
      const g = grad(sumOfNewton, xs, { ties: "ignore" }) as number[];
      g.forEach((v, k) => same(v, first[k]));
    }
    expect(specialisedStats.runs - before.runs).toBeGreaterThanOrEqual(3);
    // one made for this grad's columns at most: the tape gets its columns back in the same roles
    expect(specialisedStats.made - before.made).toBeLessThanOrEqual(1);
  });

  it("gives the built term's numbers on the columns of random programs traced one after another", () => {
    const programs = lines({
      ops: [...pick("sin", "cos", "tanh", "square", "exp02"), ...TABLE],
      length: [1, 12],
      reach: 20,
      branches: true,
      outputs: [varExpr(-1), opExpr(SMOOTH.div2sq, varExpr(-2), varExpr(0))],
    });
    const before = specialisedStats.runs;
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: -2, max: 2, noNaN: true }), { minLength: 1, maxLength: 3 }),
        programs,
        fc.array(fc.double({ min: -2, max: 2, noNaN: true }), { minLength: 2, maxLength: 2 }),
        (x, prog, seed) => {
          const f = outputsOf(prog);
          const built = derivativeOf(f, x, seed, { ties: "ignore" }).evaluate(x, seed) as number[];
          // several times: the later calls sweep by the specialised sweep of the pooled columns
          for (let call = 0; call < 4; call++) (rd(f, x, seed, { ties: "ignore" }) as number[]).forEach((g, i) => same(g, built[i]));
        },
      ),
      { numRuns: 200, seed: 7 },
    );
    expect(specialisedStats.runs - before).toBeGreaterThan(200);
  });

  it("hands user primitives to their rules and takes the sweep up again after them", () => {
    const cube = defineOp({ name: "cubeSpecialised", forward: (x) => x * x * x, reverse: ([x], _y, ct) => [mul(ct, mul(3, mul(x, x)))] });
    const f = (xs: readonly Scalar[]): Scalar => xs.reduce<Scalar>((s, x) => add(mul(s, 0.5), sin(cube(add(x, s)))), 0);
    const xs = [0.3, -1.2, 0.8, 2.1, -0.4];
    const built = derivativeOf(f, xs, 1).evaluate(xs, 1) as number[];
    const before = specialisedStats.runs;
    for (let call = 0; call < 6; call++) (grad(f, xs) as number[]).forEach((g, i) => same(g, built[i]));
    expect(specialisedStats.runs - before).toBeGreaterThanOrEqual(3);
  });
});
