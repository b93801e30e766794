/**
 * Values of tensor programs:
 * - untraced tensor ops compute at once (ndarrays, numbers for scalar results) and agree
 *   with plain-JS references (batched matmul, conv2d, reductions, gather/scatterAdd, …);
 *   traced values (t.value, f(x) from valueAndGrad/jvp/vjp) agree with untraced ones;
 * - strided ndarray views (transposed, sliced, stepped, picked, negative strides, offsets,
 *   other dtypes) are read correctly, and their cotangents come back with the view's shape;
 * - records mixing numbers, Float64Arrays and ndarrays in and out; tensor-valued f with rd
 *   and ndarray / Float64Array seeds; SeedMismatchError;
 * - trace terms (traceOf, derivativeOf) print and re-evaluate; Jacobians' layout.
 */
import ndarray from "ndarray";
import { describe, expect, it } from "vitest";
import {
  add, broadcastTo, concat, conv2d, derivativeOf, dot, eq, exp, fd, gather, ge, grad, gt, hvp, index, jacfwd, jacobian, jacrev,
  jvp, le, logSoftmax, logsumexp, lt, matmul, max, mean, min, mul, ne, neg, outer, rd, reshape, scatterAdd, SeedMismatchError,
  shapeOf, sin, slice, softmax, sqrt, square, stack, sub, sum, tanh, Tensor, traceOf, TracedOperatorError, transpose, unstack,
  valueAndGrad, vjp, where, type NdArray, type Scalar,
} from "../src/index.js";
import { rng, sizeOf, isNd, flat, nd, closeWithin } from "./helpers/tensors.js";

const randArr = (n: number, r: () => number) => Array.from({ length: n }, () => 2 * r() - 1);
const expectClose = closeWithin(1e-12, 1e-12);
/** Row-major strides. */
const stridesOf = (d: readonly number[]) => d.map((_, i) => sizeOf(d.slice(i + 1)));
/** Multi-index of a flat row-major position. */
const unravel = (k: number, d: readonly number[]) => d.map((n, i) => Math.floor(k / sizeOf(d.slice(i + 1))) % n);
/** Flat position of a multi-index read from a tensor of dims `d` that broadcasts into `out` (aligned at the right). */
function broadcastRead(idx: readonly number[], d: readonly number[]): number {
  const off = idx.length - d.length;
  const s = stridesOf(d);
  return d.reduce((acc, n, i) => acc + (n === 1 ? 0 : idx[i + off]) * s[i], 0);
}
function broadcastDims(a: readonly number[], b: readonly number[]): number[] {
  const n = Math.max(a.length, b.length);
  return Array.from({ length: n }, (_, i) => {
    const x = a[i - (n - a.length)] ?? 1;
    const y = b[i - (n - b.length)] ?? 1;
    return x === 1 ? y : x;
  });
}

// ---------------------------------------------------------------- references

function matmulRef(a: number[], ad: number[], b: number[], bd: number[]): { data: number[]; dims: number[] } {
  const [m, k] = ad.slice(-2);
  const n = bd[bd.length - 1];
  const batch = broadcastDims(ad.slice(0, -2), bd.slice(0, -2));
  const out: number[] = [];
  for (let bi = 0; bi < sizeOf(batch); bi++) {
    const bidx = unravel(bi, batch);
    const aoff = broadcastRead(bidx, ad.slice(0, -2)) * m * k;
    const boff = broadcastRead(bidx, bd.slice(0, -2)) * k * n;
    for (let i = 0; i < m; i++) for (let j = 0; j < n; j++) {
      let s = 0;
      for (let t = 0; t < k; t++) s += a[aoff + i * k + t] * b[boff + t * n + j];
      out.push(s);
    }
  }
  return { data: out, dims: [...batch, m, n] };
}

function conv2dRef(x: number[], xd: number[], w: number[], wd: number[], [sh, sw]: number[], [ph, pw]: number[]): { data: number[]; dims: number[] } {
  const [N, Ci, Hh, Ww] = xd;
  const [O, , KH, KW] = wd;
  const OH = Math.floor((Hh + 2 * ph - KH) / sh) + 1;
  const OW = Math.floor((Ww + 2 * pw - KW) / sw) + 1;
  const out: number[] = [];
  for (let n = 0; n < N; n++) for (let o = 0; o < O; o++) for (let i = 0; i < OH; i++) for (let j = 0; j < OW; j++) {
    let s = 0;
    for (let c = 0; c < Ci; c++) for (let u = 0; u < KH; u++) for (let v = 0; v < KW; v++) {
      const r = i * sh + u - ph;
      const q = j * sw + v - pw;
      if (r < 0 || r >= Hh || q < 0 || q >= Ww) continue;
      s += x[((n * Ci + c) * Hh + r) * Ww + q] * w[((o * Ci + c) * KH + u) * KW + v];
    }
    out.push(s);
  }
  return { data: out, dims: [N, O, OH, OW] };
}

/** Reduce `data` of dims `d` over `axes` with `op`, keeping dims as 1 if asked. */
function reduceRef(data: number[], d: number[], axes: number[], keepdims: boolean, op: (xs: number[]) => number): { data: number[]; dims: number[] } {
  const outDims = d.map((n, i) => (axes.includes(i) ? 1 : n));
  const groups = new Map<number, number[]>();
  data.forEach((v, k) => {
    const idx = unravel(k, d).map((j, i) => (axes.includes(i) ? 0 : j));
    const key = idx.reduce((acc, j, i) => acc * outDims[i] + j, 0);
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key)!.push(v);
  });
  const out = [...groups.keys()].sort((a, b) => a - b).map((k) => op(groups.get(k)!));
  return { data: out, dims: keepdims ? outDims : d.filter((_, i) => !axes.includes(i)) };
}
const lse = (xs: number[]) => {
  const m = Math.max(...xs);
  return m + Math.log(xs.reduce((s, x) => s + Math.exp(x - m), 0));
};

// ---------------------------------------------------------------- untraced values

describe("untraced tensor ops compute at once, like plain-JS references", () => {
  const r = rng(1);

  it("elementwise ops on ndarrays and Float64Arrays give ndarrays; broadcasting as NumPy", () => {
    const a = nd(randArr(6, r), [2, 1, 3]);
    const b = nd(randArr(12, r), [4, 3]);
    const y = add(a, b) as NdArray;
    expect(isNd(y)).toBe(true);
    expect(y.shape).toEqual([2, 4, 3]);
    const want = Array.from({ length: 24 }, (_, k) => {
      const idx = unravel(k, [2, 4, 3]);
      return flat(a)[broadcastRead(idx, [2, 1, 3])] + flat(b)[broadcastRead(idx, [4, 3])];
    });
    expectClose(flat(y), want);
    const e = exp(Float64Array.from([0, 1, 2]));
    expect(isNd(e)).toBe(true);
    expectClose(flat(e), [1, Math.E, Math.exp(2)]);
    expectClose(flat(mul(2, Float64Array.from([1, 2]))), [2, 4]);
    expectClose(flat(sub(nd([1, 2, 3, 4], [2, 2]), nd([10, 20], [2, 1]))), [-9, -8, -17, -16]);
    expect(exp(0)).toBe(1);
  });

  it("matmul (2-D, batched with broadcasting, vectors), dot and outer", () => {
    const cases: [number[], number[]][] = [
      [[3, 4], [4, 2]],
      [[2, 3, 4], [4, 5]],
      [[2, 1, 3, 4], [3, 4, 2]],
      [[1, 2, 3], [4, 3, 2]],
      [[3, 2], [1, 2, 3]],
    ];
    for (const [ad, bd] of cases) {
      const a = randArr(sizeOf(ad), r);
      const b = randArr(sizeOf(bd), r);
      const y = matmul(nd(a, ad), nd(b, bd)) as NdArray;
      const ref = matmulRef(a, ad, b, bd);
      expect(y.shape, `${ad} @ ${bd}`).toEqual(ref.dims);
      expectClose(flat(y), ref.data, 1e-12, 1e-12, `${ad} @ ${bd}`);
    }
    const M = nd([1, 2, 3, 4, 5, 6], [2, 3]);
    const v = Float64Array.from([1, -1, 2]);
    expect((matmul(M, v) as NdArray).shape).toEqual([2]);
    expectClose(flat(matmul(M, v)), [1 - 2 + 6, 4 - 5 + 12]);
    expectClose(flat(matmul(Float64Array.from([1, 2]), M)), [9, 12, 15]);
    expect(dot(v, v)).toBe(6);
    expectClose(flat(dot(M, v)), [5, 11]);
    const o = outer(Float64Array.from([1, 2]), Float64Array.from([3, 4, 5])) as NdArray;
    expect(o.shape).toEqual([2, 3]);
    expectClose(flat(o), [3, 4, 5, 6, 8, 10]);
  });

  it("conv2d with strides and padding", () => {
    const cases: [number[], number[], number[], number[]][] = [
      [[2, 3, 5, 5], [4, 3, 3, 3], [2, 2], [1, 1]],
      [[1, 2, 4, 5], [3, 2, 2, 3], [1, 2], [0, 1]],
      [[1, 1, 7, 7], [2, 1, 3, 3], [3, 3], [1, 1]],
      [[1, 1, 3, 3], [1, 1, 3, 3], [1, 1], [0, 0]],
    ];
    for (const [xd, wd, stride, padding] of cases) {
      const x = randArr(sizeOf(xd), r);
      const w = randArr(sizeOf(wd), r);
      const y = conv2d(nd(x, xd), nd(w, wd), { stride: [stride[0], stride[1]], padding: [padding[0], padding[1]] }) as NdArray;
      const ref = conv2dRef(x, xd, w, wd, stride, padding);
      expect(y.shape).toEqual(ref.dims);
      expectClose(flat(y), ref.data, 1e-12, 1e-12, `conv ${xd} ${wd}`);
    }
    // a single number for stride and padding means both axes
    const x = randArr(2 * 5 * 5, r);
    const w = randArr(2 * 2 * 3 * 3, r);
    expectClose(flat(conv2d(nd(x, [1, 2, 5, 5]), nd(w, [2, 2, 3, 3]), { stride: 2, padding: 1 })), conv2dRef(x, [1, 2, 5, 5], w, [2, 2, 3, 3], [2, 2], [1, 1]).data);
  });

  it("reductions over axes, with and without keepdims; a real when all axes go", () => {
    const d = [2, 3, 4];
    const data = randArr(24, r);
    const t = nd(data, d);
    const ops: [string, typeof sum, (xs: number[]) => number][] = [
      ["sum", sum, (xs) => xs.reduce((a, b) => a + b, 0)],
      ["mean", mean, (xs) => xs.reduce((a, b) => a + b, 0) / xs.length],
      ["max", max, (xs) => Math.max(...xs)],
      ["min", min, (xs) => Math.min(...xs)],
      ["logsumexp", logsumexp, lse],
    ];
    for (const [name, f, ref] of ops) {
      const all = f(t);
      expect(typeof all, name).toBe("number");
      expect(all as number).toBeCloseTo(ref(data), 12);
      for (const axes of [[0], [1], [2], [0, 2], [1, 2]]) {
        for (const keepdims of [false, true]) {
          const y = f(t, axes.length === 1 ? axes[0] : axes, keepdims) as NdArray;
          const want = reduceRef(data, d, axes, keepdims, ref);
          expect(y.shape, `${name} ${axes} ${keepdims}`).toEqual(want.dims);
          expectClose(flat(y), want.data, 1e-12, 1e-12, `${name} ${axes} ${keepdims}`);
        }
      }
      // negative axes count from the end
      expectClose(flat(f(t, -1)), flat(f(t, 2)));
      expectClose(flat(f(t, [-3, -1])), flat(f(t, [0, 2])));
    }
  });

  it("logsumexp and softmax are stable at large magnitudes", () => {
    expect(logsumexp(Float64Array.from([1000, 1000]))).toBeCloseTo(1000 + Math.log(2), 10);
    expect(logsumexp(Float64Array.from([-1000, -1000]))).toBeCloseTo(-1000 + Math.log(2), 10);
    const s = softmax(nd([1000, 999, -1000, 0, 800, 800], [2, 3])) as NdArray;
    expect(flat(s).every(Number.isFinite)).toBe(true);
    expectClose(flat(s), [1 / (1 + Math.exp(-1)), Math.exp(-1) / (1 + Math.exp(-1)), 0, 0, 0.5, 0.5], 1e-12, 1e-300);
    const ls = logSoftmax(nd([1000, 0], [2])) as NdArray;
    expectClose(flat(ls), [0, -1000], 1e-12, 1e-12);
  });

  it("softmax / logSoftmax along each axis sum to 1 / are log-probabilities", () => {
    const data = randArr(24, r).map((x) => 3 * x);
    const t = nd(data, [2, 3, 4]);
    for (const axis of [0, 1, 2, -1]) {
      const ax = axis < 0 ? 3 + axis : axis;
      const s = softmax(t, axis) as NdArray;
      expect(s.shape).toEqual([2, 3, 4]);
      const sums = reduceRef(flat(s), [2, 3, 4], [ax], false, (xs) => xs.reduce((a, b) => a + b, 0));
      expectClose(sums.data, sums.data.map(() => 1));
      const ref = flat(t).map((v, k) => {
        const group = reduceRef(data, [2, 3, 4], [ax], true, lse);
        const idx = unravel(k, [2, 3, 4]).map((j, i) => (i === ax ? 0 : j));
        return v - group.data[idx.reduce((acc, j, i) => acc * group.dims[i] + j, 0)];
      });
      expectClose(flat(logSoftmax(t, axis)), ref, 1e-12, 1e-12);
      expectClose(flat(s), ref.map(Math.exp), 1e-12, 1e-12);
    }
  });

  it("reshape (with -1), transpose, broadcastTo, slice, index", () => {
    const data = Array.from({ length: 24 }, (_, i) => i);
    const t = nd(data, [2, 3, 4]);
    expect((reshape(t, [4, -1]) as NdArray).shape).toEqual([4, 6]);
    expect((reshape(t, [-1]) as NdArray).shape).toEqual([24]);
    expectClose(flat(reshape(t, [6, 4])), data);
    const tt = transpose(t, [2, 0, 1]) as NdArray;
    expect(tt.shape).toEqual([4, 2, 3]);
    expectClose(flat(tt), Array.from({ length: 24 }, (_, k) => {
      const [i, j, l] = unravel(k, [4, 2, 3]);
      return t.get(j, l, i);
    }));
    expect((transpose(t) as NdArray).shape).toEqual([4, 3, 2]);
    expect((transpose(t) as NdArray).get(3, 2, 1)).toBe(t.get(1, 2, 3));
    const b = broadcastTo(nd([1, 2, 3], [3, 1]), [2, 3, 4]) as NdArray;
    expect(b.shape).toEqual([2, 3, 4]);
    expect(b.get(1, 2, 3)).toBe(3);
    expect((broadcastTo(5, [2, 2]) as NdArray).shape).toEqual([2, 2]);
    const s = slice(t, [1, 1, 0], [2, 3, 2]) as NdArray;
    expect(s.shape).toEqual([1, 2, 2]);
    expectClose(flat(s), [t.get(1, 1, 0), t.get(1, 1, 1), t.get(1, 2, 0), t.get(1, 2, 1)]);
    expect((slice(t, [0, 1, 1], [2, 1, 3]) as NdArray).shape).toEqual([2, 0, 2]);
    expect(index(t, [1, 2, 3])).toBe(23);
    expect(index(Float64Array.from([5, 6, 7]), 2)).toBe(7);
  });

  it("gather and scatterAdd (repeated indices add up), concat, stack, unstack", () => {
    const t = nd([1, 2, 3, 4, 5, 6], [3, 2]);
    const g = gather(t, [2, 0, 2]) as NdArray;
    expect(g.shape).toEqual([3, 2]);
    expectClose(flat(g), [5, 6, 1, 2, 5, 6]);
    expectClose(flat(gather(t, [1, 1, 0], 1)), [2, 2, 1, 4, 4, 3, 6, 6, 5]);
    const sa = scatterAdd(nd(new Array(6).fill(0), [3, 2]), [1, 1, 2], nd([1, 2, 10, 20, 100, 200], [3, 2])) as NdArray;
    expectClose(flat(sa), [0, 0, 11, 22, 100, 200]);
    expectClose(flat(scatterAdd(t, [0, 0], nd([1, 1, 1, 1, 1, 1], [3, 2]), 1)), [3, 2, 5, 4, 7, 6]);
    const c = concat([nd([1, 2], [1, 2]), nd([3, 4, 5, 6], [2, 2])]) as NdArray;
    expect(c.shape).toEqual([3, 2]);
    expectClose(flat(c), [1, 2, 3, 4, 5, 6]);
    const c1 = concat([nd([1, 2], [2, 1]), nd([3, 4, 5, 6], [2, 2])], 1) as NdArray;
    expectClose(flat(c1), [1, 3, 4, 2, 5, 6]);
    const st = stack([nd([1, 2], [2]), nd([3, 4], [2])], 1) as NdArray;
    expect(st.shape).toEqual([2, 2]);
    expectClose(flat(st), [1, 3, 2, 4]);
    expectClose(flat(stack([1, 2, 3])), [1, 2, 3]);
    const rows = unstack(t) as NdArray[];
    expect(rows.length).toBe(3);
    expectClose(flat(rows[2]), [5, 6]);
    const cols = unstack(t, 1) as NdArray[];
    expectClose(flat(cols[1]), [2, 4, 6]);
    expect(unstack(Float64Array.from([7, 8]))).toEqual([7, 8]);
  });

  it("predicates give 0/1 ndarray masks (broadcasting); where selects", () => {
    const a = nd([1, 5, 3, 3], [2, 2]);
    const m = gt(a, 3) as NdArray;
    expect(isNd(m)).toBe(true);
    expectClose(flat(m), [0, 1, 0, 0]);
    expectClose(flat(ge(a, 3)), [0, 1, 1, 1]);
    expectClose(flat(lt(a, nd([2, 4], [1, 2]))), [1, 0, 0, 1]);
    expectClose(flat(le(Float64Array.from([1, 2]), 1)), [1, 0]);
    expectClose(flat(eq(a, 3)), [0, 0, 1, 1]);
    expectClose(flat(ne(a, 3)), [1, 1, 0, 0]);
    expectClose(flat(where(m, a, neg(a))), [-1, 5, -3, -3]);
    expectClose(flat(where([1, 0], 7, nd([1, 2, 3, 4], [2, 2]))), [7, 2, 7, 4]);
    expectClose(flat(where(nd([1, 0], [2, 1]), nd([1, 2], [1, 2]), 0)), [1, 2, 0, 0]);
  });

  it("shapeOf", () => {
    expect(shapeOf(3)).toEqual([]);
    expect(shapeOf(new Float64Array(4))).toEqual([4]);
    expect(shapeOf(nd(new Array(6).fill(0), [1, 2, 3]))).toEqual([1, 2, 3]);
    grad((t) => {
      expect(shapeOf(t)).toEqual([2, 2]);
      return sum(t);
    }, nd([1, 2, 3, 4], [2, 2]));
  });
});

// ---------------------------------------------------------------- traced values

describe("traced tensors", () => {
  it("inside f: a Tensor with shape and a value copy; JS operators throw", () => {
    const x = nd([1, 2, 3, 4, 5, 6], [2, 3]);
    grad((t) => {
      expect(t).toBeInstanceOf(Tensor);
      expect(t.shape).toEqual([2, 3]);
      const v = t.value;
      expect(isNd(v)).toBe(true);
      expect(flat(v)).toEqual([1, 2, 3, 4, 5, 6]);
      v.set(0, 0, 100); // a copy: no effect on the trace
      const y = mul(t, 2);
      expect(flat((y as Tensor).value)).toEqual([2, 4, 6, 8, 10, 12]);
      expect(String(t)).toContain("[2, 3]");
      expect(() => (t as unknown as number) + 1).toThrow(TracedOperatorError);
      return sum(y);
    }, x);
  });

  it("f(x) from valueAndGrad, jvp and vjp equals the untraced value", () => {
    const r = rng(3);
    const W = nd(randArr(12, r), [3, 4]);
    const x = nd(randArr(6, r), [2, 3]);
    const f = (p: { W: NdArray; x: NdArray }) => softmax(tanh(matmul(p.x, p.W)), 0);
    const untraced = f({ W, x }) as NdArray;
    const [y] = jvp(f as never, { W, x }, { W, x });
    expectClose(flat(y), flat(untraced));
    const [v, pullback] = vjp(f as never, { W, x });
    expect(isNd(v)).toBe(true);
    expectClose(flat(v), flat(untraced));
    const seed = nd(randArr(8, r), [2, 4]);
    const g = pullback(seed) as { W: NdArray; x: NdArray };
    const g2 = rd(f as never, { W, x }, seed) as { W: NdArray; x: NdArray };
    expectClose(flat(g.W), flat(g2.W));
    expectClose(flat(g.x), flat(g2.x));
    const [value] = valueAndGrad(((p: { W: NdArray; x: NdArray }) => sum(mul(f(p), seed))) as never, { W, x });
    expect(value).toBeCloseTo(flat(untraced).reduce((s, u, i) => s + u * flat(seed)[i], 0), 12);
  });

  it("the inputs are not modified, and cotangents do not alias them", () => {
    const x = nd([1, 2, 3, 4], [2, 2]);
    const v = Float64Array.from([1, 2]);
    const g = grad(((p: { x: NdArray; v: Float64Array }) => add(sum(p.x), sum(p.v))) as never, { x, v }) as { x: NdArray; v: Float64Array };
    (g.x.data as Float64Array)[0] = 99;
    g.v[0] = 99;
    expect(flat(x)).toEqual([1, 2, 3, 4]);
    expect(Array.from(v)).toEqual([1, 2]);
    expect(grad((t) => sum(t), x) as NdArray).not.toBe(x);
  });
});

// ---------------------------------------------------------------- strided views

describe("strided ndarray views as inputs", () => {
  const base = () => nd(Array.from({ length: 20 }, (_, i) => 0.1 * i - 0.7), [4, 5]);
  const views: [string, () => NdArray][] = [
    ["transpose(1, 0)", () => base().transpose(1, 0)],
    ["lo(1, 1).hi(2, 3) (nonzero offset)", () => base().lo(1, 1).hi(2, 3)],
    ["step(2) (every other row)", () => base().step(2)],
    ["step(1, -1) (negative stride)", () => base().step(1, -1)],
    ["step(-2, 2).transpose(1, 0)", () => base().step(-2, 2).transpose(1, 0)],
    ["pick(2) (a row: 1-D, offset 10)", () => base().pick(2)],
    ["pick(null, 3) (a column: stride 5)", () => base().pick(null, 3)],
    ["hi(3, 4).lo(1, 1).transpose(1, 0).step(-1)", () => base().hi(3, 4).lo(1, 1).transpose(1, 0).step(-1)],
    ["ndarray(data, [3], [2], 1) (explicit stride and offset)", () => ndarray(Float64Array.from([9, 1, 9, 2, 9, 3]), [3], [2], 1)],
  ];

  it.each(views)("%s: values read in the view's order, untraced and traced", (_n, make) => {
    const V = make();
    const want = flat(V);
    expectClose(flat(add(V, 0)), want);
    expect(sum(V) as number).toBeCloseTo(want.reduce((a, b) => a + b, 0), 12);
    let seen: number[] = [];
    grad((t) => {
      seen = flat(t.value);
      expect(t.shape).toEqual([...V.shape]);
      return sum(t);
    }, V);
    expectClose(seen, want);
  });

  it.each(views)("%s: gradient right, with the view's shape, contiguous and fresh", (_n, make) => {
    const V = make();
    const xs = flat(V);
    const C = nd(xs.map((_, i) => 1 + i), [...V.shape]);
    const g = grad((t) => sum(mul(square(t), C)), V) as NdArray;
    expect(isNd(g)).toBe(true);
    expect(g.shape).toEqual([...V.shape]);
    expect(g.offset).toBe(0);
    expect(g.stride).toEqual(stridesOf(V.shape));
    expect(g.data).not.toBe(V.data);
    expectClose(flat(g), xs.map((x, i) => 2 * x * (1 + i)));
    // the data behind the view is untouched
    expectClose(flat(V), xs);
  });

  it("a view used as a constant inside f, and as a seed, tangent and hvp direction", () => {
    const A = base().transpose(1, 0).hi(3, 4); // [3, 4] of a [4, 5] buffer
    const Aplain = flat(A);
    const w = Float64Array.from([1, -1, 0.5, 2]);
    // Σ (A w)²: grad = 2 Aᵀ A w
    const g = grad((t) => sum(square(matmul(A, t))), w) as Float64Array;
    const Aw = [0, 1, 2].map((i) => [0, 1, 2, 3].reduce((s, j) => s + Aplain[i * 4 + j] * w[j], 0));
    expectClose(Array.from(g), [0, 1, 2, 3].map((j) => 2 * [0, 1, 2].reduce((s, i) => s + Aplain[i * 4 + j] * Aw[i], 0)));
    // seed as a view: rd of x ↦ 3x at a [3, 4] point
    const x = nd(new Array(12).fill(1), [3, 4]);
    const seed = base().lo(1, 1); // [3, 4], offset 6
    expectClose(flat(rd((t) => mul(t, 3), x, seed)), flat(seed).map((s) => 3 * s));
    // tangent as a view
    const [, dy] = jvp((t) => mul(t, t), A, A.step(-1));
    expectClose(flat(dy), Aplain.map((a, i) => 2 * a * flat(A.step(-1))[i]));
    // hvp along a view: Hessian of Σ t³ is 6 diag(t)
    const Hv = hvp((t) => sum(mul(t, square(t))), A, A);
    expectClose(flat(Hv), Aplain.map((a) => 6 * a * a));
  });

  it("other dtypes: a Float32Array ndarray and an Array-backed ndarray", () => {
    const f32 = ndarray(new Float32Array([1, 2, 3, 4, 5, 6]), [2, 3]).transpose(1, 0);
    const g = grad((t) => sum(mul(t, t)), f32 as unknown as NdArray) as NdArray;
    expect(g.shape).toEqual([3, 2]);
    expect(g.data).toBeInstanceOf(Float64Array);
    expectClose(flat(g), flat(f32).map((v) => 2 * v));
    const arr = ndarray([1, 2, 3, 4], [2, 2]);
    expectClose(flat(grad((t) => sum(mul(t, t)), arr as unknown as NdArray)), [2, 4, 6, 8]);
  });
});

// ---------------------------------------------------------------- mixed structures and seeds

describe("records mixing numbers, Float64Arrays and ndarrays", () => {
  const x = {
    s: 2,
    v: Float64Array.from([1, 2, 3]),
    M: nd([1, 2, 3, 4], [2, 2]),
    list: [nd([0.5, -1], [2]), 3] as [NdArray, number],
  };
  type X = typeof x;
  // a = s·Σv + Σ M ⊙ M + list[1]·Σ list[0];  t = s·M + list[1];  pair = [v ⊙ v, s·list[1]]
  const f = (p: { s: Scalar; v: Tensor; M: Tensor; list: [Tensor, Scalar] }) => ({
    a: add(add(mul(p.s, sum(p.v)), sum(mul(p.M, p.M))), mul(p.list[1], sum(p.list[0]))),
    t: add(mul(p.s, p.M), p.list[1]),
    pair: [mul(p.v, p.v), mul(p.s, p.list[1])],
  });

  it("rd with a record seed gives a record shaped like x, in x's containers", () => {
    const seed = { a: 1, t: nd([1, 0, 0, 2], [2, 2]), pair: [Float64Array.from([1, 1, -1]), 0.5] };
    const g = rd(f as never, x, seed) as { s: number; v: Float64Array; M: NdArray; list: [NdArray, number] };
    expect(typeof g.s).toBe("number");
    expect(g.v).toBeInstanceOf(Float64Array);
    expect(isNd(g.M) && g.M.shape).toEqual([2, 2]);
    expect(isNd(g.list[0]) && g.list[0].shape).toEqual([2]);
    expect(typeof g.list[1]).toBe("number");
    // by hand
    const tSeed = [1, 0, 0, 2];
    expect(g.s).toBeCloseTo(6 + (1 * 1 + 4 * 2) + 0.5 * 3, 12);
    expectClose(Array.from(g.v), [2 + 2 * 1 * 1, 2 + 2 * 2 * 1, 2 - 2 * 3]);
    expectClose(flat(g.M), [1, 2, 3, 4].map((m, i) => 2 * m + 2 * tSeed[i]));
    expectClose(flat(g.list[0]), [3, 3]);
    expect(g.list[1]).toBeCloseTo(-0.5 + 3 + 0.5 * 2, 12);
  });

  it("valueAndGrad of a real-valued f over the record returns values in the same containers", () => {
    const [value, g] = valueAndGrad((p: Parameters<typeof f>[0]) => f(p).a, x as never) as [number, { s: number; v: Float64Array; M: NdArray; list: [NdArray, number] }];
    expect(value).toBeCloseTo(2 * 6 + 30 + 3 * -0.5, 12);
    expect(g.v).toBeInstanceOf(Float64Array);
    expectClose(Array.from(g.v), [2, 2, 2]);
    expectClose(flat(g.M), [2, 4, 6, 8]);
  });

  it("f returning a tensor: rd with an ndarray seed or a Float64Array seed (1-D), same result", () => {
    const v = Float64Array.from([0.5, 1, 2]);
    const g1 = rd((t) => sin(t), v, nd([1, 2, 3], [3]));
    const g2 = rd((t) => sin(t), v, Float64Array.from([1, 2, 3]));
    expect(g1).toBeInstanceOf(Float64Array);
    expectClose(Array.from(g1 as Float64Array), [1, 2, 3].map((s, i) => s * Math.cos(v[i])));
    expectClose(Array.from(g2 as Float64Array), Array.from(g1 as Float64Array));
    // a 2-D output from a 1-D input: the seed is an ndarray of the output's dims
    const M = nd([1, 2, 3, 4, 5, 6], [2, 3]);
    const g3 = rd((t) => outer(t, Float64Array.from([1, 1, 1])), Float64Array.from([1, 2]), M) as Float64Array;
    expectClose(Array.from(g3), [6, 15]);
  });

  it("SeedMismatchError when the seed's structure or dims differ from f(x)", () => {
    const v = Float64Array.from([0.5, 1, 2]);
    expect(() => rd((t) => sin(t), v, Float64Array.from([1, 2]))).toThrow(SeedMismatchError);
    expect(() => rd((t) => sin(t), v, nd([1, 2, 3], [3, 1]))).toThrow(SeedMismatchError);
    // @ts-expect-error: f(x) is a tensor, and the types see it too
    expect(() => rd((t) => sin(t), v, 1)).toThrow(SeedMismatchError);
    // @ts-expect-error: f(x) is a real
    expect(() => rd((t) => sum(t), v, Float64Array.from([1]))).toThrow(SeedMismatchError);
    expect(() => rd((t) => [sin(t), sum(t)], v, [v])).toThrow(SeedMismatchError);
    // @ts-expect-error: f(x) has no b
    expect(() => rd((t) => ({ a: sin(t) }), v, { b: v })).toThrow(SeedMismatchError);
    expect(() => rd(f as never, x, { a: 1, t: nd([1, 0, 0], [3]), pair: [Float64Array.from([1, 1, -1]), 0.5] })).toThrow(SeedMismatchError);
    expect(() => rd((t) => reshape(t, [3, 1]), v, Float64Array.from([1, 2, 3]))).toThrow(SeedMismatchError);
    // the message names the expected type
    expect(() => rd((t) => sin(t), v, Float64Array.from([1, 2]))).toThrow(/real\[3\]/);
    // tangents and pullback seeds are checked the same way
    expect(() => jvp((t) => sin(t), v, Float64Array.from([1, 2]))).toThrow(SeedMismatchError);
    expect(() => vjp((t) => sin(t), v)[1](nd([1, 2], [2]))).toThrow(SeedMismatchError);
    expect(() => hvp((t) => sum(sin(t)), v, new Float64Array(2))).toThrow(SeedMismatchError);
  });
});

// ---------------------------------------------------------------- trace terms, Jacobians

describe("trace terms and Jacobians of tensor programs", () => {
  const W = nd([0.5, -1, 2, 0.25, 1, -0.5], [3, 2]);
  const f = (x: Tensor) => sum(tanh(matmul(x, W)));

  it("traceOf prints tensor types and the ops; derivativeOf re-evaluates at another point", () => {
    const x = nd([1, 2, 3, 4, 5, 6], [2, 3]);
    const term = traceOf(f, x);
    const text = term.toString();
    expect(text).toContain("real[2, 3]");
    expect(text).toContain("matmul");
    expect(text).toContain("tanh");
    expect(term.primitives).toBeGreaterThanOrEqual(3);
    expect(term.primitives).toBeLessThanOrEqual(term.length);
    const d = derivativeOf(f, x, 1);
    expect(d.primitives).toBeGreaterThan(term.primitives);
    const x2 = nd([0.1, -0.2, 0.3, 0.4, 0.5, -0.6], [2, 3]);
    const gAt2 = d.evaluate(x2, 2) as NdArray;
    expect(gAt2.shape).toEqual([2, 3]);
    expectClose(flat(gAt2), flat(grad(f, x2)).map((g) => 2 * g));
    expect(term.evaluate(x2) as number).toBeCloseTo(sum(tanh(matmul(x2, W))), 12);
  });

  it("jacrev, jacfwd and jacobian lay blocks out as [...out, ...in] and agree with differences", () => {
    const g = (p: { a: Tensor; s: Scalar }) => mul(sin(outer(p.a, Float64Array.from([1, 2]))), p.s); // [3, 2]
    const x = { a: Float64Array.from([0.1, 0.5, -0.3]), s: 1.5 };
    const Jr = jacrev(g, x);
    const Jf = jacfwd(g, x);
    const J = jacobian(g, x);
    expect(Jr.a.shape).toEqual([3, 2, 3]);
    expect(Jr.s.shape).toEqual([3, 2]);
    for (const K of [Jf, J]) {
      expectClose(flat(K.a), flat(Jr.a));
      expectClose(flat(K.s), flat(Jr.s));
    }
    // closed form: y_ij = s sin(a_i c_j): ∂y_ij/∂a_k = δ_ik s c_j cos(a_i c_j), ∂y_ij/∂s = sin(a_i c_j)
    const c = [1, 2];
    const wantA = Array.from({ length: 18 }, (_, k) => {
      const [i, j, l] = unravel(k, [3, 2, 3]);
      return i === l ? 1.5 * c[j] * Math.cos(x.a[i] * c[j]) : 0;
    });
    expectClose(flat(Jr.a), wantA);
    expectClose(flat(Jr.s), Array.from({ length: 6 }, (_, k) => Math.sin(x.a[Math.floor(k / 2)] * c[k % 2])));
  });

  it("fd-style forward derivative of a tensor function equals jvp", () => {
    const x = nd([1, 2, 3, 4, 5, 6], [2, 3]);
    const v = nd([1, 0, -1, 0.5, 0.5, 2], [2, 3]);
    const h = (t: Tensor) => logSoftmax(mul(t, 0.3), 1);
    const [, dy] = jvp(h, x, v);
    const eps = 1e-6;
    const plus = flat(h(add(x, mul(eps, v)) as never));
    const minus = flat(h(sub(x, mul(eps, v)) as never));
    expectClose(flat(dy), plus.map((p, i) => (p - minus[i]) / (2 * eps)), 1e-6, 1e-8);
  });
});

// ---------------------------------------------------------------- edge cases

describe("edge cases", () => {
  it("a 0-d ndarray input: a traced value of dims [], cotangent a 0-d ndarray", () => {
    const x = ndarray(Float64Array.from([3]), []);
    let dims: number[] | undefined;
    const g = grad((t) => {
      dims = shapeOf(t);
      return mul(t, t) as unknown as Scalar;
    }, x) as NdArray;
    expect(dims).toEqual([]);
    expect(isNd(g)).toBe(true);
    expect(g.shape).toEqual([]);
    expect(flat(g)).toEqual([6]);
  });

  it("empty tensors: sums are 0, gradients are empty, matmul over an empty inner axis is zeros", () => {
    expect(sum(new Float64Array(0))).toBe(0);
    const g = grad((t) => sum(t), new Float64Array(0));
    expect(g).toBeInstanceOf(Float64Array);
    expect((g as Float64Array).length).toBe(0);
    const m = matmul(nd([], [2, 0]), nd([], [0, 3])) as NdArray;
    expect(m.shape).toEqual([2, 3]);
    expect(flat(m)).toEqual([0, 0, 0, 0, 0, 0]);
    const ge0 = grad((t) => add(sum(slice(t, [1], [1])), index(t, 0)), Float64Array.from([5, 6])) as Float64Array;
    expect(Array.from(ge0)).toEqual([1, 0]);
  });

  it("a Float64Array that is a subarray of a larger buffer", () => {
    const big = Float64Array.from([9, 9, 1, 2, 3, 9]);
    const v = big.subarray(2, 5);
    const g = grad((t) => sum(mul(t, t)), v) as Float64Array;
    expect(Array.from(g)).toEqual([2, 4, 6]);
    expect(Array.from(big)).toEqual([9, 9, 1, 2, 3, 9]);
  });

  it("the same ndarray object as two leaves of a record: two independent variables", () => {
    const X = nd([1, 2, 3, 4], [2, 2]);
    const g = grad((p: { a: Tensor; b: Tensor }) => sum(mul(p.a, mul(p.b, p.b))), { a: X, b: X }) as { a: NdArray; b: NdArray };
    expect(flat(g.a)).toEqual([1, 4, 9, 16]);
    expect(flat(g.b)).toEqual([2, 8, 18, 32]);
  });

  it("results stay intact after later computations (no buffer is reused under the user)", () => {
    const x = Float64Array.from([0.1, 0.2, 0.3]);
    const e = exp(Float64Array.from([0, 1, 2])) as NdArray;
    const g1 = grad((t) => sum(tanh(t)), x) as Float64Array;
    const [v, pullback] = vjp((t: Tensor) => tanh(mul(t, 2)), x);
    const term = traceOf((t: Tensor) => tanh(mul(t, 2)), x);
    const dterm = derivativeOf((t: Tensor) => sum(tanh(mul(t, 2))), x, 1);
    const snapshot = [flat(e), Array.from(g1), flat(v)];
    for (let k = 0; k < 30; k++) {
      grad((t) => sum(mul(exp(t), tanh(t))), Float64Array.from([k, k + 1, k + 2]));
      exp(Float64Array.from([k, k + 1, k + 2]));
      matmul(nd([k, 1, 2, 3, 4, 5], [2, 3]), nd([1, 2, 3], [3, 1]));
    }
    expect([flat(e), Array.from(g1), flat(v)]).toEqual(snapshot);
    const want = Array.from(x).map((xi) => 2 * (1 - Math.tanh(2 * xi) ** 2));
    expectClose(flat(pullback(Float64Array.from([1, 1, 1]))), want);
    expectClose(flat(term.evaluate(x)), Array.from(x).map((xi) => Math.tanh(2 * xi)));
    expectClose(flat(dterm.evaluate(x, 1)), want);
  });

  it("where's mask: any nonzero selects; a Float64Array mask and an array mask work like an ndarray", () => {
    const a = Float64Array.from([1, 2, 3]);
    expectClose(flat(where(Float64Array.from([2, 0, -1]), a, 0)), [1, 0, 3]);
    const g = grad((t) => sum(where([5, 0, -0.5], mul(t, t), t)), a) as Float64Array;
    expectClose(Array.from(g), [2, 1, 6]);
  });

  it("fd (forward derivative by nested rd) of a tensor function equals jvp", () => {
    const x = nd([0.5, 1, -1, 2], [2, 2]);
    const v = nd([1, -1, 0.5, 0.25], [2, 2]);
    const f = (t: Tensor) => softmax(matmul(t, t), 0);
    expectClose(flat(fd(f, x, v)), flat(jvp(f, x, v)[1]));
  });
});
