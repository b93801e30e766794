/**
 * @file Cases for the tests that compare two derivative paths (hvp's and hessian's sweep
 * against the symbolic path, jit and vmap against f): every scalar primitive at its
 * special points in a few contexts, points with signed zeros and units, Rosenbrock's
 * function with its Hessian (and on a tensor), W5's deep chain with its derivative, and W3's per-element
 * function (a loop and a branch that depend on the point). Random programs come from helpers/programs/.
 */
import fc from "fast-check";
import { BINARY_NAMES, UNARY_NAMES } from "@wengert/ops";
import * as W from "../../src/index.js";
import { add, div, gt, lt, mul, shapeOf, sin, slice, square, sub, sum, type Scalar, type Tensor } from "../../src/index.js";

export type F = (p: readonly Scalar[]) => Scalar;

/** A program at a point, with a direction as long as the point. */
export type Case = readonly [f: F, x: number[], v: number[]];

const unaryOf = (name: string) => (W as unknown as Record<string, (x: Scalar) => Scalar>)[name];
const binaryOf = (name: string) => (W as unknown as Record<string, (a: Scalar, b: Scalar) => Scalar>)[name];

/** Points of each primitive's domain, with its special points (kinks, 0 of safeLog, a = 0 of pow). */
const UNARY_POINTS: Record<(typeof UNARY_NAMES)[number], number[]> = {
  neg: [-1.3, 0, 2.5], exp: [-1.5, 0.3, 2], log: [0.3, 1.7, 0], sin: [-2, 0.4, 0], cos: [-1, 0.6, 0], tan: [-1.2, 0.3, 1],
  tanh: [-1.5, 0.2, 0], sinh: [-1, 0.5, 0], cosh: [-1.3, 0.4, 0], asin: [-0.6, 0.1, 1], acos: [-0.6, 0.1, -1],
  atan: [-2, 0.3, 0], sqrt: [0.25, 9, 0], cbrt: [-2.5, 0.3, 0], square: [-1.5, 0.3, 0], log1p: [-0.5, 0.4, -1], expm1: [-1, 0.4, 0],
  sigmoid: [-3, 0.5, 40], softplus: [-2, 0.7, -40], abs: [-1.4, 0.6, 0], sign: [-2, 0.5, 0], safeLog: [0.3, 1.7, 0],
  safeRecip: [-2, 0.5, 0],
};
const BINARY_POINTS: Record<(typeof BINARY_NAMES)[number], [number, number][]> = {
  add: [[-1.2, 0.7], [0, 0]], sub: [[-1.2, 0.7], [0, 0]], mul: [[-1.2, 0.7], [0, 0]], div: [[1.5, 0.7], [0, 2]],
  atan2: [[1, 2], [2, -1.5], [0, 1]], pow: [[0.7, 2.5], [1.8, -1.3], [0, 2], [0, 0.5], [-2, 3]],
  xlogy: [[0.5, 2], [-1.5, 0.4], [0, 2], [0, 0]],
};

/**
 * The unary primitive `name` at each of its points: alone; twice in a product (cotangents
 * accumulated); of a product (mixed terms).
 */
export function unaryCases(name: (typeof UNARY_NAMES)[number]): Case[] {
  const u = unaryOf(name);
  return UNARY_POINTS[name].flatMap((x): Case[] => [
    [([p]) => u(p), [x], [1.5]],
    [([p, q]) => mul(u(p), add(q, u(p))), [x, 0.7], [0.3, -1.1]],
    [([p, q]) => u(mul(p, q)), [x, 1], [-0.4, 0.9]],
  ]);
}

/** The binary primitive `name` at each of its points: alone; twice; the same variable in both places; literals in either. */
export function binaryCases(name: (typeof BINARY_NAMES)[number]): Case[] {
  const b = binaryOf(name);
  return BINARY_POINTS[name].flatMap(([x, y]): Case[] => [
    [([p, q]) => b(p, q), [x, y], [0.3, -1.1]],
    [([p, q]) => mul(b(p, q), add(p, b(p, q))), [x, y], [1.2, 0.5]],
    [([p]) => b(p, p), [x], [0.8]],
    [([p]) => add(b(p, 2), b(2, p)), [x], [-1.3]],
  ]);
}

/** Three reals in [−2, 2]; and three made of 0, −0, ±1 and 0.5 (signed zeros, ties, kinks). */
export const point = fc.array(fc.double({ min: -2, max: 2, noNaN: true }), { minLength: 3, maxLength: 3 });
export const special = fc.array(fc.constantFrom(0, -0, 1, -1, 0.5), { minLength: 3, maxLength: 3 });

/** f(x) = Σ 100 (x_{i+1} − x_i²)² + (1 − x_i)², as in the benchmark. */
export const rosenbrock: F = (x) => {
  let s: Scalar = 0;
  for (let i = 0; i < x.length - 1; i++) s = add(s, add(mul(100, square(sub(x[i + 1], square(x[i])))), square(sub(1, x[i]))));
  return s;
};

/** W1's rosenbrock with tensors, as the bench writes it (slices of x). */
export function rosenbrockTensor(x: Tensor): Scalar {
  const n = shapeOf(x)[0];
  const head = slice(x, [0], [n - 1]);
  const t = sub(slice(x, [1], [n]), square(head));
  return sum(add(mul(100, square(t)), square(sub(1, head))));
}

/**
 * Rosenbrock's Hessian: ∂²/∂x_i² of term i = −400 t_i + 800 x_i² + 2 (t_i = x_{i+1} − x_i²),
 * ∂²/∂x_i∂x_{i+1} = −400 x_i, ∂²/∂x_{i+1}² = 200.
 */
export function rosenbrockHessian(x: number[]): number[][] {
  const H = x.map(() => x.map(() => 0));
  for (let i = 0; i < x.length - 1; i++) {
    const t = x[i + 1] - x[i] * x[i];
    H[i][i] += -400 * t + 800 * x[i] * x[i] + 2;
    H[i][i + 1] += -400 * x[i];
    H[i + 1][i] += -400 * x[i];
    H[i + 1][i + 1] += 200;
  }
  return H;
}

/** W5's deep chain y ← 0.9·y + 0.1·sin y, n steps. */
export const chain =
  (n: number) =>
  (x: Scalar): Scalar => {
    let y = x;
    for (let i = 0; i < n; i++) y = add(mul(0.9, y), mul(0.1, sin(y)));
    return y;
  };

/** The same derivative by forward propagation on numbers (dy/dx carried along). */
export function chainDerivative(n: number, x: number): number {
  let y = x;
  let dy = 1;
  for (let i = 0; i < n; i++) {
    dy = 0.9 * dy + 0.1 * Math.cos(y) * dy;
    y = 0.9 * y + 0.1 * Math.sin(y);
  }
  return dy;
}

/** W3's per-element function: Newton's iteration for √a, then a branch (loop count and branch depend on a). */
export const newton = (a: Scalar): Scalar => {
  let y = a;
  for (let it = 0; it < 50; it++) {
    const r = sub(mul(y, y), a);
    if (!(gt(r, 1e-12) || lt(r, -1e-12))) break;
    y = mul(0.5, add(y, div(a, y)));
  }
  return gt(y, 1) ? mul(mul(y, y), y) : sin(y);
};
