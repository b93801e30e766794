/**
 * The gradient transformations other than Adam (adam.test.ts): their updates step by
 * step against the formulas of their files, schedules against optax's documented values,
 * chaining, purity, and the checks on their options.
 */
import { describe, expect, it } from "vitest";
import {
  applyUpdates, chain, clipByGlobalNorm, constantSchedule, cosineDecaySchedule, exponentialDecay, identity, joinSchedules, linearSchedule,
  momentum, piecewiseConstantSchedule, polynomialSchedule, rmsprop, scale, scaleByLearningRate, scaleByRms, sgd, treeNorm,
  warmupCosineDecaySchedule, OptimOptionsError, type GradientTransformation, type Shaped, type Tree,
} from "../src/index.js";

/** Runs `t` on the gradient sequence (params fixed at `params`), returning each step's updates. */
function run<T extends Tree>(t: GradientTransformation, grads: T[], params?: T): Shaped<T>[] {
  let state = t.init(params ?? grads[0]);
  return grads.map((g) => {
    const [u, next] = t.update(g, state, params);
    state = next;
    return u;
  });
}

describe("sgd and momentum", () => {
  it("plain sgd: u = −lr·g, exactly; applyUpdates adds", () => {
    const [u] = run(sgd(0.1), [[3, -4]]);
    expect(u).toEqual([-0.1 * 3, -0.1 * -4]);
    expect(applyUpdates([1, 1], u)).toEqual([1 - 0.30000000000000004, 1.4]);
  });

  it("heavy ball: m = g + μm, u = −lr·m; Nesterov: u = −lr·(g + μm)", () => {
    const grads = [[1], [1], [1]];
    expect(run(momentum(0.9), grads)).toEqual([[1], [1.9], [1 + 0.9 * 1.9]]);
    expect(run(momentum(0.9, { nesterov: true }), grads)).toEqual([[1.9], [1 + 0.9 * 1.9], [1 + 0.9 * (1 + 0.9 * 1.9)]]);
    expect(run(sgd(0.5, { momentum: 0.9 }), grads).map((u) => u[0])).toEqual([-0.5, -0.5 * 1.9, -0.5 * (1 + 0.9 * 1.9)]);
  });

  it("a schedule is read at the count, from 0", () => {
    const seen: number[] = [];
    const t = sgd((count) => {
      seen.push(count);
      return 1 / (count + 1);
    });
    expect(run(t, [[2], [2], [2]])).toEqual([[-2], [-1], [-2 / 3]]);
    expect(seen).toEqual([0, 1, 2]);
  });
});

describe("rmsprop", () => {
  it("nu = 0.1·g² + 0.9·nu, u = −lr·g/sqrt(nu + eps) (optax's eps inside the root)", () => {
    const us = run(rmsprop(0.01), [[2], [-1]]);
    const nu1 = 0.09999999999999998 * 4;
    const nu2 = 0.09999999999999998 * 1 + 0.9 * nu1;
    expect(us[0][0]).toBe(-0.01 * ((1 / Math.sqrt(nu1 + 1e-8)) * 2));
    expect(us[1][0]).toBe(-0.01 * ((1 / Math.sqrt(nu2 + 1e-8)) * -1));
  });

  it("centered: divided by the standard deviation; eps outside the root on request", () => {
    const [, u2] = run(scaleByRms({ centered: true, eps: 0 }), [[2], [4]]);
    const mu = 0.1 * 4 + 0.9 * (0.1 * 2);
    const nu = 0.1 * 16 + 0.9 * (0.1 * 4);
    expect(u2[0]).toBeCloseTo(4 / Math.sqrt(nu - mu * mu), 12);
    const [v] = run(scaleByRms({ epsInSqrt: false, eps: 1 }), [[2]]);
    expect(v[0]).toBeCloseTo(2 / (Math.sqrt(0.4) + 1), 15);
  });

  it("momentum comes after the learning rate", () => {
    const us = run(rmsprop(1, { momentum: 0.5, eps: 0 }), [[1], [1]]);
    const first = -1 / Math.sqrt(0.09999999999999998);
    expect(us[0][0]).toBeCloseTo(first, 14);
    expect(us[1][0]).toBeCloseTo(-1 / Math.sqrt(0.1 + 0.9 * 0.1) + 0.5 * first, 12);
  });
});

describe("clipping", () => {
  it("scales by maxNorm/‖g‖ when ‖g‖ ≥ maxNorm, over the whole tree; leaves shorter updates alone", () => {
    const g = { a: [3], b: new Float64Array([4]) };
    const [clipped] = run(clipByGlobalNorm(1), [g]);
    expect(clipped.a[0]).toBe((3 / 5) * 1);
    expect(clipped.b[0]).toBe((4 / 5) * 1);
    expect(treeNorm(clipped)).toBeCloseTo(1, 15);
    const [same] = run(clipByGlobalNorm(10), [g]);
    expect(same).toBe(g);
    expect(() => clipByGlobalNorm(0)).toThrow(/maxNorm is 0; expected a number in \(0, Infinity\]/);
  });
});

describe("chain", () => {
  it("applies in order and keeps each state", () => {
    const t = chain(clipByGlobalNorm(1), scale(2), identity(), scaleByLearningRate(0.1));
    const p = [10, 0];
    const state = t.init(p);
    expect(state).toHaveLength(4);
    const [u] = t.update([30, 40], state, p);
    expect(u).toEqual([-0.1 * (2 * ((30 / 50) * 1)), -0.1 * (2 * ((40 / 50) * 1))]);
  });

  it("no transformation mutates its arguments", () => {
    const g = { w: new Float64Array([1, 2]), s: [3] };
    const p = { w: new Float64Array([4, 5]), s: [6] };
    const opt = chain(clipByGlobalNorm(1), sgd(0.1, { momentum: 0.9, nesterov: true }));
    const s0 = opt.init(p);
    const snapshot = JSON.stringify([g, p, s0], (_k, v) => (v instanceof Float64Array ? Array.from(v) : v));
    const [u, s1] = opt.update(g, s0, p);
    applyUpdates(p, u);
    opt.update(g, s1, p);
    expect(JSON.stringify([g, p, s0], (_k, v) => (v instanceof Float64Array ? Array.from(v) : v))).toBe(snapshot);
  });
});

describe("schedules (values from optax's documentation)", () => {
  it("constant, polynomial, linear", () => {
    expect(constantSchedule(5)(100)).toBe(5);
    const poly = polynomialSchedule({ initValue: 1, endValue: 0.01, transitionSteps: 100, transitionBegin: 5, power: 2 });
    expect([0, 5, 6, 104, 105, 110].map((c) => poly(c).toFixed(4))).toEqual(["1.0000", "1.0000", "0.9803", "0.0101", "0.0100", "0.0100"]);
    const linear = linearSchedule({ initValue: 1, endValue: 0.01, transitionSteps: 100 });
    expect([linear(0), linear(50), linear(100), linear(1000)]).toEqual([1, (1 - 0.01) * 0.5 + 0.01, 0.01, 0.01]);
  });

  it("piecewise constant, exponential decay, cosine decay, warmup then cosine, joined", () => {
    const piecewise = piecewiseConstantSchedule(1, { 100: 0.1, 200: 0.01 });
    expect([piecewise(50), piecewise(100), piecewise(150), piecewise(250)]).toEqual([1, 0.1, 0.1, 0.1 * 0.01]);
    const exp = exponentialDecay({ initValue: 1, transitionSteps: 10, decayRate: 0.5, transitionBegin: 5, endValue: 0.2 });
    expect([exp(0), exp(5), exp(15), exp(25), exp(100)]).toEqual([1, 1, 0.5, 0.25, 0.2]);
    expect(exponentialDecay({ initValue: 1, transitionSteps: 10, decayRate: 0.5, staircase: true })(19)).toBe(0.5);
    const cosine = cosineDecaySchedule({ initValue: 2, decaySteps: 100, alpha: 0.1 });
    expect([cosine(0), cosine(50), cosine(100), cosine(200)].map((v) => +v.toFixed(12))).toEqual([2, 2 * (0.9 * 0.5 + 0.1), 0.2, 0.2]);
    const warm = warmupCosineDecaySchedule({ initValue: 0, peakValue: 1, warmupSteps: 10, decaySteps: 110, endValue: 0.1 });
    expect([warm(0), warm(5), warm(10), warm(110)].map((v) => +v.toFixed(12))).toEqual([0, 0.5, 1, 0.1]);
    const joined = joinSchedules([constantSchedule(1), (c) => 10 + c], [3]);
    expect([joined(2), joined(3), joined(5)]).toEqual([1, 10, 12]);
  });
});

describe("options", () => {
  it("a misspelt key, a wrong type, a value out of range, a missing required option", () => {
    expect(() => sgd(0.1, { momentun: 0.9 } as never)).toThrow(/sgd: unknown option "momentun"; the options are momentum, nesterov/);
    expect(() => rmsprop(0.1, { decay: "0.9" } as never)).toThrow(/option decay is "0.9"; expected a number/);
    expect(() => momentum(1.5)).toThrow(/decay is 1.5; expected a number in \[0, 1\]/);
    expect(() => sgd(Number.NaN)).toThrow(OptimOptionsError);
    expect(() => exponentialDecay({ initValue: 1 } as never)).toThrow(/option transitionSteps is required/);
  });
});
