/**
 * @file What a minimizer ends with, before `minimize` gives it back as trees, and what
 * every minimizer is given besides the problem.
 */

/** Why a minimizer stopped. */
export type Stop =
  /** The gradient's norm fell to gtol (success). */
  | "gtol"
  /** f's relative reduction in an iteration fell to ftol (success; L-BFGS). */
  | "ftol"
  /** The step fell to xtol (success; Newton-CG). */
  | "xtol"
  | "maxIter"
  | "maxFev"
  /** The callback returned false. */
  | "callback"
  /** No step along the direction decreased f enough: at the precision of f, usually. */
  | "lineSearch"
  /** f or its gradient became NaN or infinite. */
  | "nonFinite"
  /** The quadratic model predicted no decrease (trust region). */
  | "noPredictedDecrease"
  /** Conjugate gradients did not converge in 20 n iterations (Newton-CG). */
  | "cgMaxIter";

export interface Outcome {
  readonly x: Float64Array;
  readonly fun: number;
  readonly jac: Float64Array;
  readonly nit: number;
  readonly stop: Stop;
}

/** Called after each iteration with the iterate (a vector: minimize shapes it); false stops. */
export type Monitor = (nit: number, x: Float64Array, fun: number, jac: Float64Array) => boolean;
