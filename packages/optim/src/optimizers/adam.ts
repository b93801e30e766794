/**
 * @file Adam (Kingma & Ba 2015), as optax computes it, operation for operation, so
 * that the numbers agree to the last bit (test/adam.test.ts):
 *
 *   mu_t = (1 − b1)·g + b1·mu_{t−1}          nu_t = (1 − b2)·g² + b2·nu_{t−1}
 *   mû   = mu_t / (1 − b1^t)                 nû   = nu_t / (1 − b2^t)
 *   u    = mû / (sqrt(nû + eps_root) + eps)  and then  −lr · u  (scaleByLearningRate)
 *
 * (optax/_src/transform.py scale_by_adam; tree_update_moment, tree_bias_correction in
 * optax/tree_utils/_tree_math.py), t counting from 1. With `nesterov` (NAdam, Dozat
 * 2016): mû = b1·mu_t/(1 − b1^{t+1}) + (1 − b1)·g/(1 − b1^t), as optax's.
 */
import { checkOptions, checkRange } from "../options.js";
import { zerosLike } from "../tree-math.js";
import { zip2, type Tree } from "../tree.js";
import {
  chain,
  checkRate,
  gradientTransformation,
  scaleByLearningRate,
  type CountState,
  type GradientTransformation,
  type ScalarOrSchedule,
} from "../transform.js";

export interface AdamOptions {
  /** Decay of the first moment (default 0.9). */
  readonly b1?: number;
  /** Decay of the second moment (default 0.999). */
  readonly b2?: number;
  /** Added to the denominator, outside the square root (default 1e-8). */
  readonly eps?: number;
  /** Added inside the square root (default 0). */
  readonly epsRoot?: number;
  /** Nesterov's momentum: NAdam (default false). */
  readonly nesterov?: boolean;
}

export const ADAM_OPTIONS = { b1: "number", b2: "number", eps: "number", epsRoot: "number", nesterov: "boolean" } as const;

export interface AdamState {
  /** Updates so far. */
  readonly count: number;
  /** The first moment, shaped like the parameters. */
  readonly mu: Tree;
  /** The second moment, shaped like the parameters. */
  readonly nu: Tree;
}

/** Rescales updates by Adam's moments (without the learning rate): optax.scale_by_adam. */
export function scaleByAdam(options: AdamOptions = {}): GradientTransformation<AdamState> {
  checkOptions("scaleByAdam", options, ADAM_OPTIONS);
  const { b1 = 0.9, b2 = 0.999, eps = 1e-8, epsRoot = 0, nesterov = false } = options;
  checkRange("scaleByAdam", "b1", b1, 0, 1);
  checkRange("scaleByAdam", "b2", b2, 0, 1);
  checkRange("scaleByAdam", "eps", eps, 0, Infinity);
  checkRange("scaleByAdam", "epsRoot", epsRoot, 0, Infinity);
  return gradientTransformation<AdamState>({
    init: (params) => ({ count: 0, mu: zerosLike(params), nu: zerosLike(params) }),
    update: (updates, state) => {
      const mu = zip2("scaleByAdam", ["updates", "state.mu"], (g, t) => (1 - b1) * g + b1 * t, updates, state.mu);
      const nu = zip2("scaleByAdam", ["updates", "state.nu"], (g, t) => (1 - b2) * (g * g) + b2 * t, updates, state.nu);
      const count = state.count + 1;
      const c1 = 1 - b1 ** count;
      const c2 = 1 - b2 ** count;
      const denominator = (v: number) => Math.sqrt(v / c2 + epsRoot) + eps;
      const out = nesterov
        ? zip2("scaleByAdam", ["mu", "nu"], (m, v) => m / denominator(v), nesterovMoment(b1, count, mu, updates), nu)
        : zip2("scaleByAdam", ["mu", "nu"], (m, v) => m / c1 / denominator(v), mu, nu);
      return [out, { count, mu, nu }]; // mu and nu are shaped like the updates
    },
  });
}

/** NAdam's corrected first moment: b1·mu/(1 − b1^{t+1}) + (1 − b1)·g/(1 − b1^t). */
function nesterovMoment(b1: number, count: number, mu: Tree, updates: Tree): Tree {
  const c1 = 1 - b1 ** count;
  const next = 1 - b1 ** (count + 1);
  return zip2("scaleByAdam", ["mu", "updates"], (m, g) => b1 * (m / next) + (1 - b1) * (g / c1), mu, updates);
}

/** Adam: optax.adam = chain(scaleByAdam, scaleByLearningRate). */
export function adam(learningRate: ScalarOrSchedule, options: AdamOptions = {}): GradientTransformation<readonly [AdamState, CountState | null]> {
  checkRate("adam", learningRate);
  return chain(scaleByAdam(options), scaleByLearningRate(learningRate));
}
