/**
 * @file L-BFGS-B: L-BFGS within bounds l ≤ x ≤ u (Byrd, Lu, Nocedal & Zhu, "A limited
 * memory algorithm for bound constrained optimization", SIAM J. Sci. Comput. 16, 1995;
 * the subspace step as in version 3.0, Morales & Nocedal, ACM TOMS 38, 2011). Each
 * iteration, on the quadratic model with the compact L-BFGS matrix
 *
 *   B = θI − W M Wᵀ,   W = [Y  θS],   M = [[−D, Lᵀ], [L, θSᵀS]]⁻¹      (the paper's 3.2–3.4)
 *
 * (1) finds the generalized Cauchy point, the first local minimizer of the model along
 * the projected steepest-descent path x(t) = P(x − t g), breakpoint by breakpoint (the
 * paper's Algorithm CP); (2) minimizes the model over the variables still free there
 * (the direct primal method, §5.1: B's restriction inverted by Sherman–Morrison–Woodbury),
 * the result projected into the box, or cut back to it where the projection is not a
 * descent direction (v3.0); (3) searches the line from x to that point for the strong
 * Wolfe conditions (line-search.ts), never beyond the bounds.
 *
 * As SciPy's "L-BFGS-B": m = 10, stop when the projected gradient's ∞-norm
 * ‖P(x − g) − x‖∞ ≤ gtol (1e-5) or f's relative reduction ≤ ftol (2.22e-9); x0 is
 * projected into the box first; after a failed line search the memory is dropped and the
 * iteration tried again along the projected gradient, once.
 */
import { OptimOptionsError } from "../errors.js";
import { invertDense, solveDense } from "./dense.js";
import { Iterates } from "./iterates.js";
import { searchAlong, WOLFE } from "./line-search.js";
import type { LbfgsOptions } from "./lbfgs.js";
import type { Monitor, Outcome } from "./outcome.js";
import type { Problem } from "./problem.js";
import { dot, norm2 } from "./vectors.js";

/** The box: lower and upper bounds per component (±Infinity where none). */
export interface Box {
  readonly lower: Float64Array;
  readonly upper: Float64Array;
}

export function lbfgsb(problem: Problem, box: Box, options: LbfgsOptions, monitor: Monitor): Outcome {
  const { n } = problem;
  const { lower, upper } = box;
  for (let i = 0; i < n; i++) {
    if (!(lower[i] <= upper[i])) throw new OptimOptionsError(`minimize: bounds.lower exceeds bounds.upper at component ${i} (${lower[i]} > ${upper[i]}).`);
  }
  const projected: Problem = { ...problem, x0: problem.x0.map((v, i) => Math.min(Math.max(v, lower[i]), upper[i])) };
  const at = new Iterates(projected, monitor);
  const memory = new CompactMemory(options.memory, n);
  const target = new Float64Array(n);
  const d = new Float64Array(n);
  const boxed = lower.every(Number.isFinite) && upper.every(Number.isFinite);
  let retried = false;
  for (;;) {
    const stop = at.check(projectedGradientNorm(at.x, at.g, box) <= options.gtol, options.maxIter);
    if (stop !== null) return at.outcome(stop);
    if (problem.counts.nfev >= options.maxFun) return at.outcome("maxFev");
    const cauchy = cauchyPoint(at.x, at.g, box, memory);
    subspaceMinimum(at.x, at.g, box, memory, cauchy, target);
    for (let i = 0; i < n; i++) d[i] = target[i] - at.x[i];
    const first = memory.size === 0;
    const alphaMax = first ? 1 : largestStep(at.x, d, box);
    const alpha1 = first && !boxed ? Math.min(1 / norm2(d), alphaMax) : 1;
    const step = dot(d, at.g) < 0 ? searchAlong(clipped(problem, box), at, d, alpha1, at.trial, { ...WOLFE, alphaMax }) : null;
    if (step === null) {
      if (first || retried) return at.outcome("lineSearch");
      memory.clear(); // the model misled: start again from the projected gradient, once
      retried = true;
      continue;
    }
    retried = false;
    memory.push(at.x, at.trial.x, at.g, at.trial.g);
    const previous = at.value;
    if (!at.accept(step.value)) return at.outcome("callback");
    const reduction = (previous - at.value) / Math.max(Math.abs(previous), Math.abs(at.value), 1);
    if (projectedGradientNorm(at.x, at.g, box) > options.gtol && reduction <= options.ftol) return at.outcome("ftol");
  }
}

/** ‖P(x − g) − x‖∞: zero exactly at a point satisfying the first-order (KKT) conditions in the box. */
export function projectedGradientNorm(x: Float64Array, g: Float64Array, { lower, upper }: Box): number {
  let m = 0;
  for (let i = 0; i < x.length; i++) m = Math.max(m, Math.abs(Math.min(Math.max(x[i] - g[i], lower[i]), upper[i]) - x[i]));
  return m;
}

/** f evaluated at points clipped into the box (a trial step may overshoot a bound by rounding). */
function clipped(problem: Problem, { lower, upper }: Box): Pick<Problem, "valueAndGrad"> {
  return {
    valueAndGrad: (x, g) => {
      for (let i = 0; i < x.length; i++) x[i] = Math.min(Math.max(x[i], lower[i]), upper[i]);
      return problem.valueAndGrad(x, g);
    },
  };
}

/** The largest α with x + α d in the box (d leads from x to a point of the box, so α ≥ 1). */
function largestStep(x: Float64Array, d: Float64Array, { lower, upper }: Box): number {
  let alpha = WOLFE.alphaMax;
  for (let i = 0; i < x.length; i++) {
    if (d[i] > 0 && upper[i] < Infinity) alpha = Math.min(alpha, (upper[i] - x[i]) / d[i]);
    else if (d[i] < 0 && lower[i] > -Infinity) alpha = Math.min(alpha, (lower[i] - x[i]) / d[i]);
  }
  return Math.max(alpha, 1);
}

/** The last m pairs (s, y), oldest first, with θ and the middle matrix M of the compact form. */
class CompactMemory {
  s: Float64Array[] = [];
  y: Float64Array[] = [];
  theta = 1;
  /** M, 2k×2k row-major, for k = size pairs. */
  M: Float64Array = new Float64Array(0);

  constructor(
    private readonly m: number,
    private readonly n: number,
  ) {}

  get size(): number {
    return this.s.length;
  }

  clear(): void {
    this.s = [];
    this.y = [];
    this.theta = 1;
    this.M = new Float64Array(0);
  }

  /** Keeps s = x1 − x0, y = g1 − g0 when sᵀy > ε·(−g0ᵀs) (L-BFGS-B's test), and rebuilds M. */
  push(x0: Float64Array, x1: Float64Array, g0: Float64Array, g1: Float64Array): void {
    const s = new Float64Array(this.n);
    const y = new Float64Array(this.n);
    for (let i = 0; i < this.n; i++) {
      s[i] = x1[i] - x0[i];
      y[i] = g1[i] - g0[i];
    }
    const ys = dot(y, s);
    if (!(ys > Number.EPSILON * -dot(g0, s))) return;
    if (this.s.length === this.m) {
      this.s.shift();
      this.y.shift();
    }
    this.s.push(s);
    this.y.push(y);
    this.theta = dot(y, y) / ys;
    const M = this.middle();
    if (M === null) this.clear(); // pairs nearly dependent: start over rather than divide by rounding
    else this.M = M;
  }

  /** M = [[−D, Lᵀ], [L, θSᵀS]]⁻¹ with D = diag(sᵢᵀyᵢ), L the strictly lower part of SᵀY. */
  private middle(): Float64Array | null {
    const k = this.size;
    const K = new Float64Array(4 * k * k);
    const w = 2 * k;
    for (let i = 0; i < k; i++) {
      for (let j = 0; j < k; j++) {
        const sy = dot(this.s[i], this.y[j]);
        if (i === j) K[i * w + j] = -sy;
        if (i > j) {
          K[(k + i) * w + j] = sy; // L
          K[j * w + k + i] = sy; // Lᵀ
        }
        K[(k + i) * w + k + j] = this.theta * dot(this.s[i], this.s[j]);
      }
    }
    return invertDense(K, w);
  }

  /** Row i of W = [Y θS]: (y₀ᵢ, …, θ s₀ᵢ, …), into out. */
  row(i: number, out: Float64Array): Float64Array {
    const k = this.size;
    for (let j = 0; j < k; j++) {
      out[j] = this.y[j][i];
      out[k + j] = this.theta * this.s[j][i];
    }
    return out;
  }

  /** M v. */
  times(v: Float64Array): Float64Array {
    const w = 2 * this.size;
    const out = new Float64Array(w);
    for (let i = 0; i < w; i++) {
      let acc = 0;
      for (let j = 0; j < w; j++) acc += this.M[i * w + j] * v[j];
      out[i] = acc;
    }
    return out;
  }
}

interface Cauchy {
  /** The generalized Cauchy point. */
  readonly x: Float64Array;
  /** c = Wᵀ(x_c − x), for the reduced gradient. */
  readonly c: Float64Array;
}

/** The paper's Algorithm CP: the first local minimizer of the model along the projected gradient path. */
function cauchyPoint(x: Float64Array, g: Float64Array, { lower, upper }: Box, memory: CompactMemory): Cauchy {
  const n = x.length;
  const k2 = 2 * memory.size;
  const { theta } = memory;
  const t = new Float64Array(n);
  const d = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    t[i] = g[i] < 0 ? (x[i] - upper[i]) / g[i] : g[i] > 0 ? (x[i] - lower[i]) / g[i] : Infinity;
    d[i] = t[i] === 0 ? 0 : -g[i];
  }
  const xc = Float64Array.from(x);
  const p = new Float64Array(k2); // Wᵀ d
  const w = new Float64Array(k2);
  for (let i = 0; i < n; i++) {
    if (d[i] === 0) continue;
    memory.row(i, w);
    for (let j = 0; j < k2; j++) p[j] += w[j] * d[i];
  }
  const c = new Float64Array(k2);
  let slope = -dot(d, d); // f′
  let curvature = -theta * slope - dot(p, memory.times(p)); // f″
  const curvature0 = curvature; // v3.0 keeps f″ ≥ ε·(its first value)
  let dtMin = -slope / curvature;
  let tOld = 0;
  const breakpoints = Array.from({ length: n }, (_, i) => i).filter((i) => t[i] > 0 && t[i] < Infinity);
  breakpoints.sort((a, b) => t[a] - t[b]);
  for (const b of breakpoints) {
    const dt = t[b] - tOld;
    if (dtMin < dt) break;
    // reach breakpoint b: variable b stops at its bound
    xc[b] = d[b] > 0 ? upper[b] : lower[b];
    const zb = xc[b] - x[b];
    for (let j = 0; j < k2; j++) c[j] += dt * p[j];
    const gb = g[b];
    memory.row(b, w);
    const Mw = memory.times(w);
    slope += dt * curvature + gb * gb + theta * gb * zb - gb * dot(Mw, c);
    curvature += -theta * gb * gb - 2 * gb * dot(Mw, p) - gb * gb * dot(Mw, w);
    curvature = Math.max(Number.EPSILON * curvature0, curvature);
    for (let j = 0; j < k2; j++) p[j] += gb * w[j];
    d[b] = 0;
    dtMin = -slope / curvature;
    tOld = t[b];
  }
  dtMin = Math.max(dtMin, 0);
  tOld += dtMin;
  for (let i = 0; i < n; i++) if (d[i] !== 0) xc[i] = x[i] + tOld * d[i];
  for (let j = 0; j < k2; j++) c[j] += dtMin * p[j];
  return { x: xc, c };
}

/**
 * The model's minimizer over the variables free at the Cauchy point (the paper's §5.1,
 * direct primal method), into `out`: du = −B̂⁻¹ r̂ with r̂ = Zᵀ(g + θ(x_c − x) − W M c) and
 * B̂⁻¹ = I/θ + ZᵀW (I − M WᵀZZᵀW/θ)⁻¹ M WᵀZ / θ²; x_c + du projected into the box, or
 * cut back to it where that is no descent direction (version 3.0).
 */
function subspaceMinimum(x: Float64Array, g: Float64Array, box: Box, memory: CompactMemory, cauchy: Cauchy, out: Float64Array): void {
  const { lower, upper } = box;
  const n = x.length;
  const k2 = 2 * memory.size;
  const { theta } = memory;
  const xc = cauchy.x;
  out.set(xc);
  const free = Array.from({ length: n }, (_, i) => i).filter((i) => xc[i] > lower[i] && xc[i] < upper[i]);
  if (free.length === 0) return;
  const Mc = memory.times(cauchy.c);
  const w = new Float64Array(k2);
  const r = new Float64Array(free.length);
  const Wr = new Float64Array(k2); // WᵀZ r̂
  const G = new Float64Array(k2 * k2); // WᵀZ ZᵀW
  free.forEach((i, f) => {
    memory.row(i, w);
    r[f] = g[i] + theta * (xc[i] - x[i]) - dot(w, Mc);
    for (let a = 0; a < k2; a++) {
      Wr[a] += w[a] * r[f];
      for (let b = 0; b < k2; b++) G[a * k2 + b] += w[a] * w[b];
    }
  });
  let v: Float64Array = new Float64Array(k2);
  if (k2 > 0) {
    const MG = new Float64Array(k2 * k2); // I − M G / θ
    for (let a = 0; a < k2; a++) {
      for (let b = 0; b < k2; b++) {
        let acc = 0;
        for (let c = 0; c < k2; c++) acc += memory.M[a * k2 + c] * G[c * k2 + b];
        MG[a * k2 + b] = (a === b ? 1 : 0) - acc / theta;
      }
    }
    v = solveDense(MG, memory.times(Wr), k2) ?? new Float64Array(k2);
  }
  const du = new Float64Array(free.length);
  free.forEach((i, f) => {
    memory.row(i, w);
    du[f] = -r[f] / theta - dot(w, v) / (theta * theta);
  });
  // projected into the box (v3.0), if that is a descent direction from x
  let descent = 0;
  free.forEach((i, f) => {
    out[i] = Math.min(Math.max(xc[i] + du[f], lower[i]), upper[i]);
  });
  for (let i = 0; i < n; i++) descent += (out[i] - x[i]) * g[i];
  if (descent < 0) return;
  // else the largest step along du from x_c within the box (the 1995 version)
  let alpha = 1;
  free.forEach((i, f) => {
    if (du[f] > 0) alpha = Math.min(alpha, (upper[i] - xc[i]) / du[f]);
    else if (du[f] < 0) alpha = Math.min(alpha, (lower[i] - xc[i]) / du[f]);
  });
  out.set(xc);
  free.forEach((i, f) => {
    out[i] = xc[i] + alpha * du[f];
  });
}
