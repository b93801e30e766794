/**
 * @file The standard test problems of unconstrained minimization, written with
 * wengert's operations, with their known minimizers: what test/minimize.test.ts checks
 * every method against and what the bench runs beside SciPy (scipy_minimize.py writes
 * the same functions, by name, with hand-written derivatives).
 */
import ndarray from "ndarray";
import { add, dot, matmul, mean, mul, pow, softplus, square, sub, sum, type NdArray, type Scalar, type Tensor } from "@wengert/core";
import { minimize, type MinimizeOptions, type MinimizeResult, type Objective, type Tree } from "@wengert/optim";

/** A problem as it is written: f and x0 of one type of tree. */
interface ProblemSpec<T extends Tree> {
  readonly name: string;
  readonly f: Objective<T>;
  readonly x0: T;
  /** The minimizer's components, where it is known in closed form (null: see `optimality`). */
  readonly xStar: readonly number[] | null;
  readonly fStar: number | null;
  /** How far (∞-norm) from xStar a method's answer may be, at gtol = 1e-8. */
  readonly xTol: number;
  /** The first-order condition's residual computed by hand, without wengert (logistic regression). */
  readonly optimality?: (x: Float64Array) => number;
  /** Bounds on every component (then only the lbfgs method, L-BFGS-B, applies). */
  readonly bounds?: { readonly lower: number; readonly upper: number };
  /** What scipy_minimize.py needs to build the same problem. */
  readonly scipy: { readonly kind: string; readonly x0: readonly number[]; readonly data?: unknown };
}

/** A test problem, whatever its tree: `minimize` runs `minimize(f, x0, options)`. */
export interface TestProblem extends Omit<ProblemSpec<Tree>, "f"> {
  minimize(options: MinimizeOptions<Tree>): MinimizeResult<Tree>;
}

function problem<T extends Tree>(spec: ProblemSpec<T>): TestProblem {
  const { f, ...rest } = spec;
  return { ...rest, minimize: (options) => minimize(f, spec.x0, spec.bounds ? { ...options, bounds: spec.bounds } : options) };
}

/** Rosenbrock's function, chained (SciPy's rosen): Σ 100 (x_{i+1} − x_i²)² + (1 − x_i)². */
export const rosen = (x: readonly Scalar[]): Scalar => {
  let s: Scalar = 0;
  for (let i = 0; i < x.length - 1; i++) s = add(s, add(mul(100, square(sub(x[i + 1], square(x[i])))), square(sub(1, x[i]))));
  return s;
};

/**
 * Rosenbrock in n dimensions: from (−1.2, 1) for n = 2; for larger n from CUTEst's GENROSE
 * point x_i = i/(n + 1) (the alternating (−1.2, 1, …) leads trust-region methods, SciPy's
 * and ours, to the local minimum near x₁ = −1 that the chained function has for n ≥ 4).
 */
export function rosenbrock(n: number): TestProblem {
  const x0 = n === 2 ? [-1.2, 1] : Array.from({ length: n }, (_, i) => (i + 1) / (n + 1));
  return problem({ name: `rosenbrock n=${n}`, f: rosen, x0, xStar: new Array(n).fill(1), fStar: 0, xTol: 1e-6, scipy: { kind: "rosen", x0 } });
}

/**
 * Rosenbrock n = 100 in the box [0, 0.8]ⁿ, from GENROSE's point: the minimizer is not
 * known in closed form (the first component sits at the upper bound, the last at about
 * 1e-4); the tests check its first-order conditions, the bench SciPy's L-BFGS-B beside.
 */
export function boundedRosenbrock(n = 100): TestProblem {
  const x0 = Array.from({ length: n }, (_, i) => (i + 1) / (n + 1));
  return problem({ name: `rosenbrock n=${n} in [0, 0.8]`, f: rosen, x0, xStar: null, fStar: null, xTol: 0, bounds: { lower: 0, upper: 0.8 }, scipy: { kind: "rosen", x0 } });
}

/** Beale's function (Moré, Garbow & Hillstrom 1981, #5): minimum 0 at (3, 0.5), from (1, 1). */
export const beale: TestProblem = problem<[number, number]>({
  name: "beale",
  f: ([x, y]) =>
    add(add(square(add(sub(1.5, x), mul(x, y))), square(add(sub(2.25, x), mul(x, square(y))))), square(add(sub(2.625, x), mul(x, pow(y, 3))))),
  x0: [1, 1],
  xStar: [3, 0.5],
  fStar: 0,
  xTol: 1e-6,
  scipy: { kind: "beale", x0: [1, 1] },
});

/**
 * Powell's singular function (MGH #13): (x₁ + 10x₂)² + 5(x₃ − x₄)² + (x₂ − 2x₃)⁴ + 10(x₁ − x₄)⁴,
 * minimum 0 at 0 where the Hessian is singular, so convergence is linear and x is found
 * only to about the fourth root of f's precision.
 */
export const powell: TestProblem = problem<[number, number, number, number]>({
  name: "powell singular",
  f: ([a, b, c, d]) =>
    add(add(square(add(a, mul(10, b))), mul(5, square(sub(c, d)))), add(pow(sub(b, mul(2, c)), 4), mul(10, pow(sub(a, d), 4)))),
  x0: [3, -1, 0, 1],
  xStar: [0, 0, 0, 0],
  fStar: 0,
  xTol: 2e-2,
  scipy: { kind: "powell", x0: [3, -1, 0, 1] },
});

/** ½ Σ λ_i (x_i − 1)² with λ_i = 10^(6(i−1)/(n−1)): condition number 10⁶, from 0; on a Float64Array. */
export function illConditioned(n = 20): TestProblem {
  const lambda = Float64Array.from({ length: n }, (_, i) => 10 ** ((6 * i) / (n - 1)));
  return problem<Float64Array>({
    name: `quadratic n=${n}, cond 1e6`,
    f: (x) => mul(0.5, dot(lambda, square(sub(x, 1)) as Tensor) as Scalar),
    x0: new Float64Array(n),
    xStar: new Array(n).fill(1),
    fStar: 0,
    xTol: 1e-8, // ‖x − x*‖ ≤ ‖∇f‖/λ_min = ‖∇f‖
    scipy: { kind: "quadratic", x0: new Array(n).fill(0), data: { lambda: Array.from(lambda) } },
  });
}

/**
 * L2-regularized logistic regression on generated data (m examples, d features and a
 * bias): mean(softplus(Xw) − y∘Xw) + (μ/2)‖w‖², on an ndarray X and a Float64Array w.
 * Its minimizer has no closed form; its optimality condition does:
 * (1/m) Xᵀ(σ(Xw) − y) + μw = 0, computed here on numbers, without wengert.
 */
export function logistic(m = 200, d = 5, mu = 1e-2): TestProblem {
  let seed = 7;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const cols = d + 1;
  const X: NdArray = ndarray(new Float64Array(m * cols), [m, cols]);
  const y = new Float64Array(m);
  const truth = Float64Array.from({ length: cols }, () => 4 * random() - 2);
  for (let i = 0; i < m; i++) {
    let z = 0;
    for (let j = 0; j < cols; j++) {
      const v = j === d ? 1 : 2 * random() - 1;
      X.set(i, j, v);
      z += truth[j] * v;
    }
    y[i] = random() < 1 / (1 + Math.exp(-z)) ? 1 : 0;
  }
  const f = (w: Tensor): Scalar => {
    const z = matmul(X, w) as Tensor;
    return add(mean(sub(softplus(z), mul(y, z))) as Scalar, mul(mu / 2, sum(square(w)) as Scalar));
  };
  const optimality = (w: Float64Array): number => {
    const g = Float64Array.from(w, (v) => mu * v);
    for (let i = 0; i < m; i++) {
      let z = 0;
      for (let j = 0; j < cols; j++) z += X.get(i, j) * w[j];
      const r = 1 / (1 + Math.exp(-z)) - y[i];
      for (let j = 0; j < cols; j++) g[j] += (r * X.get(i, j)) / m;
    }
    return g.reduce((a, v) => Math.max(a, Math.abs(v)), 0);
  };
  const rows = Array.from({ length: m }, (_, i) => Array.from({ length: cols }, (_, j) => X.get(i, j)));
  return problem<Float64Array>({
    name: `logistic regression m=${m} d=${d}`,
    f,
    x0: new Float64Array(cols),
    xStar: null,
    fStar: null,
    xTol: 0,
    optimality,
    scipy: { kind: "logistic", x0: new Array(cols).fill(0), data: { X: rows, y: Array.from(y), mu } },
  });
}

/** The problems of the tests and the bench, in order. */
export function testProblems(): TestProblem[] {
  return [rosenbrock(2), rosenbrock(10), rosenbrock(100), beale, powell, illConditioned(), logistic(), boundedRosenbrock()];
}
