/**
 * An outermost grad's derivative on tensors is emitted without values and then evaluated
 * by the interpreter with its chains compiled (eval/deferred.ts): the numbers of the
 * derivative computed as it is emitted, bit for bit, also where emitting reads a value
 * (a scan's reverse rule, a tie rule, a sum to a real); one chain for W1's derivative.
 */
import fc from "fast-check";
import ndarray from "ndarray";
import { afterEach, describe, expect, it } from "vitest";
import { poolStats } from "@wengert/ops";
import {
  add, grad, index, max, mul, scan, square, sum, tanh, valueAndGrad, type Operand, type Scalar, type Tensor, type TensorArg,
} from "../../src/index.js";
import { deferring } from "../../src/api/transform.js";
import { fusedStats } from "../../src/jit/chains.js";
import { rosenbrockTensor } from "../helpers/cases.js";
import { tensorChains } from "../helpers/programs/tensor-chains.js";
import { expectSame } from "../helpers/same-bits.js";
import { random, rng } from "../helpers/tensors.js";

const DEFAULT = deferring.fromElements;
afterEach(() => {
  deferring.fromElements = DEFAULT;
});

/** `run` with every derivative deferred, and with none; the chains run in the first. */
function both(run: () => unknown): { deferred: unknown; eager: unknown; runs: number } {
  deferring.fromElements = 0;
  const before = fusedStats.runs;
  const deferred = run();
  const runs = fusedStats.runs - before;
  deferring.fromElements = Infinity;
  const eager = run();
  deferring.fromElements = DEFAULT;
  return { deferred, eager, runs };
}

describe("grad's derivative on tensors, deferred and evaluated with compiled chains", () => {
  it("property: random tensor programs: the eager derivative's numbers, bit for bit", () => {
    let runs = 0;
    fc.assert(
      fc.property(tensorChains, fc.integer({ min: 1, max: 1e6 }), (chain, seed) => {
        const f = (p: { x: Tensor; W: Tensor }): Scalar => sum(tanh(chain.f(p.x as never, p.W as never)));
        const r = rng(seed);
        const p = { x: ndarray(random(r, 12), [3, 4]), W: ndarray(random(r, 16, 0.7), [4, 4]) };
        const out = both(() => valueAndGrad(f, p));
        runs += out.runs;
        expectSame(out.deferred, out.eager);
      }),
      { numRuns: 60, seed: 13 },
    );
    expect(runs).toBeGreaterThan(0);
  });

  it("W1: the derivative is one chain, and takes 2 buffers from the pool where emitting took one per operation", () => {
    const x = random(rng(3), 200);
    const out = both(() => grad(rosenbrockTensor, x));
    expect(out.runs).toBe(1);
    expectSame(out.deferred, out.eager);
    const taken = (from: number): number => {
      deferring.fromElements = from;
      grad(rosenbrockTensor, x);
      const before = poolStats.fresh + poolStats.reused;
      grad(rosenbrockTensor, x);
      return poolStats.fresh + poolStats.reused - before;
    };
    const [deferred, eager] = [taken(0), taken(Infinity)];
    // the forward's 10 buffers either way; the derivative's 12 become the gradient's and the seed's broadcast's… of which one is left
    expect(eager - deferred).toBeGreaterThanOrEqual(8);
  });

  it("a derivative that reads values as it is emitted (a scan's reverse rule, max's tie rule, a real's cotangent, a sum): the eager numbers", () => {
    const x = random(rng(4), 24);
    const bodies: ((v: Tensor) => Scalar)[] = [
      (v) => index(scan((y: Operand): [Operand] => [add(mul(0.5, y), mul(0.1, square(y as TensorArg)))], v as Operand, 6)[0] as TensorArg, [3]),
      (v) => add(max(mul(v, v)) as Scalar, sum(tanh(v))),
      (v) => sum(mul(sum(square(v)) as Scalar, tanh(v))),
    ];
    for (const f of bodies) {
      const out = both(() => valueAndGrad(f, x));
      expectSame(out.deferred, out.eager);
    }
  });

  it("a long chain (1 200 steps of tanh) is cut into chains of short expressions: the eager numbers", () => {
    const f = (w: Tensor): Scalar => {
      let t: Tensor = w;
      for (let i = 0; i < 1200; i++) t = tanh(mul(t, 0.999)) as Tensor;
      return sum(t);
    };
    const out = both(() => valueAndGrad(f, Float64Array.of(0.1, 0.2, -0.3)));
    expect(out.runs).toBeGreaterThan(1);
    expectSame(out.deferred, out.eager);
  });

  it("a large W1 defers by default, a small one does not", () => {
    const runs = (n: number): number => {
      const before = fusedStats.runs;
      grad(rosenbrockTensor, random(rng(5), n));
      return fusedStats.runs - before;
    };
    expect(runs(10_000)).toBe(2);
    expect(runs(100)).toBe(0);
  });
});
