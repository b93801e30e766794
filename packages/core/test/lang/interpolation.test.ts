/**
 * Property tests on random well-typed programs of the language with free real variables
 * x0, x1, x2, drawn by the shared generator (helpers/programs/) and printed in the
 * language: +, -, *, sin, cos, tanh, exp∘tanh, square and every primitive of the table
 * near its smooth points, let, tuple let, pairs with fst/snd, if with every comparison
 * written infix or named, a function h of two parameters, a recursive function rep,
 * loops (local recursive functions) that may stop early on a value, and inner grad, rd
 * and fd.
 *
 *  (a) Proposition 3.5, operational interpolation: evaluating the program at V equals
 *      evaluating its trace term C (symbolic evaluation at V) at V, and at nearby points
 *      where every branch goes the same way, C evaluated there equals the program
 *      evaluated there.
 *  (b) The program's gradient computed in the language equals grad of the same program
 *      written with the TypeScript API, and both equal finite differences away from
 *      branch boundaries.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { grad, traceOf, type Scalar } from "../../src/index.js";
import { check, evaluate, parse, runProgram, type Value } from "../../src/lang/index.js";
import type { Term } from "../../src/lang/syntax.js";
import { bump, expectClose } from "../helpers/check.js";
import { MAX, recorded, reliableDiff, smoothAround } from "../helpers/branches.js";
import type { Program } from "../helpers/programs/expr.js";
import { reached, trees } from "../helpers/programs/generate.js";
import { lit, pick, TABLE } from "../helpers/programs/ops.js";
import { firstOf, onNumbers } from "../helpers/programs/run.js";
import { body, inputNames, prelude } from "../helpers/programs/source.js";
import { IGNORE } from "../helpers/ties.js";

const MAIN_SCOPE = inputNames(3);
const show = (p: Program): string => body(p, MAIN_SCOPE);

// ---- the language ----

/** Ordinary evaluation: the program with its free variables bound by lets to V. */
function runAt(p: Program, x: readonly number[]): Value {
  const binds = x.map((xi, i) => `let x${i} = ${lit(xi)} in `).join("");
  return runProgram(`${prelude(p)}${binds}${show(p)}`, { file: "<p>", ties: "ignore" }).value;
}

/**
 * The program as a term with free variables x0, x1, x2: checked inside three lets that
 * bind them, then the inner term (prelude and main term) handed to `evaluate` with ρ.
 */
function openProgram(p: Program): (x: readonly Scalar[]) => Value {
  const wrapped = parse(`let x0 = 0 in let x1 = 0 in let x2 = 0 in\n${prelude(p)}${show(p)}`, "<p>");
  const checked = check(wrapped, "<p>");
  let inner: Term = wrapped;
  for (let i = 0; i < 3; i++) {
    if (inner.kind !== "let") throw new Error("expected the let of x" + i);
    inner = inner.body;
  }
  const body = inner;
  return (x) => evaluate(body, checked, { file: "<p>", ties: "ignore", env: { x0: x[0], x1: x[1], x2: x[2] } });
}

// ---- generators ----

const programs = trees({
  ops: [...pick("sin", "cos", "tanh", "square", "expTanh", "add", "sub", "mul"), ...TABLE],
  weights: { un: 4, bin: 5, let: 2, proj: 1, tuple: 1, if: 2, for: 1, grad: 1, rd: 1, fd: 1, call: 2, rep: 1 },
  preds: ["lt", "le", "gt", "ge"],
  exits: true,
  vars: 7,
});
const points = fc.array(fc.double({ min: -2, max: 2, noNaN: true }), { minLength: 3, maxLength: 3 });
const directions = fc.array(fc.double({ min: -1, max: 1, noNaN: true }), { minLength: 3, maxLength: 3 });

const PARAMS = { numRuns: 200, seed: 20250714, endOnFailure: true };
const describeAt = (p: Program, x: readonly number[]) => `${prelude(p)}${show(p)}\n  at [${x.join(", ")}]`;

describe("random programs of the language", () => {
  it("the generator's programs are well typed and some use every construct", () => {
    const { samples, kinds, ops } = reached(programs, 300, 7);
    for (const p of samples) expect(() => check(parse(`let x0 = 0 in let x1 = 0 in let x2 = 0 in\n${prelude(p)}${show(p)}`)).type).not.toThrow();
    expect(kinds).toEqual(
      ["call", "const", "fd", "for", "for-exit", "grad", "if-infix", "if-named", "let", "op/1", "op/2", "proj", "rd", "rep", "tuple", "var"],
    );
    // a primitive declared in the table is in the language's random programs, near each of its smooth points
    for (const { name } of TABLE) expect(ops, name).toContain(name);
  });

  it("(a) Proposition 3.5: the trace term at V gives the program's value at V, and nearby where the branches agree", () => {
    fc.assert(
      fc.property(programs, points, directions, (p, x, dir) => {
        const value = runAt(p, x);
        fc.pre(typeof value === "number" && Number.isFinite(value) && Math.abs(value) <= MAX);
        const where = describeAt(p, x);
        const [tsValue, atX] = recorded(() => onNumbers(p)(x));
        expectClose(value, tsValue, 1e-12, 1e-12, `the language and the TypeScript interpreter on numbers, ${where}`);
        const open = openProgram(p);
        expectClose(open(x), value, 0, 0, `evaluate with ρ, ${where}`);
        const term = traceOf((xs: Scalar[]) => open(xs), x, IGNORE);
        expectClose(term.evaluate(x), value, 1e-12, 1e-12, `C evaluated at V, ${where}`);
        for (const scale of [1e-3, 1e-5]) {
          const y = x.map((xi, i) => xi + scale * dir[i]);
          const [tsY, atY] = recorded(() => onNumbers(p)(y));
          if (atY.branches !== atX.branches || !Number.isFinite(tsY)) continue;
          expectClose(term.evaluate(y), runAt(p, y), 1e-10, 1e-10, `C evaluated at y = [${y.join(", ")}], ${where}`);
        }
      }),
      PARAMS,
    );
  });

  it("(b) grad in the language equals grad with the TypeScript API and finite differences", () => {
    fc.assert(
      fc.property(programs, points, (p, x) => {
        const [value, atX] = recorded(() => onNumbers(p)(x));
        fc.pre(Number.isFinite(value) && Math.abs(value) <= MAX);
        const where = describeAt(p, x);
        const src = `${prelude(p)}grad_{<${x.map(lit).join(", ")}>}(p: real^3. let <x0, x1, x2> = p in ${show(p)})`;
        const result = runProgram(src, { file: "<grad>", ties: "ignore" });
        expect(result.type).toBe("real * real * real");
        const [[g0, g1], g2] = result.value as [[number, number], number];
        const inLanguage = [g0, g1, g2];
        const withApi = grad((xs: Scalar[]) => firstOf(p)(xs), x, IGNORE) as number[];
        expectClose(inLanguage, withApi, 1e-10, 1e-10, `grad in the language vs the API, ${where}`);
        if (!smoothAround(onNumbers(p), x, atX, value)) return;
        for (let i = 0; i < 3; i++) {
          const fdi = reliableDiff((t) => onNumbers(p)(bump(x, i, t - x[i])), x[i]);
          if (fdi === null) continue;
          expectClose(inLanguage[i], fdi, 1e-6, 1e-7, `∂/∂x${i} against finite differences, ${where}`);
        }
      }),
      PARAMS,
    );
  });
});
