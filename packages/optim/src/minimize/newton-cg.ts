/**
 * @file Newton-CG, line-search version (Nocedal & Wright, Alg. 7.1): the Newton system
 * ∇²f(x) p = −∇f(x) solved inexactly by conjugate gradients, each CG iteration one exact
 * Hessian-vector product (wengert's hvp, forward over reverse: no Hessian is formed),
 * stopped by the forcing sequence ‖r‖ ≤ η‖g‖, η = min(0.5, sqrt(‖g‖)) (superlinear
 * convergence, N&W Thm. 7.2), or at negative curvature; then a strong-Wolfe step from α = 1.
 *
 * As SciPy's "Newton-CG": ℓ1 norms in the forcing test; at negative curvature the CG
 * iterate so far, or on the first CG iteration the steepest-descent direction scaled by
 * gᵀg/|gᵀ∇²f g|; at most 20·n CG iterations; stop when the step's ℓ1 norm falls to
 * n·xtol (xtol = 1e-5) or after 200·n iterations. Besides SciPy: `gtol` also stops it
 * where ‖g‖∞ ≤ gtol (default 0, off); zero curvature along a CG direction d is
 * dᵀHd ≤ 3ε·dᵀd (SciPy: dᵀHd ≤ 3ε, not invariant to the scale of d); and the line search
 * starts from α = 1 (SciPy's from an interpolation of the previous decrease).
 */
import { searchAlong, WOLFE } from "./line-search.js";
import { Iterates } from "./iterates.js";
import type { Monitor, Outcome } from "./outcome.js";
import type { Problem } from "./problem.js";
import { dot, norm1, normInf } from "./vectors.js";

export interface NewtonCgOptions {
  readonly xtol: number;
  readonly gtol: number;
  readonly maxIter: number;
}

export function newtonCg(problem: Problem, options: NewtonCgOptions, monitor: Monitor): Outcome {
  const { n } = problem;
  const at = new Iterates(problem, monitor);
  const p = new Float64Array(n);
  const cg = { r: new Float64Array(n), d: new Float64Array(n), Hd: new Float64Array(n) };
  const xtol = n * options.xtol;
  let moved = Infinity;
  for (;;) {
    if (moved <= xtol && Number.isFinite(at.value)) return at.outcome("xtol");
    const stop = at.check(normInf(at.g) <= options.gtol, options.maxIter);
    if (stop !== null) return at.outcome(stop);
    if (!newtonDirection(problem, at.x, at.g, p, cg)) return at.outcome("cgMaxIter");
    const step = searchAlong(problem, at, p, 1, at.trial, WOLFE);
    if (step === null) return at.outcome("lineSearch");
    moved = Math.abs(step.alpha) * norm1(p);
    if (!at.accept(step.value)) return at.outcome("callback");
  }
}

/** p ≈ −∇²f(x)⁻¹ g by truncated CG from 0; false if CG ran 20·n iterations without meeting its test. */
function newtonDirection(
  problem: Problem,
  x: Float64Array,
  g: Float64Array,
  p: Float64Array,
  { r, d, Hd }: { r: Float64Array; d: Float64Array; Hd: Float64Array },
): boolean {
  const n = g.length;
  const magnitude = norm1(g);
  const tolerance = Math.min(0.5, Math.sqrt(magnitude)) * magnitude;
  p.fill(0);
  r.set(g); // the residual ∇²f p + g at p = 0
  for (let i = 0; i < n; i++) d[i] = -g[i];
  let rr = dot(r, r);
  for (let j = 0; j < 20 * n; j++) {
    if (norm1(r) <= tolerance) return true;
    problem.hvp(x, d, Hd);
    const curvature = dot(d, Hd);
    // no curvature along d, measured by the Rayleigh quotient (SciPy's test, dᵀHd ≤ 3ε,
    // depends on ‖d‖ ~ ‖g‖ and ends the descent once ‖g‖ is near 1e-8 whatever H is)
    if (curvature >= 0 && curvature <= 3 * Number.EPSILON * dot(d, d)) return true;
    if (curvature < 0) {
      // negative curvature along d: the CG iterate so far is a descent direction, or on
      // the first iteration (p = 0) the steepest descent, scaled as SciPy's
      if (j === 0) for (let i = 0; i < n; i++) p[i] = (rr / -curvature) * -g[i];
      return true;
    }
    const alpha = rr / curvature;
    for (let i = 0; i < n; i++) {
      p[i] += alpha * d[i];
      r[i] += alpha * Hd[i];
    }
    const rrNext = dot(r, r);
    const beta = rrNext / rr;
    for (let i = 0; i < n; i++) d[i] = -r[i] + beta * d[i];
    rr = rrNext;
  }
  return false;
}
