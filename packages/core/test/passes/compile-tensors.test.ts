/**
 * compileGrad on functions of tensors: the trace and its derivative replayed at new
 * inputs give grad's numbers to the bit, call after call; what a guard cannot see (masks
 * decided on values, values read) is traced every time; the results are the caller's.
 */
import fc from "fast-check";
import ndarray from "ndarray";
import { describe, expect, it, vi } from "vitest";
import { poolStats } from "@wengert/ops";
import {
  abs, add, compileGrad, grad, gt, index, lt, matmul, max, mean, mul, primal, sub, sum, tanh, logsumexp, valueAndGrad, where,
  type NdArray, type Scalar, type Tensor,
} from "../../src/index.js";
import { tensorChains } from "../helpers/programs/tensor-chains.js";
import { flat, nd, random, rng } from "../helpers/tensors.js";

/** Every leaf's elements, in order: equal lists are equal gradients to the bit (toEqual tells −0 from 0). */
const leaves = (g: unknown): number[][] =>
  typeof g === "number" || g instanceof Float64Array || (typeof g === "object" && g !== null && "shape" in g)
    ? [flat(g)]
    : Object.values(g as object).flatMap(leaves);

// a two-layer MLP with softmax cross-entropy, as W2 (packages/bench/WORKLOADS.md) at a small size
const [B, D, H, K] = [6, 4, 5, 3];
const X = nd(Array.from({ length: B * D }, (_, i) => Math.cos(i)), [B, D]);
const onehot = nd(Array.from({ length: B * K }, (_, i) => (i % K === Math.floor(i / K) % K ? 1 : 0)), [B, K]);
type Params = { W1: NdArray; b1: Float64Array; W2: NdArray; b2: Float64Array };
const mlp = (p: { W1: Tensor; b1: Tensor; W2: Tensor; b2: Tensor }): Scalar => {
  const h = tanh(add(matmul(X, p.W1), p.b1));
  const z = add(matmul(h, p.W2), p.b2);
  return mean(sub(logsumexp(z, 1), sum(mul(z, onehot), 1)));
};
const params = (seed: number): Params => {
  const r = rng(seed);
  return { W1: ndarray(random(r, D * H), [D, H]), b1: random(r, H, 0.1), W2: ndarray(random(r, H * K), [H, K]), b2: random(r, K, 0.1) };
};

describe("compileGrad on tensors", () => {
  it("an MLP: the same numbers as grad at every point, from one trace", () => {
    const g = compileGrad(mlp);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1e6 }), (seed) => {
        const p = params(seed);
        expect(leaves(g(p))).toEqual(leaves(grad(mlp, p)));
        expect(g.valueAndGrad(p)[0]).toBe(valueAndGrad(mlp, p)[0]);
      }),
      { numRuns: 30 },
    );
    expect(g.stats.traces).toBe(1);
    expect(g.stats.replays).toBeGreaterThanOrEqual(59);
  });

  it("property: random compositions of tensor ops, each replayed from its first trace, equal to grad", () => {
    fc.assert(
      fc.property(tensorChains, fc.integer({ min: 1, max: 1e6 }), (chain, seed) => {
        const f = (p: { x: Tensor; W: Tensor }): Scalar => sum(tanh(chain.f(p.x as never, p.W as never)));
        const g = compileGrad(f);
        const r = rng(seed);
        for (let k = 0; k < 4; k++) {
          const x = { x: ndarray(random(r, 12), [3, 4]), W: ndarray(random(r, 16, 0.7), [4, 4]) };
          expect(leaves(g(x)), chain.name).toEqual(leaves(grad(f, x)));
        }
        expect(g.stats).toMatchObject({ traces: 1, replays: 3 });
      }),
      { numRuns: 40, seed: 7 },
    );
  });

  it("decisions on reals computed from tensors guard the replay; each side is traced once", () => {
    const f = (x: Tensor): Scalar => (lt(sum(x), 0) ? sum(mul(x, x)) : mul(index(x, [1]), sum(tanh(x))));
    const g = compileGrad(f);
    const r = rng(3);
    for (let k = 0; k < 20; k++) {
      const x = random(r, 3);
      expect(leaves(g(x))).toEqual(leaves(grad(f, x)));
    }
    expect(g.stats.replays).toBeGreaterThan(0);
    expect(g.stats.traces).toBeGreaterThan(1);
  });

  it("a mask decided on traced values is a literal no guard checks: such a trace is never replayed", () => {
    // leaky relu: the mask depends on x's signs, so replaying an old mask would be wrong
    const f = (x: Tensor): Scalar => sum(where(gt(x, 0) as NdArray, x, mul(x, 0.1)));
    const g = compileGrad(f);
    for (const x of [[1, -2, 3], [-1, 2, -3], [1, 2, 3]]) expect(flat(g(Float64Array.from(x)))).toEqual(flat(grad(f, Float64Array.from(x))));
    expect(g.stats).toMatchObject({ traces: 3, replays: 0 });
  });

  it("a derivative built from a mask of values (max's reverse rule) is never replayed", () => {
    const f = (x: Tensor): Scalar => max(mul(x, x)) as Scalar;
    const g = compileGrad(f);
    for (const x of [[1, -2, 0.5], [3, 1, 0.5], [0.1, 0.2, 0.3]]) expect(flat(g(Float64Array.from(x)))).toEqual(flat(grad(f, Float64Array.from(x))));
    expect(g.stats).toMatchObject({ traces: 3, replays: 0 });
  });

  it("a trace that read a traced tensor's value is never replayed", () => {
    const f = (x: Tensor): Scalar => (x.value.get(0) > 0 ? sum(x) : sum(mul(x, x)));
    const g = compileGrad(f);
    for (const x of [[1, 2], [-1, 2], [1, 3]]) expect(flat(g(Float64Array.from(x)))).toEqual(flat(grad(f, Float64Array.from(x))));
    expect(g.stats).toMatchObject({ traces: 3, replays: 0 });
  });

  it("a kink met on replay is traced (and reported) again; with ties ignored it is replayed", () => {
    const f = (x: Tensor): Scalar => sum(abs(x));
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      const g = compileGrad(f);
      g(Float64Array.of(1, 2));
      g(Float64Array.of(3, 2));
      expect(flat(g(Float64Array.of(0, 2)))).toEqual([0, 1]);
      expect(g.stats).toMatchObject({ traces: 2, replays: 1 });
      expect(warn).toHaveBeenCalledTimes(1);
      expect(String(warn.mock.calls[0][0])).toMatch(/abs was evaluated at its kink/);
      const quiet = compileGrad(f, { ties: "ignore" });
      quiet(Float64Array.of(1, 2));
      expect(flat(quiet(Float64Array.of(0, -2)))).toEqual([0, -1]);
      expect(quiet.stats).toMatchObject({ traces: 1, replays: 1 });
      expect(warn).toHaveBeenCalledTimes(1);
    } finally {
      warn.mockRestore();
    }
  });

  it("results are the caller's: changing one does not change the next, literal cotangents included", () => {
    // b does not reach the output: its cotangent is a literal zero tensor of the trace
    const f = (p: { a: Tensor; b: Tensor }): Scalar => sum(mul(p.a, p.a));
    const g = compileGrad(f);
    const x = { a: Float64Array.of(1, 2), b: nd([5, 6, 7], [3]) };
    for (let k = 0; k < 4; k++) {
      const r = g(x) as { a: Float64Array; b: NdArray };
      expect(flat(r.a)).toEqual([2, 4]);
      expect(flat(r.b)).toEqual([0, 0, 0]);
      r.a.fill(9);
      r.b.data.fill(9);
    }
    expect(g.stats.replays).toBe(3);
  });

  it("inputs of other dims are traced anew; strided ndarray views are read as their elements", () => {
    const f = (x: Tensor): Scalar => sum(tanh(mul(x, x)));
    const g = compileGrad(f);
    const base = ndarray(Float64Array.from([1, 2, 3, 4, 5, 6]), [2, 3]);
    expect(flat(g(base))).toEqual(flat(grad(f, base)));
    const view = base.transpose(1, 0);
    expect(flat(g(view))).toEqual(flat(grad(f, view)));
    expect(flat(g(view))).toEqual(flat(grad(f, view)));
    expect(g.stats).toMatchObject({ traces: 2, replays: 1 });
  });

  it("x an array of numbers, with tensors only inside f: replayed, cotangents as numbers", () => {
    const W = nd([1, 2, 3, 4, 5, 6], [3, 2]);
    const f = (x: Scalar[]): Scalar => sum(tanh(matmul(ndarray(Float64Array.from(x.map(primal)), [1, 3]), W)));
    // primal reads the value: never replayed; the same through a traced tensor is replayed
    const g = compileGrad(f);
    g([1, 2, 3]);
    g([1, 2, 3]);
    expect(g.stats.replays).toBe(0);
    const h = (x: Scalar[]): Scalar => add(mul(x[0], sum(tanh(W))), mul(x[1], x[2]));
    const gh = compileGrad(h);
    for (const x of [[1, 2, 3], [4, 5, 6], [7, 8, 9]]) expect(gh(x)).toEqual(grad(h, x));
    expect(gh.stats).toMatchObject({ traces: 1, replays: 2 });
  });

  it("inside rd, f closing over the enclosing trace's values is differentiated through them", () => {
    // d/dy of Σ ∂/∂x Σ(x·y·x) at x = (1, 2) = d/dy Σ 2·x·y = 2·(1 + 2)
    const outer = grad((y: Scalar) => sum(compileGrad((x: Tensor) => sum(mul(mul(x, y), x)))(Float64Array.of(1, 2)) as unknown as Tensor) as Scalar, 3);
    expect(outer).toBe(6);
  });

  it("replays hand every intermediate buffer back: the pool stays the same size from call to call", () => {
    const f = (p: { a: Tensor; b: Tensor }): Scalar => sum(mul(tanh(matmul(p.a, p.b)), p.a));
    const g = compileGrad(f);
    const r = rng(5);
    const p = { a: ndarray(random(r, 256), [16, 16]), b: ndarray(random(r, 256), [16, 16]) };
    // the first calls use up what the trace left in the pool
    for (let k = 0; k < 20; k++) g(p);
    const [bytes, fresh] = [poolStats.bytes, poolStats.fresh];
    for (let k = 0; k < 50; k++) g(p);
    expect(poolStats.bytes).toBe(bytes);
    // new buffers per call: the two cotangents handed out; the sixteen others come from the
    // pool (the one-element ones too: the sum's, and the seed as a [1, 1] tensor)
    expect(poolStats.fresh - fresh).toBe(50 * 2);
    expect(g.stats.replays).toBe(69);
  });
});
