/**
 * jit(f).into(x, out) writes f(x)'s numbers into the caller's Float64Array, depth-first:
 * the same numbers as f(x), to the bit (−0 and NaN told apart by Object.is), by the
 * interpreter's replay, by compiled code, traced again where a decision changes, and for
 * outputs the compiled code does not write (tensors: the replay's numbers copied in, its
 * buffers back to the pool).
 */
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { poolStats } from "@wengert/ops";
import {
  add,
  ArgumentError,
  concat,
  grad,
  hessian,
  jacobian,
  jit,
  mul,
  scan,
  shapeOf,
  sin,
  slice,
  sum,
  valueAndGrad,
  type Operand,
  type Scalar,
  type Tensor,
  type TensorArg,
} from "../../src/index.js";
import { flat, isNd, random, rng } from "../helpers/tensors.js";
import { point, rosenbrock, special } from "../helpers/cases.js";
import { branchy } from "../helpers/programs/generate.js";
import { firstOf } from "../helpers/programs/run.js";

/** y's numbers depth-first (arrays, records, Float64Arrays). */
const numbers = (y: unknown): number[] =>
  typeof y === "number"
    ? [y]
    : y instanceof Float64Array
      ? Array.from(y)
      : Array.isArray(y)
        ? y.flatMap(numbers)
        : isNd(y)
          ? flat(y)
          : Object.values(y as object).flatMap(numbers);

/** Whether a and b hold the same doubles, bit for bit but NaN's payload. */
const same = (a: ArrayLike<number>, b: ArrayLike<number>): boolean => a.length === b.length && Array.from(a).every((v, k) => Object.is(v, b[k]));

const points = fc.array(fc.oneof(point, special), { minLength: 4, maxLength: 8 });

describe("jit(f).into", () => {
  it("property: programs calling grad, valueAndGrad, hessian, jacobian inside write f(x)'s numbers, called alone or between calls of the value", () => {
    const inside: ((f: (p: Scalar[]) => Scalar) => (x: number[]) => unknown)[] = [
      (f) => (x) => grad(f, x),
      (f) => (x) => valueAndGrad(f, x),
      (f) => (x) => hessian(f, x),
      (f) => (x) => jacobian((p: Scalar[]) => [f(p), sin(p[1])], x),
    ];
    let compiled = 0;
    fc.assert(
      fc.property(branchy, points, fc.nat(inside.length - 1), fc.boolean(), (prog, xs, k, mixed) => {
        const g = inside[k](firstOf(prog));
        const j = jit(g as (x: Scalar[]) => unknown, { ties: "ignore" });
        const quiet = vi.spyOn(console, "warn").mockImplementation(() => {});
        try {
          for (const x of [...xs, ...xs, ...xs]) {
            const want = numbers(g(x));
            const out = new Float64Array(want.length).fill(7);
            expect(j.into(x, out)).toBe(out);
            expect(same(out, want)).toBe(true);
            if (mixed) expect(j(x)).toEqual(g(x));
          }
        } finally {
          quiet.mockRestore();
        }
        compiled += j.stats.compiled;
      }),
      { numRuns: 60 },
    );
    expect(compiled).toBeGreaterThan(0);
  });

  it("a dense Hessian row-major, its structural zeros written on every call (the buffer's old numbers overwritten), where they are −0 or NaN too", () => {
    const n = 30;
    const h = jit((p: Scalar[]) => hessian(rosenbrock, p));
    const out = new Float64Array(n * n);
    const at = (k: number): number[] => Array.from({ length: n }, (_, i) => 0.5 * Math.cos(i + k));
    for (let k = 0; k < 6; k++) {
      out.fill(k - 3);
      h.into(at(k), out);
      expect(same(out, numbers(hessian(rosenbrock, at(k))))).toBe(true);
    }
    expect(h.stats.compiled).toBeGreaterThan(0);
    // an infinite input: the sweep along the zeros meets 0 · ∞, and the ground of some rows is NaN
    const wild = at(0);
    wild[3] = Infinity;
    wild[7] = -Infinity;
    const want = numbers(hessian(rosenbrock, wild, { ties: "ignore" }));
    expect(want.some(Number.isNaN)).toBe(true);
    const jw = jit((p: Scalar[]) => hessian(rosenbrock, p, { ties: "ignore" }));
    for (let k = 0; k < 4; k++) expect(same(jw.into(wild, out), want)).toBe(true);
    expect(jw.stats.compiled).toBeGreaterThan(0);
  });

  it("tensors and records: their numbers depth-first, a tensor's in its order", () => {
    const f = (x: Tensor): { a: Tensor; b: Scalar[] } => ({ a: mul(x, 2), b: [sum(x), 3] });
    const j = jit(f);
    const out = new Float64Array(6);
    for (let k = 0; k < 4; k++) {
      const x = Float64Array.of(1, -2, k, 0.5);
      expect(Array.from(j.into(x, out))).toEqual([2, -4, 2 * k, 1, k - 0.5, 3]);
    }
  });

  it("property: traces of tensors (scans of Runge–Kutta-like steps, their gradients, an input and a literal among the outputs) write the numbers", () => {
    const step = (x: TensorArg, n: number) => (y: Operand): [Operand] => {
      const z = concat([slice(x, [0], [1]), mul(slice(x, [1], [n]), slice(y as TensorArg, [0], [n - 1])) as TensorArg], 0);
      return [add(y, mul(0.25, add(z, mul(0.5, mul(z, z)))))];
    };
    const solve = (x: TensorArg, s: number): TensorArg => {
      const n = shapeOf(x)[0];
      return scan(step(x, n), new Float64Array(n) as Operand, s)[0] as TensorArg;
    };
    const programs: ((s: number) => (x: TensorArg) => unknown)[] = [
      (s) => (x) => solve(x, s),
      (s) => (x) => grad((w: TensorArg): Scalar => sum(solve(w, s)) as Scalar, x),
      (s) => (x) => ({ y: solve(x, s), x, c: Float64Array.of(1, -0), t: sum(x) }),
    ];
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 40 }), fc.integer({ min: 1, max: 5 }), fc.nat(programs.length - 1), fc.integer(), (n, s, k, seed) => {
        const f = programs[k](s);
        const j = jit(f);
        const r = rng(seed);
        const xs = Array.from({ length: 7 }, () => random(r, n));
        const wants = xs.map((x) => numbers(f(x)));
        const out = new Float64Array(wants[0].length);
        // the first calls beside j(x), whose buffers are the caller's (the pool makes more); then into alone
        for (let call = 0; call < 3; call++) {
          out.fill(7);
          expect(j.into(xs[call], out)).toBe(out);
          expect(same(out, wants[call])).toBe(true);
          expect(same(numbers(j(xs[call])), wants[call])).toBe(true);
        }
        j.into(xs[3], out);
        const before = poolStats.fresh;
        for (let call = 4; call < xs.length; call++) {
          out.fill(7);
          expect(j.into(xs[call], out)).toBe(out);
          expect(same(out, wants[call])).toBe(true);
        }
        expect(poolStats.fresh).toBe(before);
        expect(j.stats.traces).toBe(1);
        expect(() => j.into(random(r, n), new Float64Array(out.length + 1))).toThrow(/out holds \d+ numbers, f\(x\) has \d+/);
      }),
      { numRuns: 40 },
    );
  });

  it("names a buffer of the wrong length or kind, and a call inside a trace", () => {
    const j = jit((p: Scalar[]) => hessian(rosenbrock, p));
    expect(() => j.into([1, 2, 3], new Float64Array(8))).toThrow(ArgumentError);
    expect(() => j.into([1, 2, 3], new Float64Array(8))).toThrow(/out holds 8 numbers, f\(x\) has 9; pass a Float64Array of length 9/);
    // the same after the trace is compiled
    for (let k = 0; k < 4; k++) j.into([1, 2, 3 + k], new Float64Array(9));
    expect(j.stats.compiled).toBeGreaterThan(0);
    expect(() => j.into([1, 2, 3], new Float64Array(10))).toThrow(/out holds 10 numbers, f\(x\) has 9/);
    expect(() => j.into([1, 2, 3], [0, 0, 0] as unknown as Float64Array)).toThrow(/out is an Array; it must be a Float64Array/);
    const inner = jit((p: Scalar[]) => mul(p[0], p[1]));
    expect(() => grad((p: Scalar[]) => inner.into(p, new Float64Array(1))[0], [1, 2])).toThrow(/called inside a trace/);
  });
});
