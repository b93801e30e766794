/**
 * hvp's numeric sweep (diff/hvp-sweep.ts: the reverse sweep run on dual numbers) against
 * `jvp` of `grad` with the derivative term built in jvp's trace (the symbolic path, which
 * hvp takes where the sweep does not apply), to the bit (toEqual tells −0 from 0), on
 * every scalar primitive, at special points and on random programs; and against closed
 * forms and central differences of the gradient. (hessian-sweep.test.ts: the same for
 * `hessian`, which runs the sweep once per input.)
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BINARY_NAMES, UNARY_NAMES } from "@wengert/ops";
import * as W from "../../src/index.js";
import { add, atan, cos, defineOp, div, exp, grad, hvp, jvp, mul, sin, sqrt, square, sub, tanh, traceOf, type Scalar } from "../../src/index.js";
import { hvpSweep } from "../../src/diff/hvp-sweep.js";
import { expectClose } from "../helpers/check.js";
import { binaryCases, point, rosenbrock, rosenbrockHessian, special, unaryCases, type F } from "../helpers/cases.js";
import { branchy } from "../helpers/programs/generate.js";
import { firstOf } from "../helpers/programs/run.js";
import { IGNORE } from "../helpers/ties.js";

const matVec = (m: number[][], v: number[]): number[] => m.map((row) => row.reduce((s, r, j) => s + r * v[j], 0));

/** H·v as hvp computed it before the sweep: jvp of grad, the derivative term built in jvp's trace. */
const symbolic = (f: F, x: number[], v: number[]): unknown => jvp((p: Scalar[]) => grad(f, p, IGNORE), x, v, IGNORE)[1];

/** hvp (which takes the sweep here: reals, outermost) and the sweep itself, both equal to the symbolic path. */
function expectSame(f: F, x: number[], v: number[]): void {
  const want = symbolic(f, x, v);
  expect(hvp(f, x, v, IGNORE), `hvp at ${x} along ${v}`).toEqual(want);
  expect(hvpSweep(traceOf(f, x, IGNORE), v), `hvpSweep at ${x} along ${v}`).toEqual(want);
}

describe("hvp's sweep = jvp of grad built symbolically, to the bit", () => {
  it.each([...UNARY_NAMES])("unary %s, to second order and at its special points", (name) => {
    for (const [f, x, v] of unaryCases(name)) expectSame(f, x, v);
  });

  it.each([...BINARY_NAMES])("binary %s, to second order and at its special points", (name) => {
    for (const [f, x, v] of binaryCases(name)) expectSame(f, x, v);
  });

  it("through an rd inside f (its derivative term is part of f's trace) and on records", () => {
    const g = ([p, q]: Scalar[]) => mul(sin(mul(p, q)), exp(q));
    expectSame(([p, q]) => {
      const [gp, gq] = grad(g, [p, q]) as Scalar[];
      return add(mul(gp, gq), tanh(p));
    }, [0.4, -0.9], [1.3, 0.2]);
    const f = ({ u, w }: { u: Scalar; w: Scalar[] }) => add(mul(u, square(w[0])), div(w[1], add(2, cos(u))));
    const x = { u: 0.3, w: [1.2, -0.7] };
    const v = { u: -1, w: [0.5, 2] };
    expect(hvp(f, x, v, IGNORE)).toEqual(jvp((p: { u: Scalar; w: Scalar[] }) => grad(f, p as typeof x, IGNORE), x, v, IGNORE)[1]);
  });

  it("with literals the tape folds: 0 and 1 and −0 in rules and programs, constant and linear parts", () => {
    const x = [0.7, -0.3];
    for (const v of [[1, 0], [0, 1], [-0, 2], [0, 0]]) {
      expectSame(([p, q]) => add(mul(p, 0), mul(q, -0)), x, v);
      expectSame(([p, q]) => add(mul(p, 3), q), x, v);
      expectSame(() => 4, x, v);
      expectSame(([p]) => p, x, v);
      expectSame(([p, q]) => mul(sub(p, p), q), x, v);
      expectSame(([p, q]) => div(mul(-0, p), add(1, square(q))), x, v);
      expectSame(([p, q]) => sqrt(square(sub(p, 0.7))), [0.7, -0.3], v);
    }
  });

  it("on random programs with branches and literals, at random points and directions", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 3 }), point, branchy, point, (m, x, prog, v) => {
        expectSame(firstOf(prog), x.slice(0, m), v.slice(0, m));
      }),
      { numRuns: 400, seed: 11 },
    );
  });

  it("on random programs at points and directions made of 0, −0 and ±1 (signed zeros, ties, kinks)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 3 }), special, branchy, special, (m, x, prog, v) => {
        expectSame(firstOf(prog), x.slice(0, m), v.slice(0, m));
      }),
      { numRuns: 1000, seed: 5 },
    );
  });
});

describe("hvp against closed forms and differences", () => {
  it("rosenbrock's Hessian times v, at random points", () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: -2, max: 2, noNaN: true }), { minLength: 2, maxLength: 40 }),
        fc.double({ min: -1, max: 1, noNaN: true }),
        (x, s) => {
          const v = x.map((_, i) => Math.cos(3 * i + s));
          expectClose(hvp(rosenbrock, x, v), matVec(rosenbrockHessian(x), v), 1e-12, 1e-9, "hvp");
        },
      ),
      { numRuns: 100, seed: 3 },
    );
  });

  it("central differences of the gradient along v", () => {
    const f: F = ([a, b, c]) => add(mul(sin(mul(a, b)), exp(mul(0.3, c))), div(square(sub(a, c)), add(2, cos(b))));
    const g = (x: number[]) => grad(f, x) as number[];
    const h = 1e-5;
    for (const x of [[0.3, -1.2, 0.8], [1.1, 0.4, -0.5], [-0.7, 2, 0.1]]) {
      for (const v of [[1, 0, 0], [0.5, -1, 2], [0, 0, 1]]) {
        const up = g(x.map((t, i) => t + h * v[i]));
        const down = g(x.map((t, i) => t - h * v[i]));
        expectClose(hvp(f, x, v), up.map((u, i) => (u - down[i]) / (2 * h)), 1e-7, 1e-8, `hvp at ${x} along ${v}`);
      }
    }
  });

  it("a trace of a million instructions, without recursion: y_{k+1} = sin y_k", () => {
    const n = 1_000_000;
    const f = (x: Scalar): Scalar => {
      let y = x;
      for (let k = 0; k < n; k++) y = sin(y);
      return y;
    };
    // y' and y'' along the chain: d1 ← cos(y) d1, d2 ← cos(y) d2 − sin(y) d1²
    let [y, d1, d2] = [1, 1, 0];
    for (let k = 0; k < n; k++) [y, d1, d2] = [Math.sin(y), Math.cos(y) * d1, Math.cos(y) * d2 - Math.sin(y) * d1 * d1];
    expectClose(hvp(f, 1, 2), 2 * d2, 1e-9, 0, "hvp of the chain");
  }, 60_000);
});

describe("which path hvp takes", () => {
  it("traces f once, on the sweep and on the symbolic path (nested, user primitives, checkNaN)", () => {
    let calls = 0;
    const f: F = ([p, q]) => {
      calls++;
      return mul(sin(p), square(q));
    };
    const want = [-Math.sin(0.5) * 4 * 1 + Math.cos(0.5) * 4 * 1, Math.cos(0.5) * 4 + Math.sin(0.5) * 2 * 1];
    const runs: [string, () => unknown][] = [
      ["sweep", () => hvp(f, [0.5, 2], [1, 1])],
      ["checkNaN", () => hvp(f, [0.5, 2], [1, 1], { checkNaN: true })],
    ];
    for (const [name, run] of runs) {
      calls = 0;
      expectClose(run(), want, 1e-14, 1e-14, name);
      expect(calls, name).toBe(1);
    }
    const cube = defineOp({ name: "cube_hvp", forward: (x) => x * x * x, reverse: ([x], _y, ct) => [mul(ct, mul(3, mul(x, x)))] });
    calls = 0;
    expect(hvp((x: Scalar) => (calls++, cube(x)), 2, 1)).toBe(12);
    expect(calls).toBe(1);
    // nested: the third derivative of x ↦ x⁴ sin x is differentiated through hvp
    calls = 0;
    const quartic = (x: Scalar) => (calls++, mul(square(square(x)), sin(x)));
    const d3 = (x: number) => 24 * x * Math.sin(x) + 36 * x * x * Math.cos(x) - 12 * x ** 3 * Math.sin(x) - x ** 4 * Math.cos(x);
    expectClose(grad((x: Scalar) => hvp(quartic, x, 1) as Scalar, 0.7), d3(0.7), 1e-13, 1e-13, "third derivative");
    expect(calls).toBe(1);
  });

  it("gives the same numbers on the sweep and on the symbolic path it falls back to", () => {
    const f: F = ([p, q]) => add(mul(exp(p), atan(q)), div(p, add(1, square(q))));
    for (const x of [[0.3, -0.8], [1.5, 2]]) {
      // checkNaN asks for the symbolic path (it names the rule that fails)
      expect(hvp(f, x, [0.7, -1.3])).toEqual(hvp(f, x, [0.7, -1.3], { checkNaN: true }));
    }
  });

  it("checks f's output and v's shape as before", () => {
    expect(() => hvp(((p: Scalar[]) => p) as unknown as F, [1, 2], [1, 1])).toThrow(W.OutputTypeError);
    expect(() => hvp(((p: Scalar[]) => p) as unknown as F, [1, 2], [1, 1])).toThrow("hvp: f returned real × real at x; hvp needs f to return a real");
    expect(() => hvp(([p]) => sin(p), [1, 2], [1])).toThrow(W.SeedMismatchError);
  });
});
