/**
 * @file A replayed scan on tensors and its reverse sweep hand every buffer they made back
 * to the pool but the results the caller keeps: the run's last carry (copied into the
 * scan's value), the sweep's running cotangents (copied into its value), the carry its
 * segment run made after the last one a block reads, and the scan's and the sweep's
 * values themselves (pool buffers, as a kernel's results are). GradBench's ode at a
 * thousand elements spent about a third of its primal making and collecting such arrays.
 */
import { describe, expect, it } from "vitest";
import { add, concat, grad, index, jit, mul, scan, shapeOf, slice, sum, type Operand, type Scalar, type TensorArg } from "../../src/index.js";
import type { Checkpoint } from "../../src/trace/scan-ops.js";
import { poolStats } from "@wengert/ops";
import { expectSame } from "../helpers/same-bits.js";

const N = 300;
const STEPS = 12;
const xs = (seed: number): Float64Array => Float64Array.from({ length: N }, (_, i) => 0.3 + 0.5 * Math.sin(seed + 1.7 * i));

/** One Runge–Kutta step of GradBench's ode system (modules/ode.ts). */
function rk4(x: TensorArg, y: Operand): Operand {
  const x0 = slice(x, [0], [1]);
  const rhs = (v: Operand): Operand => concat([x0, mul(slice(x, [1], [N]), slice(v as TensorArg, [0], [N - 1])) as TensorArg], 0);
  const h = 0.1;
  const k1 = rhs(y);
  const k2 = rhs(add(y, mul(h / 2, k1)));
  const k3 = rhs(add(y, mul(h / 2, k2)));
  const k4 = rhs(add(y, mul(h, k3)));
  return add(y, mul(h / 6, add(add(add(k1, mul(2, k2)), mul(2, k3)), k4)));
}

const solve = (x: TensorArg, checkpoint: Checkpoint, steps = STEPS): TensorArg =>
  scan((y: Operand): [Operand] => [rk4(x, y)], new Float64Array(shapeOf(x)[0]) as Operand, steps, { checkpoint })[0] as TensorArg;

/** Buffers allocated fresh per call of `f` once it replays (three calls, after two to warm up). */
function freshPerCall(f: (x: TensorArg) => unknown): number {
  f(xs(1));
  f(xs(2));
  const before = poolStats.fresh;
  for (let seed = 3; seed < 6; seed++) f(xs(seed));
  return (poolStats.fresh - before) / 3;
}

/** Buffers taken per call of `f` once it replays, fresh or from the pool. */
function takenPerCall(f: (x: TensorArg) => unknown): number {
  f(xs(1));
  f(xs(2));
  const before = poolStats.fresh + poolStats.reused;
  f(xs(3));
  return poolStats.fresh + poolStats.reused - before;
}

describe("a replayed scan on tensors gives its buffers back", () => {
  it("jit(grad): a carry read through slices passes its cotangent from block to block as one vector, the loop's numbers", () => {
    // per step: the forward run's carry, and the block's cotangents of the carry (dense and pieces
    // summed where they are made, reverse-plan.ts mergeable) and of x's slices; apart, 5.25 per step
    const grads = [STEPS, 2 * STEPS].map((steps) => {
      const g = (x: TensorArg): unknown => grad((w): Scalar => index(solve(w, "every", steps), [N - 1]), x);
      return { g, taken: takenPerCall(jit(g)) };
    });
    expect((grads[1].taken - grads[0].taken) / STEPS).toBeLessThan(4);
    const [{ g }] = grads;
    const loop = (x: TensorArg): unknown =>
      grad((w): Scalar => {
        let y: Operand = new Float64Array(N);
        for (let i = 0; i < STEPS; i++) y = rk4(w, y);
        return index(y as TensorArg, [N - 1]);
      }, x);
    expectSame([4, 5].map((s) => jit(g)(xs(s))), [4, 5].map((s) => loop(xs(s))));
  });

  it("jit of a real computed from a scan's carry takes no fresh buffer per call (its last carry goes back)", () => {
    const f = (x: TensorArg): Scalar => sum(solve(x, "every"));
    const j = jit(f);
    expect(freshPerCall(j)).toBe(0);
    expectSame([4, 5].map((s) => j(xs(s))), [4, 5].map((s) => f(xs(s))));
  });

  for (const checkpoint of ["every", 5] as const) {
    it(`jit(grad) with checkpoint ${checkpoint}: one fresh buffer per call, the gradient it hands over`, () => {
      const g = (x: TensorArg): unknown => grad((w): Scalar => index(solve(w, checkpoint), [N - 1]), x);
      const j = jit(g);
      expect(freshPerCall(j)).toBe(1);
      expectSame([4, 5].map((s) => j(xs(s))), [4, 5].map((s) => g(xs(s))));
    });
  }
});
