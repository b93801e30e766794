/**
 * The types of @wengert/optim's API: `f` is typed by `x0` (and `loss` by `params`) when
 * written inline, and checked against it when not; what comes back — minimize's `x` and
 * `jac`, fit's `params` and `state`, an optimizer's updates and state, the trees of the
 * tree functions — is typed as the user's tree (literal types widened, tuples kept). The
 * `expectTypeOf` lines and `@ts-expect-error` lines are checked by `tsc -p
 * packages/optim/test` (strict, part of `pnpm test`): a type that loosens (to `Tree`,
 * `unknown`, `any`) fails it. Each case also checks the value's kind at run time, leaf by
 * leaf, so the types cannot drift from what the runtime returns.
 */
import ndarray from "ndarray";
import { describe, expect, expectTypeOf, it } from "vitest";
import { add, grad, mul, square, sub, sum, type NdArray, type Real, type Scalar, type Tensor } from "@wengert/core";
import {
  adam, applyUpdates, chain, clipByGlobalNorm, fit, fullLike, gradientTransformation, minimize, ravelTree, rmsprop, sgd, treeAdd, treeAxpy,
  treeFlatten, treeLeaves, treeMap, treeMap2, treeNorm, treeScale, treeStructure, treeSub, treeUnflatten, zerosLike, type AdamState, type CountState,
  type MomentumState, type RmsState, type Tree, type TreeLike,
} from "../src/index.js";

/**
 * What a tree is at run time, leaf by leaf: its structure (number, Float64Array, ndarray,
 * array, record; a traced value, or anything else, throws).
 */
const kind = <const T extends TreeLike<T>>(t: T) => treeStructure(t);
const NUMBERS = kind([0, 0]);

interface Params {
  w: NdArray;
  b: Float64Array;
  s: number;
}
const params = (): Params => ({ w: ndarray(new Float64Array([1, 2, 3, 4]), [2, 2]), b: new Float64Array([0.5, -1]), s: 2 });
const PARAMS_KIND = kind(params());
/** A value typed Tree (a variable declared Tree would be narrowed to the kind assigned). */
const tree = (t: Tree): Tree => t;

describe("minimize: f typed by x0, x and jac typed as x0", () => {
  it("an inline f receives x0's tree traced: a literal tuple's items are reals", () => {
    const r = minimize(([x, y]) => {
      expectTypeOf(x).toEqualTypeOf<Real>();
      expectTypeOf(y).toEqualTypeOf<Real>();
      return add(square(sub(1, x)), mul(100, square(sub(y, square(x)))));
    }, [-1.2, 1]);
    expectTypeOf(r.x).toEqualTypeOf<[number, number]>();
    expectTypeOf(r.jac).toEqualTypeOf<[number, number]>();
    expectTypeOf(r.fun).toEqualTypeOf<number>();
    expect(kind(r.x)).toEqual(NUMBERS);
    expect(r.x[0]).toBeCloseTo(1, 4);
  });

  it("a number x0 is a number, whatever its literal; a record's fields keep their kinds", () => {
    const r = minimize((x) => square(sub(x, 2)), 0);
    expectTypeOf(r.x).toEqualTypeOf<number>();
    expect(kind(r.x)).toEqual(kind(0));
    const p = minimize((q) => add(square(sub(sum(q.w), 1)), add(square(sum(q.b)), square(q.s))), params(), {
      callback: ({ x, jac }) => {
        expectTypeOf(x).toEqualTypeOf<Params>();
        expectTypeOf(jac).toEqualTypeOf<Params>();
      },
    });
    expectTypeOf(p.x).toEqualTypeOf<Params>();
    expect(kind(p.x)).toEqual(PARAMS_KIND);
    expect(kind(p.jac)).toEqual(PARAMS_KIND);
  });

  it("a named f is checked against x0's tree: an array of reals takes a tuple, not the other way", () => {
    const rosen = ([x, y]: Real[]) => add(square(sub(1, x)), mul(100, square(sub(y, square(x)))));
    expectTypeOf(minimize(rosen, [-1.2, 1]).x).toEqualTypeOf<[number, number]>();
    const x0: number[] = [-1.2, 1];
    expectTypeOf(minimize(rosen, x0).x).toEqualTypeOf<number[]>();
    const pair = ([x, y]: [Scalar, Scalar]) => add(square(x), square(y));
    // @ts-expect-error x0 may have any length; f wants two items
    expect(() => minimize(pair, x0)).not.toThrow();
    // @ts-expect-error f wants a record, x0 is an array
    expect(() => minimize((p: { a: Real }) => square(p.a), [1])).toThrow();
  });

  it("x0 typed Tree: f receives traced trees, x is a Tree", () => {
    const t = tree([1, 2]);
    const r = minimize(() => 0, t, { maxIter: 1 });
    expectTypeOf(r.x).toEqualTypeOf<Tree>();
    expect(kind(r.x)).toEqual(NUMBERS);
  });
});

describe("fit: loss typed by params, params and state typed", () => {
  it("an inline loss receives the parameters traced; params come back as given, the state as the optimizer's", () => {
    const r = fit((p) => add(square(sub(p.w, 3)), square(p.b)), { w: 0, b: 0 }, adam(0.1), {
      steps: 5,
      onProgress: ({ params }) => expectTypeOf(params).toEqualTypeOf<{ w: number; b: number }>(),
    });
    expectTypeOf(r.params).toEqualTypeOf<{ w: number; b: number }>();
    expectTypeOf(r.state).toEqualTypeOf<readonly [AdamState, CountState | null]>();
    expectTypeOf(r.state[0].mu).toEqualTypeOf<Tree>();
    expect(kind(r.params)).toEqual(kind({ w: 0, b: 0 }));
    expect(r.state[0].count).toBe(5);
  });

  it("a loss of other parameters is an error", () => {
    const loss = (p: { w: Real; c: Real }) => add(p.w, p.c);
    // @ts-expect-error params has no c
    expect(() => fit(loss, { w: 0, b: 0 }, sgd(0.1), { steps: 1 })).toThrow();
  });
});

describe("optimizers: updates shaped like the gradients, states typed", () => {
  it("update(grads, state, params) and applyUpdates keep the parameters' type", () => {
    const loss = (p: { w: Tensor; b: Tensor; s: Real }) => add(sum(mul(p.w, p.w)), mul(p.s, sum(p.b)));
    const optimizer = adam(0.1);
    let p = params();
    let state = optimizer.init(p);
    expectTypeOf(state).toEqualTypeOf<readonly [AdamState, CountState | null]>();
    const g = grad(loss, p);
    expectTypeOf(g).toEqualTypeOf<{ w: NdArray; b: Float64Array; s: number }>();
    const [updates, next] = optimizer.update(g, state, p);
    expectTypeOf(updates).toEqualTypeOf<{ w: NdArray; b: Float64Array; s: number }>();
    state = next;
    p = applyUpdates(p, updates);
    expectTypeOf(applyUpdates(p, updates)).toEqualTypeOf<Params>();
    expect(kind(updates)).toEqual(PARAMS_KIND);
    expect(kind(p)).toEqual(PARAMS_KIND);
    expect(state[1]).toBeNull();
  });

  it("each optimizer's state is its chain's", () => {
    expectTypeOf(sgd(0.1).init(0)).toEqualTypeOf<readonly [MomentumState | null, CountState | null]>();
    expectTypeOf(rmsprop(0.1).init(0)).toEqualTypeOf<readonly [RmsState, CountState | null, MomentumState | null]>();
    const clipped = chain(clipByGlobalNorm(1), adam(0.1));
    expectTypeOf(clipped.init(0)).toEqualTypeOf<readonly [null, readonly [AdamState, CountState | null]]>();
    expect(clipped.init([1, 2])[1][0]).toEqual({ count: 0, mu: [0, 0], nu: [0, 0] });
  });

  it("a transformation written over trees, by gradientTransformation, is typed like the built-in ones", () => {
    const half = gradientTransformation({ init: () => null, update: (updates, state) => [treeScale(0.5, updates), state] });
    const [u] = half.update({ a: [1, 2], b: new Float64Array([3]) }, half.init([]));
    expectTypeOf(u).toEqualTypeOf<{ a: [number, number]; b: Float64Array }>();
    expect(kind(u)).toEqual(kind({ a: [0, 0], b: new Float64Array(1) }));
  });
});

describe("tree functions: a tree shaped like the first comes back, typed as it", () => {
  it("maps, sums, scalings and zeros keep the tree's type", () => {
    const p = params();
    expectTypeOf(treeMap((x) => 2 * x, p)).toEqualTypeOf<Params>();
    expectTypeOf(treeMap2((a, b) => a - b, p, p)).toEqualTypeOf<Params>();
    expectTypeOf(treeAdd(p, p)).toEqualTypeOf<Params>();
    expectTypeOf(treeSub(p, p)).toEqualTypeOf<Params>();
    expectTypeOf(treeScale(2, p)).toEqualTypeOf<Params>();
    expectTypeOf(treeAxpy(2, p, p, { into: p })).toEqualTypeOf<Params>();
    expectTypeOf(zerosLike(p)).toEqualTypeOf<Params>();
    expectTypeOf(fullLike(p, 1)).toEqualTypeOf<Params>();
    for (const t of [treeMap((x) => 2 * x, p), treeAdd(p, p), zerosLike(p), treeAxpy(2, p, p)]) expect(kind(t)).toEqual(PARAMS_KIND);
  });

  it("literals widen: a number is a number, a literal array a tuple of numbers", () => {
    const three = treeScale(2, 3);
    expectTypeOf(three).toEqualTypeOf<number>();
    expect(three).toBe(6);
    const pair = zerosLike([1, { a: 2 }]);
    expectTypeOf(pair).toEqualTypeOf<[number, { a: number }]>();
    expect(pair).toEqual([0, { a: 0 }]);
  });

  it("flatten and unflatten, ravel and unravel: back to the tree's type", () => {
    const p = params();
    const [leaves, def] = treeFlatten(p);
    const back = treeUnflatten(def, leaves);
    expectTypeOf(back).toEqualTypeOf<Params>();
    expectTypeOf(treeUnflatten(treeStructure([1, 2]), [3, 4])).toEqualTypeOf<[number, number]>();
    expect(kind(back)).toEqual(PARAMS_KIND);
    const raveled = ravelTree(p);
    const unraveled = raveled.unravel(raveled.vector);
    expectTypeOf(unraveled).toEqualTypeOf<Params>();
    expect(kind(unraveled)).toEqual(PARAMS_KIND);
  });

  it("what is no tree is an error: a string, a function, a traced value, a Map", () => {
    // @ts-expect-error a string leaf
    expect(() => treeNorm({ a: "x" })).toThrow(/tree\.a is a string/);
    // @ts-expect-error a function
    expect(() => zerosLike([() => 1])).toThrow(/is a function/);
    // @ts-expect-error a Map
    expect(() => treeLeaves({ m: new Map() })).toThrow(/is a Map/);
    grad((x: Real) => {
      // @ts-expect-error a traced value: optimizers work on what grad returns
      expect(() => treeScale(2, [x])).toThrow(/traced value/);
      return x;
    }, 1);
  });

  it("a tree typed Tree comes back a Tree", () => {
    const t = tree({ a: [1, 2] });
    expectTypeOf(treeMap((x) => x, t)).toEqualTypeOf<Tree>();
    expectTypeOf(applyUpdates(t, t)).toEqualTypeOf<Tree>();
    expectTypeOf(treeUnflatten(treeStructure(t), [1, 2])).toEqualTypeOf<Tree>();
    expect(treeMap((x) => x, t)).toEqual({ a: [1, 2] });
  });
});
