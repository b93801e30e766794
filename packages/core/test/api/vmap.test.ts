/**
 * vmap(f) evaluates f at a batch of points from one trace per group of lanes that decide
 * alike: lane by lane f's numbers to the bit (toEqual tells −0 from 0), with lanes that
 * take other branches and loop counts; composed with grad, jvp and jit; ties and NaNs
 * reported for their lane.
 */
import fc from "fast-check";
import { poolStats } from "@wengert/ops";
import ndarray from "ndarray";
import { describe, expect, it, vi } from "vitest";
import {
  add, div, grad, gt, hessian, jit, jvp, lt, matmul, mul, NaNError, sin, sqrt, square, sub, sum, tanh, TieError, vmap, WengertError,
  type NdArray, type Scalar, type Tensor,
} from "../../src/index.js";
import { planStats } from "../../src/api/vmap-plan.js";
import { newton, rosenbrock } from "../helpers/cases.js";
import { branchy } from "../helpers/programs/generate.js";
import { firstOf } from "../helpers/programs/run.js";
import { flat } from "../helpers/tensors.js";

/** B lanes of three reals in [−2, 2], each input a Float64Array of B numbers. */
const lanes = (B: number) => fc.array(fc.float64Array({ min: -2, max: 2, noNaN: true, minLength: B, maxLength: B }), { minLength: 3, maxLength: 3 });

describe("vmap", () => {
  it("property: random programs with branches give f's numbers at every lane (lanes deciding otherwise traced apart)", () => {
    fc.assert(
      fc.property(branchy, lanes(12), (prog, xs) => {
        const f = firstOf(prog);
        const got = vmap(f)(xs) as Float64Array;
        for (let l = 0; l < 12; l++) expect(got[l]).toEqual(f(xs.map((c) => c[l])));
        // one input the same in every lane
        const some = vmap(f, { inAxes: [0, null, 0] })([xs[0], 0.5, xs[2]]) as Float64Array;
        for (let l = 0; l < 12; l++) expect(some[l]).toEqual(f([xs[0][l], 0.5, xs[2][l]]));
      }),
      { numRuns: 40 },
    );
  });

  it("per-example gradients through a loop whose trip count depends on the lane, one trace per group", () => {
    const a = Float64Array.from({ length: 200 }, (_, k) => 0.5 + k / 100);
    let traces = 0;
    const perExample = vmap((x: Scalar) => {
      traces++;
      return grad(newton, x, { ties: "ignore" });
    });
    const got = perExample(a) as Float64Array;
    for (let l = 0; l < a.length; l++) expect(got[l]).toEqual(grad(newton, a[l], { ties: "ignore" }));
    // a few iteration counts and both branches: far fewer traces than lanes
    expect(traces).toBeGreaterThan(2);
    expect(traces).toBeLessThan(20);
  });

  it("jit(vmap(grad(f))) keeps its traces and runs them compiled: the same numbers", () => {
    // (not a = 1, where Newton lands on y = 1 exactly and y > 1 is a tie: that lane is traced on every call)
    const a = Float64Array.from({ length: 300 }, (_, k) => 0.3 + ((k * 37) % 300) / 100 + 1e-9);
    const g = (x: Scalar) => grad(newton, x, { ties: "ignore" });
    const jv = jit(vmap(g));
    const want = Array.from(a, (x) => g(x));
    for (let call = 0; call < 4; call++) expect(Array.from(jv(a) as Float64Array)).toEqual(want);
    expect(jv.stats.compiled).toBeGreaterThan(0);
    // later calls trace nothing new
    const traces = jv.stats.traces;
    jv(a);
    expect(jv.stats.traces).toBe(traces);
  });

  it("jit(vmap(f)) keeps its traces across batch sizes: a batch of another size is run compiled, traced no more", () => {
    const f = ([x, y]: [Scalar, Scalar]) => (gt(x, 0) ? mul(sin(x), y) : sub(y, x));
    const jv = jit(vmap(f));
    const batch = (B: number) => [0, 1].map((k) => Float64Array.from({ length: B }, (_, l) => Math.cos(3 * l + k) + 0.1)) as [Float64Array, Float64Array];
    for (let call = 0; call < 3; call++) jv(batch(40));
    const { traces, compiled } = jv.stats;
    const xs = batch(77);
    const got = jv(xs) as Float64Array;
    expect(jv.stats.traces).toBe(traces);
    expect(jv.stats.compiled - compiled).toBe(77);
    for (let l = 0; l < 77; l++) expect(got[l]).toEqual(f([xs[0][l], xs[1][l]]));
  });

  it("a call whose x has the last call's structure reuses its plan: x walked once, no key made; any other x is planned again", () => {
    const f = (p: { q: Scalar[]; w: Tensor; c: Scalar }) => [mul(add(p.q[0], p.q[1]), p.c), sum(mul(p.w, p.q[2]))];
    const jv = jit(vmap(f, { inAxes: { q: 0, w: 0, c: null } }));
    const batch = (B: number, s = 1) => ({
      q: [0, 1, 2].map((k) => Float64Array.from({ length: B }, (_, l) => Math.sin(s * l + k))),
      w: ndarray(Float64Array.from({ length: 2 * B }, (_, i) => Math.cos(s * i)), [B, 2]),
      c: 1.5 * s,
    });
    const want = (x: ReturnType<typeof batch>) => vmap(f, { inAxes: { q: 0, w: 0, c: null } })(x);
    // 5 calls, batches of three sizes: one plan made, reused by the 4 others, the numbers those of a fresh vmap
    const sizes = [[7, 1], [7, 2], [3, 3], [7, 4], [30, 5]];
    const wants = sizes.map(([B, s]) => want(batch(B, s)));
    const { made, reused } = planStats;
    const got = sizes.map(([B, s]) => jv(batch(B, s)));
    expect(planStats.made - made).toBe(1);
    expect(planStats.reused - reused).toBe(4);
    expect(got).toEqual(wants);
    // another lane structure (w of 3 columns): planned again, its own traces
    const wide = { ...batch(4), w: ndarray(Float64Array.from({ length: 12 }, (_, i) => i / 7), [4, 3]) };
    expect(jv(wide)).toEqual(want(wide));
    expect(planStats.made - made).toBe(3);
    // the record's keys in another order: another structure (its leaves in another order), planned again
    const reordered = { c: 1, w: batch(4).w, q: batch(4).q };
    expect(jv(reordered)).toEqual(want(reordered));
    expect(planStats.made - made).toBe(5);
    // mistakes after a plan: named as at a first call
    const fresh = () => jit(vmap(f, { inAxes: { q: 0, w: 0, c: null } }));
    const mistakes = [
      { ...batch(4), c: "3" },
      { ...batch(4), w: 2 },
      { ...batch(4), w: ndarray(new Float64Array(10), [5, 2]) },
      { ...batch(4), q: [Float64Array.of(1), 2, 3] },
      { ...batch(4), extra: 1 },
    ];
    for (const [k, x] of mistakes.entries()) {
      let message = "";
      try {
        fresh()(x as never);
      } catch (e) {
        message = (e as Error).message;
      }
      expect(message, `mistake ${k}`).not.toBe("");
      expect(() => jv(x as never)).toThrow(message);
    }
    // traced values after a plan: mapped in the enclosing trace
    const total = (g: (x: unknown) => unknown) => (c: Scalar) => {
      const [ys, zs] = g({ ...batch(3), c }) as [Tensor, Tensor];
      return add(sum(ys), sum(zs)) as Scalar;
    };
    expect(grad(total(jv as never), 2)).toEqual(grad(total(vmap(f, { inAxes: { q: 0, w: 0, c: null } }) as never), 2));
  });

  it("tensors: a leading axis, f's tensors per lane, outputs stacked", () => {
    const X = ndarray(Float64Array.from({ length: 12 }, (_, i) => Math.sin(i)), [3, 4]);
    const loss = (w: Tensor) => sum(tanh(matmul(X, w)));
    const ws = ndarray(Float64Array.from({ length: 5 * 4 * 2 }, (_, i) => 0.1 * Math.cos(i)), [5, 4, 2]);
    const gs = vmap((w: Tensor) => grad(loss, w))(ws) as NdArray;
    expect(gs.shape).toEqual([5, 4, 2]);
    const values = vmap(loss)(ws) as Float64Array;
    for (let l = 0; l < 5; l++) {
      const w = ndarray(Float64Array.from(ws.data.subarray(8 * l, 8 * l + 8)), [4, 2]);
      expect(Array.from(gs.data.subarray(8 * l, 8 * l + 8))).toEqual(flat(grad(loss, w)));
      expect(values[l]).toBe(loss(w as never));
    }
  });

  it("tensors: a lane's buffer goes back to the pool after its last reader, not at the end of the batch", () => {
    // a chain of 30 tensor operations over 16 lanes: held to the end, 30 · 16 buffers of
    // this length would be made; given back at their last reader, a few per lane
    const n = 1237;
    const f = (t: Tensor) => {
      let y: Tensor = t;
      for (let k = 0; k < 30; k++) y = (k % 2 === 0 ? tanh(y) : mul(y, 1.5)) as Tensor;
      return sum(y);
    };
    const ts = ndarray(Float64Array.from({ length: 16 * n }, (_, i) => Math.sin(i)), [16, n]);
    const before = poolStats.fresh;
    const got = vmap(f)(ts) as Float64Array;
    expect(poolStats.fresh - before).toBeLessThan(30 + 4 * 16);
    for (let l = 0; l < 16; l++) expect(got[l]).toBe(f(ndarray(Float64Array.from(ts.data.subarray(n * l, n * (l + 1))), [n]) as never));
  });

  it("outAxes null: an output that does not vary is returned once; one that varies is an error", () => {
    const f = (p: { x: Scalar; c: Scalar }) => [mul(p.x, p.c), square(p.c)];
    const [ys, c2] = vmap(f, { inAxes: { x: 0, c: null }, outAxes: [0, null] })({ x: Float64Array.of(1, 2, 3), c: 3 }) as [Float64Array, number];
    expect(Array.from(ys)).toEqual([3, 6, 9]);
    expect(c2).toBe(9);
    expect(() => vmap(f, { inAxes: { x: 0, c: null }, outAxes: null })({ x: Float64Array.of(1, 2), c: 3 })).toThrow(/f\(x\)\[0\] varies along the batch/);
  });

  it("says what is wrong with a batch", () => {
    expect(() => vmap((x: Scalar) => sin(x))(2 as never)).toThrow(/x is a number, marked batched/);
    expect(() => vmap((p: Scalar[]) => add(p[0], p[1]))([Float64Array.of(1, 2), Float64Array.of(1, 2, 3)])).toThrow(/x\[1\] has 3 lanes .* but an earlier batched input has 2/);
    expect(() => vmap((x: Scalar) => sin(x), { inAxes: null })(Float64Array.of(1) as never)).toThrow(/no input is batched/);
    expect(() => vmap((p: Scalar[]) => p[0], { inAxes: [0] })([Float64Array.of(1), Float64Array.of(2)])).toThrow(WengertError);
    expect(() => vmap((x: Scalar) => sin(x), { inAxis: 0 } as never)).toThrow(/options.inAxis is not an option/);
    // lanes whose outputs differ in structure
    expect(() => vmap((x: Scalar) => (gt(x, 0) ? x : [x, x]))(Float64Array.of(1, -1))).toThrow(/at lane 1 but real at the first lane/);
  });

  it("a tie inside an rd is reported for its lane, with its predicate", () => {
    const relu = (x: Scalar) => (lt(x, 0) ? 0 : x);
    const xs = Float64Array.of(-1, 2, 0, 3);
    expect(() => vmap((x: Scalar) => grad(relu, x, { ties: "error" }))(xs)).toThrow(TieError);
    expect(() => vmap((x: Scalar) => grad(relu, x, { ties: "error" }))(xs)).toThrow(/lt\(0, 0\) was decided at a tie .*\(in lane 2 of vmap\)/);
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      expect(Array.from(vmap((x: Scalar) => grad(relu, x))(xs) as Float64Array)).toEqual([0, 1, 1, 1]);
      expect(warn).toHaveBeenCalledTimes(1);
      expect(String(warn.mock.calls[0][0])).toMatch(/in lane 2 of vmap/);
    } finally {
      warn.mockRestore();
    }
  });

  it("checkNaN names the lane where a value is not finite", () => {
    const f = (x: Scalar) => sqrt(sub(x, 1));
    expect(Array.from(vmap(f)(Float64Array.of(2, 5, 0)) as Float64Array)).toEqual([1, 2, NaN]);
    expect(() => vmap(f, { checkNaN: true })(Float64Array.of(2, 5, 0, 10))).toThrow(NaNError);
    expect(() => vmap(f, { checkNaN: true })(Float64Array.of(2, 5, 0, 10))).toThrow(/sqrt\(-1\) = NaN .*\(in lane 2 of vmap\)/);
  });

  it("composes: grad through vmap (f mapped in grad's trace), vmap(jvp) over a basis is the Hessian", () => {
    const f = (x: Scalar) => mul(newton(x), x);
    const xs = Float64Array.of(0.7, 1.3, 2.9);
    // d/dxₗ Σ f(xₗ) = f'(xₗ)
    const through = grad((t: Tensor) => sum(vmap(f)(t) as Tensor), xs) as Float64Array;
    expect(Array.from(through)).toEqual(Array.from(xs, (x) => grad(f, x)));
    // Hessian columns as jvps of the gradient along the basis vectors, one per lane
    const x = [0.3, -0.7, 1.1, 0.4];
    const basis = x.map((_, i) => Float64Array.from(x, (_, j) => (i === j ? 1 : 0)));
    const columns = vmap((v: Scalar[]) => jvp((p: Scalar[]) => grad(rosenbrock, p) as Scalar[], x, v)[1])(basis) as Float64Array[];
    const H = hessian(rosenbrock, x) as number[][];
    for (let i = 0; i < 4; i++) for (let j = 0; j < 4; j++) expect(columns[i][j]).toBeCloseTo(H[i][j], 10);
  });
});
