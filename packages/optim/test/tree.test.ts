/**
 * Parameter trees: structure, leaves, elementwise maps over every kind of leaf (strided
 * ndarrays included), the vector-space operations, `into` writing in place, ravelling,
 * and errors that name the path where two trees differ.
 */
import fc from "fast-check";
import ndarray from "ndarray";
import { describe, expect, it } from "vitest";
import { grad, add, mul, sum, type Scalar, type Tensor } from "@wengert/core";
import {
  ravelTree, treeAdd, treeAxpy, treeDot, treeFlatten, treeLeaves, treeLeavesUpTo, treeMap, treeMap2, treeNorm, treeScale, treeSize,
  treeStructure, treeSub, treeUnflatten, zerosLike, fullLike, TreeStructureError, type Tree,
} from "../src/index.js";

const nd = (data: number[], shape: number[]) => ndarray(Float64Array.from(data), shape);
const params = () => ({ w: nd([1, 2, 3, 4, 5, 6], [2, 3]), b: new Float64Array([7, 8]), layers: [{ s: 9 }, [10, 11]] });

describe("structure and leaves", () => {
  it("leaves in order: arrays by index, records by key order, tensors as one leaf", () => {
    const t = params();
    const leaves = treeLeaves(t);
    expect(leaves).toHaveLength(5);
    expect(leaves[0]).toBe(t.w);
    expect(leaves[1]).toBe(t.b);
    expect(leaves.slice(2)).toEqual([9, 10, 11]);
    expect(treeSize(t)).toBe(11);
  });

  it("flatten and unflatten round-trip, and unflatten checks the leaves against the structure", () => {
    const t = params();
    const [leaves, def] = treeFlatten(t);
    expect(def).toEqual(treeStructure(t));
    expect(treeUnflatten(def, leaves)).toEqual(t);
    expect(() => treeUnflatten(def, leaves.slice(1))).toThrow(TreeStructureError);
    expect(() => treeUnflatten(def, [...leaves, 1])).toThrow(/6 leaves given, the structure has 5/);
    expect(() => treeUnflatten(def, [new Float64Array(2), ...leaves.slice(1)])).toThrow(/leaf 0 \(for \.w\) is a Float64Array of 2, the structure expects dims \[2, 3\]/);
  });

  it("unit ([]) and nested empty containers are trees with no leaves", () => {
    expect(treeLeaves({ a: [], b: {} })).toEqual([]);
    expect(treeMap((x) => x + 1, { a: [], b: [1] })).toEqual({ a: [], b: [2] });
  });

  it("a traced value, a Map or a string is not a parameter, and the message says where", () => {
    expect(() => treeLeaves({ a: [1, new Map()] } as unknown as Tree)).toThrow(/tree\.a\[1\] is a Map, not a parameter/);
    expect(() => treeMap((x) => x, { a: "3" } as unknown as Tree)).toThrow(/tree\.a is a string/);
    grad((x: Tensor) => {
      expect(() => treeMap((v) => v, { x } as unknown as Tree)).toThrow(/traced value.*call them outside grad/);
      return sum(x);
    }, new Float64Array(2));
  });

  it("treeLeavesUpTo: the subtrees at a structure's leaves", () => {
    const def = treeStructure({ a: 1, b: [new Float64Array(2)] });
    expect(treeLeavesUpTo(def, { a: { x: 1 }, b: [[2, 3]] })).toEqual([{ x: 1 }, [2, 3]]);
    expect(() => treeLeavesUpTo(def, { a: 1 })).toThrow(/lacks b/);
  });
});

describe("elementwise maps", () => {
  it("treeMap keeps each leaf's kind: numbers, Float64Arrays, ndarrays with their dims", () => {
    const out = treeMap((x) => 2 * x, params());
    expect(out.b).toBeInstanceOf(Float64Array);
    expect(Array.from(out.b)).toEqual([14, 16]);
    expect(out.w.shape).toEqual([2, 3]);
    expect(Array.from(out.w.data)).toEqual([2, 4, 6, 8, 10, 12]);
    expect(out.layers).toEqual([{ s: 18 }, [20, 22]]);
  });

  it("a strided view (a transpose, an offset slice) is read in row-major order", () => {
    const base = nd([1, 2, 3, 4, 5, 6], [2, 3]);
    const t = base.transpose(1, 0); // [[1, 4], [2, 5], [3, 6]]
    const out = treeMap((x) => x, t);
    expect(out.shape).toEqual([3, 2]);
    expect(Array.from(out.data)).toEqual([1, 4, 2, 5, 3, 6]);
    const sliced = base.hi(2, 3).lo(0, 1); // [[2, 3], [5, 6]]
    expect(Array.from(treeMap((x) => x, sliced).data)).toEqual([2, 3, 5, 6]);
    expect(treeDot(t, t)).toBe(91);
  });

  it("treeMap2 zips, and a mismatch names the path, both trees and the fix", () => {
    const a = params();
    expect(treeMap2((x, y) => x - y, a, a).layers).toEqual([{ s: 0 }, [0, 0]]);
    const b = { ...params(), w: nd([1, 2, 3, 4, 5, 6], [3, 2]) };
    expect(() => treeMap2((x, y) => x + y, a, b)).toThrow(/treeMap2: b\.w has dims \[3, 2\], a\.w has \[2, 3\]; zip trees of one structure/);
    const c = { ...params(), layers: [{ t: 9 }, [10, 11]] };
    expect(() => treeMap2((x, y) => x + y, a, c)).toThrow(/b\.layers\[0\] lacks s and has t too/);
    const d = { ...params(), layers: [{ s: 9 }, [10]] };
    expect(() => treeAdd(a, d)).toThrow(/treeAdd: y\.layers\[1\] is an array of 1, x\.layers\[1\] is an array of 2/);
    expect(() => treeAdd({ "a b": 1 }, { "a b": [1] })).toThrow(/y\["a b"\] is an array of 1, x\["a b"\] is a number/);
  });

  it("property: treeMap2 agrees with mapping the raveled vectors", () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: -10, max: 10, noNaN: true }), { minLength: 6, maxLength: 6 }), (xs) => {
        const a = { m: nd(xs, [2, 3]), v: Float64Array.from(xs.slice(0, 2)), s: xs[5] };
        const b = treeMap((x) => x * 3 - 1, a);
        const ra = ravelTree(a).vector;
        const rb = ravelTree(b).vector;
        expect(Array.from(ravelTree(treeMap2((x, y) => x * y, a, b)).vector)).toEqual(Array.from(ra, (v, i) => v * rb[i]));
      }),
    );
  });
});

describe("trees as vectors", () => {
  it("add, sub, scale, axpy, dot, norm over all components", () => {
    const x = { a: [1, 2], b: new Float64Array([3]) };
    const y = { a: [10, 20], b: new Float64Array([30]) };
    expect(treeAdd(x, y)).toEqual({ a: [11, 22], b: new Float64Array([33]) });
    expect(treeSub(y, x)).toEqual({ a: [9, 18], b: new Float64Array([27]) });
    expect(treeScale(-2, x)).toEqual({ a: [-2, -4], b: new Float64Array([-6]) });
    expect(treeAxpy(2, x, y)).toEqual({ a: [12, 24], b: new Float64Array([36]) });
    expect(treeDot(x, y)).toBe(140);
    expect(treeNorm(x)).toBe(Math.sqrt(14));
    expect(zerosLike(x)).toEqual({ a: [0, 0], b: new Float64Array([0]) });
    expect(fullLike(3, 7)).toBe(7);
  });

  it("{ into } writes into the given tree: its buffers and containers, no new ones", () => {
    const y = { a: [10, 20], b: new Float64Array([30]), w: nd([1, 2, 3, 4], [2, 2]) };
    const buffer = y.b;
    const data = y.w.data;
    const x = { a: [1, 2], b: new Float64Array([3]), w: nd([1, 1, 1, 1], [2, 2]) };
    const out = treeAxpy(-1, x, y, { into: y });
    expect(out).toBe(y);
    expect(out.b).toBe(buffer);
    expect(out.w.data).toBe(data);
    expect(y).toEqual({ a: [9, 18], b: new Float64Array([27]), w: nd([0, 1, 2, 3], [2, 2]) });
    // a strided target is written through its strides
    const target = nd([0, 0, 0, 0], [2, 2]).transpose(1, 0);
    treeMap((v) => v, nd([1, 2, 3, 4], [2, 2]), { into: target });
    expect(Array.from(target.data)).toEqual([1, 3, 2, 4]);
    expect(() => treeScale(2, x, { into: { a: [1, 2] } })).toThrow(/into lacks b, w/);
  });
});

describe("ravelTree", () => {
  it("ravels and unravels every kind of tree, and ravel checks a gradient's structure", () => {
    const t = params();
    const r = ravelTree(t);
    expect(Array.from(r.vector)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    const back = r.unravel(r.vector);
    expect(back).toEqual(t);
    expect(back.w).not.toBe(t.w); // a new tree
    expect(Array.from(r.ravel(treeScale(2, t)))).toEqual([2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22]);
    expect(() => r.ravel({ ...t, b: new Float64Array(3) })).toThrow(/value\.b has dims \[3\], tree\.b has \[2\]/);
    const numbers = ravelTree([1, 2, 3]);
    expect(numbers.unravel([4, 5, 6])).toEqual([4, 5, 6]);
    expect(() => numbers.ravel([1, [2], 3])).toThrow(TreeStructureError);
  });

  it("the gradient of a function of a tree ravels like the tree", () => {
    const t = { w: nd([1, 2], [1, 2]), s: 3 };
    const g = grad((p: { w: Tensor; s: Scalar }) => add(sum(mul(p.w, p.w)), mul(p.s, p.s)), t);
    expect(Array.from(ravelTree(t).ravel(g))).toEqual([2, 4, 6]);
  });
});
