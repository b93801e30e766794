/**
 * The efficient differentiator against Fig. 6 taken literally, on random trace terms.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { add, atan2, cos, derivativeOf, div, exp, mul, rd, sin, square, sub, tanh, traceOf, sigmoid, type Scalar } from "../../src/index.js";
import { reverseDerivative } from "../../src/diff/reference.js";
import { evaluateTree, leavesOf, toTree, valueOf } from "../../src/trace/tree.js";
import { flatten } from "../../src/structure.js";

type Instr = { op: number; a: number; b: number };
const UNARY = [sin, cos, tanh, square, sigmoid, (x: Scalar) => exp(mul(0.3, x))];
const BINARY = [add, sub, mul, (a: Scalar, b: Scalar) => div(a, add(2, square(b))), atan2];

/** A random straight-line program over n inputs; arguments pick earlier values or literals. */
function program(instrs: Instr[], outs: number[]) {
  return (x: Scalar[]): Scalar[] => {
    const vals: Scalar[] = [...x];
    const pick = (k: number): Scalar => (k < 0 ? k / 4 : vals[k % vals.length]);
    for (const { op, a, b } of instrs) {
      vals.push(op < UNARY.length ? UNARY[op](pick(a)) : BINARY[op - UNARY.length](pick(a), pick(b)));
    }
    return outs.map((k) => vals[k % vals.length]);
  };
}

const instr = fc.record({ op: fc.nat(UNARY.length + BINARY.length - 1), a: fc.integer({ min: -3, max: 40 }), b: fc.integer({ min: -3, max: 40 }) });
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
        fc.array(instr, { minLength: 1, maxLength: 7 }),
        fc.array(fc.nat(40), { minLength: 1, maxLength: 3 }),
        fc.array(point, { minLength: 3, maxLength: 3 }),
        (x, instrs, outs, seedPool) => {
          const f = program(instrs, outs);
          const seed = outs.map((_, j) => seedPool[j]);
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
  });

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
