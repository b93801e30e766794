/**
 * @file BFGS (Nocedal & Wright, Alg. 6.1): the inverse Hessian approximation H, dense
 * n×n, updated from each step s and change of gradient y by
 *
 *   H ← (I − ρ s yᵀ) H (I − ρ y sᵀ) + ρ s sᵀ,   ρ = 1/(yᵀs)      (N&W eq. 6.17)
 *
 * with steps p = −H g satisfying the strong Wolfe conditions (so yᵀs > 0). As SciPy's
 * method "BFGS": H₀ = I, stop when ‖g‖∞ ≤ gtol (1e-5) or after 200·n iterations.
 * Unlike SciPy, H₀ is rescaled by yᵀs/yᵀy before the first update (N&W eq. 6.20), the
 * line search is N&W's (SciPy's is MINPACK's dcsrch), and the first trial step moves x
 * by min(1, ‖g‖) (SciPy's by about 1), later ones start from α = 1.
 */
import { searchAlong, WOLFE } from "./line-search.js";
import { Iterates } from "./iterates.js";
import type { Monitor, Outcome } from "./outcome.js";
import type { Problem } from "./problem.js";
import { dot, norm2, normInf } from "./vectors.js";

export interface BfgsOptions {
  readonly gtol: number;
  readonly maxIter: number;
}

export function bfgs(problem: Problem, options: BfgsOptions, monitor: Monitor): Outcome {
  const { n } = problem;
  const at = new Iterates(problem, monitor);
  const H = new Float64Array(n * n);
  const p = new Float64Array(n);
  const s = new Float64Array(n);
  const y = new Float64Array(n);
  const Hy = new Float64Array(n);
  const reset = () => {
    H.fill(0);
    for (let i = 0; i < n; i++) H[i * n + i] = 1;
  };
  reset();
  let scaled = false;
  for (;;) {
    const stop = at.check(normInf(at.g) <= options.gtol, options.maxIter);
    if (stop !== null) return at.outcome(stop);
    multiply(H, at.g, p, -1);
    if (!(dot(at.g, p) < 0)) {
      // H lost positive definiteness to rounding: start again from the gradient
      reset();
      scaled = false;
      for (let i = 0; i < n; i++) p[i] = -at.g[i];
    }
    const alpha1 = at.nit === 0 ? Math.min(1, 1 / norm2(at.g)) : 1;
    const step = searchAlong(problem, at, p, alpha1, at.trial, WOLFE);
    if (step === null) return at.outcome("lineSearch");
    for (let i = 0; i < n; i++) {
      s[i] = at.trial.x[i] - at.x[i];
      y[i] = at.trial.g[i] - at.g[i];
    }
    if (!at.accept(step.value)) return at.outcome("callback");
    const ys = dot(y, s);
    if (!(ys > 0)) continue; // no curvature information: keep H (possible after a weak step only)
    if (!scaled) {
      // N&W (6.20): H₀ = (yᵀs / yᵀy) I, an estimate of the inverse Hessian's size along y
      const gamma = ys / dot(y, y);
      for (let i = 0; i < n * n; i++) H[i] *= gamma;
      scaled = true;
    }
    update(H, s, y, ys, Hy);
  }
}

/** out = scale · H v. */
function multiply(H: Float64Array, v: Float64Array, out: Float64Array, scale: number): void {
  const n = v.length;
  for (let i = 0; i < n; i++) {
    let acc = 0;
    for (let j = 0; j < n; j++) acc += H[i * n + j] * v[j];
    out[i] = scale * acc;
  }
}

/** H ← H − ρ (Hy sᵀ + s (Hy)ᵀ) + (ρ² yᵀHy + ρ) s sᵀ: eq. 6.17 multiplied out, O(n²). */
function update(H: Float64Array, s: Float64Array, y: Float64Array, ys: number, Hy: Float64Array): void {
  const n = s.length;
  const rho = 1 / ys;
  multiply(H, y, Hy, 1);
  const c = rho * rho * dot(y, Hy) + rho;
  for (let i = 0; i < n; i++) {
    const row = i * n;
    const si = s[i];
    const hi = Hy[i];
    for (let j = 0; j < n; j++) H[row + j] += -rho * (hi * s[j] + si * Hy[j]) + c * si * s[j];
  }
}
