/**
 * Kernels with fast paths — transpose by tiles, elementwise arithmetic by strided runs,
 * reductions by runs, transcendental maps by name — against plain definitions, to the bit.
 */
import { describe, expect, it } from "vitest";
import { ARITH, map, reduce, transpose, zip } from "../src/tensor/kernels.js";
import { broadcastDims, size, strides, type Dims } from "../src/tensor/dims.js";
import { randomArray, randomInt, rng, sameBits } from "./random.js";

/** The element of x (dims xd) that result index `idx` (dims out) reads when x broadcasts to out. */
function broadcastRead(x: Float64Array, xd: Dims, out: Dims, idx: number[]): number {
  const s = strides(xd);
  const off = out.length - xd.length;
  let flat = 0;
  xd.forEach((d, i) => (flat += (d === 1 ? 0 : idx[i + off]) * s[i]));
  return x[flat];
}

/** Every multi-index of dims, in row-major order. */
function* indices(dims: Dims): Generator<number[]> {
  const idx = dims.map(() => 0);
  for (let o = 0; o < size(dims); o++) {
    yield idx.slice();
    for (let ax = dims.length - 1; ax >= 0; ax--) {
      if (++idx[ax] < dims[ax]) break;
      idx[ax] = 0;
    }
  }
}

describe("transpose", () => {
  it("matrices (tiled) and batches of them, sizes not multiples of the tile", () => {
    const next = rng(11);
    for (const xd of [[1, 1], [3, 70], [33, 17], [64, 128], [2, 19, 5], [3, 2, 40, 21]]) {
      const x = randomArray(next, size(xd));
      const r = xd.length;
      const perm = [...Array.from({ length: r - 2 }, (_, i) => i), r - 1, r - 2];
      const out = perm.map((p) => xd[p]);
      const want = Float64Array.from(indices(out), (idx) => broadcastRead(x, xd, xd, perm.map((_, i) => idx[perm.indexOf(i)])));
      expect(sameBits(transpose(x, xd, perm), want), `${xd}`).toBe(true);
    }
  });

  it("other permutations (the general walk)", () => {
    const next = rng(12);
    const xd = [3, 4, 5];
    const x = randomArray(next, size(xd));
    for (const perm of [[2, 0, 1], [1, 0, 2], [0, 1, 2], [2, 1, 0]]) {
      const out = perm.map((p) => xd[p]);
      const want = Float64Array.from(indices(out), (idx) => broadcastRead(x, xd, xd, perm.map((_, i) => idx[perm.indexOf(i)])));
      expect(sameBits(transpose(x, xd, perm), want), `${perm}`).toBe(true);
    }
  });
});

describe("zip", () => {
  const pow = (a: number, b: number) => a ** b; // not arithmetic: called per element
  const fs = { ...ARITH, pow };
  const shapes: [Dims, Dims][] = [
    [[6, 7], [6, 7]], // same
    [[], [6, 7]], [[6, 7], []], [[1], [6, 7]], [[6, 7], [1]], // a scalar
    [[6, 7], [7]], [[7], [6, 7]], [[2, 3, 7], [1, 7]], // a bias row
    [[6, 7], [6, 1]], [[6, 1], [6, 7]], // a column
    [[6, 1], [1, 7]], [[2, 1, 4], [3, 1]], [[5, 1, 3], [2, 3]], // others: the odometer
    [[1, 3], [3]], [[], []],
  ];
  it("every arithmetic kernel and a general one, on every broadcasting pattern", () => {
    const next = rng(13);
    for (const [name, f] of Object.entries(fs)) {
      for (const [ad, bd] of shapes) {
        const out = broadcastDims(ad, bd) as Dims;
        const a = randomArray(next, size(ad));
        const b = randomArray(next, size(bd)).map((v) => (name === "pow" ? Math.abs(v) + 0.5 : v));
        const want = Float64Array.from(indices(out), (idx) => f(broadcastRead(a, ad, out, idx), broadcastRead(b, bd, out, idx)));
        expect(sameBits(zip(a, ad, b, bd, out, f), want), `${name} ${JSON.stringify(ad)} ${JSON.stringify(bd)}`).toBe(true);
        if (ad.length === 0) expect(sameBits(zip(a[0], ad, b, bd, out, f), want)).toBe(true); // a scalar as a number
      }
    }
  });
});

describe("reduce", () => {
  it("sum, max, min, logsumexp over contiguous and scattered axes", () => {
    const next = rng(14);
    const xd = [3, 4, 5, 2];
    const x = randomArray(next, size(xd));
    for (const axes of [[0], [1], [3], [0, 1], [1, 2], [0, 2], [1, 3], [0, 1, 2, 3], []]) {
      const outDims = xd.map((d, i) => (axes.includes(i) ? 1 : d));
      const groups = new Map<number, number[]>();
      for (const idx of indices(xd)) {
        const o = outDims.reduce((flat, d, i) => flat * d + (axes.includes(i) ? 0 : idx[i]), 0);
        groups.set(o, [...(groups.get(o) ?? []), broadcastRead(x, xd, xd, idx)]);
      }
      const read = [...groups.keys()].sort((p, q) => p - q).map((o) => groups.get(o)!);
      const sum = (v: number[]) => v.reduce((s, y) => s + y, 0);
      const lse = (v: number[]) => {
        const m = Math.max(...v);
        return m + Math.log(sum(v.map((y) => Math.exp(y - m))));
      };
      expect(sameBits(reduce(x, xd, axes, "sum"), read.map(sum)), `sum ${axes}`).toBe(true);
      expect(sameBits(reduce(x, xd, axes, "max"), read.map((v) => Math.max(...v))), `max ${axes}`).toBe(true);
      expect(sameBits(reduce(x, xd, axes, "min"), read.map((v) => Math.min(...v))), `min ${axes}`).toBe(true);
      // logsumexp sums in another order than the plain one here: close, not equal
      const got = reduce(x, xd, axes, "logsumexp");
      read.map(lse).forEach((want, i) => expect(Math.abs(got[i] - want), `logsumexp ${axes}`).toBeLessThan(1e-14));
    }
  });
});

describe("map", () => {
  it("the functions called by name give what Math gives, and others still apply", () => {
    const next = rng(15);
    const x = Float64Array.from({ length: 257 }, () => 40 * next() - 20);
    x[0] = NaN;
    x[1] = -0;
    x[2] = Infinity;
    for (const f of [Math.tanh, Math.exp, Math.log, Math.sin, (v: number) => v * v]) {
      expect(sameBits(map(x, f), Array.from(x, f)), f.name).toBe(true);
    }
  });
});
