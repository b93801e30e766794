/**
 * @file Numerical checking utilities shared by the test suites: central finite
 * differences (scalar, on flat arrays, and a fourth-order stencil) and a tolerant
 * comparison of numbers or nested arrays/records that names the offending leaf; a
 * gradient of a record of tensors checked against differences; and the error a call throws.
 */
import type { NdArray } from "../../src/index.js";
import { flat, nd } from "./tensors.js";

/** The error `fn` throws (a test of what a mistake reports); fails when it throws none. */
export function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (e) {
    return e as Error;
  }
  throw new Error("expected an error, none was thrown");
}

/** Central difference (f(x + h) − f(x − h)) / 2h: error O(h²) + O(ε|f|/h). */
export function centralDiff(f: (x: number) => number, x: number, h = 1e-6): number {
  return (f(x + h) - f(x - h)) / (2 * h);
}

/**
 * Fourth-order central difference (−f(x+2h) + 8f(x+h) − 8f(x−h) + f(x−2h)) / 12h:
 * error O(h⁴) + O(ε|f|/h), so a larger h (1e-3) keeps both terms small.
 */
export function centralDiff4(f: (x: number) => number, x: number, h = 1e-3): number {
  return (-f(x + 2 * h) + 8 * f(x + h) - 8 * f(x - h) + f(x - 2 * h)) / (12 * h);
}

/** `x` with its i-th entry moved by `d`. */
export function bump(x: readonly number[], i: number, d: number): number[] {
  const y = [...x];
  y[i] += d;
  return y;
}

/** The gradient of a real function of a flat array, by central differences in each coordinate. */
export function fdGradient(f: (x: number[]) => number, x: readonly number[], h = 1e-6, stencil: typeof centralDiff = centralDiff): number[] {
  return x.map((xi, i) => stencil((t) => f(bump(x, i, t - xi)), xi, h));
}

/** The Jacobian (rows = coordinates of x) of a map between flat arrays, by central differences. */
export function fdJacobianT(f: (x: number[]) => number[], x: readonly number[], h = 1e-6): number[][] {
  return x.map((_, i) => {
    const up = f(bump(x, i, h));
    const down = f(bump(x, i, -h));
    return up.map((u, j) => (u - down[j]) / (2 * h));
  });
}

/**
 * Assert that `g` is the gradient of `f` at a record of tensors `p`: each entry shaped as
 * p's, its elements within rtol 1e-6, atol 1e-8 of fourth-order central differences
 * (h = 1e-3: a model's loss is a long float sum, so a small h would lose to rounding).
 */
export function expectRecordGradient(f: (p: Record<string, NdArray>) => number, p: Record<string, NdArray>, g: Record<string, NdArray>, h = 1e-3): void {
  for (const k of Object.keys(p)) {
    expectClose(g[k].shape, p[k].shape, 0, 0, `${k}.shape`);
    const want = fdGradient((xs) => f({ ...p, [k]: nd(xs, [...p[k].shape]) }), flat(p[k]), h, centralDiff4);
    expectClose(flat(g[k]), want, 1e-6, 1e-8, k);
  }
}

function leaves(v: unknown, path: string, out: [string, unknown][]): void {
  if (Array.isArray(v)) v.forEach((e, i) => leaves(e, `${path}[${i}]`, out));
  else if (v !== null && typeof v === "object") for (const [k, e] of Object.entries(v)) leaves(e, `${path}.${k}`, out);
  else out.push([path, v]);
}

/**
 * Assert `|actual − expected| ≤ atol + rtol·|expected|` leaf by leaf (numbers, arrays,
 * records, nested). On failure the message gives `where`, the leaf's path, both values,
 * the difference and the tolerance. Structures must match exactly.
 */
export function expectClose(actual: unknown, expected: unknown, rtol = 1e-6, atol = 1e-9, where = "value"): void {
  const a: [string, unknown][] = [];
  const e: [string, unknown][] = [];
  leaves(actual, where, a);
  leaves(expected, where, e);
  const paths = (xs: [string, unknown][]) => xs.map(([p]) => p).join(", ");
  if (paths(a) !== paths(e)) {
    throw new Error(`${where}: structure differs: got leaves [${paths(a)}], expected [${paths(e)}] (got ${JSON.stringify(actual)})`);
  }
  for (let k = 0; k < a.length; k++) {
    const [path, got] = a[k];
    const want = e[k][1];
    if (typeof got !== "number" || typeof want !== "number") {
      throw new Error(`${path}: got ${String(got)} (${typeof got}), expected the number ${String(want)}`);
    }
    const tol = atol + rtol * Math.abs(want);
    const diff = Math.abs(got - want);
    if (!(diff <= tol)) {
      throw new Error(`${path}: got ${got}, expected ${want} (|diff| = ${diff.toExponential(3)} > tol = ${tol.toExponential(3)})`);
    }
  }
}
