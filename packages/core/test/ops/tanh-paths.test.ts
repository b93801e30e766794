/**
 * tanh is one function in every path (ops/tanh.ts, the primitive table's kernel): on
 * numbers, on tensors (the elementwise loop), traced and replayed, in compiled code (jit,
 * compileGrad), over lanes (vmap) and at order 0 of a Taylor series, every value is the
 * kernel's to the bit, and the reverse rule's 1 − y² reads that same y.
 */
import { rng, unaryOps } from "@wengert/ops";
import { describe, expect, it } from "vitest";
import { compileGrad, grad, jit, mul, tanh, taylor, valueAndGrad, vjp, vmap, type NdArray, type Scalar, type Tensor } from "../../src/index.js";

const kernel = unaryOps.tanh.forward;
const next = rng(2020);
/** Each range of the kernel and its edges, both signs, then random points up to ±6. */
const POINTS = [
  0, -0, 1e-300, -3e-9, 0.1, -0.2499, 0.25, 0.3, -1, 1.99, 2, -2.5, 5, 19.5, -25, 800,
  ...Array.from({ length: 48 }, () => 12 * next() - 6),
];
const data = (v: unknown): Float64Array => ((v as NdArray).data ?? v) as Float64Array;
const same = (got: ArrayLike<number>, what: string) => {
  for (let i = 0; i < POINTS.length; i++) expect(Object.is(got[i], kernel(POINTS[i])), `${what} at x = ${POINTS[i]}`).toBe(true);
};

describe("tanh, the same numbers in every path", () => {
  it("is not Math.tanh (the kernel is wengert's own: this file would not tell them apart otherwise)", () => {
    expect(POINTS.some((x) => kernel(x) !== Math.tanh(x)) || kernel(0.7) !== Math.tanh(0.7)).toBe(true);
    expect(kernel).not.toBe(Math.tanh);
  });
  it("on numbers and on tensors, untraced", () => {
    same(POINTS.map((x) => tanh(x) as number), "tanh(number)");
    same(data(tanh(Float64Array.from(POINTS))), "tanh(tensor)");
  });
  it("traced: the primal of grad, vjp over a tensor, and the rule's 1 − y² from that y", () => {
    same(POINTS.map((x) => valueAndGrad((s: Scalar) => tanh(s), x)[0] as number), "valueAndGrad's value");
    same(data(vjp((t: Tensor) => tanh(t), Float64Array.from(POINTS))[0]), "vjp's value (tensor)");
    for (const x of POINTS) {
      const y = kernel(x);
      expect(Object.is(grad((s: Scalar) => tanh(s), x), 1 - y * y), `grad at ${x}`).toBe(true);
    }
  });
  it("compiled: jit over reals and over a tensor, and compileGrad, on their second call (replayed, compiled) too", () => {
    const scalarJit = jit((s: Scalar) => mul(tanh(s), 1));
    const tensorJit = jit((t: Tensor) => tanh(t));
    const compiled = compileGrad((s: Scalar) => tanh(s));
    for (let call = 0; call < 2; call++) {
      same(POINTS.map((x) => scalarJit(x) as number), `jit (call ${call + 1})`);
      same(data(tensorJit(Float64Array.from(POINTS))), `jit over a tensor (call ${call + 1})`);
      same(POINTS.map((x) => compiled.valueAndGrad(x)[0] as number), `compileGrad's value (call ${call + 1})`);
    }
    for (const x of POINTS) expect(Object.is(compiled(x), 1 - kernel(x) * kernel(x)), `compileGrad at ${x}`).toBe(true);
    // (replayed as compiled JavaScript, which calls the kernel as K[code]: not by Math's name)
    expect(scalarJit.stats.compiled).toBeGreaterThan(0);
    expect(compiled.stats.compiled).toBeGreaterThan(0);
  });
  it("over lanes (vmap, and jit of it compiled), and at order 0 of a Taylor series", () => {
    same(data(vmap((s: Scalar) => tanh(s))(Float64Array.from(POINTS))), "vmap");
    // jit of vmap: the lanes' compiled code, from its third call
    const lanes = jit(vmap((s: Scalar) => mul(tanh(s), 1)));
    for (let call = 0; call < 4; call++) same(data(lanes(Float64Array.from(POINTS))), `jit(vmap) (call ${call + 1})`);
    expect(lanes.stats.compiled).toBeGreaterThan(0);
    same(POINTS.map((x) => (taylor((s: Scalar) => tanh(s), x, 1, 3) as number[])[0]), "taylor, order 0");
  });
});
