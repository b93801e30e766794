/**
 * Property tests on random small programs. A program is data (an expression AST with
 * branches, bounded loops and nested grad/rd); one interpreter, written with wengert's
 * functions, runs it on numbers and on traced reals alike. At random points: grad
 * equals finite differences, the trace term replays the program and its derivative
 * term gives grad, and nested grad (the Hessian diagonal) equals differences of grad.
 */
import fc from "fast-check";
import { describe, it } from "vitest";
import { derivativeOf, grad, traceOf, type Scalar } from "../../src/index.js";
import { bump, expectClose } from "../helpers/check.js";
import { MAX, recorded, reliableDiff, smoothAround } from "../helpers/branches.js";
import { BINARY, program, show, UNARY, type BinOp, type Expr, type UnOp } from "../helpers/random-programs.js";
import { IGNORE } from "../helpers/ties.js";

const onNumbers = (e: Expr) => (x: number[]): number => program(e)(x) as number;
const gradient = (e: Expr, x: number[]): number[] => grad(program(e), x, IGNORE) as number[];

const constant = fc.double({ min: -2, max: 2, noNaN: true });
const { node: programs } = fc.letrec<{ expr: Expr; node: Expr; leaf: Expr }>((tie) => ({
  leaf: fc.oneof(
    { weight: 3, arbitrary: fc.record({ k: fc.constant("var" as const), i: fc.nat(5) }) },
    { weight: 1, arbitrary: fc.record({ k: fc.constant("const" as const), c: constant }) },
  ),
  node: fc.oneof(
    { weight: 4, arbitrary: fc.record({ k: fc.constant("un" as const), op: fc.constantFrom(...(Object.keys(UNARY) as UnOp[])), a: tie("expr") }) },
    {
      weight: 4,
      arbitrary: fc.record({ k: fc.constant("bin" as const), op: fc.constantFrom(...(Object.keys(BINARY) as BinOp[])), a: tie("expr"), b: tie("expr") }),
    },
    { weight: 2, arbitrary: fc.record({ k: fc.constant("if" as const), l: tie("expr"), r: tie("expr"), t: tie("expr"), e: tie("expr") }) },
    { weight: 2, arbitrary: fc.record({ k: fc.constant("for" as const), n: fc.integer({ min: 1, max: 3 }), init: tie("expr"), body: tie("expr") }) },
    { weight: 2, arbitrary: fc.record({ k: fc.constant("rd" as const), at: tie("expr"), seed: fc.option(tie("expr"), { nil: null }), body: tie("expr") }) },
  ),
  // Leaves first: past maxDepth only leaves are drawn. The root (node) is never a bare leaf.
  expr: fc.oneof({ maxDepth: 4, depthSize: "medium", withCrossShrink: true }, { weight: 1, arbitrary: tie("leaf") }, { weight: 2, arbitrary: tie("node") }),
}));
const point = fc.array(fc.double({ min: -2, max: 2, noNaN: true }), { minLength: 1, maxLength: 3 });

/** Programs whose values stay moderate (loops of mul can overflow FD's accuracy). */
const PARAMS = { numRuns: 150, seed: 20240611, endOnFailure: true };

describe("random programs with branches, loops and nested rd", () => {
  it("(a) grad equals finite differences of the program run on numbers", () => {
    fc.assert(
      fc.property(programs, point, (e, x) => {
        const [value, atX] = recorded(() => onNumbers(e)(x));
        fc.pre(smoothAround(onNumbers(e), x, atX, value));
        const g = gradient(e, x);
        const names = x.map((_, i) => `x${i}`);
        for (let i = 0; i < x.length; i++) {
          const fdi = reliableDiff((t) => onNumbers(e)(bump(x, i, t - x[i])), x[i]);
          fc.pre(fdi !== null);
          expectClose(g[i], fdi, 1e-6, 1e-7, `∂/∂x${i} of ${show(e, names)} at [${x}]`);
        }
      }),
      PARAMS,
    );
  });

  it("(b) the trace term replays the program, and the derivative term gives grad", () => {
    fc.assert(
      fc.property(programs, point, fc.array(fc.double({ min: -1, max: 1, noNaN: true }), { minLength: 3, maxLength: 3 }), (e, x, dir) => {
        const [value, atX] = recorded(() => onNumbers(e)(x));
        fc.pre(Number.isFinite(value) && Math.abs(value) <= MAX);
        const where = `${show(e, x.map((_, i) => `x${i}`))} at [${x}]`;
        const term = traceOf(program(e), x, IGNORE);
        expectClose(term.evaluate(x), value, 1e-12, 1e-12, `traceOf(f, x).evaluate(x) for ${where}`);
        const g = gradient(e, x);
        const dterm = derivativeOf(program(e), x, 1, IGNORE);
        expectClose(dterm.evaluate(x, 1), g, 1e-12, 1e-12, `derivativeOf(f, x, 1).evaluate(x, 1) for ${where}`);
        // Nearby, where every branch goes the same way, the same terms are f and its gradient.
        const y = x.map((xi, i) => xi + 1e-3 * dir[i]);
        const [valueY, atY] = recorded(() => onNumbers(e)(y));
        if (atY.branches === atX.branches && Number.isFinite(valueY)) {
          expectClose(term.evaluate(y), valueY, 1e-10, 1e-10, `traceOf(f, x).evaluate(y), y = [${y}], for ${where}`);
          expectClose(dterm.evaluate(y, 2), gradient(e, y).map((gi) => 2 * gi), 1e-10, 1e-10, `derivativeOf(f, x, 1).evaluate(y, 2), y = [${y}], for ${where}`);
        }
      }),
      PARAMS,
    );
  });

  it("(c) nested grad (the Hessian diagonal) equals finite differences of grad", () => {
    fc.assert(
      fc.property(programs, point, (e, x) => {
        const [value, atX] = recorded(() => onNumbers(e)(x));
        fc.pre(smoothAround(onNumbers(e), x, atX, value));
        const names = x.map((_, i) => `x${i}`);
        for (let i = 0; i < x.length; i++) {
          const hii = grad((y: Scalar[]) => (grad(program(e), y, IGNORE) as Scalar[])[i], x, IGNORE)[i];
          const fdi = reliableDiff((t) => gradient(e, bump(x, i, t - x[i]))[i], x[i]);
          fc.pre(fdi !== null);
          expectClose(hii, fdi, 1e-5, 1e-6, `∂²/∂x${i}² of ${show(e, names)} at [${x}]`);
        }
      }),
      PARAMS,
    );
  });
});
