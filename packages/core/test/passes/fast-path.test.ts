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
import { binaryCases, unaryCases } from "../helpers/programs.js";

const isUnary = (name: string): name is UnaryName => (UNARY_NAMES as readonly string[]).includes(name);

const same = (a: number, b: number) => expect(Object.is(a, b) || a === b || (Number.isNaN(a) && Number.isNaN(b))).toBe(true);

/** Random straight-line programs with branches and two outputs: a step (k, i, j) is op k of values i and j. */
const OPS = [sin, cos, tanh, square, (x: Scalar) => exp(mul(0.2, x))];
const steps = fc.array(fc.tuple(fc.nat(OPS.length - 1), fc.nat(20), fc.nat(20)), { minLength: 1, maxLength: 12 });
const program =
  (ss: readonly [number, number, number][]) =>
  (v: Scalar[]): Scalar[] => {
    const vals: Scalar[] = [...v];
    for (const [k, i, j] of ss) {
      const p = vals[i % vals.length];
      const q = vals[j % vals.length];
      vals.push(lt(p, q) ? OPS[k](sub(p, q)) : mul(OPS[k](p), add(q, 1.5)));
    }
    return [vals[vals.length - 1], div(vals[vals.length - 2 < 0 ? 0 : vals.length - 2] as Scalar, add(2, square(vals[0])))];
  };

describe("numeric sweep = built term, evaluated", () => {
  it("on random straight-line programs with branches and several outputs", () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: -2, max: 2, noNaN: true }), { minLength: 1, maxLength: 3 }),
        steps,
        fc.array(fc.double({ min: -2, max: 2, noNaN: true }), { minLength: 2, maxLength: 2 }),
        (x, ss, seed) => {
          const f = program(ss);
          const fast = rd(f, x, seed, { ties: "ignore" }) as number[];
          const built = derivativeOf(f, x, seed, { ties: "ignore" }).evaluate(x, seed) as number[];
          fast.forEach((g, i) => same(g + 0, built[i] + 0));
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
    const MIXED = [
      sinh,
      atan,
      softplus,
      sigmoid,
      neg,
      cubeMixed,
      (x: Scalar) => hypot(x, 0.5),
      (x: Scalar) => sqrt(add(1, square(x))),
      (x: Scalar) => log(add(2, sin(x))),
    ];
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: -2, max: 2, noNaN: true }), { minLength: 1, maxLength: 3 }),
        fc.array(fc.tuple(fc.nat(MIXED.length), fc.nat(20), fc.nat(20)), { minLength: 1, maxLength: 16 }),
        fc.double({ min: -2, max: 2, noNaN: true }),
        (x, ss, seed) => {
          const f = (v: Scalar[]): Scalar => {
            const vals: Scalar[] = [...v];
            for (const [k, i, j] of ss) {
              const p = vals[i % vals.length];
              const q = vals[j % vals.length];
              vals.push(k === MIXED.length ? atan2(p, add(q, 3)) : mul(MIXED[k](p), div(q, add(2, square(p)))));
            }
            return add(vals[vals.length - 1], mul(0.5, vals[0]));
          };
          const fast = rd(f, x, seed) as number[];
          const built = derivativeOf(f, x, seed).evaluate(x, seed) as number[];
          fast.forEach((g, i) => same(g + 0, built[i] + 0));
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
        steps,
        fc.array(fc.double({ min: -2, max: 2, noNaN: true }), { minLength: 3, maxLength: 3 }),
        (x, ss, v3) => {
          const f = program(ss);
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
