/**
 * @file L-BFGS (Nocedal & Wright, Alg. 7.5): BFGS with the inverse Hessian kept as the
 * last m pairs (s, y) and applied by the two-loop recursion (Alg. 7.4), from
 * H₀ = γ I, γ = sᵀy/yᵀy of the newest pair (eq. 7.20). O(m n) per iteration.
 *
 * As SciPy's "L-BFGS-B" without bounds: m = 10 (maxcor), stop when ‖g‖∞ ≤ gtol (1e-5)
 * or when an iteration reduces f by a relative ftol = 2.22e-9 or less,
 * (f_k − f_{k+1}) / max(|f_k|, |f_{k+1}|, 1) ≤ ftol, or after 15000 iterations or
 * evaluations; a pair with sᵀy ≤ ε·yᵀy is not kept. The first trial step moves x by
 * min(1, ‖g‖), as L-BFGS-B's. Unlike L-BFGS-B, the line search is N&W's with c1 = 1e-4
 * (L-BFGS-B: Moré–Thuente's dcsrch, with 1e-3), the recursion is the two-loop one (the
 * same matrix as L-BFGS-B's compact form, other rounding).
 */
import { searchAlong, WOLFE } from "./line-search.js";
import { Iterates } from "./iterates.js";
import type { Monitor, Outcome } from "./outcome.js";
import type { Problem } from "./problem.js";
import { dot, norm2, normInf } from "./vectors.js";

export interface LbfgsOptions {
  readonly gtol: number;
  readonly ftol: number;
  readonly maxIter: number;
  readonly maxFun: number;
  /** m, the pairs kept (SciPy's maxcor). */
  readonly memory: number;
}

export function lbfgs(problem: Problem, options: LbfgsOptions, monitor: Monitor): Outcome {
  const at = new Iterates(problem, monitor);
  const p = new Float64Array(problem.n);
  const pairs = new Memory(options.memory, problem.n);
  for (;;) {
    const stop = at.check(normInf(at.g) <= options.gtol, options.maxIter);
    if (stop !== null) return at.outcome(stop);
    if (problem.counts.nfev >= options.maxFun) return at.outcome("maxFev");
    pairs.direction(at.g, p);
    const alpha1 = pairs.size === 0 ? Math.min(1, 1 / norm2(at.g)) : 1;
    const step = searchAlong(problem, at, p, alpha1, at.trial, WOLFE);
    if (step === null) return at.outcome("lineSearch");
    pairs.push(at.x, at.trial.x, at.g, at.trial.g);
    const previous = at.value;
    if (!at.accept(step.value)) return at.outcome("callback");
    const reduction = (previous - at.value) / Math.max(Math.abs(previous), Math.abs(at.value), 1);
    if (normInf(at.g) > options.gtol && reduction <= options.ftol) return at.outcome("ftol");
  }
}

/** The last m pairs (s, y) in a ring, with ρ = 1/yᵀs, and the two-loop recursion over them. */
class Memory {
  private readonly s: Float64Array[];
  private readonly y: Float64Array[];
  private readonly rho: Float64Array;
  private readonly alpha: Float64Array;
  private newest = -1;
  size = 0;
  private gamma = 1;
  private scratchS: Float64Array;
  private scratchY: Float64Array;

  constructor(
    private readonly m: number,
    n: number,
  ) {
    this.s = Array.from({ length: m }, () => new Float64Array(n));
    this.y = Array.from({ length: m }, () => new Float64Array(n));
    this.rho = new Float64Array(m);
    this.alpha = new Float64Array(m);
    this.scratchS = new Float64Array(n);
    this.scratchY = new Float64Array(n);
  }

  /** Keeps s = x1 − x0, y = g1 − g0 when yᵀs > ε·yᵀy (curvature the update can use), in place of the oldest. */
  push(x0: Float64Array, x1: Float64Array, g0: Float64Array, g1: Float64Array): void {
    const { scratchS: s, scratchY: y } = this;
    for (let i = 0; i < s.length; i++) {
      s[i] = x1[i] - x0[i];
      y[i] = g1[i] - g0[i];
    }
    const ys = dot(y, s);
    const yy = dot(y, y);
    if (!(ys > Number.EPSILON * yy)) return;
    const k = (this.newest + 1) % this.m;
    [this.s[k], this.scratchS] = [s, this.s[k]];
    [this.y[k], this.scratchY] = [y, this.y[k]];
    this.rho[k] = 1 / ys;
    this.gamma = ys / yy;
    this.newest = k;
    this.size = Math.min(this.size + 1, this.m);
  }

  /** p = −H g by Alg. 7.4. */
  direction(g: Float64Array, p: Float64Array): void {
    const { m, s, y, rho, alpha } = this;
    p.set(g);
    for (let j = 0, k = this.newest; j < this.size; j++, k = (k - 1 + m) % m) {
      alpha[k] = rho[k] * dot(s[k], p);
      axpy(-alpha[k], y[k], p);
    }
    for (let i = 0; i < p.length; i++) p[i] *= this.gamma;
    for (let j = this.size - 1, k = (this.newest - j + m) % m; j >= 0; j--, k = (k + 1) % m) {
      const beta = rho[k] * dot(y[k], p);
      axpy(alpha[k] - beta, s[k], p);
    }
    for (let i = 0; i < p.length; i++) p[i] = -p[i];
  }
}

/** y ← a·x + y. */
function axpy(a: number, x: Float64Array, y: Float64Array): void {
  for (let i = 0; i < y.length; i++) y[i] += a * x[i];
}
