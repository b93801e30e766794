/**
 * Plain vmap runs its lanes by compiled code kept by the structure of the term (jit/lanes.ts,
 * jit/term-key.ts): a call traces f again at each group of lanes, and its traces find the
 * code an earlier call's made; each lane is computed once (by tracing, compiled code or
 * columns), lane by lane f's numbers to the bit. Terms that differ in a literal (−0 apart
 * from 0) do not share code; a trace without code (tensors) leaves the lanes after it to
 * columns.
 */
import fc from "fast-check";
import ndarray from "ndarray";
import { describe, expect, it } from "vitest";
import { add, grad, gt, jit, lt, mul, sum, tanh, vmap, type Scalar } from "../../src/index.js";
import { laneStats } from "../../src/api/vmap.js";
import { laneCodeStats } from "../../src/jit/lanes.js";
import { newton } from "../helpers/cases.js";
import { branchy } from "../helpers/programs/generate.js";
import { firstOf } from "../helpers/programs/run.js";

/** What `run` adds to the lane and code counters. */
function counted(run: () => unknown): { traced: number; compiled: number; columns: number; made: number; reused: number } {
  const lanes = { ...laneStats };
  const code = { ...laneCodeStats };
  run();
  return {
    traced: laneStats.traced - lanes.traced,
    compiled: laneStats.compiled - lanes.compiled,
    columns: laneStats.columns - lanes.columns,
    made: laneCodeStats.compiled - code.compiled,
    reused: laneCodeStats.reused - code.reused,
  };
}

/** Every lane of `got` is `want`'s, to the bit (Object.is: −0 is not 0). */
function sameLanes(got: Float64Array, want: readonly number[]): void {
  expect(got.length).toBe(want.length);
  want.forEach((y, l) => {
    if (!Object.is(got[l], y)) expect.fail(`lane ${l}: ${got[l]} (vmap) vs ${y} (f at the lane)`);
  });
}

describe("vmap runs its lanes by compiled code kept by structure", () => {
  it("per-example gradients: a later call traces each group again, compiles nothing, and computes every lane once", () => {
    // W7's grid at B = 3000 (no point at a = 1, a tie of y > 1)
    const B = 3000;
    const a = Float64Array.from({ length: B }, (_, k) => 0.5 + (2 * k + 1) / B);
    let traces = 0;
    const g = (x: Scalar) => {
      traces++;
      return grad(newton, x);
    };
    const want = Array.from(a, (x) => grad(newton, x) as number);
    // the first call by columns, or compiled (a batch under COMPILE_LANES: the second)
    sameLanes(vmap(g)(a) as Float64Array, want);
    const groups = traces;
    expect(groups).toBeGreaterThan(4);
    sameLanes(vmap(g)(a) as Float64Array, want);
    for (let call = 0; call < 2; call++) {
      traces = 0;
      const later = counted(() => sameLanes(vmap(g)(a) as Float64Array, want));
      // f traced once per group; each lane computed once, all but the traced ones by compiled code
      expect(traces).toBe(groups);
      expect(later).toEqual({ traced: groups, compiled: B - groups, columns: 0, made: 0, reused: groups });
    }
  });

  it("a small batch is run by columns at a structure's first sight and compiled at the next", () => {
    const a = Float64Array.from({ length: 40 }, (_, k) => 0.3 + k / 13 + 1e-9);
    const g = (x: Scalar) => grad(newton, x);
    const want = Array.from(a, (x) => g(x) as number);
    // a structure of its own (literal 3.25), not seen by other tests
    const f = (x: Scalar) => mul(3.25, g(x));
    const wantF = want.map((y) => 3.25 * y);
    const first = counted(() => sameLanes(vmap(f)(a) as Float64Array, wantF));
    expect(first.compiled).toBe(0);
    expect(first.columns + first.traced).toBe(a.length);
    const second = counted(() => sameLanes(vmap(f)(a) as Float64Array, wantF));
    expect(second.columns).toBe(0);
    expect(second.compiled + second.traced).toBe(a.length);
    expect(second.made).toBeGreaterThan(0);
  });

  it("a batch of COMPILE_LANES (8192) lanes or more is compiled at a structure's first sight", () => {
    const a = Float64Array.from({ length: 8192 }, (_, k) => 0.5 + (2 * k + 1) / 8192);
    // a structure of its own (literal 4.75)
    const f = (x: Scalar) => mul(4.75, grad(newton, x));
    const first = counted(() => sameLanes(vmap(f)(a) as Float64Array, Array.from(a, (x) => 4.75 * (grad(newton, x) as number))));
    expect(first.columns).toBe(0);
    expect(first.made).toBe(first.traced);
    expect(first.compiled + first.traced).toBe(a.length);
  });

  it("jit(vmap(f)) compiles a batch of COMPILE_LANES lanes at its first call, a smaller one from its third", () => {
    const big = Float64Array.from({ length: 8192 }, (_, k) => 0.5 + (2 * k + 1) / 8192);
    const small = big.subarray(0, 64);
    // structures of their own (literals 5.25, 5.5)
    const want = (c: number, a: Float64Array) => Array.from(a, (x) => c * (grad(newton, x) as number));
    const jb = jit(vmap((x: Scalar) => mul(5.25, grad(newton, x))));
    const first = counted(() => sameLanes(jb(big) as Float64Array, want(5.25, big)));
    expect(first.columns).toBe(0);
    expect(first.compiled + first.traced).toBe(big.length);
    const js = jit(vmap((x: Scalar) => mul(5.5, grad(newton, x))));
    for (const call of [1, 2, 3]) {
      const ran = counted(() => sameLanes(js(small) as Float64Array, want(5.5, small)));
      expect(ran.compiled > 0).toBe(call === 3);
    }
  });

  it("terms that differ in a literal do not share code: a constant read from a closure, 0 and −0 apart", () => {
    const xs = Float64Array.of(1, 2, -3, 4);
    let c = 0;
    const f = (x: Scalar) => (gt(x, 0) ? mul(x, c) : add(x, c));
    for (const value of [0, 0, 0, -0, -0, 2.5, 0]) {
      c = value;
      sameLanes(vmap(f)(xs) as Float64Array, Array.from(xs, (x) => (x > 0 ? x * value : x + value)));
    }
  });

  it("an output that is a literal (the gradient of x ↦ x) is written by compiled code, plain and under jit", () => {
    const relu = (x: Scalar) => (lt(x, 0) ? 0 : x);
    const xs = Float64Array.of(2, 3, 4, 5);
    const g = (x: Scalar) => grad(relu, x);
    const jv = jit(vmap(g));
    for (let call = 0; call < 4; call++) {
      sameLanes(vmap(g)(xs) as Float64Array, [1, 1, 1, 1]);
      sameLanes(jv(xs) as Float64Array, [1, 1, 1, 1]);
    }
    expect(jv.stats.compiled).toBeGreaterThan(0);
  });

  it("property: random programs with branches, called again (compiled), give f's numbers at every lane", () => {
    const compiled = laneStats.compiled;
    fc.assert(
      fc.property(branchy, fc.array(fc.float64Array({ min: -2, max: 2, noNaN: true, minLength: 24, maxLength: 24 }), { minLength: 3, maxLength: 3 }), (prog, xs) => {
        const f = firstOf(prog);
        // the lanes in order, then reversed: a group's first lane, where f is traced, is
        // another point, and its trace runs the code made from the trace at the first
        const reversed = xs.map((x) => x.slice().reverse());
        for (let call = 0; call < 4; call++) {
          const batch = call % 2 === 0 ? xs : reversed;
          sameLanes(vmap(f)(batch) as Float64Array, Array.from({ length: 24 }, (_, l) => f(batch.map((x) => x[l])) as number));
        }
      }),
      { numRuns: 60 },
    );
    expect(laneStats.compiled - compiled).toBeGreaterThan(60 * 24);
  });

  it("jit(vmap(f)) of a trace with tensors: its kept trace run by columns at every call, traced no more", () => {
    const w = ndarray(Float64Array.of(0.5, -1.5, 2), [3]);
    const f = (x: Scalar) => sum(tanh(mul(w, x)));
    const jv = jit(vmap(f));
    const xs = Float64Array.from({ length: 50 }, (_, l) => Math.sin(l));
    const want = Array.from(xs, (x) => f(x) as number);
    for (let call = 0; call < 5; call++) sameLanes(jv(xs) as Float64Array, want);
    expect(jv.stats.traces).toBe(1);
    expect(jv.stats.replays).toBe(5 * 50 - 1);
  });

  it("from a trace without code (tensors), columns take the lanes left", () => {
    const B = 2500;
    const w = ndarray(Float64Array.of(0.5, -1.5, 2), [3]);
    // lanes ≥ 0: reals only; lanes < 0: a sum over a tensor
    const f = (x: Scalar) => (lt(x, 0) ? sum(mul(w, x)) : mul(x, x));
    const xs = Float64Array.from({ length: B }, (_, l) => Math.sin((l + 0.5) / 300));
    const want = Array.from(xs, (x) => f(x) as number);
    // the second call: the trace of reals compiled (its structure seen by the first)
    sameLanes(vmap(f)(xs) as Float64Array, want);
    const got = counted(() => sameLanes(vmap(f)(xs) as Float64Array, want));
    expect(got.compiled).toBeGreaterThan(0);
    expect(got.columns).toBeGreaterThan(0);
    expect(got.compiled + got.columns + got.traced).toBe(B);
  });
});
