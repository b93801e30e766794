/**
 * A traced run of a scan of tensors leaves its carries to the reverse sweep that follows at
 * the same values, and its value to the placement of its trace in an enclosing one
 * (trace/scan-stash.ts): grad runs the loop forward once where it ran it twice, and jit of
 * grad's first call once where it ran it three times. Counted (iterations run forward), and
 * the numbers are the loop written out's, bit for bit; carries no sweep takes go back to the pool once (nested derivatives, run
 * twice, give the same numbers: a buffer handed back twice would be handed out twice).
 */
import { describe, expect, it } from "vitest";
import { add, concat, div, grad, hessian, index, jit, lt, mul, scan, slice, sum, type Operand, type Scalar, type TensorArg } from "../../src/index.js";
import { forwardStats } from "../../src/eval/scan-forward.js";
import { reverseStats } from "../../src/eval/scan-reverse-run.js";
import { expectSame } from "../helpers/same-bits.js";
import { rk4 } from "../helpers/rk4.js";

const N = 40;
const STEPS = 25;
const xs = (seed: number): Float64Array => Float64Array.from({ length: N }, (_, i) => 0.3 + 0.5 * Math.sin(seed + 1.7 * i));

/** The last element after STEPS steps from y(0) = x/2 (a traced carry: the steps are one scan), as a scan and as the loop written out. */
const asScan =
  (options = {}) =>
  (w: TensorArg): Scalar =>
    index(scan((y: Operand): [Operand] => [rk4(w, y)], mul(0.5, w) as Operand, STEPS, options)[0] as TensorArg, [N - 1]);
const asLoop = (w: TensorArg): Scalar => {
  let y: Operand = mul(0.5, w);
  for (let i = 0; i < STEPS; i++) y = rk4(w, y);
  return index(y as TensorArg, [N - 1]);
};

/** Iterations run forward by `run`. */
function forwardIterations(run: () => unknown): number {
  const before = forwardStats.iterations;
  run();
  return forwardStats.iterations - before;
}

describe("a traced run's carries and value, kept for what follows at the same values", () => {
  it("grad runs the loop forward once: its sweep takes every carry the traced run kept (the loop's numbers)", () => {
    const x = xs(1);
    let g: unknown;
    expect(forwardIterations(() => (g = grad(asScan(), x)))).toBe(STEPS);
    // every carry kept: a segment per iteration, none recomputed
    expect(reverseStats.stored).toBe(STEPS);
    expectSame(g, grad(asLoop, x));
  });

  it("grad of f on 5000 elements (whose tensor values grad defers: api/tracing.ts lazyValues) runs the loop forward once (the loop's numbers)", () => {
    const x = Float64Array.from({ length: 5000 }, (_, i) => 0.3 + 0.5 * Math.sin(1.3 * i));
    const total = (y: Operand): Scalar => sum(mul(y, y) as TensorArg);
    const f = (w: TensorArg): Scalar => total(scan((y: Operand): [Operand] => [rk4(w, y)], mul(0.5, w) as Operand, STEPS)[0]);
    const loop = (w: TensorArg): Scalar => {
      let y: Operand = mul(0.5, w);
      for (let i = 0; i < STEPS; i++) y = rk4(w, y);
      return total(y);
    };
    let g: unknown;
    expect(forwardIterations(() => (g = grad(f, x)))).toBe(STEPS);
    expectSame(g, grad(loop, x));
  });

  it("with √n checkpoints, the sweep takes the traced run's and recomputes its segments only (the loop's numbers)", () => {
    const x = xs(2);
    const K = Math.ceil(Math.sqrt(STEPS));
    let g: unknown;
    // the traced run, then each segment but its last iteration (whose block reads the checkpoint)
    expect(forwardIterations(() => (g = grad(asScan({ checkpoint: "sqrt" }), x)))).toBe(STEPS + Math.ceil(STEPS / K) * (K - 1));
    expect(reverseStats.stored).toBe(Math.ceil(STEPS / K));
    expectSame(g, grad(asLoop, x));
  });

  it("jit of grad's first call runs the loop forward once (placed, the traced run's value is copied); replays as before; the loop's numbers", () => {
    const g = (v: TensorArg): unknown => grad(asScan(), v);
    const j = jit(g);
    const points = [3, 4, 5].map(xs);
    let first: unknown;
    expect(forwardIterations(() => (first = j(points[0])))).toBe(STEPS);
    expectSame(first, grad(asLoop, points[0]));
    expectSame(
      points.map((x) => j(x)),
      points.map((x) => grad(asLoop, x)),
    );
  });

  it("a body that decides is not copied where its trace is placed (a placed run checks its first iteration too): the loop's numbers", () => {
    const step = (w: TensorArg, y: Operand): Operand => (lt(sum(y as TensorArg), -1e9) ? y : rk4(w, y));
    const decided = (w: TensorArg): Scalar => index(scan((y: Operand): [Operand] => [step(w, y)], mul(0.5, w) as Operand, STEPS)[0] as TensorArg, [N - 1]);
    const written = (w: TensorArg): Scalar => {
      let y: Operand = mul(0.5, w);
      for (let i = 0; i < STEPS; i++) y = step(w, y);
      return index(y as TensorArg, [N - 1]);
    };
    const points = [6, 7].map(xs);
    const j = jit((v: TensorArg) => grad(decided, v));
    expectSame(
      points.map((x) => j(x)),
      points.map((x) => grad(written, x)),
    );
  });

  it("carries no sweep takes (nested derivatives sweep by scans) go back once: the numbers of two runs and of the loop agree", () => {
    const x = Float64Array.from({ length: 3 }, (_, i) => 0.2 + 0.1 * i);
    const f = (th: Scalar[]): Scalar => {
      const w = mul(th[0], xs(7)) as TensorArg;
      return mul(th[1], asScan()(w)) as Scalar;
    };
    const loop = (th: Scalar[]): Scalar => mul(th[1], asLoop(mul(th[0], xs(7)) as TensorArg)) as Scalar;
    const at = [x[0], x[1]];
    const once = hessian(f, at);
    expectSame(hessian(f, at), once);
    expectSame(once, hessian(loop, at));
  });
});
