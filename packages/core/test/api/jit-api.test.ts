/**
 * jit(f) replays f's trace where its decisions hold: the same numbers as f, to the bit
 * (toEqual tells −0 from 0), on random programs with branches, on programs that call
 * transformations inside, on tensors, and composed with grad either way round.
 */
import fc from "fast-check";
import ndarray from "ndarray";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it, vi } from "vitest";
import {
  add, compileGrad, grad, hessian, hvp, jacobian, jit, jvp, lt, matmul, mean, mul, pooledBytes, primal, sin, square, sub, sum, tanh, valueAndGrad, vjp,
  type NdArray, type Scalar, type Tensor,
} from "../../src/index.js";
import { point, rosenbrock, special } from "../helpers/cases.js";
import { branchy } from "../helpers/programs/generate.js";
import { firstOf } from "../helpers/programs/run.js";
import { flat } from "../helpers/tensors.js";

/** Several points: the same jitted function is replayed, compiled, and traced again where a decision changes. */
const points = fc.array(fc.oneof(point, special), { minLength: 4, maxLength: 8 });

describe("jit", () => {
  it("arrays of tensors and numbers: alike dims replay, other dims, containers or kinds trace anew (the last key reused only when alike)", () => {
    const f = ([a, b, c]: [Tensor, Tensor, Scalar]) => sum(mul(matmul(a, b), c)) as Scalar;
    const j = jit(f);
    const nd = (dims: number[], k: number): NdArray => ndarray(Float64Array.from({ length: dims.reduce((p, q) => p * q, 1) }, (_, i) => Math.sin(i + k)), dims);
    const calls: [unknown, unknown, unknown][] = [
      [nd([2, 3], 0), nd([3, 1], 1), 2],
      [nd([2, 3], 2), nd([3, 1], 3), 0.5],
      [nd([2, 2], 4), nd([2, 1], 5), 3],
      [nd([2, 3], 6), nd([3, 1], 7), 1.5],
      [nd([2, 3], 8), nd([3, 2], 9), -1],
      [nd([2, 3], 8), Float64Array.of(1, 2, 3), -1],
    ];
    for (const x of calls) expect(j(x as never)).toEqual(f(x as never));
    // traced: [2,3]·[3,1], [2,2]·[2,1], [2,3]·[3,2], [2,3]·f[3]; the others replayed
    expect(j.stats.traces).toBe(4);
    expect(j.stats.replays).toBe(2);
  });

  it("property: random programs with branches, at points that change their decisions, give f's numbers", () => {
    let replays = 0;
    let compiled = 0;
    fc.assert(
      fc.property(branchy, points, (prog, xs) => {
        const f = firstOf(prog);
        const j = jit(f);
        for (const x of [...xs, ...xs]) expect(j(x)).toEqual(f(x));
        replays += j.stats.replays;
        compiled += j.stats.compiled;
        expect(j.stats.traces + j.stats.replays).toBe(2 * xs.length);
      }),
      { numRuns: 60 },
    );
    expect(replays).toBeGreaterThan(0);
    expect(compiled).toBeGreaterThan(0);
  });

  it("property: programs that call transformations inside (grad, valueAndGrad, jvp, vjp, hvp, hessian, jacobian) give their numbers", () => {
    const inside: ((f: (p: Scalar[]) => Scalar) => (x: number[]) => unknown)[] = [
      (f) => (x) => grad(f, x),
      (f) => (x) => valueAndGrad(f, x),
      (f) => (x) => jvp(f, x, [0.5, -1, 2]),
      (f) => (x) => vjp((p: Scalar[]) => [f(p), mul(f(p), p[0])], x)[1]([1.5, -0.5]),
      (f) => (x) => hvp(f, x, [1, 0.25, -2]),
      (f) => (x) => hessian(f, x),
      (f) => (x) => jacobian((p: Scalar[]) => [f(p), sin(p[1])], x),
    ];
    fc.assert(
      fc.property(branchy, points, fc.nat(inside.length - 1), (prog, xs, k) => {
        const g = inside[k](firstOf(prog));
        const j = jit(g as (x: Scalar[]) => unknown, { ties: "ignore" });
        const quiet = vi.spyOn(console, "warn").mockImplementation(() => {});
        try {
          for (const x of [...xs, ...xs, ...xs]) expect(j(x)).toEqual(g(x));
        } finally {
          quiet.mockRestore();
        }
      }),
      { numRuns: 60 },
    );
  });

  it("replays a straight-line trace compiled: rosenbrock's value, its gradient and its Hessian-vector product", () => {
    const x = Array.from({ length: 50 }, (_, i) => Math.cos(i));
    const v = Array.from({ length: 50 }, (_, i) => Math.sin(i));
    const jf = jit(rosenbrock);
    const jg = jit((p: Scalar[]) => grad(rosenbrock, p));
    const jh = jit(([p, w]: [Scalar[], Scalar[]]) => hvp(rosenbrock, p, w));
    for (let k = 0; k < 5; k++) {
      const xk = x.map((t) => t + k / 7);
      expect(jf(xk)).toBe(rosenbrock(xk));
      expect(jg(xk)).toEqual(grad(rosenbrock, xk));
      expect(jh([xk, v])).toEqual(hvp(rosenbrock, xk, v));
    }
    for (const j of [jf, jg, jh]) expect(j.stats).toEqual({ traces: 1, replays: 4, compiled: 2 });
  });

  it("reads inputs where they are and writes outputs into the array returned: outputs that are inputs, repeats, literals, rows", () => {
    // each a shape of outputs the compiled code places otherwise: an input among them, an
    // output twice, a literal, rows (one holding an input), numbers among the arrays
    const fs: ((x: [Scalar[], Scalar, Scalar[]]) => unknown)[] = [
      ([p, s, w]) => [mul(p[0], s), p[1], w[0], mul(p[0], s), 3, add(w[1], p[2])],
      ([p, s, w]) => p.map((t, i) => mul(t, w[i])),
      ([p, s, w]) => [[p[0], mul(s, w[0]), 0], [sin(p[1]), w[1], mul(p[2], p[2])]],
      ([p, s, w]) => [s, ...p.map((t, i) => add(t, w[i]))],
      ([p, , w]) => hessian((q: Scalar[]) => mul(mul(q[0], q[1]), add(q[2], w[0])), p),
    ];
    for (const f of fs) {
      const j = jit(f);
      for (let k = 0; k < 6; k++) {
        const x: [number[], number, number[]] = [[0.5 + k, -1.25, 2 / (k + 1)], k - 2.5, [Math.cos(k), -0, 7]];
        const want = f(x);
        expect(j(x)).toEqual(want);
        // the arrays are the caller's: a later call does not change them, nor they it
        expect(x).toEqual([[0.5 + k, -1.25, 2 / (k + 1)], k - 2.5, [Math.cos(k), -0, 7]]);
      }
      expect(j.stats).toEqual({ traces: 1, replays: 5, compiled: 3 });
    }
    // the gradient's value an input of f: read where it is too
    const g = compileGrad((p: Scalar[]) => p[1]);
    for (let k = 0; k < 5; k++) expect(g.valueAndGrad([k, -k - 0.5])).toEqual([-k - 0.5, [0, 1]]);
    expect(g.stats.compiled).toBeGreaterThan(0);
  });

  it("composes with grad either way round, and through branches on both sides", () => {
    const f = (p: Scalar[]): Scalar => (lt(p[0], p[1]) ? mul(sin(p[0]), p[1]) : square(sub(p[0], mul(2, p[1]))));
    const gj = (x: number[]) => grad(jit(f) as (p: Scalar[]) => Scalar, x);
    const jg = jit((p: Scalar[]) => grad(f, p));
    const jgj = jit((p: Scalar[]) => grad(jit(f) as (p: Scalar[]) => Scalar, p));
    for (const x of [[0.5, 2], [3, 1], [0.25, 0.75], [2, -1], [0.5, 2]]) {
      const want = grad(f, x);
      expect(gj(x)).toEqual(want);
      expect(jg(x)).toEqual(want);
      expect(jgj(x)).toEqual(want);
    }
    // second order through a jitted gradient: the derivative of grad's term placed in hessian's trace
    const x = [0.3, 1.1];
    expect(jacobian((p: Scalar[]) => jg(p as never) as Scalar[], x)).toEqual(hessian(f, x));
  });

  it("functions of tensors are replayed on the kernels: the same buffers' numbers as f, and as grad", () => {
    const X = ndarray(Float64Array.from({ length: 24 }, (_, i) => Math.sin(i)), [6, 4]);
    const loss = (p: { W: Tensor; b: Tensor }) => mean(square(tanh(add(matmul(X, p.W), p.b))));
    const p = (k: number) => ({ W: ndarray(Float64Array.from({ length: 12 }, (_, i) => 0.1 * Math.cos(i + k)), [4, 3]), b: Float64Array.of(0.1, -0.2, k) });
    const jl = jit(loss);
    const jg = jit((q: { W: Tensor; b: Tensor }) => grad(loss, q));
    for (let k = 0; k < 4; k++) {
      expect(jl(p(k))).toBe(loss(p(k) as never));
      const got = jg(p(k)) as { W: NdArray; b: NdArray };
      const want = grad(loss, p(k)) as { W: NdArray; b: Float64Array };
      expect(flat(got.W)).toEqual(flat(want.W));
      expect(flat(got.b)).toEqual(flat(want.b));
    }
    expect(jg.stats).toMatchObject({ traces: 1, replays: 3 });
  });

  it("keeps up to eight traces, replays the one whose decisions hold, and keeps none recorded at a tie", () => {
    const f = (x: Scalar): Scalar => {
      let y = x;
      for (let k = 0; k < 6 && lt(y, 10); k++) y = add(mul(y, y), 1);
      return y;
    };
    const j = jit(f);
    const xs = [3.5, 1, 0.5, 2, 0.1];
    for (let round = 0; round < 3; round++) for (const x of xs) expect(j(x)).toBe(f(x));
    // 3.5 → 13.25: one step; 1 → 2 → 5 → 26: three; 0.5, 0.1: four; 2 → 5 → 26: two
    expect(j.stats).toMatchObject({ traces: 4, replays: 11 });
    // at 3, 3² + 1 = 10 < 10 is decided at a tie: traced every time, and not kept (3.5's trace still is)
    for (let k = 0; k < 10; k++) expect(j(3)).toBe(10);
    expect(j(3.5)).toBe(f(3.5));
    expect(j.stats).toMatchObject({ traces: 14, replays: 12 });
  });

  it("reads what f captures when it traces (jax.jit's contract), and a trace that read a value is traced every call", () => {
    let c = 2;
    const j = jit((x: Scalar) => mul(x, c));
    expect(j(3)).toBe(6);
    c = 5;
    expect(j(3)).toBe(6);
    expect(j(4)).toBe(8);
    const read = jit((x: Scalar) => (primal(x) > 0 ? x : mul(-1, x)));
    expect([read(2), read(-3), read(4)]).toEqual([2, 3, 4]);
    expect(read.stats).toMatchObject({ traces: 3, replays: 0 });
  });

  it("reports only what the rds inside report: f's own decisions at a tie are not a derivative's", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      const f = (p: Scalar[]): Scalar => (lt(p[0], p[1]) ? p[0] : p[1]);
      const j = jit(f);
      expect(j([1, 1])).toBe(1);
      expect(warn).not.toHaveBeenCalled();
      const g = jit((p: Scalar[]) => grad(f, p));
      expect(g([1, 2])).toEqual([1, 0]);
      expect(g([2, 2])).toEqual(grad(f, [2, 2]));
      expect(warn).toHaveBeenCalledTimes(2); // grad's own, then the jitted grad's (traced again at the tie)
    } finally {
      warn.mockRestore();
    }
  });

  it("memory stays flat over 10⁴ calls: no trace, buffer or tape column is kept per call", () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const x = Array.from({ length: 100 }, (_, i) => Math.cos(i));
    const j = jit((p: Scalar[]) => grad(rosenbrock, p));
    const X = ndarray(Float64Array.from({ length: 64 }, (_, i) => Math.sin(i)), [8, 8]);
    const jt = jit((w: Tensor) => sum(tanh(matmul(X, w))));
    const w = ndarray(Float64Array.from({ length: 64 }, (_, i) => 0.01 * i), [8, 8]);
    const heap = (): number => {
      gc();
      return process.memoryUsage().heapUsed;
    };
    for (let k = 0; k < 1000; k++) {
      j(x);
      jt(w);
    }
    const [before, pool] = [heap(), pooledBytes()];
    for (let k = 0; k < 10000; k++) {
      j(x);
      jt(w);
    }
    expect(pooledBytes()).toBe(pool);
    // one kept trace of the gradient is some 60 kB: 10⁴ of them would be 600 MB
    expect(heap() - before).toBeLessThan(2e6);
    expect(j.stats.traces + jt.stats.traces).toBe(2);
  });

  it("reads [x, v] by code written for its structure, and anything else as before: other lengths, numbers among the arrays, a leaf that is not a number", () => {
    const f = ([p, w]: Scalar[][]) => p.reduce<Scalar>((s, t, i) => add(s, mul(t, w[i])), 0);
    const j = jit(f as (x: Scalar[][]) => Scalar);
    for (let k = 0; k < 4; k++) expect(j([[1, 2], [3, 4 + k]])).toBe(11 + 2 * k);
    expect(j([[1, 2, 3], [3, 4, 5]])).toBe(26);
    expect(j.stats).toMatchObject({ traces: 2, replays: 3 });
    const first = (a: Scalar | Scalar[]): Scalar => (Array.isArray(a) ? a[0] : a);
    const g = jit((x: (Scalar | Scalar[])[]) => mul(first(x[0]), first(x[1])));
    for (let k = 0; k < 3; k++) expect(g([[2], [5]] as never)).toBe(10);
    expect(g([2, [5]] as never)).toBe(10);
    // a string where a number was: the error tracing gives, not a replay reading it as a number
    expect(() => j([[1, "2"], [3, 4]] as never)).toThrow(/string/);
    expect(() => j([[1, [2]], [3, 4]] as never)).toThrow();
    expect(j([[1, 2], [3, 4]])).toBe(11);
  });
});
