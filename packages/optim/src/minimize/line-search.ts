/**
 * @file A line search for the strong Wolfe conditions (Nocedal & Wright, Numerical
 * Optimization, 2nd ed., Alg. 3.5 and its zoom, Alg. 3.6): a step α > 0 along a descent
 * direction p with
 *
 *   φ(α) ≤ φ(0) + c1·α·φ'(0)      (sufficient decrease)
 *   |φ'(α)| ≤ c2·|φ'(0)|          (curvature)
 *
 * for φ(α) = f(x + α p). Each trial evaluates f and its gradient together (they come from
 * one trace), so φ' is known wherever φ is. A step found is always the last one tried:
 * the caller's buffers for the trial point hold the accepted one.
 */
import type { Problem } from "./problem.js";
import { dot } from "./vectors.js";

/** φ(α) and φ'(α), evaluating f and ∇f at x + α p. */
export type Phi = (alpha: number) => { readonly value: number; readonly slope: number };

export interface WolfeOptions {
  /** Sufficient decrease constant (N&W: 1e-4). */
  readonly c1: number;
  /** Curvature constant (0.9 for quasi-Newton and Newton methods). */
  readonly c2: number;
  /** The largest step tried. */
  readonly alphaMax: number;
  /** Trials before giving up (SciPy's L-BFGS-B maxls: 20). */
  readonly maxEvaluations: number;
}

export interface Trial {
  readonly alpha: number;
  readonly value: number;
  readonly slope: number;
}

export type LineSearchResult =
  | { readonly kind: "wolfe"; readonly trial: Trial; readonly evaluations: number }
  /** No step met both conditions; `decrease` is the best step that met the first, if any. */
  | { readonly kind: "failed"; readonly decrease: Trial | null; readonly evaluations: number };

/** Alg. 3.5: from α1, doubling until the conditions hold or a bracket of a good step is found, then zoom. */
export function strongWolfe(phi: Phi, phi0: number, dphi0: number, alpha1: number, options: WolfeOptions): LineSearchResult {
  const { c1, c2, alphaMax, maxEvaluations } = options;
  const sufficient = (t: Trial) => t.value <= phi0 + c1 * t.alpha * dphi0; // false for NaN
  const curvature = (t: Trial) => Math.abs(t.slope) <= -c2 * dphi0;
  let evaluations = 0;
  const trial = (alpha: number): Trial => {
    evaluations++;
    const { value, slope } = phi(alpha);
    return { alpha, value, slope };
  };
  let previous: Trial = { alpha: 0, value: phi0, slope: dphi0 };
  let alpha = Math.min(alpha1, alphaMax);
  for (let i = 1; evaluations < maxEvaluations; i++) {
    const t = trial(alpha);
    if (!sufficient(t) || (i > 1 && t.value >= previous.value)) return zoom(previous, t);
    if (curvature(t)) return { kind: "wolfe", trial: t, evaluations };
    if (t.slope >= 0) return zoom(t, previous);
    if (alpha >= alphaMax) return { kind: "failed", decrease: t, evaluations };
    previous = t;
    alpha = Math.min(2 * alpha, alphaMax);
  }
  return { kind: "failed", decrease: previous.alpha > 0 ? previous : null, evaluations };

  /** Alg. 3.6: lo satisfies sufficient decrease and is the best so far; the interval between lo and hi holds a good step. */
  function zoom(lo: Trial, hi: Trial): LineSearchResult {
    while (evaluations < maxEvaluations) {
      const width = Math.abs(hi.alpha - lo.alpha);
      if (width <= 1e-16 * Math.max(lo.alpha, hi.alpha)) break;
      const t = trial(interpolate(lo, hi));
      if (!sufficient(t) || t.value >= lo.value) {
        hi = t;
      } else {
        if (curvature(t)) return { kind: "wolfe", trial: t, evaluations };
        if (t.slope * (hi.alpha - lo.alpha) >= 0) hi = lo;
        lo = t;
      }
    }
    return { kind: "failed", decrease: lo.alpha > 0 ? lo : null, evaluations };
  }
}

/**
 * The minimizer of the cubic through φ and φ' at both ends (N&W eq. 3.59), kept at least
 * a tenth of the interval from either end; bisection where the cubic has none there.
 */
export function interpolate(a: Trial, b: Trial): number {
  const lo = Math.min(a.alpha, b.alpha);
  const hi = Math.max(a.alpha, b.alpha);
  const margin = 0.1 * (hi - lo);
  const d1 = a.slope + b.slope - (3 * (a.value - b.value)) / (a.alpha - b.alpha);
  const root = d1 * d1 - a.slope * b.slope;
  if (root >= 0 && Number.isFinite(root)) {
    const d2 = Math.sign(b.alpha - a.alpha) * Math.sqrt(root);
    const alpha = b.alpha - (b.alpha - a.alpha) * ((b.slope + d2 - d1) / (b.slope - a.slope + 2 * d2));
    if (alpha >= lo + margin && alpha <= hi - margin) return alpha;
  }
  return (lo + hi) / 2;
}

/** Where a line search leaves the point it accepts. */
export interface TrialPoint {
  readonly x: Float64Array;
  readonly g: Float64Array;
}

/**
 * The line search applied to f from x along p (f(x) = value, ∇f(x) = g): on success the
 * accepted point and its gradient are in `out`, with its value returned. Where no step
 * meets the curvature condition but one decreased f enough, that one is taken (its
 * curvature is then not promised: quasi-Newton updates check yᵀs > 0); null where none did.
 */
export function searchAlong(
  problem: Pick<Problem, "valueAndGrad">,
  at: { readonly x: Float64Array; readonly value: number; readonly g: Float64Array },
  p: Float64Array,
  alpha1: number,
  out: TrialPoint,
  options: WolfeOptions,
): { alpha: number; value: number } | null {
  const { x, value, g } = at;
  const phi: Phi = (alpha) => {
    for (let i = 0; i < x.length; i++) out.x[i] = x[i] + alpha * p[i];
    const v = problem.valueAndGrad(out.x, out.g);
    return { value: v, slope: dot(out.g, p) };
  };
  const result = strongWolfe(phi, value, dot(g, p), alpha1, options);
  if (result.kind === "wolfe") return { alpha: result.trial.alpha, value: result.trial.value };
  if (result.decrease === null) return null;
  const { alpha } = result.decrease;
  return { alpha, value: phi(alpha).value };
}

/** The constants of every line search here: N&W's c1 and their c2 for (quasi-)Newton methods, L-BFGS-B's 20 trials. */
export const WOLFE: WolfeOptions = { c1: 1e-4, c2: 0.9, alphaMax: 1e10, maxEvaluations: 20 };
