/**
 * f's tensor values are deferred while an outermost grad traces it (api/tracing.ts
 * `lazyValues`, trace/tape.ts `defer`): computed where they are read, by a real computed
 * from them (a sum), or with the derivative in its loops (eval/deferred.ts). The numbers
 * are those of computing every value as it is appended, bit for bit: on random tensor
 * programs, at −0 and NaN, where f decides on a pending value, where a nested rd reads one,
 * along a long chain; and nothing is kept once grad returns.
 */
import fc from "fast-check";
import ndarray from "ndarray";
import { afterEach, describe, expect, it } from "vitest";
import { poolStats } from "@wengert/ops";
import {
  abs, add, exp, grad, gt, log, mul, sin, square, sub, sum, tanh, valueAndGrad, type Scalar, type Tensor,
} from "../../src/index.js";
import { lazyValues } from "../../src/api/tracing.js";
import { deferring } from "../../src/api/transform.js";
import { expKernel, fusedStats } from "../../src/jit/chains.js";
import { planStats } from "../../src/jit/chain-plans.js";
import { rosenbrockTensor } from "../helpers/cases.js";
import { tensorChains } from "../helpers/programs/tensor-chains.js";
import { expectSame } from "../helpers/same-bits.js";
import { random, rng } from "../helpers/tensors.js";

const DEFAULT = { ...lazyValues };
const DEFER_FROM = deferring.fromElements;
const EXP_KERNEL_FROM = expKernel.from;
afterEach(() => {
  Object.assign(lazyValues, DEFAULT);
  deferring.fromElements = DEFER_FROM;
  expKernel.from = EXP_KERNEL_FROM;
});

/** `run` with f's values deferred (from any size), and computed as appended; the derivative deferred in both (`derivative`: from any size). */
function both(run: () => unknown, derivative = 0): { lazy: unknown; eager: unknown; runs: number } {
  deferring.fromElements = derivative;
  lazyValues.fromElements = 0;
  const before = fusedStats.runs;
  const lazy = run();
  const runs = fusedStats.runs - before;
  lazyValues.fromElements = Infinity;
  const eager = run();
  lazyValues.fromElements = DEFAULT.fromElements;
  return { lazy, eager, runs };
}

describe("f's tensor values deferred while grad traces it", () => {
  it("property: random tensor programs, their derivative deferred or not: the eager numbers, bit for bit", () => {
    let runs = 0;
    fc.assert(
      fc.property(tensorChains, fc.integer({ min: 1, max: 1e6 }), fc.boolean(), (chain, seed, deferred) => {
        const f = (p: { x: Tensor; W: Tensor }): Scalar => sum(tanh(chain.f(p.x as never, p.W as never)));
        const r = rng(seed);
        const p = { x: ndarray(random(r, 12), [3, 4]), W: ndarray(random(r, 16, 0.7), [4, 4]) };
        const out = both(() => valueAndGrad(f, p), deferred ? 0 : Infinity);
        runs += out.runs;
        expectSame(out.lazy, out.eager);
      }),
      { numRuns: 80, seed: 29 },
    );
    expect(runs).toBeGreaterThan(0);
  });

  it("W1: the loss by one chain, the forward pass again in the derivative's loop: no buffer per operation, the eager numbers", () => {
    const x = random(rng(3), 10_000);
    const out = both(() => valueAndGrad(rosenbrockTensor, x));
    expect(out.runs).toBe(2);
    expectSame(out.lazy, out.eager);
    const taken = (from: number): number => {
      lazyValues.fromElements = from;
      grad(rosenbrockTensor, x);
      const before = poolStats.fresh + poolStats.reused;
      grad(rosenbrockTensor, x);
      return poolStats.fresh + poolStats.reused - before;
    };
    // computed as appended, the forward pass takes a buffer for each of its 9 tensor values
    expect(taken(Infinity) - taken(0)).toBeGreaterThanOrEqual(8);
  });

  it("scalar work on the loss (log Σ eˣ⁻ᵃ + a, GradBench's lse) computes none of what is pending: x − a, which nothing reads, never", () => {
    // exp in the chain (by default, one this long is left to its SIMD kernel: the test below)
    expKernel.from = Infinity;
    const x = random(rng(5), 10_000);
    const a = 0.25;
    const f = (v: Tensor): Scalar => add(log(sum(exp(sub(v, a)))), a);
    const out = both(() => valueAndGrad(f, x));
    expectSame(out.lazy, out.eager);
    lazyValues.fromElements = 0;
    grad(f, x);
    const before = poolStats.fresh + poolStats.reused;
    grad(f, x);
    // x's copy, eˣ⁻ᵃ (stored by the loss's chain for exp's rule) and the gradient
    expect(poolStats.fresh + poolStats.reused - before).toBe(3);
  });

  it("a long exp is left to its kernel (the SIMD exp): x − a computed, eˣ⁻ᵃ by the kernel, the same numbers", () => {
    const x = random(rng(6), 10_000, 30);
    const a = 0.25;
    const f = (v: Tensor): Scalar => add(log(sum(exp(sub(v, a)))), a);
    const kernel = both(() => valueAndGrad(f, x));
    expectSame(kernel.lazy, kernel.eager);
    expKernel.from = Infinity;
    expectSame(both(() => valueAndGrad(f, x)).lazy, kernel.lazy);
    expKernel.from = EXP_KERNEL_FROM;
    lazyValues.fromElements = 0;
    grad(f, x);
    const before = poolStats.fresh + poolStats.reused;
    grad(f, x);
    // x's copy, x − a, eˣ⁻ᵃ, its sum's buffer of one (the reduce kernel's) and the gradient:
    // two more than with exp in the chain (above)
    expect(poolStats.fresh + poolStats.reused - before).toBe(5);
  });

  it("a repeated grad finds the plans made for the first call (jit/chain-plans.ts)", () => {
    const x = random(rng(4), 10_000);
    grad(rosenbrockTensor, x);
    const { made, found } = planStats;
    grad(rosenbrockTensor, x);
    expect(planStats.made).toBe(made);
    expect(planStats.found - found).toBe(2);
  });

  it("−0 and NaN: the eager numbers", () => {
    const x = Float64Array.of(-0, 0, NaN, -1, 2, -0, Infinity, 0.5);
    const bodies: ((v: Tensor) => Scalar)[] = [
      (v) => sum(mul(v, -0)),
      (v) => sum(add(mul(v, v), -0)),
      (v) => sum(sub(exp(mul(v, -1)), log(add(square(v), 1)))),
      (v) => sum(mul(sin(v), tanh(v))),
    ];
    for (const f of bodies) {
      const out = both(() => valueAndGrad(f, x));
      expectSame(out.lazy, out.eager);
    }
  });

  it("a decision on a pending value is taken on its value: a predicate on a sum, a tensor read, abs at its kink", () => {
    const x = random(rng(5), 64);
    const branches = (v: Tensor): Scalar => {
      const y = tanh(mul(v, 3));
      // a predicate on a real computed from pending values, and a read of a pending tensor
      const s = sum(y) as Scalar;
      const first = (y as unknown as { value: { get(i: number): number } }).value.get(0);
      const z = gt(s, 0) ? mul(y, y) : sin(y);
      return sum(first > 0 ? add(z, v) : sub(z, v));
    };
    const out = both(() => valueAndGrad(branches, x));
    expectSame(out.lazy, out.eager);
    // abs at 0 (its kink) in a pending value: the tie is reported in both
    const kink = (v: Tensor): Scalar => sum(abs(sub(mul(v, 2), add(v, v))));
    const ties = both(() => {
      try {
        grad(kink, x, { ties: "error" });
        return "none";
      } catch (e) {
        return (e as Error).message;
      }
    });
    expect(ties.lazy).toMatch(/kink/);
    expect(ties.lazy).toBe(ties.eager);
  });

  it("a nested rd reading a pending value of the outer trace: the eager numbers", () => {
    const x = random(rng(6), 32);
    const f = (v: Tensor): Scalar => {
      const y = tanh(mul(v, 2));
      const g = grad((z: Tensor) => sum(mul(square(z), y)), v) as unknown as Tensor;
      return sum(mul(g, sin(v)));
    };
    const out = both(() => valueAndGrad(f, x));
    expectSame(out.lazy, out.eager);
  });

  it("a chain of 10⁶ operations: deferring ends past lazyValues.upTo, nothing recursive; the numbers of the same multiplications in a loop", () => {
    const N = 1_000_000;
    const c = 0.9999999;
    const f = (v: Tensor): Scalar => {
      let t: Tensor = v;
      for (let i = 0; i < N; i++) t = mul(t, c) as Tensor;
      return sum(t);
    };
    const x = Float64Array.of(0.1, -0.2);
    lazyValues.fromElements = 0;
    const [value, g] = valueAndGrad(f, x) as [number, Float64Array];
    // f(x) = x₀ c … c + x₁ c … c; its gradient (1 · c) · c … per element, in the sweep's order
    const t = Array.from(x);
    let ct = 1;
    for (let i = 0; i < N; i++) {
      t[0] *= c;
      t[1] *= c;
      ct *= c;
    }
    expect(Object.is(value, t[0] + t[1])).toBe(true);
    expectSame(g, [ct, ct]);
  }, 120_000);

  it("a chain of 5 000 operations deferred whole: planned without recursion, in many chains; the eager numbers", () => {
    const f = (v: Tensor): Scalar => {
      let t: Tensor = v;
      for (let i = 0; i < 2_500; i++) t = tanh(mul(t, 1.0001)) as Tensor;
      return sum(t);
    };
    lazyValues.upTo = Infinity;
    const out = both(() => valueAndGrad(f, Float64Array.of(0.1, -0.2, 0.3)), Infinity);
    lazyValues.upTo = DEFAULT.upTo;
    expect(out.runs).toBeGreaterThan(1);
    expectSame(out.lazy, out.eager);
  }, 120_000);

  it("nothing kept once grad returns: the pool's buffers flat over repeated calls", () => {
    const x = random(rng(7), 10_000);
    lazyValues.fromElements = 0;
    for (let i = 0; i < 3; i++) grad(rosenbrockTensor, x);
    const bytes = poolStats.bytes;
    const fresh = poolStats.fresh;
    for (let i = 0; i < 20; i++) grad(rosenbrockTensor, x);
    expect(poolStats.bytes).toBe(bytes);
    // one fresh buffer a call: the gradient, the user's
    expect(poolStats.fresh - fresh).toBeLessThanOrEqual(20);
  });
});
