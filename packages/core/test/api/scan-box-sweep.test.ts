/**
 * Sweeps of scans whose cotangents' masks are boxes (diff/box-plan.ts, eval/box-block.ts): one
 * block derivative per run of iterations, evaluated over the windows where its cotangents may
 * be nonzero, with the loop written out's numbers, bit for bit: Runge–Kutta steps of ode's
 * shifted right-hand side at several lengths and step counts, the read element at the end
 * (suffix boxes), at the start (prefixes), in the middle (windows growing both ways), boxes
 * that reach the vector's ends (the plan gives up and the sweep is the masked or the dense one),
 * a NaN of the forward values outside the window, and the work counted: elements per block.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { add, concat, div, grad, index, jit, mul, scan, sin, slice, sqrt, sum, where, type Operand, type Scalar, type TensorArg } from "../../src/index.js";
import { boxStats } from "../../src/eval/box-block.js";
import { boxSweeps } from "../../src/diff/box-plan.js";
import { expectSame } from "../helpers/same-bits.js";

const T = (v: unknown): TensorArg => v as TensorArg;

/** Right-hand sides: x ⊙ y shifted right (ode's: y₋₁ = 1), shifted left, and both ways. */
type Rhs = (x: TensorArg, y: TensorArg, m: number) => Operand;
const RHS: Record<string, Rhs> = {
  right: (x, y, m) => concat([T(slice(x, [0], [1])), T(mul(slice(x, [1], [m]), slice(y, [0], [m - 1])))], 0),
  left: (x, y, m) => concat([T(mul(slice(x, [0], [m - 1]), slice(y, [1], [m]))), T(slice(x, [m - 1], [m]))], 0),
  both: (x, y, m) =>
    add(
      concat([T(slice(x, [0], [1])), T(mul(slice(x, [1], [m]), slice(y, [0], [m - 1])))], 0),
      concat([T(mul(slice(y, [1], [m]), 0.5)), T(slice(x, [m - 1], [m]))], 0),
    ),
  "sqrt (NaN outside the window)": (x, y, m) => concat([T(slice(x, [0], [1])), T(mul(slice(x, [1], [m]), sqrt(slice(y, [0], [m - 1]))))], 0),
};

/** One classical Runge–Kutta step of y' = rhs(x, y) with step h. */
function rk4(rhs: Rhs, x: TensorArg, m: number, h: number): (y: Operand) => Operand {
  const f = (y: Operand): Operand => rhs(x, T(y), m);
  return (y) => {
    const k1 = f(y);
    const k2 = f(add(y, mul(h / 2, k1)));
    const k3 = f(add(y, mul(h / 2, k2)));
    const k4 = f(add(y, mul(h, k3)));
    return add(y, div(mul(h, add(add(add(k1, mul(2, k2)), mul(2, k3)), k4)), 6));
  };
}

/** Reads of the final state: the last element, the first, two in the middle. */
type Read = (y: TensorArg, m: number) => Scalar;
const READS: Record<string, Read> = {
  last: (y, m) => index(y, [m - 1]) as Scalar,
  first: (y) => index(y, [0]) as Scalar,
  middle: (y, m) => sum(T(slice(y, [m >> 1], [(m >> 1) + 2]))) as Scalar,
};

/** f(x) = read(y(s)) from y₀ (an argument: the steps are one scan), as a scan and as the loop written out. */
function both(rhs: Rhs, read: Read, m: number, s: number) {
  const y0 = Float64Array.from({ length: m }, (_, i) => ((i % 5) - 1) / 4);
  const step = (x: TensorArg) => rk4(rhs, x, m, 2 / s);
  const S = (x: TensorArg): Scalar => read(T(scan((y: Operand) => [step(x)(y)], T(y0) as Operand, s)[0]), m);
  const L = (x: TensorArg): Scalar => {
    let y: Operand = T(y0);
    for (let i = 0; i < s; i++) y = step(x)(y);
    return read(T(y), m);
  };
  return { S, L };
}

/** x with a negative element every seventh (sqrt of the state there is NaN once it turns negative). */
const xs = (m: number): Float64Array => Float64Array.from({ length: m }, (_, i) => (i % 7 === 3 ? -1.5 : 1 + (i % 4) / 8));

describe("scan sweeps over boxes of cotangents", () => {
  // over windows wherever the boxes allow, not only where they cost less than whole blocks (box-plan.ts `cheaper`)
  beforeAll(() => void (boxSweeps.always = true));
  afterAll(() => void (boxSweeps.always = false));

  for (const [rname, rhs] of Object.entries(RHS)) {
    for (const [name, read] of Object.entries(READS)) {
      it(`${rname} shift, read ${name}: grad and jit(grad) are the loop's numbers at several n and s`, () => {
        for (const [m, s] of [[8, 3], [40, 4], [300, 20], [2000, 30], [12, 20]]) {
          const { S, L } = both(rhs, read, m, s);
          const x = xs(m);
          const want = grad(L, x);
          const runs = boxStats.runs;
          expectSame(grad(S, x), want);
          // boxes far from the ends: every block over windows
          if (m >= 300) expect(boxStats.runs - runs).toBe(s);
          const j = jit((x: TensorArg) => grad(S, x));
          expectSame([j(x), j(x)], [want, want]);
        }
      });
    }
  }

  it("the blocks run over windows: at n = 20 000, s = 10, elements per block a few thousand (ode's boxes grow by 4 a step)", () => {
    const m = 20_000;
    const s = 10;
    const { S, L } = both(RHS.right, READS.last, m, s);
    const x = xs(m);
    const [runs, elements] = [boxStats.runs, boxStats.elements];
    const g = grad(S, x);
    expect(boxStats.runs - runs).toBe(s);
    // every value of a block over windows of at most 4s + 1 elements, about 120 values
    expect((boxStats.elements - elements) / s).toBeLessThan(120 * (4 * s + 2));
    expectSame(g, grad(L, x));
  });

  it("bodies that are not shifts: boxes that stay (an elementwise body), a where on a fixed mask, a sum: the loop's numbers", () => {
    const odd = (m: number): Float64Array => Float64Array.from({ length: m }, (_, i) => i % 2);
    const steps: ((y: TensorArg, m: number) => Operand)[] = [
      (y) => add(y, mul(0.1, sin(y))),
      (y, m) => add(y, mul(0.1, where(odd(m), sin(y), y))),
      (y, m) => add(y, mul(0.01, mul(sum(T(slice(y, [0], [m >> 1]))), y))),
    ];
    for (const step of steps) {
      for (const read of [READS.last, READS.middle]) {
        const m = 50;
        const y0 = (a: TensorArg): Operand => mul(a, Float64Array.from({ length: m }, (_, i) => 1 + i / m));
        const S = (x: TensorArg): Scalar => read(T(scan((y: Operand) => [step(T(y), m)], y0(x), 12)[0]), m);
        const L = (x: TensorArg): Scalar => {
          let y = y0(x);
          for (let i = 0; i < 12; i++) y = step(T(y), m);
          return read(T(y), m);
        };
        const x = xs(m);
        const runs = boxStats.runs;
        expectSame(grad(S, x), grad(L, x));
        // (a sum of half the vector spreads a middle element's cotangent over the whole: no box then)
        if (step !== steps[2]) expect(boxStats.runs - runs).toBe(12);
      }
    }
  });

  it("boxes that reach the vector's start (n = 12, s = 20): not over windows past it, the loop's numbers", () => {
    const { S, L } = both(RHS.right, READS.last, 12, 20);
    const runs = boxStats.runs;
    expectSame(grad(S, xs(12)), grad(L, xs(12)));
    expect(boxStats.runs - runs).toBeLessThan(20);
  });
});

describe("where a sweep runs over boxes by itself", () => {
  it("where windows cost less than whole blocks: at 20 000 elements and s = 10, not at 2000 (the cost counted per block)", () => {
    for (const [m, over] of [[20_000, true], [2000, false]] as const) {
      const { S, L } = both(RHS.right, READS.last, m, 10);
      const runs = boxStats.runs;
      const g = grad(S, xs(m));
      expect(boxStats.runs - runs).toBe(over ? 10 : 0);
      expectSame(g, grad(L, xs(m)));
    }
  });
});
