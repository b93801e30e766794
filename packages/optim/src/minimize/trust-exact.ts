/**
 * @file A trust-region Newton method with the exact Hessian (Nocedal & Wright, Alg. 4.1),
 * each subproblem
 *
 *   min m(p) = f + gᵀp + ½ pᵀHp   subject to ‖p‖ ≤ Δ
 *
 * solved to high accuracy through the eigendecomposition H = Q Λ Qᵀ (eigen.ts), for the
 * small problems this method is meant for (O(n³) per accepted step, besides the n
 * Hessian-vector sweeps of wengert's `hessian`). By N&W Thm. 4.1, p* = −(H + λI)⁻¹ g with
 * λ ≥ max(0, −λ₁) and λ(Δ − ‖p*‖) = 0; in the eigenbasis ‖p(λ)‖² = Σ ĝᵢ²/(λᵢ + λ)², ĝ = Qᵀg,
 * and λ solves the secular equation 1/‖p(λ)‖ = 1/Δ by Newton's method (N&W Alg. 4.3's
 * iteration, eq. 4.44), safeguarded by bisection on a bracket. The hard case (g ⊥ the
 * eigenspace of λ₁, N&W §4.3) is taken explicitly: p = p(−λ₁) + τ q₁ with ‖p‖ = Δ.
 *
 * As SciPy's "trust-exact": Δ₀ = 1, Δmax = 1000, a step accepted when ρ > η = 0.15, Δ
 * quartered when ρ < 1/4, doubled when ρ > 3/4 at the boundary; stop when ‖g‖₂ < gtol
 * (1e-4) or after 200·n iterations. SciPy solves the subproblem to within 10% of Δ
 * (Moré–Sorensen with Cholesky factorizations, k_easy = 0.1); here to rounding.
 */
import { symmetricEigen, type Eigen } from "./eigen.js";
import { Iterates } from "./iterates.js";
import type { Monitor, Outcome } from "./outcome.js";
import type { Problem } from "./problem.js";
import { norm2 } from "./vectors.js";

export interface TrustExactOptions {
  readonly gtol: number;
  readonly maxIter: number;
  readonly initialTrustRadius: number;
  readonly maxTrustRadius: number;
  readonly eta: number;
}

export function trustExact(problem: Problem, options: TrustExactOptions, monitor: Monitor): Outcome {
  const { n } = problem;
  const at = new Iterates(problem, monitor);
  const p = new Float64Array(n);
  let radius = options.initialTrustRadius;
  let eigen: Eigen | null = null;
  for (;;) {
    const stop = at.check(norm2(at.g) < options.gtol, options.maxIter);
    if (stop !== null) return at.outcome(stop);
    if (eigen === null) {
      const H = problem.hessian(at.x);
      if (!H.every(Number.isFinite)) return at.outcome("nonFinite");
      eigen = symmetricEigen(H, n);
    }
    const { decrease, boundary } = solveSubproblem(eigen, at.g, radius, p);
    if (!(decrease > 0)) return at.outcome("noPredictedDecrease");
    const { x, g } = at.trial;
    for (let i = 0; i < n; i++) x[i] = at.x[i] + p[i];
    const value = problem.valueAndGrad(x, g);
    const rho = (at.value - value) / decrease; // N&W (4.4); NaN where f is not finite at x + p
    if (!(rho >= 0.25)) radius *= 0.25;
    else if (rho > 0.75 && boundary) radius = Math.min(2 * radius, options.maxTrustRadius);
    const accepted = rho > options.eta;
    if (accepted) eigen = null;
    if (!(accepted ? at.accept(value) : at.count())) return at.outcome("callback");
  }
}

/**
 * The minimizer of gᵀp + ½ pᵀHp over ‖p‖ ≤ Δ into `p`, with the decrease it predicts,
 * −(gᵀp + ½ pᵀHp), and whether it lies on the boundary.
 *
 * λᵢ + λ is computed as dᵢ + σ with dᵢ = λᵢ − λ₁ ≥ 0 (d₁ = 0 exactly) and σ = λ + λ₁ when
 * λ₁ ≤ 0: near the pole at λ = −λ₁ the shift σ keeps its relative precision, where λ
 * itself (of the size of |λ₁|) would not.
 */
export function solveSubproblem(eigen: Eigen, g: Float64Array, radius: number, p: Float64Array): { decrease: number; boundary: boolean } {
  const { values, vectors } = eigen;
  const n = g.length;
  const gh = new Float64Array(n); // ĝ = Qᵀ g
  for (let k = 0; k < n; k++) {
    let s = 0;
    for (let i = 0; i < n; i++) s += vectors[i * n + k] * g[i];
    gh[k] = s;
  }
  const lowest = values[0];
  const base = Math.min(lowest, 0);
  const d = values.map((v) => v - base); // λᵢ + λ = dᵢ + σ, σ = λ + base ≥ 0
  // ‖p‖ at σ, over the components with dᵢ + σ > 0 (all but the hard case's eigenspace at σ = 0)
  const length = (sigma: number): number => {
    let s = 0;
    for (let k = 0; k < n; k++) if (d[k] + sigma > 0) s += (gh[k] / (d[k] + sigma)) ** 2;
    return Math.sqrt(s);
  };
  let sigma = 0;
  let tau = 0;
  const interior = lowest > 0 && length(0) <= radius; // the Newton step
  if (!interior) {
    // on the boundary: σ with ‖p‖ = Δ, or the hard case
    const scale = Math.max(1, Math.abs(values[0]), Math.abs(values[n - 1]));
    const a = lowest > 0 ? 0 : Number.EPSILON ** 2 * scale; // the pole at σ = 0 is beyond resolving closer
    if (lowest <= 0 && length(a) < radius) {
      // the hard case: ĝ ⊥ the eigenspace of λ₁ (to this precision); p(−λ₁) completed along q₁ to length Δ
      const rest = length(0);
      tau = Math.sqrt(Math.max(0, radius * radius - rest * rest));
      if (gh[0] > 0) tau = -tau;
    } else {
      sigma = secular(a, norm2(g) / radius - Math.max(lowest, 0), length, d, gh, radius); // ‖p(σ)‖ ≤ ‖g‖/(d₁ + σ)
    }
  }
  // p = Q p̂, p̂ₖ = −ĝₖ/(dₖ + σ), and τ along q₁ in the hard case
  const ph = new Float64Array(n);
  for (let k = 0; k < n; k++) ph[k] = d[k] + sigma > 0 ? -gh[k] / (d[k] + sigma) : 0;
  ph[0] += tau;
  let model = 0;
  for (let k = 0; k < n; k++) model += gh[k] * ph[k] + 0.5 * values[k] * ph[k] * ph[k];
  for (let i = 0; i < n; i++) {
    let s = 0;
    for (let k = 0; k < n; k++) s += vectors[i * n + k] * ph[k];
    p[i] = s;
  }
  return { decrease: -model, boundary: !interior };
}

/**
 * σ in [a, b] with ‖p(σ)‖ = Δ, where ‖p(a)‖ ≥ Δ ≥ ‖p(b)‖: Newton's method on
 * φ(σ) = 1/‖p(σ)‖ − 1/Δ (concave and increasing, so from the left it does not overshoot),
 * σ ← σ + (‖p‖/‖q‖)² (‖p‖ − Δ)/Δ with ‖q‖² = Σ ĝᵢ²/(dᵢ + σ)³ (N&W eq. 4.44), kept in the bracket.
 */
function secular(a: number, b: number, length: (sigma: number) => number, d: Float64Array, gh: Float64Array, radius: number): number {
  let lo = a;
  let hi = Math.max(a, b);
  while (length(hi) > radius) hi = 2 * hi + 1; // rounding in the bound
  let sigma = lo;
  for (let iteration = 0; iteration < 200; iteration++) {
    const norm = length(sigma);
    if (Math.abs(norm - radius) <= 1e-14 * radius) return sigma;
    if (norm > radius) lo = sigma;
    else hi = sigma;
    let q2 = 0;
    for (let k = 0; k < d.length; k++) q2 += (gh[k] * gh[k]) / (d[k] + sigma) ** 3;
    const next = sigma + ((norm * norm) / q2) * ((norm - radius) / radius);
    sigma = next > lo && next < hi ? next : (lo + hi) / 2;
    if (hi - lo <= 4 * Number.EPSILON * hi) return hi;
  }
  return sigma;
}
