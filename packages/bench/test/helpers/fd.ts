/**
 * @file Central differences for the bench's tests, the hand-written gradients and the
 * gradbench modules checked against them: core's gradient, partial derivative and Jacobian
 * (core/test/helpers/check.ts), a map's derivative along a direction (H·v from a
 * gradient), and the coordinate-wise Newton step f′/f″ (kmeans' `dir`).
 */
import { bump, centralDiff, fdGradient as fdGradientOfArray, fdJacobianT } from "../../../core/test/helpers/check.js";

/** The gradient of f at x by central differences in each coordinate: (f(x + h eᵢ) − f(x − h eᵢ)) / 2h. */
export function fdGradient(f: (x: number[]) => number, x: ArrayLike<number>, h = 1e-6): number[] {
  return fdGradientOfArray(f, Array.from(x), h);
}

/** f's derivative in coordinate i at x by central differences (a few of a long gradient's). */
export function fdPartial(f: (x: number[]) => number, x: ArrayLike<number>, i: number, h = 1e-6): number {
  const xs = Array.from(x);
  return centralDiff((t) => f(bump(xs, i, t - xs[i])), xs[i], h);
}

/** The Jacobian of g at x, a row per coordinate of x (a Hessian, g being a gradient), by central differences. */
export function fdJacobianRows(g: (x: number[]) => ArrayLike<number>, x: ArrayLike<number>, h = 1e-6): number[][] {
  return fdJacobianT((y) => Array.from(g(y)), Array.from(x), h);
}

/** g's derivative at x along v (H·v, g being a gradient): (g(x + h v) − g(x − h v)) / 2h. */
export function fdAlong(g: (x: number[]) => ArrayLike<number>, x: ArrayLike<number>, v: ArrayLike<number>, h = 1e-6): number[] {
  const up = g(Array.from(x, (xi, i) => xi + h * v[i]));
  const down = g(Array.from(x, (xi, i) => xi - h * v[i]));
  return Array.from(up, (u, i) => (u - down[i]) / (2 * h));
}

/** The Newton step of f in each coordinate alone, ∂ᵢf / ∂ᵢ²f, both by central differences (the second's error is O(h²) + O(ε|f|/h²)). */
export function fdNewtonStep(f: (x: number[]) => number, x: ArrayLike<number>, h = 1e-4): number[] {
  const f0 = f(Array.from(x));
  return Array.from(x, (xi, i) => {
    const at = (d: number) => f(Array.from(x, (xj, j) => (j === i ? xj + d : xj)));
    const [fp, fm] = [at(h), at(-h)];
    return (fp - fm) / (2 * h) / ((fp - 2 * f0 + fm) / (h * h));
  });
}
