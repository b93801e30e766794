/**
 * Kernels with fast paths — transpose by bands of four rows, elementwise arithmetic by
 * strided runs or SIMD kernels (large buffers), reductions by runs or SIMD column sums,
 * broadcasts by copies and fills, maps by name — against plain definitions, to the bit.
 */
import { describe, expect, it } from "vitest";
import { ARITH, UNARY_ARITH, broadcastTo, concat, countEqual, gather, map, reduce, scatterAdd, slice, transpose, zip } from "../src/tensor/kernels.js";
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
    // up to 200 columns: several bands of 64; row counts not multiples of four
    for (const xd of [[1, 1], [3, 70], [33, 17], [64, 128], [2, 19, 5], [3, 2, 40, 21], [130, 200], [7, 129], [2, 67, 66]]) {
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
    [[6, 1], [1, 7]], [[2, 1, 4], [3, 1]], [[5, 1, 3], [2, 3]], // others: a run per row of the result
    [[3, 1, 5], [3, 4, 1]], [[2, 1, 1], [1, 3, 1]], [[4, 1], [2, 1, 3]], [[0, 1], [1, 3]], [[2, 0, 1], [1, 3]],
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
        if (bd.length === 0) expect(sameBits(zip(a, ad, b[0], bd, out, f), want)).toBe(true);
      }
    }
  });

  it("on the small cases' own loops: each side whole, a number or one element, for n = 1 … 40", () => {
    const next = rng(41);
    for (let n = 1; n <= 40; n++) {
      const a = randomArray(next, n);
      const b = randomArray(next, n);
      const one = randomArray(next, 1);
      for (const [name, f] of Object.entries(ARITH)) {
        const cases: [number | Float64Array, Dims, number | Float64Array, Dims, Float64Array][] = [
          [a, [n], b, [n], a.map((v, i) => f(v, b[i]))],
          [a, [n], one[0], [], a.map((v) => f(v, one[0]))],
          [a, [n], one, [1], a.map((v) => f(v, one[0]))],
          [one[0], [], b, [n], b.map((v) => f(one[0], v))],
          [one, [1], b, [n], b.map((v) => f(one[0], v))],
        ];
        for (const [x, xd, y, yd, want] of cases) expect(sameBits(zip(x, xd, y, yd, [n], f), want), `${name} n=${n} ${JSON.stringify(xd)} ${JSON.stringify(yd)}`).toBe(true);
      }
    }
  });

  it("on random broadcasts (ranks up to 4, each axis of either side possibly 1 or missing)", () => {
    const next = rng(29);
    for (let trial = 0; trial < 300; trial++) {
      const rank = randomInt(next, 0, 4);
      const out = Array.from({ length: rank }, () => randomInt(next, 1, 4));
      const side = (): Dims => {
        const d = out.map((n) => (next() < 0.4 ? 1 : n));
        return d.slice(randomInt(next, 0, d.length)); // leading axes dropped
      };
      const [ad, bd] = [side(), side()];
      const dims = broadcastDims(ad, bd) as Dims;
      const [a, b] = [randomArray(next, size(ad)), randomArray(next, size(bd))];
      for (const [name, f] of Object.entries(fs)) {
        const want = Float64Array.from(indices(dims), (idx) => f(broadcastRead(a, ad, dims, idx), broadcastRead(b, bd, dims, idx)));
        expect(sameBits(zip(a, ad, b, bd, dims, f), want), `${name} ${JSON.stringify(ad)} ${JSON.stringify(bd)}`).toBe(true);
      }
    }
  });
});

describe("zip on large buffers (the SIMD kernels, in rows)", () => {
  // ≥ 1024 elements; rows of 16 or more go to wasm, shorter ones stay in JavaScript
  const shapes: [Dims, Dims][] = [
    [[64, 128], [64, 128]], [[33, 65], [33, 65]], [[2049], [2049]], // whole, odd lengths
    [[], [40, 31]], [[40, 31], [1]], // a scalar
    [[64, 128], [128]], [[17], [3, 41, 17]], [[5, 33], [9, 5, 33]], [[200, 8], [8]], // a bias row (short rows: JS)
    [[64, 33], [64, 1]], [[100, 1], [100, 17]], [[300, 5], [300, 1]], // a column (short rows: JS)
  ];
  it("every arithmetic kernel, on every broadcasting pattern, with NaN, ±∞, ±0 among the values", () => {
    const next = rng(16);
    const specials = [NaN, Infinity, -Infinity, 0, -0, 5e-324, -1e308];
    const values = (n: number) => randomArray(next, n).map((v, i) => (i % 37 === 5 ? specials[i % specials.length] : v));
    for (const [name, f] of Object.entries(ARITH)) {
      for (const [ad, bd] of shapes) {
        const out = broadcastDims(ad, bd) as Dims;
        const a = values(size(ad));
        const b = values(size(bd));
        const want = Float64Array.from(indices(out), (idx) => f(broadcastRead(a, ad, out, idx), broadcastRead(b, bd, out, idx)));
        expect(sameBits(zip(a, ad, b, bd, out, f), want), `${name} ${JSON.stringify(ad)} ${JSON.stringify(bd)}`).toBe(true);
        if (ad.length === 0) expect(sameBits(zip(a[0], ad, b, bd, out, f), want)).toBe(true);
      }
    }
  });
});

describe("broadcastTo", () => {
  it("a repeated row, a repeated column and the general walk (rows read at stride 1, or 0 where the last axis is broadcast)", () => {
    const next = rng(17);
    const cases: [Dims, Dims][] = [[[7], [5, 7]], [[1, 6], [2, 3, 6]], [[4, 1], [4, 9]], [[2, 1, 3], [2, 4, 3]], [[1], [5]], [[], [3, 2]],
      [[3, 1, 1], [3, 4, 5]], [[1, 4, 1], [2, 4, 3]], [[2, 1, 3, 1], [2, 5, 3, 4]], [[5, 1, 40], [5, 3, 40]]];
    for (const [xd, out] of cases) {
      const x = randomArray(next, size(xd));
      const want = Float64Array.from(indices(out), (idx) => broadcastRead(x, xd, out, idx));
      expect(sameBits(broadcastTo(x, xd, out), want), `${xd} → ${out}`).toBe(true);
    }
  });
});

describe("slice", () => {
  it("boxes of ranks 1–3, rows short (an element loop) and long (a block copy), against reading each index", () => {
    const next = rng(18);
    for (let trial = 0; trial < 200; trial++) {
      const rank = randomInt(next, 1, 3);
      // the last axis long in half the trials: rows of 64 or more are block copies
      const xd = Array.from({ length: rank }, (_, i) => (i === rank - 1 && next() < 0.5 ? randomInt(next, 64, 300) : randomInt(next, 1, 5)));
      const starts = xd.map((d) => randomInt(next, 0, d - 1));
      const ends = xd.map((d, i) => randomInt(next, starts[i] + 1, d));
      const x = randomArray(next, size(xd));
      const out = ends.map((e, i) => e - starts[i]);
      const xs = strides(xd);
      const want = Float64Array.from(indices(out), (idx) => x[idx.reduce((s, k, i) => s + (k + starts[i]) * xs[i], 0)]);
      expect(sameBits(slice(x, xd, starts, ends), want), `${JSON.stringify(xd)} [${starts}, ${ends})`).toBe(true);
    }
  });
});

describe("concat", () => {
  it("pieces short (an element loop) and long (a block copy) along each axis of ranks 1–3, against reading each index", () => {
    const next = rng(19);
    for (let trial = 0; trial < 200; trial++) {
      const rank = randomInt(next, 1, 3);
      const axis = randomInt(next, 0, rank - 1);
      const base = Array.from({ length: rank }, (_, i) => (i === rank - 1 && next() < 0.5 ? randomInt(next, 20, 70) : randomInt(next, 1, 5)));
      const dims = Array.from({ length: randomInt(next, 1, 4) }, () => base.map((d, i) => (i === axis ? randomInt(next, 1, 40) : d)));
      const xs = dims.map((d) => randomArray(next, size(d)));
      const out = base.map((d, i) => (i === axis ? dims.reduce((s, e) => s + e[axis], 0) : d));
      // element idx of out: piece k where idx[axis] falls, at idx[axis] less the pieces before
      const want = Float64Array.from(indices(out), (idx) => {
        let at = idx[axis];
        let k = 0;
        while (at >= dims[k][axis]) at -= dims[k++][axis];
        const ks = strides(dims[k]);
        return xs[k][idx.reduce((s, v, i) => s + (i === axis ? at : v) * ks[i], 0)];
      });
      expect(sameBits(concat(xs, dims, axis, out), want), `${JSON.stringify(dims)} on axis ${axis}`).toBe(true);
    }
  });
});

/** The elements of x (dims xd) that each output element of a reduction over `axes` reads, in output order. */
function groupsOf(x: Float64Array, xd: Dims, axes: readonly number[]): number[][] {
  const outDims = xd.map((d, i) => (axes.includes(i) ? 1 : d));
  const groups = new Map<number, number[]>();
  for (const idx of indices(xd)) {
    const o = outDims.reduce((flat, d, i) => flat * d + (axes.includes(i) ? 0 : idx[i]), 0);
    groups.set(o, [...(groups.get(o) ?? []), broadcastRead(x, xd, xd, idx)]);
  }
  return [...groups.keys()].sort((p, q) => p - q).map((o) => groups.get(o)!);
}

describe("gather and scatterAdd", () => {
  // rows of every length around the four-per-step copies (and one past the block copy's 64)
  it.each([1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 65])("rows of %i elements: element for element as a loop of one, to the bit", (inner) => {
    const next = rng(inner);
    const [outer, len] = [2, 5];
    const x = randomArray(next, outer * len * inner);
    const indices = Int32Array.from({ length: 7 }, () => randomInt(next, 0, len - 1));
    const want = new Float64Array(outer * indices.length * inner);
    for (let p = 0, o = 0; p < outer; p++) for (const i of indices) for (let j = 0; j < inner; j++) want[o++] = x[(p * len + i) * inner + j];
    expect(sameBits(gather(x, [outer, len, inner], indices, 1), want)).toBe(true);
    const t = randomArray(next, x.length);
    const added = Float64Array.from(t);
    for (let p = 0, v = 0; p < outer; p++) for (const i of indices) for (let j = 0; j < inner; j++) added[(p * len + i) * inner + j] += want[v++];
    expect(sameBits(scatterAdd(t, [outer, len, inner], indices, want, 1), added)).toBe(true);
  });
});

describe("reduce", () => {
  it("sum, max, min, logsumexp over contiguous and scattered axes", () => {
    const next = rng(14);
    const xd = [3, 4, 5, 2];
    const x = randomArray(next, size(xd));
    for (const axes of [[0], [1], [3], [0, 1], [1, 2], [0, 2], [1, 3], [0, 1, 2, 3], []]) {
      const read = groupsOf(x, xd, axes);
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
  it("max and min keep the first of equal elements (−0 before 0 stays −0), take a NaN wherever it is, and pass ±∞", () => {
    // the plain definition, folded in memory order from the identity
    const fold = (v: number[], kind: "max" | "min") =>
      v.reduce((a, y) => ((kind === "max" ? y > a : y < a) || Number.isNaN(y) ? y : a), kind === "max" ? -Infinity : Infinity);
    const next = rng(16);
    const specials = [NaN, Infinity, -Infinity, 0, -0, 5e-324, -1e308, 1];
    for (let trial = 0; trial < 200; trial++) {
      const n = randomInt(next, 1, 9);
      const x = Float64Array.from({ length: 2 * n }, () => specials[randomInt(next, 0, specials.length - 1)]);
      for (const kind of ["max", "min"] as const) {
        // runs (one group: all of x) and rows (two columns folded over the leading axis)
        expect(sameBits(reduce(x, [2 * n], [0], kind), [fold(Array.from(x), kind)]), `${kind} run of ${Array.from(x)}`).toBe(true);
        const cols = [0, 1].map((b) => fold(Array.from(x).filter((_, i) => i % 2 === b), kind));
        expect(sameBits(reduce(x, [n, 2], [0], kind), cols), `${kind} rows of ${Array.from(x)}`).toBe(true);
      }
    }
  });
  it("countEqual: how many elements of each group equal its max, over contiguous and scattered axes", () => {
    const next = rng(15);
    const xd = [3, 4, 5, 2];
    // few distinct values: groups with one, two and more maximal elements
    const x = Float64Array.from({ length: size(xd) }, () => randomInt(next, 0, 3));
    for (const axes of [[0], [1], [3], [0, 1], [1, 2], [0, 2], [1, 3], [0, 1, 2, 3], []]) {
      const want = groupsOf(x, xd, axes).map((v) => v.filter((y) => y === Math.max(...v)).length);
      expect(Array.from(countEqual(x, xd, axes, reduce(x, xd, axes, "max"))), `axes ${axes}`).toEqual(want);
    }
  });
});

describe("reduce on large buffers (SIMD column sums)", () => {
  it("sums over leading axes add the rows in order, from zero, as the plain loop", () => {
    const next = rng(18);
    for (const [xd, axes] of [
      [[64, 128], [0]],
      [[3, 40, 33], [1]],
      [
        [2, 3, 30, 21],
        [1, 2],
      ],
      [[2000, 3], [0]],
      [[1100, 1], [0]],
      [[9, 130], [0]],
    ] as [Dims, number[]][]) {
      const x = randomArray(next, size(xd)).map((v, i) => (i === 77 ? NaN : i === 78 ? -0 : v));
      const A = size(xd.slice(0, axes[0]));
      const R = size(xd.slice(axes[0], axes[axes.length - 1] + 1));
      const B = x.length / (A * R);
      const want = new Float64Array(A * B);
      for (let a = 0; a < A; a++) for (let r = 0; r < R; r++) for (let b = 0; b < B; b++) want[a * B + b] += x[(a * R + r) * B + b];
      expect(sameBits(reduce(x, xd, axes, "sum"), want), `${xd} over ${axes}`).toBe(true);
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
    for (const f of [Math.tanh, Math.exp, Math.log, Math.sin, (v: number) => v * v, UNARY_ARITH.square, UNARY_ARITH.neg]) {
      expect(sameBits(map(x, f), Array.from(x, f)), f.name).toBe(true);
    }
    // a large square: the SIMD kernel
    const big = Float64Array.from({ length: 3001 }, () => 40 * next() - 20);
    big[5] = NaN;
    big[6] = -0;
    big[7] = 1e200;
    expect(sameBits(map(big, UNARY_ARITH.square), Array.from(big, (v) => v * v))).toBe(true);
  });
});
