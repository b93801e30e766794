/**
 * The fast paths of small tensor operations give the reference path's numbers, bit for
 * bit: elementwise operations below the SIMD size (one run per operation, zip's fast
 * path), untraced and traced, on buffers cut from slabs (ops/tensor/pool.ts); equal
 * dims shared by broadcastDims; ndarrays made with ndarray's cached view classes.
 */
import ndarray from "ndarray";
import { describe, expect, it } from "vitest";
import { add, cos, div, exp, mul, sigmoid, sin, sqrt, sub, tanh, vjp, type NdArray, type Tensor } from "../../src/index.js";
import { broadcastDims, unaryOps } from "@wengert/ops";
import { denseNdarray } from "../../src/trace/host-tensor.js";
import { rng } from "../helpers/tensors.js";

const bits = (x: ArrayLike<number>): string[] => Array.from(x, (v) => (Object.is(v, -0) ? "-0" : String(v)));
const data = (v: unknown): Float64Array => ((v as NdArray).data ?? v) as Float64Array;

/** [dims a, dims b]: equal, a number, a row, a column, a leading 1, both ways. */
const CASES: [number[], number[] | "number"][] = [
  [[1], [1]],
  [[14], [14]],
  [[1, 14], [1, 14]],
  [[14], "number"],
  [[3, 14], [14]],
  [[14], [3, 14]],
  [[3, 14], [3, 1]],
  [[1, 14], [3, 14]],
  [[100], [1]],
  [[1], [100]],
  [[200], [200]],
  [[0], [0]],
];
const OPS = [
  ["add", add, (a: number, b: number) => a + b],
  ["sub", sub, (a: number, b: number) => a - b],
  ["mul", mul, (a: number, b: number) => a * b],
  ["div", div, (a: number, b: number) => a / b],
] as const;

/** The reference: every element of the result from its multi-index, each argument read where it broadcasts. */
function broadcastLoop(a: Float64Array, da: number[], b: Float64Array, db: number[], out: number[], f: (a: number, b: number) => number): Float64Array {
  const n = out.reduce((p, k) => p * k, 1);
  const read = (x: Float64Array, d: number[], idx: number[]): number => {
    let at = 0;
    for (let i = 0; i < d.length; i++) at = at * d[i] + (d[i] === 1 ? 0 : idx[idx.length - d.length + i]);
    return x[at];
  };
  const r = new Float64Array(n);
  for (let k = 0; k < n; k++) {
    const idx = out.map((_, i) => Math.floor(k / out.slice(i + 1).reduce((p, m) => p * m, 1)) % out[i]);
    r[k] = f(read(a, da, idx), read(b, db, idx));
  }
  return r;
}

describe("small elementwise operations", () => {
  const r = rng(7);
  for (const [da, db] of CASES) {
    for (const [name, op, plain] of OPS) {
      it(`${name} ${JSON.stringify(da)} with ${JSON.stringify(db)}: untraced, traced and a plain loop agree bit for bit`, () => {
        const A = ndarray(Float64Array.from({ length: da.reduce((p, n) => p * n, 1) }, () => r() - 0.5), da);
        const B = db === "number" ? r() - 0.5 : ndarray(Float64Array.from({ length: db.reduce((p, n) => p * n, 1) }, () => r() - 0.5), db);
        const dimsB = db === "number" ? [] : db;
        const out = broadcastDims(da, dimsB) as number[];
        const want = broadcastLoop(A.data as Float64Array, da, typeof B === "number" ? Float64Array.of(B) : (B.data as Float64Array), dimsB, out, plain);
        const untraced = op(A, B as never) as NdArray;
        expect(untraced.shape).toEqual(out);
        expect(bits(data(untraced))).toEqual(bits(want));
        const [traced] = vjp((x: Tensor) => op(x, B as never), A);
        expect(bits(data(traced))).toEqual(bits(want));
      });
    }
  }
  for (const [name, op] of [["sin", sin], ["cos", cos], ["sqrt", sqrt], ["sigmoid", sigmoid], ["tanh", tanh], ["exp", exp]] as const) {
    it(`${name} on tensors of 1, 14 and 300 elements: untraced and traced, each element the scalar function's`, () => {
      for (const n of [1, 14, 300]) {
        const x = Float64Array.from({ length: n }, (_, i) => (name === "sqrt" ? 3 * r() : 8 * r() - 4) * (i === 0 ? 0 : 1));
        const want = Array.from(x, (v) => op(v) as number);
        expect(bits(data(op(x)))).toEqual(bits(want));
        expect(bits(data(vjp((t: Tensor) => op(t), x)[0]))).toEqual(bits(want));
      }
    });
  }
  it("a chain of small operations (as lstm's) gives the same numbers untraced and traced", () => {
    const x = Float64Array.from({ length: 14 }, () => r());
    const w = Float64Array.from({ length: 14 }, () => r());
    const chain = (v: Tensor | Float64Array) => {
      let h: Tensor | NdArray | Float64Array = v;
      for (let k = 0; k < 50; k++) h = tanh(add(mul(h, w), x)) as Tensor;
      return h;
    };
    // the primitive's own kernel (ops/tanh.ts), one element at a time
    const reference = Float64Array.from(x);
    for (let k = 0; k < 50; k++) for (let i = 0; i < 14; i++) reference[i] = unaryOps.tanh.forward(reference[i] * w[i] + x[i]);
    expect(bits(data(chain(x)))).toEqual(bits(reference));
    expect(bits(data(vjp(chain, x)[0]))).toEqual(bits(reference));
  });
});

describe("ndarrays handed back", () => {
  it("denseNdarray makes what ndarray(data, dims) makes, for every rank", () => {
    for (const dims of [[5], [2, 3], [1, 4], [0, 3], [2, 3, 4], []]) {
      const d = new Float64Array(dims.reduce((p, n) => p * n, 1));
      const got = denseNdarray(d, dims);
      const want = ndarray(d, [...dims]);
      expect(got.constructor).toBe(want.constructor);
      expect([got.shape, got.stride, got.offset, got.dtype, got.size, got.data]).toEqual([want.shape, want.stride, want.offset, want.dtype, want.size, want.data]);
    }
  });
  it("broadcastDims of equal dims is those dims", () => {
    const d = [3, 14];
    expect(broadcastDims(d, [3, 14])).toEqual(d);
    expect(broadcastDims([3, 1], [3, 14])).toEqual([3, 14]);
    expect(broadcastDims([14], [3, 14])).toEqual([3, 14]);
  });
});
