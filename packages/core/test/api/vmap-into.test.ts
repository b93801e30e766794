/**
 * `jit(vmap(f)).into(x, out)`: the lanes' outputs written into the caller's array,
 * depth-first (each batched output's lanes, a lane's tensor whole, one after another; an
 * output marked null once), the same numbers as `jit(vmap(f))(x)` to the bit, whether the
 * lanes run by columns, traced or compiled, and from indexed batches; a wrong length, a
 * call inside a trace and a null output that varies are named.
 */
import { describe, expect, it } from "vitest";
import ndarray from "ndarray";
import { ArgumentError, add, cos, grad, gt, indexed, jit, mul, sin, stack, sub, vmap, type Scalar } from "../../src/index.js";

/** Two reals and a constant per lane, with a branch: lanes take either side (a trace of reals: compiled lanes). */
const f = ([a, b]: [Scalar, Scalar]) => {
  const u = gt(a, 0) ? mul(sin(a), b) : sub(cos(b), a);
  return [u, add(a, b), 2.5];
};
/** The same with a vector of two per lane (a trace of tensors: lanes by columns). */
const withTensor = ([a, b]: [Scalar, Scalar]) => [...f([a, b]).slice(0, 2), stack([mul(a, a), sub(b, 1)]), 2.5];

/** g(x)'s numbers, depth-first, as into writes them. */
function flat(y: unknown[]): number[] {
  const out: number[] = [];
  for (const v of y) {
    if (typeof v === "number") out.push(v);
    else if (v instanceof Float64Array) out.push(...v);
    else out.push(...(v as { data: Float64Array }).data);
  }
  return out;
}

function sameBits(got: Float64Array, want: readonly number[]): void {
  expect(got.length).toBe(want.length);
  want.forEach((y, k) => {
    if (!Object.is(got[k], y)) expect.fail(`number ${k}: ${got[k]} (into) vs ${y} (the call)`);
  });
}

const batch = (B: number): [Float64Array, Float64Array] => [
  Float64Array.from({ length: B }, (_, l) => Math.sin(0.37 * l) * 2),
  Float64Array.from({ length: B }, (_, l) => 0.01 * l - 0.5),
];

describe("jit(vmap(f)).into", () => {
  for (const B of [40, 9000]) {
    it(`writes the outputs of ${B} lanes into out, depth-first, as the call returns them, at every call (compiled lanes)`, () => {
      const x = batch(B);
      const want = flat(vmap(f, { outAxes: [0, 0, null] })(x) as unknown[]);
      expect(want.length).toBe(2 * B + 1);
      const g = jit(vmap(f, { outAxes: [0, 0, null] }));
      const out = new Float64Array(want.length).fill(NaN);
      for (let call = 0; call < 4; call++) {
        expect(g.into(x, out)).toBe(out);
        sameBits(out, want);
        out.fill(NaN);
      }
      sameBits(Float64Array.from(flat(g(x) as unknown[])), want);
      expect(g.stats.compiled).toBeGreaterThan(0);
    });
  }

  it("a lane's tensor whole, its lanes by columns", () => {
    const x = batch(50);
    const want = flat(vmap(withTensor, { outAxes: [0, 0, 0, null] })(x) as unknown[]);
    expect(want.length).toBe(4 * 50 + 1);
    const g = jit(vmap(withTensor, { outAxes: [0, 0, 0, null] }));
    const out = new Float64Array(want.length);
    for (let call = 0; call < 3; call++) sameBits(g.into(x, out), want);
  });

  it("from indexed batches, its outputs compiled into out", () => {
    const values = Float64Array.from({ length: 60 }, (_, i) => Math.cos(1.3 * i));
    const index = Int32Array.from({ length: 5000 }, (_, l) => (l * 7) % 30);
    const h = jit(vmap(([a, b]: [Scalar, Scalar]) => [mul(a, b), sub(a, b)]));
    const x: [unknown, unknown] = [indexed(values, index, { stride: 2, offset: 0 }), indexed(values, index, { stride: 2, offset: 1 })];
    const want = flat(h(x as never) as unknown[]);
    const out = new Float64Array(2 * 5000);
    for (let call = 0; call < 3; call++) sameBits(h.into(x as never, out), want);
  });

  it("names a wrong length, a call inside a trace, and a null output that varies", () => {
    const g = jit(vmap(f, { outAxes: [0, 0, null] }));
    const x = batch(10);
    expect(() => g.into(x, new Float64Array(20))).toThrow(/out holds 20 numbers, the outputs of 10 lanes have 21; pass a Float64Array of length 21/);
    expect(() => g.into(x, [] as never)).toThrow(ArgumentError);
    expect(() => grad((w: Scalar) => (g.into([ndarray(new Float64Array(2)), new Float64Array(2)] as never, new Float64Array(9)), w), 1)).toThrow(/inside a trace/);
    const varying = jit(vmap(([a, b]: [Scalar, Scalar]) => [a, b], { outAxes: [0, null] }));
    expect(() => varying.into(x, new Float64Array(11))).toThrow(/varies along the batch/);
  });
});
