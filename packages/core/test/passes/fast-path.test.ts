/**
 * The outermost rd's numeric reverse sweep (diff/sweep.ts) against the derivative term
 * built symbolically and evaluated (the reference path).
 */
import fc from "fast-check";
import { BINARY_NAMES, UNARY_NAMES, type UnaryName } from "@wengert/ops";
import { describe, expect, it } from "vitest";
import {
  add,
  atan,
  atan2,
  cos,
  defineOp,
  derivativeOf,
  div,
  exp,
  grad,
  hvp,
  jvp,
  log,
  lt,
  mul,
  NaNError,
  neg,
  rd,
  sigmoid,
  sin,
  sinh,
  softplus,
  sqrt,
  square,
  sub,
  tanh,
  type Scalar,
} from "../../src/index.js";
import { binaryCases, unaryCases } from "../helpers/cases.js";
import { constantExpr, lines, opExpr, varExpr } from "../helpers/programs/generate.js";
import { binary, pick, SMOOTH, TABLE, unary } from "../helpers/programs/ops.js";
import { firstOf, outputsOf } from "../helpers/programs/run.js";

const isUnary = (name: string): name is UnaryName => (UNARY_NAMES as readonly string[]).includes(name);

const same = (a: number, b: number) => expect(Object.is(a, b) || (Number.isNaN(a) && Number.isNaN(b)), `${a} vs ${b}`).toBe(true);

/** Random straight-line programs with branches and two outputs: the last value, and the one before over 2 + x0². */
const programs = lines({
  ops: [...pick("sin", "cos", "tanh", "square", "exp02"), ...TABLE],
  length: [1, 12],
  reach: 20,
  branches: true,
  outputs: [varExpr(-1), opExpr(SMOOTH.div2sq, varExpr(-2), varExpr(0))],
});

describe("numeric sweep = built term, evaluated", () => {
  it("on random straight-line programs with branches and several outputs", () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: -2, max: 2, noNaN: true }), { minLength: 1, maxLength: 3 }),
        programs,
        fc.array(fc.double({ min: -2, max: 2, noNaN: true }), { minLength: 2, maxLength: 2 }),
        (x, prog, seed) => {
          const f = outputsOf(prog);
          const fast = rd(f, x, seed, { ties: "ignore" }) as number[];
          const built = derivativeOf(f, x, seed, { ties: "ignore" }).evaluate(x, seed) as number[];
          fast.forEach((g, i) => same(g, built[i]));
        },
      ),
      { numRuns: 300, seed: 42 },
    );
  });

  it("on programs mixing the primitives it writes out with ones it runs by their rule", () => {
    // user primitives go through their rules between stretches of written-out built-ins;
    // the sweep resumes the fast loop after each (tests the hand-over both ways)
    const cubeMixed = defineOp({ name: "cubeMixed", forward: (x) => x * x * x, reverse: ([x], _y, ct) => [mul(ct, mul(3, mul(x, x)))] });
    const hypot = defineOp({ name: "hypotMixed", forward: (a, b) => Math.hypot(a, b), reverse: ([a, b], y, ct) => [div(mul(ct, a), y), div(mul(ct, b), y)] });
    const mixed = lines({
      ops: [
        ...Object.entries({ sinh, atan, softplus, sigmoid, neg, cubeMixed }).map(([name, f]) => unary(name, f)),
        unary("hypot(x, 0.5)", (x) => hypot(x, 0.5)),
        ...pick("sqrt1sq", "mul", "div2sq"),
        unary("log(2 + sin x)", (x) => log(add(2, sin(x)))),
        binary("atan2(a, b + 3)", (a, b) => atan2(a, add(b, 3))),
      ],
      length: [1, 16],
      reach: 20,
      outputs: [opExpr(SMOOTH.add, varExpr(-1), opExpr(SMOOTH.mul, constantExpr(0.5), varExpr(0)))],
    });
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: -2, max: 2, noNaN: true }), { minLength: 1, maxLength: 3 }),
        mixed,
        fc.double({ min: -2, max: 2, noNaN: true }),
        (x, prog, seed) => {
          const f = firstOf(prog);
          const fast = rd(f, x, seed) as number[];
          const built = derivativeOf(f, x, seed).evaluate(x, seed) as number[];
          fast.forEach((g, i) => same(g, built[i]));
        },
      ),
      { numRuns: 300, seed: 11 },
    );
  });

  it("runs user primitives' rules on numbers", () => {
    const cube = defineOp({ name: "cube_fast", forward: (x) => x * x * x, reverse: ([x], _y, ct) => [mul(ct, mul(3, mul(x, x)))] });
    expect(grad(cube, 2)).toBe(12);
    expect(grad((x: Scalar) => grad(cube, x), 2)).toBe(12);
  });

  it("names the rule whose reverse contribution is not finite with checkNaN", () => {
    // sqrt(0) = 0 is fine forward; its reverse rule gives ct / (2·0) = ∞
    expect(() => grad(sqrt, 0, { checkNaN: true })).toThrow(NaNError);
    expect(() => grad(sqrt, 0, { checkNaN: true })).toThrow("grad: checkNaN: the reverse rule of sqrt (for v1) gave Infinity for its argument v0");
    expect(grad(sqrt, 0)).toBe(Infinity);
  });
});

describe("numeric forward sweep (diff/tangents.ts) = the tangent term built and evaluated, to the bit", () => {
  // checkNaN asks for the symbolic sweep (it names the rule that fails): the reference here
  it.each([...UNARY_NAMES, ...BINARY_NAMES])("jvp of %s at its points and special points", (name) => {
    const cases = isUnary(name) ? unaryCases(name) : binaryCases(name);
    for (const [f, x, v] of cases) {
      let built: number;
      try {
        built = (jvp(f, x, v, { ties: "ignore", checkNaN: true }) as [number, number])[1];
      } catch (err) {
        // a value on the way is not finite: checkNaN stops there, and there is no reference
        if (err instanceof NaNError) continue;
        throw err;
      }
      expect((jvp(f, x, v, { ties: "ignore" }) as [number, number])[1], `jvp at ${x} along ${v}`).toBe(built);
    }
  });

  it("jvp on random programs with branches, and hvp (forward over the reverse sweep)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: -2, max: 2, noNaN: true }), { minLength: 2, maxLength: 3 }),
        programs,
        fc.array(fc.double({ min: -2, max: 2, noNaN: true }), { minLength: 3, maxLength: 3 }),
        (x, prog, v3) => {
          const f = outputsOf(prog);
          const v = v3.slice(0, x.length);
          const [y, fast] = jvp(f, x, v, { ties: "ignore" }) as [number[], number[]];
          const [y2, built] = jvp(f, x, v, { ties: "ignore", checkNaN: true }) as [number[], number[]];
          y.forEach((t, i) => same(t, y2[i]));
          fast.forEach((t, i) => expect(t).toBe(built[i]));
          const L = (p: Scalar[]) => add(f(p)[0], f(p)[1]);
          const h1 = hvp(L, x, v, { ties: "ignore" }) as number[];
          const h2 = hvp(L, x, v, { ties: "ignore", checkNaN: true }) as number[];
          h1.forEach((t, i) => expect(t).toBeCloseTo(h2[i], 10));
        },
      ),
      { numRuns: 150, seed: 7 },
    );
  });
});
