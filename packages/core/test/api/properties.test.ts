/**
 * Property tests on random small programs from the shared generator (helpers/programs/):
 * every primitive of the table near its smooth points and smooth compositions, branches
 * on every comparison, loops that may stop early on a value, and nested grad/rd; one
 * interpreter, written with wengert's functions, runs them on numbers and on traced
 * reals. At random points: grad equals finite differences, the trace term replays the
 * program and its derivative term gives grad, and nested grad (the Hessian diagonal)
 * equals differences of grad.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { derivativeOf, grad, traceOf, type Scalar } from "../../src/index.js";
import { bump, expectClose } from "../helpers/check.js";
import { MAX, recorded, reliableDiff, smoothAround } from "../helpers/branches.js";
import type { Program } from "../helpers/programs/expr.js";
import { reached, trees } from "../helpers/programs/generate.js";
import { ALL_SMOOTH, TABLE } from "../helpers/programs/ops.js";
import { firstOf, onNumbers } from "../helpers/programs/run.js";
import { inputNames, source } from "../helpers/programs/source.js";
import { IGNORE } from "../helpers/ties.js";

const program = firstOf;
const show = (p: Program, x: readonly number[]) => source(p, inputNames(x.length));
const gradient = (p: Program, x: number[]): number[] => grad(program(p), x, IGNORE) as number[];

// every primitive of the table near its smooth points, and smooth compositions on all of R
const programs = trees({
  ops: [...ALL_SMOOTH, ...TABLE],
  weights: { un: 4, bin: 4, if: 2, for: 2, grad: 1, rd: 1 },
  preds: ["lt", "le", "gt", "ge"],
  exits: true,
});
const point = fc.array(fc.double({ min: -2, max: 2, noNaN: true }), { minLength: 1, maxLength: 3 });

/** Programs whose values stay moderate (loops of mul can overflow FD's accuracy). */
const PARAMS = { numRuns: 150, seed: 20240611, endOnFailure: true };

describe("random programs with branches, loops and nested rd", () => {
  it("the generator draws every construct asked for, and every primitive of the table", () => {
    const { kinds, ops } = reached(programs, 300, 3);
    expect(kinds).toEqual(["const", "for", "for-exit", "grad", "if-infix", "if-named", "op/1", "op/2", "rd", "var"]);
    // a primitive declared in the table is drawn: near each of its smooth points
    for (const { name } of TABLE) expect(ops, name).toContain(name);
  });

  it("(a) grad equals finite differences of the program run on numbers", () => {
    fc.assert(
      fc.property(programs, point, (p, x) => {
        const [value, atX] = recorded(() => onNumbers(p)(x));
        fc.pre(smoothAround(onNumbers(p), x, atX, value));
        const g = gradient(p, x);
                for (let i = 0; i < x.length; i++) {
          const fdi = reliableDiff((t) => onNumbers(p)(bump(x, i, t - x[i])), x[i]);
          fc.pre(fdi !== null);
          expectClose(g[i], fdi, 1e-6, 1e-7, `∂/∂x${i} of ${show(p, x)} at [${x}]`);
        }
      }),
      PARAMS,
    );
  });

  it("(b) the trace term replays the program, and the derivative term gives grad", () => {
    fc.assert(
      fc.property(programs, point, fc.array(fc.double({ min: -1, max: 1, noNaN: true }), { minLength: 3, maxLength: 3 }), (p, x, dir) => {
        const [value, atX] = recorded(() => onNumbers(p)(x));
        fc.pre(Number.isFinite(value) && Math.abs(value) <= MAX);
        const where = `${show(p, x)} at [${x}]`;
        const term = traceOf(program(p), x, IGNORE);
        expectClose(term.evaluate(x), value, 1e-12, 1e-12, `traceOf(f, x).evaluate(x) for ${where}`);
        const g = gradient(p, x);
        const dterm = derivativeOf(program(p), x, 1, IGNORE);
        expectClose(dterm.evaluate(x, 1), g, 1e-12, 1e-12, `derivativeOf(f, x, 1).evaluate(x, 1) for ${where}`);
        // Nearby, where every branch goes the same way, the same terms are f and its gradient.
        const y = x.map((xi, i) => xi + 1e-3 * dir[i]);
        const [valueY, atY] = recorded(() => onNumbers(p)(y));
        if (atY.branches === atX.branches && Number.isFinite(valueY)) {
          expectClose(term.evaluate(y), valueY, 1e-10, 1e-10, `traceOf(f, x).evaluate(y), y = [${y}], for ${where}`);
          expectClose(dterm.evaluate(y, 2), gradient(p, y).map((gi) => 2 * gi), 1e-10, 1e-10, `derivativeOf(f, x, 1).evaluate(y, 2), y = [${y}], for ${where}`);
        }
      }),
      PARAMS,
    );
  });

  it("(c) nested grad (the Hessian diagonal) equals finite differences of grad", () => {
    fc.assert(
      fc.property(programs, point, (p, x) => {
        const [value, atX] = recorded(() => onNumbers(p)(x));
        fc.pre(smoothAround(onNumbers(p), x, atX, value));
                for (let i = 0; i < x.length; i++) {
          const hii = grad((y: Scalar[]) => (grad(program(p), y, IGNORE) as Scalar[])[i], x, IGNORE)[i];
          const fdi = reliableDiff((t) => gradient(p, bump(x, i, t - x[i]))[i], x[i]);
          fc.pre(fdi !== null);
          expectClose(hii, fdi, 1e-5, 1e-6, `∂²/∂x${i}² of ${show(p, x)} at [${x}]`);
        }
      }),
      PARAMS,
    );
  });
});
