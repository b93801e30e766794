/**
 * tanh and exp are each one function in every path (ops/tanh.ts, ops/exp.ts, the primitive
 * table's kernels): on numbers, on tensors (the elementwise loop), traced and replayed, in
 * compiled code (jit, compileGrad), over lanes (vmap) and at order 0 of a Taylor series,
 * every value is the kernel's to the bit, and the reverse rule reads that same y
 * (1 − y² for tanh, y for exp).
 */
import { rng, unaryOps } from "@wengert/ops";
import { describe, expect, it } from "vitest";
import { compileGrad, exp, grad, jit, mul, tanh, taylor, valueAndGrad, vjp, vmap, type NdArray, type Scalar, type Tensor } from "../../src/index.js";

const next = rng(2020);
const data = (v: unknown): Float64Array => ((v as NdArray).data ?? v) as Float64Array;

interface Kernel {
  readonly name: "tanh" | "exp";
  readonly f: typeof tanh;
  readonly math: (x: number) => number;
  /** Each range of the kernel and its edges, both signs, then random points. */
  readonly points: readonly number[];
  /** The derivative as the reverse rule makes it from the primal y. */
  readonly slope: (y: number) => number;
}

const KERNELS: readonly Kernel[] = [
  {
    name: "tanh",
    f: tanh,
    math: Math.tanh,
    points: [0, -0, 1e-300, -3e-9, 0.1, -0.2499, 0.25, 0.3, -1, 1.99, 2, -2.5, 5, 19.5, -25, 800, ...Array.from({ length: 48 }, () => 12 * next() - 6)],
    slope: (y) => 1 - y * y,
  },
  {
    name: "exp",
    f: exp as typeof tanh,
    math: Math.exp,
    points: [0, -0, 1e-300, -3e-9, 0.1, -1, 1, 2.5, -20, 700, 705, -705, -708.5, -745, 709.7, ...Array.from({ length: 48 }, () => 40 * next() - 20)],
    slope: (y) => y,
  },
];

describe.each(KERNELS)("$name, the same numbers in every path", ({ name, f, math, points, slope }) => {
  const kernel = unaryOps[name].forward;
  const same = (got: ArrayLike<number>, what: string) => {
    for (let i = 0; i < points.length; i++) expect(Object.is(got[i], kernel(points[i])), `${what} at x = ${points[i]}`).toBe(true);
  };
  it(`is not Math.${name} (the kernel is wengert's own: this file would not tell them apart otherwise)`, () => {
    expect(points.some((x) => kernel(x) !== math(x))).toBe(true);
    expect(kernel).not.toBe(math);
  });
  it("on numbers and on tensors, untraced", () => {
    same(points.map((x) => f(x) as number), `${name}(number)`);
    same(data(f(Float64Array.from(points))), `${name}(tensor)`);
  });
  it("traced: the primal of grad, vjp over a tensor, and the rule's derivative from that y", () => {
    same(points.map((x) => valueAndGrad((s: Scalar) => f(s), x)[0] as number), "valueAndGrad's value");
    same(data(vjp((t: Tensor) => f(t), Float64Array.from(points))[0]), "vjp's value (tensor)");
    for (const x of points) expect(Object.is(grad((s: Scalar) => f(s), x), slope(kernel(x))), `grad at ${x}`).toBe(true);
  });
  it("compiled: jit over reals and over a tensor, and compileGrad, on their second call (replayed, compiled) too", () => {
    const scalarJit = jit((s: Scalar) => mul(f(s), 1));
    const tensorJit = jit((t: Tensor) => f(t));
    const compiled = compileGrad((s: Scalar) => f(s));
    for (let call = 0; call < 2; call++) {
      same(points.map((x) => scalarJit(x) as number), `jit (call ${call + 1})`);
      same(data(tensorJit(Float64Array.from(points))), `jit over a tensor (call ${call + 1})`);
      same(points.map((x) => compiled.valueAndGrad(x)[0] as number), `compileGrad's value (call ${call + 1})`);
    }
    for (const x of points) expect(Object.is(compiled(x), slope(kernel(x))), `compileGrad at ${x}`).toBe(true);
    // (replayed as compiled JavaScript, which calls the kernel as K[code]: not by Math's name)
    expect(scalarJit.stats.compiled).toBeGreaterThan(0);
    expect(compiled.stats.compiled).toBeGreaterThan(0);
  });
  it("over lanes (vmap, and jit of it compiled), and at order 0 of a Taylor series", () => {
    same(data(vmap((s: Scalar) => f(s))(Float64Array.from(points))), "vmap");
    // jit of vmap: the lanes' compiled code, from its third call
    const lanes = jit(vmap((s: Scalar) => mul(f(s), 1)));
    for (let call = 0; call < 4; call++) same(data(lanes(Float64Array.from(points))), `jit(vmap) (call ${call + 1})`);
    expect(lanes.stats.compiled).toBeGreaterThan(0);
    same(points.map((x) => (taylor((s: Scalar) => f(s), x, 1, 3) as number[])[0]), "taylor, order 0");
  });
});
