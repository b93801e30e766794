/**
 * @file `minimize(f, x0, options)`, as SciPy's `scipy.optimize.minimize`: the method by
 * name, its tolerances with SciPy's defaults, and SciPy's result fields. `x0` may be any
 * parameter tree; the methods work on the vector of its components, and `x` and `jac`
 * come back shaped like `x0`. Gradients come from compileGrad (one trace, replayed),
 * Hessian-vector products and Hessians from wengert's exact forward over reverse.
 */
import type { Objective } from "../core.js";
import { OptimOptionsError } from "../errors.js";
import { checkOptions } from "../options.js";
import type { Shaped, Tree, TreeLike } from "../tree.js";
import { bfgs } from "./bfgs.js";
import { lbfgs } from "./lbfgs.js";
import { lbfgsb, type Box } from "./lbfgsb.js";
import { newtonCg } from "./newton-cg.js";
import type { Monitor, Outcome, Stop } from "./outcome.js";
import { problemOf, type Problem } from "./problem.js";
import type { Raveled } from "../ravel.js";
import { trustExact } from "./trust-exact.js";

export type Method = "lbfgs" | "bfgs" | "newton-cg" | "trust-exact";

/** What the callback is given after each iteration. */
export interface Iterate<T = Tree> {
  readonly nit: number;
  readonly x: T;
  readonly fun: number;
  readonly jac: T;
}

export interface MinimizeOptions<T = Tree> {
  /** The algorithm (default "lbfgs"; SciPy's default is BFGS). */
  readonly method?: Method;
  /** SciPy's `tol`: sets gtol (lbfgs, bfgs, trust-exact), ftol (lbfgs) or xtol (newton-cg) where not given. */
  readonly tol?: number;
  /** Stop when the gradient's norm is at most this: ‖g‖∞ for lbfgs and bfgs (1e-5), ‖g‖₂ < gtol for trust-exact (1e-4); newton-cg: off unless given. */
  readonly gtol?: number;
  /** lbfgs: stop when an iteration reduces f by this relative amount or less (2.220446049250313e-9, SciPy's factr·ε). */
  readonly ftol?: number;
  /** newton-cg: stop when the step's mean |component| is at most this (1e-5). */
  readonly xtol?: number;
  /** Iterations at most (lbfgs 15000; others 200·n). */
  readonly maxIter?: number;
  /** lbfgs: evaluations of f at most (15000). */
  readonly maxFun?: number;
  /** lbfgs: correction pairs kept (SciPy's maxcor, 10). */
  readonly memory?: number;
  /**
   * lbfgs: bounds l ≤ x ≤ u (L-BFGS-B), each a number for every component or a tree
   * shaped like x0; ±Infinity, or leaving one out, for none.
   */
  readonly bounds?: { readonly lower?: number | TreeLike<T>; readonly upper?: number | TreeLike<T> };
  /** trust-exact: the first trust radius (1), the largest (1000), and the acceptance threshold η (0.15). */
  readonly initialTrustRadius?: number;
  readonly maxTrustRadius?: number;
  readonly eta?: number;
  /** Called after each iteration; return false to stop there. */
  readonly callback?: (iterate: Iterate<T>) => boolean | void;
}

/** SciPy's OptimizeResult, with `x` and `jac` shaped like x0. */
export interface MinimizeResult<T = Tree> {
  readonly x: T;
  readonly fun: number;
  readonly jac: T;
  /** Iterations. */
  readonly nit: number;
  /** Evaluations of f (each with its gradient, from one trace: njev is the same). */
  readonly nfev: number;
  readonly njev: number;
  /** Hessian-vector products (newton-cg) or Hessians (trust-exact). */
  readonly nhev: number;
  readonly success: boolean;
  /** Why it stopped. */
  readonly status: Stop;
  readonly message: string;
}

const COMMON = { method: "string", tol: "number", gtol: "number", maxIter: "number", callback: "function" } as const;
const METHOD_OPTIONS = {
  lbfgs: { ...COMMON, ftol: "number", maxFun: "number", memory: "number", bounds: "object" },
  bfgs: COMMON,
  "newton-cg": { ...COMMON, xtol: "number" },
  "trust-exact": { ...COMMON, initialTrustRadius: "number", maxTrustRadius: "number", eta: "number" },
} as const;

const MESSAGES: { readonly [S in Stop]: string } = {
  gtol: "Optimization terminated successfully: the gradient's norm is at most gtol.",
  ftol: "Optimization terminated successfully: the relative reduction of f is at most ftol.",
  xtol: "Optimization terminated successfully: the step is at most xtol.",
  maxIter: "Maximum number of iterations has been exceeded.",
  maxFev: "Maximum number of function evaluations has been exceeded.",
  callback: "Stopped by the callback.",
  lineSearch: "Desired error not necessarily achieved due to precision loss: no step along the search direction decreased f enough.",
  nonFinite: "NaN or infinite value encountered in f or its gradient.",
  noPredictedDecrease: "A bad approximation caused failure to predict improvement.",
  cgMaxIter: "CG iterations didn't converge. The Hessian is not positive definite.",
};

const SUCCESS: ReadonlySet<Stop> = new Set(["gtol", "ftol", "xtol"]);

/**
 * Minimizes `f` from `x0` (any parameter tree) by `options.method`. The tree's type is
 * `x0`'s (`f` is checked against it, and typed by it when written inline).
 */
export function minimize<const T extends TreeLike<T>>(
  f: Objective<NoInfer<T>>,
  x0: T,
  options: MinimizeOptions<Shaped<NoInfer<T>>> = {},
): MinimizeResult<Shaped<T>> {
  checkOptions("minimize", options, { ...METHOD_OPTIONS.lbfgs, ...METHOD_OPTIONS["trust-exact"], xtol: "number" });
  const method = options.method ?? "lbfgs";
  if (!(method in METHOD_OPTIONS)) {
    throw new OptimOptionsError(`minimize: unknown method ${JSON.stringify(method)}; the methods are ${Object.keys(METHOD_OPTIONS).join(", ")}.`);
  }
  for (const key of Object.keys(options)) {
    if (!(key in METHOD_OPTIONS[method]) && (options as Record<string, unknown>)[key] !== undefined) {
      const owners = (Object.keys(METHOD_OPTIONS) as Method[]).filter((m) => key in METHOD_OPTIONS[m]);
      throw new OptimOptionsError(
        `minimize: option ${key} is not used by method "${method}" (it is ${owners.join(" and ")}'s); ` +
          "remove it or change the method.",
      );
    }
  }
  const { problem, raveled } = problemOf(f, x0);
  const callback = options.callback;
  const monitor: Monitor = callback
    ? (nit, x, fun, jac) => callback({ nit, x: raveled.unravel(x), fun, jac: raveled.unravel(jac) }) !== false
    : () => true;
  const box = options.bounds === undefined ? null : boxOf(options.bounds, raveled);
  const outcome = run(method, problem, box, options, monitor);
  return {
    x: raveled.unravel(outcome.x),
    fun: outcome.fun,
    jac: raveled.unravel(outcome.jac),
    nit: outcome.nit,
    nfev: problem.counts.nfev,
    njev: problem.counts.njev,
    nhev: problem.counts.nhev,
    success: SUCCESS.has(outcome.stop),
    status: outcome.stop,
    message: MESSAGES[outcome.stop],
  };
}

/** The bounds as two vectors of x's components. */
function boxOf<T extends Tree>(bounds: NonNullable<MinimizeOptions<T>["bounds"]>, raveled: Raveled<T>): Box {
  checkOptions("minimize: bounds", bounds, { lower: "number or object", upper: "number or object" });
  const n = raveled.vector.length;
  const side = (value: number | Tree | undefined, none: number): Float64Array => {
    if (value === undefined) return new Float64Array(n).fill(none);
    if (typeof value === "number") return new Float64Array(n).fill(value);
    return raveled.ravel(value);
  };
  return { lower: side(bounds.lower, -Infinity), upper: side(bounds.upper, Infinity) };
}

function run<T extends Tree>(method: Method, problem: Problem, box: Box | null, options: MinimizeOptions<T>, monitor: Monitor): Outcome {
  const { tol } = options;
  const positive = (name: string, v: number | undefined, fallback: number): number => {
    const value = v ?? fallback;
    if (!(value >= 0)) throw new OptimOptionsError(`minimize: ${name} is ${value}; it must be a number ≥ 0.`);
    return value;
  };
  const count = (name: string, v: number | undefined, fallback: number): number => {
    const value = v ?? fallback;
    if (!(Number.isInteger(value) && value >= 1)) throw new OptimOptionsError(`minimize: ${name} is ${value}; it must be a whole number ≥ 1.`);
    return value;
  };
  const maxIter = (fallback: number) => count("maxIter", options.maxIter, fallback);
  switch (method) {
    case "lbfgs": {
      const lbfgsOptions = {
        gtol: positive("gtol", options.gtol ?? tol, 1e-5),
        ftol: positive("ftol", options.ftol ?? tol, 2.220446049250313e-9),
        maxIter: maxIter(15000),
        maxFun: count("maxFun", options.maxFun, 15000),
        memory: count("memory", options.memory, 10),
      };
      return box === null ? lbfgs(problem, lbfgsOptions, monitor) : lbfgsb(problem, box, lbfgsOptions, monitor);
    }
    case "bfgs":
      return bfgs(problem, { gtol: positive("gtol", options.gtol ?? tol, 1e-5), maxIter: maxIter(200 * problem.n) }, monitor);
    case "newton-cg":
      return newtonCg(
        problem,
        { xtol: positive("xtol", options.xtol ?? tol, 1e-5), gtol: positive("gtol", options.gtol, 0), maxIter: maxIter(200 * problem.n) },
        monitor,
      );
    case "trust-exact": {
      const initialTrustRadius = positive("initialTrustRadius", options.initialTrustRadius, 1);
      const maxTrustRadius = positive("maxTrustRadius", options.maxTrustRadius, 1000);
      if (!(initialTrustRadius > 0 && initialTrustRadius <= maxTrustRadius)) {
        throw new OptimOptionsError(`minimize: initialTrustRadius is ${initialTrustRadius}; it must be in (0, maxTrustRadius = ${maxTrustRadius}].`);
      }
      const eta = positive("eta", options.eta, 0.15);
      if (!(eta < 0.25)) throw new OptimOptionsError(`minimize: eta is ${eta}; it must be in [0, 0.25) (N&W Alg. 4.1).`);
      const gtol = positive("gtol", options.gtol ?? tol, 1e-4);
      return trustExact(problem, { gtol, maxIter: maxIter(200 * problem.n), initialTrustRadius, maxTrustRadius, eta }, monitor);
    }
    default:
      return assertNever(method);
  }
}

function assertNever(x: never): never {
  throw new Error(`unexpected ${String(x)}`);
}
