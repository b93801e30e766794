/**
 * A scan whose body works on tensors by elementwise operations, slices, concatenations
 * (and, in its derivative, embeds and masks) runs its body as compiled loops
 * (jit/scan-fused.ts, jit/chains.ts): the interpreter's numbers, to the bit, on jit's replays and on
 * grad's sweeps; any other operation runs by its kernel between the chains.
 */
import { afterEach, describe, expect, it } from "vitest";
import { add, concat, div, exp, grad, index, jit, lt, matmul, mul, scan, shapeOf, sin, slice, sub, sum, type Operand, type Scalar, type TensorArg } from "../../src/index.js";
import { fusedCode, fusedStats } from "../../src/jit/chains.js";
import { chainCodeStats } from "../../src/jit/chain-code.js";
import { reverseStats } from "../../src/eval/scan-reverse-run.js";
import { forwardStats } from "../../src/eval/scan-forward.js";
import { poolStats } from "@wengert/ops";
import { expectSame, numbers } from "../helpers/same-bits.js";
import { rk4 } from "../helpers/rk4.js";
import ndarray from "ndarray";

afterEach(() => {
  fusedCode.enabled = true;
});

const N = 37;
const STEPS = 25;
const xs = (seed: number, n = N): Float64Array => Float64Array.from({ length: n }, (_, i) => 0.3 + 0.5 * Math.sin(seed + 1.7 * i));


/** Shifts both ways (the next element and the previous), a unary kernel and one by name. */
function twoWays(x: TensorArg, y: Operand): Operand {
  const n = shapeOf(x)[0];
  const t = y as TensorArg;
  const back = concat([slice(x, [0], [1]), mul(slice(x, [1], [n]), slice(t, [0], [n - 1])) as TensorArg], 0);
  const ahead = concat([mul(slice(t, [1], [n]), 0.5) as TensorArg, slice(x, [n - 1], [n])], 0);
  return add(mul(0.9, y), mul(0.05, sin(sub(add(back, ahead), exp(mul(-1, y))))));
}

const solve = (step: (x: TensorArg, y: Operand) => Operand) => (x: TensorArg): TensorArg =>
  scan((y: Operand): [Operand] => [step(x, y)], new Float64Array(shapeOf(x)[0]) as Operand, STEPS)[0] as TensorArg;

/** The last element's gradient and jit's values at three points, with the fused path on or off. */
function run(step: (x: TensorArg, y: Operand) => Operand, fused: boolean): { values: unknown[]; grads: unknown[]; runs: number } {
  fusedCode.enabled = fused;
  const before = fusedStats.runs;
  const j = jit(solve(step));
  const points = [1, 2, 3, 1].map((seed) => xs(seed));
  const values = points.map((x) => j(x));
  const grads = points.map((x) => grad((v): Scalar => index(solve(step)(v), [N - 1]), x));
  return { values, grads, runs: fusedStats.runs - before };
}

describe("scan bodies on tensors run as fused loops", () => {
  it.each([
    ["ode's Runge–Kutta step", rk4],
    ["shifts both ways", twoWays],
  ])("%s: jit's replays and grad's sweeps give the interpreter's numbers, bit for bit", (_, step) => {
    const fused = run(step, true);
    const interpreted = run(step, false);
    expect(fused.runs).toBeGreaterThan(0);
    expect(interpreted.runs).toBe(0);
    expectSame(fused.values, interpreted.values);
    expectSame(fused.grads, interpreted.grads);
  });

  it("the values are the loop's written out (no scan), the gradient finite differences'", () => {
    const x = xs(4);
    let y: Operand = new Float64Array(N) as Operand;
    for (let s = 0; s < STEPS; s++) y = rk4(x, y);
    expectSame(jit(solve(rk4))(x), y);
    const g = numbers(grad((v): Scalar => index(solve(rk4)(v), [N - 1]), x));
    const f = (v: Float64Array): number => numbers(solve(rk4)(v))[N - 1];
    for (const i of [0, 5, N - 1]) {
      const e = 1e-6;
      const up = x.slice();
      const down = x.slice();
      up[i] += e;
      down[i] -= e;
      expect(g[i]).toBeCloseTo((f(up) - f(down)) / (2 * e), 6);
    }
  });

  it("jit(grad) keeps a short scan on tensors as one instruction (its sweep runs), not the loop written out: grad's numbers", () => {
    const g = (v: TensorArg): unknown => grad((w): Scalar => index(solve(rk4)(w), [shapeOf(w)[0] - 1]), v);
    const j = jit(g);
    const swept = reverseStats.total;
    const points = [1, 2, 3].map((seed) => xs(seed, 400));
    const replayed = points.map((x) => j(x));
    // STEPS = 25 iterations of ~30 instructions: a body of reals this short is written out
    expect(reverseStats.total - swept).toBe(points.length * STEPS);
    expectSame(replayed, points.map(g));
  });

  it("jit(grad) of a body that decides nothing runs the loop forward once per replay (the sweep's carries), not again for a flag", () => {
    const g = (v: TensorArg): unknown => grad((w): Scalar => index(solve(rk4)(w), [shapeOf(w)[0] - 1]), v);
    const j = jit(g);
    const points = [1, 2, 3].map((seed) => xs(seed, 400));
    j(points[0]);
    const before = forwardStats.iterations;
    const replayed = points.map((x) => j(x));
    // the first iteration starts from a literal carry: a scan of its own, whose value the next one starts from; the
    // sweeps' runs stop before their last iteration (its block reads the carry it starts from): STEPS − 2 and none
    expect(forwardStats.iterations - before).toBe(points.length * (STEPS - 1));
    expectSame(replayed, points.map(g));
    // a body with a decision keeps its flag: a replay runs the loop for it, then the sweeps' (each one short)
    const decided = (v: TensorArg): unknown =>
      grad((w): Scalar => index(scan((y: Operand): [Operand] => [lt(sum(y), -1) ? y : rk4(w, y)], new Float64Array(400) as Operand, STEPS)[0] as TensorArg, [399]), v);
    const jd = jit(decided);
    jd(points[0]);
    const at = forwardStats.iterations;
    jd(points[1]);
    expect(forwardStats.iterations - at).toBe(2 * STEPS - 2);
  });

  it("jit(grad) of the Runge–Kutta scan on longer vectors runs the loops made for shorter ones: no new chain code, the same numbers", () => {
    // (the loops' bounds near the end are arguments: GradBench ode's warm-up at define makes the loops of every n)
    const g = (v: TensorArg): unknown => grad((w): Scalar => index(solve(rk4)(w), [shapeOf(w)[0] - 1]), v);
    const first = jit(g);
    first(xs(1, 2048));
    first(xs(2, 2048));
    const before = chainCodeStats.made;
    for (const m of [3000, 10_000]) {
      const j = jit(g);
      const replayed = [1, 2, 3].map((seed) => j(xs(seed, m)));
      expect(chainCodeStats.made - before).toBe(0);
      expectSame(replayed, [1, 2, 3].map((seed) => g(xs(seed, m))));
    }
  });

  it("jit(grad)'s reverse step of the Runge–Kutta body is one pass: it takes its results from the pool, not its stages, nor a copy of its carry", () => {
    const j = jit((v: TensorArg): unknown => grad((w): Scalar => index(solve(rk4)(w), [shapeOf(w)[0] - 1]), v));
    const points = [1, 2, 3].map((seed) => xs(seed, 400));
    j(points[0]);
    j(points[1]);
    const before = poolStats.fresh + poolStats.reused;
    j(points[2]);
    // per iteration: the carry the sweep's run made (kept as it is, not copied) and the block's results, 4 in all;
    // its stages and seeds' sums stored between a loop up and a loop down, a copy of each carry, and the loop
    // run again for a flag took 11. Per call, 13 more: the scans' and the sweeps' values and what is read from
    // them (pool buffers, as kernels' results are: scan-pool.test.ts), the copies of the carry the sweeps start from
    expect(poolStats.fresh + poolStats.reused - before).toBeLessThanOrEqual(4 * STEPS + 13);
  });

  it("a reverse sweep hands each iteration's cotangents and carries back to the pool: its fresh buffers do not grow with the steps", () => {
    const x = xs(5, 400);
    const f = (steps: number) => (v: TensorArg): Scalar =>
      index(scan((y: Operand): [Operand] => [rk4(v, y)], new Float64Array(400) as Operand, steps)[0] as TensorArg, [399]);
    const fresh = (steps: number): number => {
      grad(f(steps), x);
      const before = poolStats.fresh;
      grad(f(steps), x);
      return poolStats.fresh - before;
    };
    expect(fresh(4 * STEPS)).toBeLessThan(fresh(STEPS) + STEPS);
  });

  it("a body of a matrix product or a box across rows alone has no chain: the kernels run it (passes/chains.test.ts: one with a reduction)", () => {
    const m = ndarray(Float64Array.from({ length: 9 }, (_, i) => (i % 4 === 0 ? 0.5 : 0.1)), [3, 3]);
    const bodies: ((y: TensorArg) => Operand)[] = [
      (y) => matmul(m, y),
      // [3, 2]: the last column of each row moved to the front, not a contiguous range
      (y) => concat([slice(y, [0, 1], [3, 2]), slice(y, [0, 0], [3, 1])], 1),
    ];
    const starts = [Float64Array.of(0.1, 0.2, 0.3), ndarray(Float64Array.of(0.1, 0.2, 0.3, 0.4, 0.5, 0.6), [3, 2])];
    bodies.forEach((body, k) => {
      const before = fusedStats.runs;
      const j = jit((x: TensorArg) => scan((y: Operand): [Operand] => [body(y as TensorArg)], x as Operand, 5)[0]);
      for (let r = 0; r < 3; r++) j(starts[k] as TensorArg);
      expect(fusedStats.runs).toBe(before);
    });
  });
});
