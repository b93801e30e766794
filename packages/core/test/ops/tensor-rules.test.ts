/**
 * Tensor primitives' derivative rules against finite differences.
 *
 * Every case is a function f of a record of leaves (numbers, Float64Arrays, ndarrays)
 * returning a tensor or a real. It is reduced to a real by a fixed random linear
 * functional L(x) = Σ f(x)·R, and checked four ways, all against fourth-order central
 * differences of the untraced function (tensor ops on untraced values compute at once):
 *   - reverse: grad(L, x), leaf by leaf and element by element, in the leaf's container;
 *   - forward: jvp(f, x, v) against the difference quotient of f along v, and ⟨R, J v⟩
 *     against ⟨grad L, v⟩;
 *   - second order: for L2(x) = Σ tanh(f(x))·R, hvp(L2, x, v) (forward over reverse) and
 *     grad of ⟨grad L2, v⟩ (reverse over reverse) against differences of grad L2 along v.
 * Shapes include broadcasting and size-1 axes; fast-check adds random shapes and points.
 */
import fc from "fast-check";
import ndarray from "ndarray";
import { describe, expect, it } from "vitest";
import {
  abs, acos, add, asin, atan, atan2, broadcastTo, concat, conv2d, cos, cosh, div, dot, exp, expm1, gather, grad, gt, hvp, index, jvp,
  log, log1p, logSoftmax, logsumexp, matmul, max, mean, min, mul, neg, outer, pow, reshape, safeLog, safeRecip, scatterAdd, sigmoid,
  sign, sin, sinh, slice, softmax, softplus, sqrt, square, stack, sub, sum, tan, tanh, transpose, unstack, where, xlogy,
  hessian, valueAndGrad, type NdArray, type Scalar, type Tensor,
} from "../../src/index.js";
import { rng, sizeOf, isNd, flat, nd } from "../helpers/tensors.js";
import { tensorChains } from "../helpers/programs/tensor-chains.js";
import { IGNORE } from "../helpers/ties.js";

// ---------------------------------------------------------------- helpers (plain JS)

type Leaf = number | Float64Array | NdArray;
type Inputs = Record<string, Leaf>;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Fn = (...args: any[]) => any;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyRec = any;


/** The dims of a value as a plain reader sees them. */
function dimsOf(v: unknown): number[] {
  if (typeof v === "number") return [];
  if (v instanceof Float64Array) return [v.length];
  if (isNd(v)) return [...v.shape];
  throw new Error(`not a value: ${String(v)}`);
}



/** A leaf of the given dims with elements from `gen`: a number for [], a Float64Array for 1-D if asked. */
function leaf(dims: number[], gen: () => number, f64 = false): Leaf {
  if (dims.length === 0) return gen();
  const data = Float64Array.from({ length: sizeOf(dims) }, gen);
  return f64 && dims.length === 1 ? data : ndarray(data, dims);
}

/** A leaf like `v` with new row-major elements. */
function like(v: Leaf, data: readonly number[]): Leaf {
  if (typeof v === "number") return data[0];
  if (v instanceof Float64Array) return Float64Array.from(data);
  return nd(data, [...v.shape]);
}

/** x + t·v, leaf by leaf. */
function along(x: Inputs, v: Inputs, t: number): Inputs {
  const r: Inputs = {};
  for (const k of Object.keys(x)) {
    const xs = flat(x[k]);
    const vs = flat(v[k]);
    r[k] = like(x[k], xs.map((xi, i) => xi + t * vs[i]));
  }
  return r;
}

/** x with one element of one leaf moved by d. */
function bumped(x: Inputs, key: string, e: number, d: number): Inputs {
  const xs = flat(x[key]);
  xs[e] += d;
  return { ...x, [key]: like(x[key], xs) };
}

/** A random direction shaped like x, elements in [−1, 1]. */
function directionLike(x: Inputs, r: () => number): Inputs {
  const v: Inputs = {};
  for (const k of Object.keys(x)) v[k] = like(x[k], flat(x[k]).map(() => 2 * r() - 1));
  return v;
}

/** Fourth-order central difference of a vector-valued function of t at 0. */
function diff4(g: (t: number) => number[], h: number): number[] {
  const [p2, p1, m1, m2] = [g(2 * h), g(h), g(-h), g(-2 * h)];
  return p1.map((_, i) => (-p2[i] + 8 * p1[i] - 8 * m1[i] + m2[i]) / (12 * h));
}

/** Σ y·R (or y·R for a real y): a real from a tensor, linear in y. */
function linear(y: unknown, R: Leaf): Scalar {
  if (dimsOf(R).length === 0) return mul(y as Scalar, R as number);
  return sum(mul(y as NdArray, R as NdArray)) as Scalar;
}

/** Σ over leaves of ⟨a_k, v_k⟩ (a traced or concrete, v concrete). */
function inner(a: Record<string, unknown>, v: Inputs): Scalar {
  let s: Scalar = 0;
  for (const k of Object.keys(v)) s = add(s, linear(a[k], v[k]));
  return s;
}

interface Tol {
  rtol?: number;
  atol?: number;
}

/** Compare elementwise; collects readable mismatches. */
function close(what: string, got: readonly number[], want: readonly number[], { rtol = 1e-6, atol = 1e-8 }: Tol = {}): string[] {
  if (got.length !== want.length) return [`${what}: ${got.length} elements, expected ${want.length}`];
  const bad: string[] = [];
  got.forEach((g, i) => {
    const w = want[i];
    if (!(Math.abs(g - w) <= atol + rtol * Math.abs(w))) bad.push(`${what}[${i}]: got ${g}, expected ${w} (diff ${Math.abs(g - w).toExponential(2)})`);
  });
  return bad.slice(0, 6);
}

/** The cotangent leaf must come back in the input's container, with its dims. */
function containerProblems(key: string, x: Leaf, g: unknown): string[] {
  if (typeof x === "number") return typeof g === "number" ? [] : [`${key}: cotangent of a number is ${typeof g}`];
  if (x instanceof Float64Array)
    return g instanceof Float64Array && g.length === x.length ? [] : [`${key}: cotangent of a Float64Array is not a Float64Array of length ${x.length}`];
  if (!isNd(g)) return [`${key}: cotangent of an ndarray is not an ndarray`];
  return JSON.stringify(g.shape) === JSON.stringify(x.shape)
    ? []
    : [`${key}: cotangent has shape ${JSON.stringify(g.shape)}, expected ${JSON.stringify(x.shape)}`];
}

const H = 1e-3;

interface Case {
  readonly name: string;
  readonly f: Fn;
  readonly x: Inputs;
  readonly tol?: Tol;
}

/** grad of Σ f·R against central differences, element by element; returns mismatches. */
function checkReverse(c: Case, seed = 1): string[] {
  const r = rng(seed);
  const y0 = c.f(c.x);
  const R = leaf(dimsOf(y0), () => 2 * r() - 1);
  const L = (p: AnyRec) => linear(c.f(p), R);
  const g = grad(L, c.x, IGNORE) as Record<string, unknown>;
  const problems: string[] = [];
  for (const k of Object.keys(c.x)) {
    problems.push(...containerProblems(k, c.x[k], g[k]));
    const xs = flat(c.x[k]);
    const want = xs.map((xi, e) => diff4((t) => [L(bumped(c.x, k, e, t)) as number], H * Math.max(1, Math.abs(xi)))[0]);
    problems.push(...close(`grad.${k}`, flat(g[k]), want, c.tol));
  }
  return problems;
}

/** jvp(f, x, v) against the difference quotient of f along v, and against ⟨grad L, v⟩. */
function checkForward(c: Case, seed = 2): string[] {
  const r = rng(seed);
  const v = directionLike(c.x, r);
  const y0 = c.f(c.x);
  const [y, ydot] = jvp(c.f, c.x, v, IGNORE);
  const problems = close("jvp value", flat(y), flat(y0), { rtol: 1e-12, atol: 1e-12 });
  if (JSON.stringify(dimsOf(ydot)) !== JSON.stringify(dimsOf(y0)))
    problems.push(`jvp tangent has dims ${JSON.stringify(dimsOf(ydot))}, f(x) ${JSON.stringify(dimsOf(y0))}`);
  const want = diff4((t) => flat(c.f(along(c.x, v, t))), H);
  problems.push(...close("jvp tangent", flat(ydot), want, c.tol));
  // ⟨R, J v⟩ = ⟨Jᵀ R, v⟩
  const R = leaf(dimsOf(y0), () => 2 * r() - 1);
  const g = grad((p: AnyRec) => linear(c.f(p), R), c.x, IGNORE) as Record<string, unknown>;
  const lhs = flat(ydot).reduce((s, yi, i) => s + yi * flat(R)[i], 0);
  const rhs = Object.keys(c.x).reduce((s, k) => s + flat(g[k]).reduce((u, gi, i) => u + gi * flat(v[k])[i], 0), 0);
  problems.push(...close("⟨R, Jv⟩ vs ⟨JᵀR, v⟩", [lhs], [rhs], { rtol: 1e-10, atol: 1e-10 }));
  return problems;
}

/** Second order: hvp and reverse-over-reverse against differences of grad along v. */
function checkSecond(c: Case, seed = 3): string[] {
  const r = rng(seed);
  const y0 = c.f(c.x);
  const R = leaf(dimsOf(y0), () => 2 * r() - 1);
  const v = directionLike(c.x, r);
  const L2 = (p: AnyRec) => linear(tanh(c.f(p)), R);
  const keys = Object.keys(c.x);
  const gradAt = (t: number) => {
    const g = grad(L2, along(c.x, v, t), IGNORE) as Record<string, unknown>;
    return keys.flatMap((k) => flat(g[k]));
  };
  const want = diff4(gradAt, H);
  const problems: string[] = [];
  const Hv = hvp(L2, c.x, v, IGNORE) as Record<string, unknown>;
  problems.push(...keys.flatMap((k) => containerProblems(`hvp.${k}`, c.x[k], Hv[k])));
  problems.push(...close("hvp", keys.flatMap((k) => flat(Hv[k])), want, c.tol));
  const rr = grad((p: AnyRec) => inner(grad(L2, p, IGNORE) as Record<string, unknown>, v), c.x, IGNORE) as Record<string, unknown>;
  problems.push(...close("grad⟨grad, v⟩", keys.flatMap((k) => flat(rr[k])), want, c.tol));
  return problems;
}

function checkAll(c: Case): void {
  expect(checkReverse(c), `${c.name}: reverse`).toEqual([]);
  expect(checkForward(c), `${c.name}: forward`).toEqual([]);
  expect(checkSecond(c), `${c.name}: second order`).toEqual([]);
}

// ---------------------------------------------------------------- domains

type Gen = (r: () => number) => () => number;
const range = (lo: number, hi: number): Gen => (r) => () => lo + (hi - lo) * r();
/** Magnitudes in [lo, hi] with random signs: away from 0. */
const away = (lo: number, hi: number): Gen => (r) => () => (r() < 0.5 ? -1 : 1) * (lo + (hi - lo) * r());
/** Pairwise distinct values at least 0.05 apart (no ties for max/min, even after a bump). */
const distinct = (n: number, r: () => number): number[] => {
  const v = Array.from({ length: n }, (_, i) => 0.1 * i - 0.05 * n + 0.02 * r());
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [v[i], v[j]] = [v[j], v[i]];
  }
  return v;
};

const ANY = range(-1.5, 1.5);
const UNARY: [string, Fn, Gen][] = [
  ["neg", neg, ANY],
  ["exp", exp, ANY],
  ["log", log, range(0.3, 2)],
  ["sin", sin, ANY],
  ["cos", cos, ANY],
  ["tan", tan, range(-1.2, 1.2)],
  ["tanh", tanh, ANY],
  ["sinh", sinh, ANY],
  ["cosh", cosh, ANY],
  ["asin", asin, range(-0.9, 0.9)],
  ["acos", acos, range(-0.9, 0.9)],
  ["atan", atan, ANY],
  ["sqrt", sqrt, range(0.3, 2)],
  ["square", square, ANY],
  ["log1p", log1p, range(-0.5, 2)],
  ["expm1", expm1, ANY],
  ["sigmoid", sigmoid, range(-3, 3)],
  ["softplus", softplus, range(-3, 3)],
  ["abs", abs, away(0.2, 1.5)],
  ["sign", sign, away(0.2, 1.5)],
  ["safeLog", safeLog, range(0.3, 2)],
  ["safeRecip", safeRecip, away(0.4, 2)],
];
const BINARY: [string, Fn, Gen, Gen][] = [
  ["add", add, ANY, ANY],
  ["sub", sub, ANY, ANY],
  ["mul", mul, ANY, ANY],
  ["div", div, ANY, away(0.5, 2)],
  // away from the branch cut (a = 0, b < 0)
  ["atan2", atan2, away(0.3, 1.5), away(0.5, 2)],
  ["pow", pow, range(0.5, 2), ANY],
  ["xlogy", xlogy, ANY, range(0.3, 2)],
];

// ---------------------------------------------------------------- elementwise

describe("elementwise unary primitives on tensors", () => {
  const SHAPES: [string, number[], boolean][] = [
    ["Float64Array [5]", [5], true],
    ["ndarray [2, 3]", [2, 3], false],
    ["ndarray [2, 1, 3]", [2, 1, 3], false],
    ["ndarray [1]", [1], false],
  ];
  for (const [name, f, gen] of UNARY) {
    it.each(SHAPES)(`${name} on %s`, (_label, dims, f64) => {
      const g = gen(rng(dims.length * 31 + name.length));
      checkAll({ name, f: (p) => f(p.x), x: { x: leaf(dims, g, f64) } });
    });
  }
  it("every unary op composed on one [3, 2] tensor (chain of rules, one trace)", () => {
    const x = leaf([3, 2], range(0.35, 0.85)(rng(5)));
    const f = (p: Inputs) => {
      let t: unknown = p.x;
      // keep the value inside (0.3, 0.9) so that every op's domain holds
      t = add(0.6, mul(0.25, sin(t as NdArray)));
      t = add(0.6, mul(0.25, tanh(asin(t as NdArray))));
      t = add(0.6, mul(0.1, acos(t as NdArray)));
      t = add(sqrt(t as NdArray), log(t as NdArray));
      t = mul(t as NdArray, sigmoid(softplus(t as NdArray)));
      t = add(expm1(t as NdArray), log1p(cosh(sinh(atan(t as NdArray)))));
      return div(square(abs(t as NdArray)), add(2, tan(mul(0.3, t as NdArray))));
    };
    checkAll({ name: "chain", f, x: { x } });
  });
});

describe("elementwise binary primitives with broadcasting", () => {
  // [] is a number leaf (a traced real inside f); 1-D leaves are Float64Arrays
  const PAIRS: [number[], number[]][] = [
    [[2, 3], [2, 3]],
    [[3, 1], [1, 4]],
    [[], [2, 3]],
    [[2, 3], []],
    [[2, 1, 3], [4, 3]],
    [[4, 3], [2, 1, 3]],
    [[4], [2, 3, 4]],
    [[1], [5]],
    [[2, 1], [1]],
  ];
  for (const [name, f, ga, gb] of BINARY) {
    it.each(PAIRS.map(([a, b]) => [JSON.stringify(a), JSON.stringify(b), a, b] as const))(`${name}: %s with %s`, (_la, _lb, da, db) => {
      const r = rng(da.length * 7 + db.length * 13 + name.length);
      const x = { a: leaf(da, ga(r), true), b: leaf(db, gb(r), true) };
      checkAll({ name, f: (p) => f(p.a, p.b), x });
    });
    it(`${name}: a tensor with an untraced number and an untraced ndarray`, () => {
      const r = rng(99);
      const C = leaf([2, 3], gb(r)) as NdArray;
      const c = gb(r)();
      const x = { a: leaf([2, 3], ga(r)) };
      checkAll({ name, f: (p) => add(f(p.a, c), f(p.a, C)), x });
      const y = { b: leaf([2, 3], gb(r)) };
      const A = leaf([1, 3], ga(r)) as NdArray;
      const a = ga(r)();
      checkAll({ name, f: (p) => mul(f(A, p.b), f(a, p.b)), x: y });
    });
  }
  it("the same tensor on both sides (mul(x, x), div(x, x + 1), pow(x, x))", () => {
    const x = { x: leaf([2, 2], range(0.5, 1.5)(rng(4))) };
    checkAll({ name: "self", f: (p) => add(add(mul(p.x, p.x), div(p.x, add(p.x, 1))), pow(p.x, p.x)), x });
  });
});

// ---------------------------------------------------------------- tensor ops

const rnd = (seed: number) => range(-1, 1)(rng(seed));
const T = (dims: number[], seed: number, f64 = false) => leaf(dims, rnd(seed), f64);

const CASES: Case[] = [
  // matmul, dot, outer
  { name: "matmul [3,4]@[4,2]", f: (p) => matmul(p.a, p.b), x: { a: T([3, 4], 1), b: T([4, 2], 2) } },
  { name: "matmul batched [2,3,4]@[4,5]", f: (p) => matmul(p.a, p.b), x: { a: T([2, 3, 4], 3), b: T([4, 5], 4) } },
  { name: "matmul batch broadcast [2,1,3,4]@[3,4,2]", f: (p) => matmul(p.a, p.b), x: { a: T([2, 1, 3, 4], 5), b: T([3, 4, 2], 6) } },
  { name: "matmul batch broadcast [1,2,3]@[4,3,2]", f: (p) => matmul(p.a, p.b), x: { a: T([1, 2, 3], 7), b: T([4, 3, 2], 8) } },
  { name: "matmul [2,3]@[1,3,2] (batch axis on b only)", f: (p) => matmul(p.a, p.b), x: { a: T([2, 3], 9), b: T([1, 3, 2], 10) } },
  { name: "matmul vector@matrix [4]@[4,3]", f: (p) => matmul(p.a, p.b), x: { a: T([4], 11, true), b: T([4, 3], 12) } },
  { name: "matmul matrix@vector [3,4]@[4]", f: (p) => matmul(p.a, p.b), x: { a: T([3, 4], 13), b: T([4], 14, true) } },
  { name: "matmul batched@vector [2,3,4]@[4]", f: (p) => matmul(p.a, p.b), x: { a: T([2, 3, 4], 15), b: T([4], 16) } },
  { name: "matmul vector@batched [3]@[2,3,4]", f: (p) => matmul(p.a, p.b), x: { a: T([3], 17), b: T([2, 3, 4], 18) } },
  { name: "matmul A Aᵀ", f: (p) => matmul(p.a, transpose(p.a)), x: { a: T([3, 2], 19) } },
  { name: "matmul with a constant", f: (p) => matmul(nd([1, 2, -1, 0.5, 3, -2], [2, 3]), p.w), x: { w: T([3, 2], 20) } },
  { name: "matmul [1,1]@[1,1]", f: (p) => matmul(p.a, p.b), x: { a: T([1, 1], 21), b: T([1, 1], 22) } },
  // shapes where a cotangent is formed as a transposed product, (C̄ᵀ A)ᵀ or (B C̄ᵀ)ᵀ, which
  // transposes fewer elements than Aᵀ C̄ or C̄ Bᵀ
  { name: "matmul tall [8,6]@[6,2] (B̄ = (C̄ᵀ A)ᵀ)", f: (p) => matmul(p.a, p.b), x: { a: T([8, 6], 23), b: T([6, 2], 24) } },
  { name: "matmul wide [2,6]@[6,8] (Ā = (B C̄ᵀ)ᵀ)", f: (p) => matmul(p.a, p.b), x: { a: T([2, 6], 25), b: T([6, 8], 26) } },
  {
    name: "matmul batched tall [3,8,6]@[6,2] (B̄ transposed, summed over the batch)",
    f: (p) => matmul(p.a, p.b),
    x: { a: T([3, 8, 6], 27), b: T([6, 2], 28) },
  },
  {
    name: "matmul [2,6]@ batched wide [3,6,8] (Ā transposed, summed over the batch)",
    f: (p) => matmul(p.a, p.b),
    x: { a: T([2, 6], 29), b: T([3, 6, 8], 30) },
  },
  { name: "dot of vectors", f: (p) => dot(p.a, p.b), x: { a: T([5], 23, true), b: T([5], 24) } },
  { name: "dot matrix-vector", f: (p) => dot(p.a, p.b), x: { a: T([2, 5], 25), b: T([5], 26, true) } },
  { name: "dot matrix-matrix", f: (p) => dot(p.a, p.b), x: { a: T([2, 3], 27), b: T([3, 3], 28) } },
  { name: "outer", f: (p) => outer(p.a, p.b), x: { a: T([3], 29, true), b: T([4], 30) } },
  // reductions
  ...[undefined, 0, 1, -1, [0, 2], [2, 0], [0, 1, 2]].flatMap((axis, i) =>
    [false, true].flatMap((keepdims, j): Case[] => [
      { name: `sum axis=${JSON.stringify(axis)} keepdims=${keepdims}`, f: (p) => sum(p.a, axis, keepdims), x: { a: T([2, 3, 4], 40 + i * 2 + j) } },
      { name: `mean axis=${JSON.stringify(axis)} keepdims=${keepdims}`, f: (p) => mean(p.a, axis, keepdims), x: { a: T([2, 3, 4], 60 + i * 2 + j) } },
      {
        name: `logsumexp axis=${JSON.stringify(axis)} keepdims=${keepdims}`,
        f: (p) => logsumexp(p.a, axis, keepdims),
        x: { a: leaf([2, 3, 4], range(-2, 2)(rng(80 + i * 2 + j))) },
      },
      {
        name: `max axis=${JSON.stringify(axis)} keepdims=${keepdims}`,
        f: (p) => max(p.a, axis, keepdims),
        x: { a: nd(distinct(24, rng(100 + i * 2 + j)), [2, 3, 4]) },
      },
      {
        name: `min axis=${JSON.stringify(axis)} keepdims=${keepdims}`,
        f: (p) => min(p.a, axis, keepdims),
        x: { a: nd(distinct(24, rng(120 + i * 2 + j)), [2, 3, 4]) },
      },
    ]),
  ),
  { name: "sum of a Float64Array", f: (p) => sum(p.a), x: { a: T([5], 140, true) } },
  { name: "max of a Float64Array", f: (p) => max(p.a), x: { a: Float64Array.from(distinct(6, rng(141))) } },
  { name: "logsumexp over size-1 axes [1,3,1] axis [0,2]", f: (p) => logsumexp(p.a, [0, 2]), x: { a: T([1, 3, 1], 142) } },
  // logsumexp's reverse rule is scaledExp (ȳ·exp(x − y)): its own rules, through grad inside the function
  {
    name: "logsumexp's gradient [3,4] axis 1 (scaledExp)",
    f: (p) => mul(grad((v: Tensor) => sum(mul(logsumexp(v, 1), p.b)), p.a), p.a),
    x: { a: T([3, 4], 144), b: T([3], 145) },
  },
  { name: "mean over axis of [3,1] keepdims", f: (p) => mean(p.a, 1, true), x: { a: T([3, 1], 143) } },
  // softmax, logSoftmax
  ...[0, 1, -1].flatMap((axis, i): Case[] => [
    { name: `softmax [3,4] axis ${axis}`, f: (p) => softmax(p.a, axis), x: { a: leaf([3, 4], range(-2, 2)(rng(150 + i))) } },
    { name: `logSoftmax [3,4] axis ${axis}`, f: (p) => logSoftmax(p.a, axis), x: { a: leaf([3, 4], range(-2, 2)(rng(160 + i))) } },
    { name: `softmax [2,3,4] axis ${axis}`, f: (p) => softmax(p.a, axis), x: { a: leaf([2, 3, 4], range(-2, 2)(rng(170 + i))) } },
    { name: `logSoftmax [2,3,4] axis ${axis}`, f: (p) => logSoftmax(p.a, axis), x: { a: leaf([2, 3, 4], range(-2, 2)(rng(180 + i))) } },
  ]),
  { name: "softmax default axis of a Float64Array", f: (p) => softmax(p.a), x: { a: T([4], 190, true) } },
  { name: "logSoftmax [2,3,4] axis 2 (default)", f: (p) => logSoftmax(p.a), x: { a: T([2, 3, 4], 191) } },
  // shape ops
  { name: "reshape [2,3,4] to [6,-1]", f: (p) => reshape(p.a, [6, -1]), x: { a: T([2, 3, 4], 200) } },
  { name: "reshape [2,3,4] to [24]", f: (p) => reshape(p.a, [24]), x: { a: T([2, 3, 4], 201) } },
  { name: "reshape [6] to [1,3,1,2] then tanh", f: (p) => tanh(reshape(p.a, [1, 3, 1, 2])), x: { a: T([6], 202, true) } },
  { name: "transpose default [2,3,4]", f: (p) => transpose(p.a), x: { a: T([2, 3, 4], 210) } },
  { name: "transpose perm [1,0,2]", f: (p) => transpose(p.a, [1, 0, 2]), x: { a: T([2, 3, 4], 211) } },
  {
    name: "transpose perm [2,0,1] times a constant",
    f: (p) => mul(transpose(p.a, [2, 0, 1]), nd(distinct(24, rng(3)), [4, 2, 3])),
    x: { a: T([2, 3, 4], 212) },
  },
  { name: "broadcastTo [3,1] to [2,3,4]", f: (p) => broadcastTo(p.a, [2, 3, 4]), x: { a: T([3, 1], 220) } },
  { name: "broadcastTo [4] to [3,4]", f: (p) => broadcastTo(p.a, [3, 4]), x: { a: T([4], 221, true) } },
  { name: "broadcastTo real to [2,2]", f: (p) => broadcastTo(p.s, [2, 2]), x: { s: 0.7 } },
  { name: "slice [4,5] box [1,0]…[3,4]", f: (p) => slice(p.a, [1, 0], [3, 4]), x: { a: T([4, 5], 230) } },
  { name: "slice of a Float64Array", f: (p) => slice(p.a, [2], [5]), x: { a: T([6], 231, true) } },
  { name: "slice [2,3,4] full box", f: (p) => slice(p.a, [0, 0, 0], [2, 3, 4]), x: { a: T([2, 3, 4], 232) } },
  {
    name: "overlapping slices and an index summed",
    f: (p) => add(add(slice(p.a, [0, 0], [2, 2]), slice(p.a, [1, 1], [3, 3])), index(p.a, [1, 1])),
    x: { a: T([3, 3], 233) },
  },
  { name: "index [2,1] of a matrix", f: (p) => index(p.a, [2, 1]), x: { a: T([3, 2], 240) } },
  { name: "index of a vector, twice the same element", f: (p) => mul(index(p.a, 3), add(index(p.a, 3), index(p.a, 0))), x: { a: T([4], 241, true) } },
  { name: "index and other uses of the same tensor", f: (p) => add(mul(index(p.a, [0, 1]), sum(p.a)), sin(index(p.a, [1, 0]))), x: { a: T([2, 2], 242) } },
  // gather, scatterAdd
  { name: "gather axis 0 with repeated indices", f: (p) => gather(p.a, [2, 0, 2, 2]), x: { a: T([3, 4], 250) } },
  { name: "gather axis 1 with repeated indices", f: (p) => gather(p.a, [1, 1, 0], 1), x: { a: T([2, 3], 251) } },
  { name: "gather axis -1 of [2,2,3]", f: (p) => gather(p.a, [2, 0], -1), x: { a: T([2, 2, 3], 252) } },
  { name: "gather of a Float64Array (Int32Array indices)", f: (p) => gather(p.a, Int32Array.from([4, 1, 1])), x: { a: T([5], 253, true) } },
  { name: "scatterAdd axis 0, repeated indices", f: (p) => scatterAdd(p.t, [1, 3, 1], p.v), x: { t: T([4, 3], 260), v: T([3, 3], 261) } },
  { name: "scatterAdd axis 1, repeated indices", f: (p) => scatterAdd(p.t, [0, 0, 3], p.v, 1), x: { t: T([2, 4], 262), v: T([2, 3], 263) } },
  { name: "scatterAdd into constant zeros", f: (p) => scatterAdd(nd([0, 0, 0, 0], [4]), [2, 2, 0], p.v), x: { v: T([3], 264, true) } },
  {
    name: "scatterAdd then gather (nonlinear around)",
    f: (p) => gather(mul(scatterAdd(p.t, [1, 1], p.v), p.t), [1, 0, 1]),
    x: { t: T([3, 2], 265), v: T([2, 2], 266) },
  },
  // concat, stack, unstack
  { name: "concat axis 0 of [2,3],[1,3],[4,3]", f: (p) => concat([p.a, p.b, p.c]), x: { a: T([2, 3], 270), b: T([1, 3], 271), c: T([4, 3], 272) } },
  { name: "concat axis 1 of [2,1],[2,3]", f: (p) => concat([p.a, p.b], 1), x: { a: T([2, 1], 273), b: T([2, 3], 274) } },
  { name: "concat axis -1 with a constant and the same tensor twice", f: (p) => concat([p.a, nd([1, 2], [2, 1]), p.a], -1), x: { a: T([2, 2], 275) } },
  { name: "concat of Float64Arrays", f: (p) => concat([p.a, p.b]), x: { a: T([2], 276, true), b: T([3], 277, true) } },
  ...[0, 1, 2, -1].map((axis, i): Case => ({
    name: `stack of [2,3] matrices, axis ${axis}`,
    f: (p) => stack([p.a, p.b, p.c], axis),
    x: { a: T([2, 3], 280 + i), b: T([2, 3], 284 + i), c: T([2, 3], 288 + i) },
  })),
  { name: "stack of reals (numbers and elements)", f: (p) => stack([p.s, index(p.v, 0), mul(p.s, index(p.v, 2)), 4]), x: { s: 0.3, v: T([3], 292, true) } },
  { name: "stack of vectors axis 1", f: (p) => stack([p.a, p.b], 1), x: { a: T([3], 293, true), b: T([3], 294) } },
  { name: "unstack a matrix along axis 0 (rows reversed)", f: (p) => concat(unstack(p.a).reverse() as NdArray[]), x: { a: T([3, 4], 300) } },
  {
    name: "unstack a matrix along axis 1, weighted",
    f: (p) => (unstack(p.a, 1) as NdArray[]).reduce<unknown>((s, col, i) => add(s as NdArray, mul(col, i + 1)), 0),
    x: { a: T([3, 4], 301) },
  },
  {
    name: "unstack [2,3,2] along axis -1",
    f: (p) => {
      const [u, w] = unstack(p.a, -1) as NdArray[];
      return mul(u, sin(w));
    },
    x: { a: T([2, 3, 2], 302) },
  },
  {
    name: "unstack a vector into reals, restacked",
    f: (p) => stack((unstack(p.a) as Scalar[]).map((e, i) => mul(e, i - 1)).reverse()),
    x: { a: T([4], 303, true) },
  },
  // where
  {
    name: "where(gt(x,0), x·y, sin y)",
    f: (p) => where(gt(p.x as NdArray, 0), mul(p.x, p.y), sin(p.y)),
    x: { x: leaf([2, 3], away(0.3, 1)(rng(310))), y: T([2, 3], 311) },
  },
  {
    name: "where with a broadcast mask [3] and branches [2,3], real",
    f: (p) => where(gt(p.c as NdArray, 0), exp(p.a), p.s),
    x: { c: leaf([3], away(0.3, 1)(rng(312)), true), a: T([2, 3], 313), s: 0.4 },
  },
  { name: "where(mask [2,1], a [1,3], b [2,3])", f: (p) => where(nd([1, 0], [2, 1]), p.a, p.b), x: { a: T([1, 3], 314), b: T([2, 3], 315) } },
  { name: "where with an array mask", f: (p) => where([1, 0, 1], square(p.a), neg(p.a)), x: { a: T([3], 316, true) } },
  // conv2d
  { name: "conv2d stride 2 padding 1", f: (p) => conv2d(p.x, p.w, { stride: 2, padding: 1 }), x: { x: T([2, 3, 5, 5], 320), w: T([4, 3, 3, 3], 321) } },
  { name: "conv2d stride 1 padding 0", f: (p) => conv2d(p.x, p.w), x: { x: T([1, 1, 6, 6], 322), w: T([2, 1, 3, 3], 323) } },
  {
    name: "conv2d stride [1,2] padding [0,1], non-square kernel",
    f: (p) => conv2d(p.x, p.w, { stride: [1, 2], padding: [0, 1] }),
    x: { x: T([1, 2, 4, 5], 324), w: T([3, 2, 2, 3], 325) },
  },
  {
    name: "conv2d stride 3 padding 1 (uneven windows)",
    f: (p) => conv2d(p.x, p.w, { stride: 3, padding: 1 }),
    x: { x: T([1, 1, 7, 7], 326), w: T([1, 1, 3, 3], 327) },
  },
  { name: "conv2d 1×1 kernel", f: (p) => conv2d(p.x, p.w), x: { x: T([2, 3, 2, 2], 328), w: T([2, 3, 1, 1], 329) } },
  {
    name: "conv2d, tanh, conv2d",
    f: (p) => conv2d(tanh(conv2d(p.x, p.w1, { padding: 1 })) as NdArray, p.w2, { stride: 2 }),
    x: { x: T([1, 2, 5, 5], 330), w1: T([2, 2, 3, 3], 331), w2: T([1, 2, 2, 2], 332) },
  },
  // composites
  {
    name: "softmax cross-entropy with matmul and a bias",
    f: (p) => neg(mean(sum(mul(nd([1, 0, 0, 0, 0, 1, 0, 1, 0], [3, 3]), logSoftmax(add(matmul(p.X, p.W), p.b))), 1))),
    x: { X: T([3, 2], 340), W: T([2, 3], 341), b: T([3], 342, true) },
  },
  { name: "normalize rows: x / sqrt(Σx² + 1)", f: (p) => div(p.a, sqrt(add(sum(square(p.a), 1, true), 1))), x: { a: T([3, 4], 343) } },
];

describe("tensor ops: reverse rules against central differences", () => {
  it.each(CASES.map((c) => [c.name, c] as const))("%s", (_n, c) => {
    expect(checkReverse(c)).toEqual([]);
  });
});

describe("softmax and logSoftmax at large logits", () => {
  it("equal logits give 1/n and −log n however large they are (x − logsumexp(x) was rounded at x: [1, 1] at 10¹⁶)", () => {
    for (const c of [1e8, 1e12, 1e16, 1e308, -1e308]) {
      const x = Float64Array.of(c, c);
      expect(Array.from((softmax(x) as NdArray).data), `softmax at ${c}`).toEqual([0.5, 0.5]);
      expect(Array.from((logSoftmax(x) as NdArray).data), `logSoftmax at ${c}`).toEqual([-Math.LN2, -Math.LN2]);
      // its derivative: ȳ − softmax · Σ ȳ, from the same stable values
      expect(Array.from(grad((t: Tensor) => sum(mul(logSoftmax(t), Float64Array.of(1, 0))), x) as Float64Array)).toEqual([0.5, -0.5]);
    }
    const three = Float64Array.of(1e16, 1e16, 0);
    expect(Array.from((softmax(three) as NdArray).data)).toEqual([0.5, 0.5, 0]);
  });
});

describe("tensor ops on a real (dims []): a real result, derivatives through it", () => {
  it("sum, mean and transpose of a real input are the identity, in every mode and order", () => {
    // a result of dims [] came back from reshape and broadcastTo as a buffer of one, read as a real: 0
    expect([grad((a: Scalar) => sum(a), 2), grad((a: Scalar) => mean(add(a, 1)), 2), grad((a: Scalar) => sum(neg(a)), 2)]).toEqual([1, 1, -1]);
    expect(grad((a: Scalar) => add(sum(a), a), 3)).toBe(2);
    expect(grad((a: Scalar) => sum(transpose(a as never)), 2)).toBe(1);
    expect(grad((p: { a: Scalar; t: Tensor }) => add(sum(p.a), sum(p.t)), { a: 1, t: Float64Array.of(1, 2) })).toEqual({ a: 1, t: Float64Array.of(1, 1) });
    expect(jvp((a: Scalar) => grad((b: Scalar) => mul(sum(b), b), a), 3, 1)).toEqual([6, 2]);
  });
  it("elementwise primitives on 0-d tensors compute on their element (their buffers were added as strings: 3 + 1 gave '31')", () => {
    const z = ndarray(Float64Array.of(3), []);
    expect(valueAndGrad((t: Tensor) => sum(add(t, 1)), z)[0]).toBe(4);
    expect((hessian((t: Tensor) => sum(mul(add(t, t), t)), z) as NdArray).get()).toBe(4);
    // and x⁰ folds for them too: its derivative at 0 is 0, not 0 · 0⁻¹
    expect((grad((t: Tensor) => sum(pow(t, 0)), ndarray(Float64Array.of(0), [])) as NdArray).get()).toBe(0);
  });
});

describe("matmul's cotangents: whichever operand the rule transposes, the plain formulas to the bit", () => {
  // L = Σ (A B) ⊙ R, so Ā = R Bᵀ and B̄ = Aᵀ R, computed here untraced by those very formulas
  it.each([
    [[8, 6], [6, 2]], [[2, 6], [6, 8]], [[64, 128], [128, 10]], [[5, 5], [5, 5]], [[3, 8, 6], [3, 6, 2]], [[3, 2, 6], [3, 6, 8]],
  ])("%j @ %j", (ad, bd) => {
    const [a, b] = [T(ad, 31) as NdArray, T(bd, 32) as NdArray];
    const R = T([...ad.slice(0, -1), bd[bd.length - 1]], 33) as NdArray;
    const g = grad((p: { a: Tensor; b: Tensor }) => sum(mul(matmul(p.a, p.b), R)), { a, b }) as { a: NdArray; b: NdArray };
    const swap = (x: NdArray) => transpose(x, [...x.shape.slice(0, -2).map((_, i) => i), x.shape.length - 1, x.shape.length - 2]) as NdArray;
    const same = (x: NdArray, y: NdArray) => {
      const [u, w] = [flat(x), flat(y)];
      return u.length === w.length && u.every((v, i) => Object.is(v, w[i]));
    };
    expect(same(g.a, matmul(R, swap(b)) as NdArray)).toBe(true);
    expect(same(g.b, matmul(swap(a), R) as NdArray)).toBe(true);
  });
});

describe("tensor ops: forward mode (jvp) against differences and ⟨grad, v⟩", () => {
  it.each(CASES.map((c) => [c.name, c] as const))("%s", (_n, c) => {
    expect(checkForward(c)).toEqual([]);
  });
});

describe("tensor ops: second order (hvp and reverse over reverse) against differences of grad", () => {
  it.each(CASES.map((c) => [c.name, c] as const))("%s", (_n, c) => {
    expect(checkSecond(c)).toEqual([]);
  });
});

// ---------------------------------------------------------------- random shapes

/** A random base shape and two shapes that broadcast to it (axes set to 1, leading axes dropped). */
const broadcastPair = fc
  .record({
    base: fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 0, maxLength: 3 }),
    onesA: fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }),
    onesB: fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }),
    dropA: fc.integer({ min: 0, max: 3 }),
    dropB: fc.integer({ min: 0, max: 3 }),
    seed: fc.integer({ min: 1, max: 1e6 }),
  })
  .map(({ base, onesA, onesB, dropA, dropB, seed }) => {
    const derive = (ones: boolean[], drop: number) => base.map((d, i) => (ones[i] ? 1 : d)).slice(Math.min(drop, base.length));
    return { a: derive(onesA, dropA), b: derive(onesB, dropB), seed };
  });

describe("random shapes (fast-check)", () => {
  it("binary ops broadcast: grad and jvp against differences", () => {
    fc.assert(
      fc.property(broadcastPair, fc.integer({ min: 0, max: BINARY.length - 1 }), ({ a, b, seed }, k) => {
        const [name, f, ga, gb] = BINARY[k];
        const r = rng(seed);
        const c: Case = {
          name: `${name} ${JSON.stringify(a)} ${JSON.stringify(b)}`,
          f: (p) => f(p.a, p.b),
          x: { a: leaf(a, ga(r), r() < 0.5), b: leaf(b, gb(r), r() < 0.5) },
        };
        expect(checkReverse(c, seed), c.name).toEqual([]);
        expect(checkForward(c, seed + 1), c.name).toEqual([]);
      }),
      { numRuns: 40, seed: 42 },
    );
  });

  it("unary ops on random shapes: grad, jvp and hvp against differences", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 1, maxLength: 3 }),
        fc.integer({ min: 0, max: UNARY.length - 1 }),
        fc.integer({ min: 1, max: 1e6 }),
        (dims, k, seed) => {
          const [name, f, gen] = UNARY[k];
          const c: Case = { name: `${name} ${JSON.stringify(dims)}`, f: (p) => f(p.x), x: { x: leaf(dims, gen(rng(seed))) } };
          checkAll(c);
        },
      ),
      { numRuns: 30, seed: 43 },
    );
  });

  it("reductions over random axes, with and without keepdims", () => {
    const reductions: [string, Fn, boolean][] = [
      ["sum", sum, false],
      ["mean", mean, false],
      ["logsumexp", logsumexp, false],
      ["max", max, true],
      ["min", min, true],
    ];
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 3 }),
        fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }),
        fc.boolean(),
        fc.integer({ min: 0, max: reductions.length - 1 }),
        fc.integer({ min: 1, max: 1e6 }),
        (dims, pick, keepdims, k, seed) => {
          const axes = dims.map((_, i) => i).filter((i) => pick[i]);
          const axis = axes.length === 1 ? axes[0] - dims.length /* negative */ : axes.length === 0 ? undefined : axes;
          const [name, f, needsDistinct] = reductions[k];
          const r = rng(seed);
          const x = needsDistinct ? nd(distinct(sizeOf(dims), r), dims) : leaf(dims, range(-2, 2)(r));
          const c: Case = {
            name: `${name} ${JSON.stringify(dims)} axis=${JSON.stringify(axis)} keepdims=${keepdims}`,
            f: (p) => f(p.x, axis, keepdims),
            x: { x },
          };
          expect(checkReverse(c, seed), c.name).toEqual([]);
          expect(checkForward(c, seed), c.name).toEqual([]);
        },
      ),
      { numRuns: 40, seed: 44 },
    );
  });

  it("batched matmul with random batch broadcasting", () => {
    const dim = fc.integer({ min: 1, max: 3 });
    fc.assert(
      fc.property(dim, dim, dim, broadcastPair, (m, k, n, { a, b, seed }) => {
        const r = rng(seed);
        const c: Case = {
          name: `matmul ${JSON.stringify([...a, m, k])} @ ${JSON.stringify([...b, k, n])}`,
          f: (p) => matmul(p.a, p.b),
          x: { a: leaf([...a, m, k], range(-1, 1)(r)), b: leaf([...b, k, n], range(-1, 1)(r)) },
        };
        expect(checkReverse(c, seed), c.name).toEqual([]);
        expect(checkForward(c, seed), c.name).toEqual([]);
      }),
      { numRuns: 30, seed: 45 },
    );
  });
});

// ---------------------------------------------------------------- random compositions

describe("random compositions of tensor ops (fast-check)", () => {
  it("grad, jvp, hvp and reverse over reverse of random chains against differences", () => {
    fc.assert(
      fc.property(tensorChains, fc.integer({ min: 1, max: 1e6 }), (chain, seed) => {
        const r = rng(seed);
        const c: Case = {
          name: chain.name,
          f: (p) => chain.f(p.x, p.W),
          x: { x: leaf([3, 4], range(-1, 1)(r)), W: leaf([4, 4], range(-0.7, 0.7)(r)) },
          tol: { rtol: 1e-6, atol: 1e-7 },
        };
        expect(checkReverse(c, seed), c.name).toEqual([]);
        expect(checkForward(c, seed), c.name).toEqual([]);
        expect(checkSecond(c, seed), c.name).toEqual([]);
      }),
      { numRuns: 40, seed: 46 },
    );
  });
});
