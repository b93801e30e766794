/**
 * The efficient differentiator against Fig. 6 taken literally, on random trace terms.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { add, derivativeOf, mul, rd, sin, traceOf, type Scalar } from "../../src/index.js";
import { reverseDerivative } from "../../src/diff/reference.js";
import { evaluateTree, leavesOf, toTree, valueOf } from "../../src/trace/tree.js";
import { flatten } from "../../src/structure.js";
import { lines, opExpr, varExpr } from "../helpers/programs/generate.js";
import { pick, SMOOTH } from "../helpers/programs/ops.js";
import { outputsOf } from "../helpers/programs/run.js";

/**
 * Random straight-line programs over 1 to 3 inputs with 1 to 3 outputs; arguments pick
 * earlier values or the literals −3/4, −1/2, −1/4. Smooth operations only: Fig. 6 taken
 * literally grows too large on the table's compositions (each primitive meets Fig. 6 in
 * ops/primitive-table.test.ts).
 */
const programs = lines({
  ops: [...pick("sin", "cos", "tanh", "square", "sigmoid", "exp02", "add", "sub", "mul", "div2sq", "atan2")],
  length: [1, 7],
  reach: 40,
  literals: [-0.75, -0.5, -0.25],
  // the first output a sum whose right side is an input: Fig. 6's `+` rule on both sides every run
  // (drawn outputs reached a sum with x on its right in about 3% of programs)
  outputs: fc.tuple(fc.nat(40), fc.array(fc.nat(40).map(varExpr), { maxLength: 2 })).map(([i, rest]) => [opExpr(SMOOTH.add, varExpr(i), varExpr(0)), ...rest]),
});
const point = fc.double({ min: -2, max: 2, noNaN: true });

/** Fig. 6 applied to the trace term of f at x, evaluated: the reference answer. */
function referenceRd(f: (x: Scalar[]) => unknown, x: number[], seed: number[]): number[] {
  const term = traceOf(f, x);
  const { C, T } = toTree(term);
  const V = valueOf(term.params[0].shape, x);
  const W = valueOf(term.output.shape, seed);
  return leavesOf(evaluateTree(reverseDerivative(W, V, "x", T, C)));
}

describe("efficient differentiation equals Fig. 6", () => {
  it("on random trace terms, at random points and seeds", () => {
    fc.assert(
      fc.property(
        fc.array(point, { minLength: 1, maxLength: 3 }),
        programs,
        fc.array(point, { minLength: 3, maxLength: 3 }),
        (x, prog, seedPool) => {
          const f = outputsOf(prog);
          const seed = prog.outputs.map((_, j) => seedPool[j]);
          const expected = referenceRd(f, x, seed);
          // Fig. 6 sends a 0 cotangent through unused code, where 0 · ∞ (atan2 at the
          // origin) gives NaN; the sweep's symbolic zero does not. Compare where the
          // reference is finite.
          fc.pre(expected.every(Number.isFinite));
          const got = rd(f, x, seed) as number[];
          const viaTerm = derivativeOf(f, x, seed).evaluate(x, seed) as number[];
          for (let i = 0; i < x.length; i++) {
            expect(got[i]).toBeCloseTo(expected[i], 10);
            expect(viaTerm[i]).toBeCloseTo(expected[i], 10);
          }
        },
      ),
      { numRuns: 300, seed: 20261122 },
    );
    // Fig. 6 taken literally is slow (its terms grow with the program): near a minute on a loaded machine
  }, 180_000);

  it("on structured inputs and outputs (records, nested tuples, unit)", () => {
    const f = (p: { w: Scalar; b: [Scalar, Scalar] }) => [mul(p.w, p.b[0]), { s: sin(p.b[1]), u: [] as [] }, add(p.w, p.w)];
    const x = { w: 0.7, b: [1.3, -0.4] as [number, number] };
    const seed = [2, { s: -1, u: [] }, 0.5];
    const term = traceOf(f, x);
    const { C, T } = toTree(term);
    const V = valueOf(term.params[0].shape, [0.7, 1.3, -0.4]);
    const W = valueOf(term.output.shape, [2, -1, 0.5]);
    const expected = leavesOf(evaluateTree(reverseDerivative(W, V, "x", T, C)));
    const got = rd(f, x, seed) as unknown;
    expect(flatten(got, "", (v): v is number => typeof v === "number", "").leaves).toEqual(expected);
    // by hand: d/dw = 2·b0 + 0.5·2, d/db0 = 2·w, d/db1 = −cos(b1)
    expect(expected[0]).toBeCloseTo(2 * 1.3 + 1, 12);
    expect(expected[1]).toBeCloseTo(2 * 0.7, 12);
    expect(expected[2]).toBeCloseTo(-Math.cos(-0.4), 12);
  });
});
