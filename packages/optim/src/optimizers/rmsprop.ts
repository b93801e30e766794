/**
 * @file RMSProp (Tieleman & Hinton 2012), as optax.rmsprop:
 *
 *   nu_t = (1 − ρ)·g² + ρ·nu_{t−1};   u = g / sqrt(nu_t + eps)   (optax's eps_in_sqrt)
 *
 * centered: divided by sqrt(nu_t − mu_t² + eps) with mu_t the mean of g likewise; then
 * −lr, then momentum if asked (optax applies it after the learning rate).
 */
import { checkOptions, checkRange } from "../options.js";
import { fullLike, zerosLike } from "../tree-math.js";
import { zip2, type Tree } from "../tree.js";
import {
  chain,
  checkRate,
  gradientTransformation,
  identity,
  scaleByLearningRate,
  type CountState,
  type GradientTransformation,
  type ScalarOrSchedule,
} from "../transform.js";
import { momentum, type MomentumState } from "./sgd.js";

export interface RmsOptions {
  /** ρ, the decay of the mean square (default 0.9). */
  readonly decay?: number;
  /** Added to the mean square (default 1e-8). */
  readonly eps?: number;
  /** The mean square's initial value (default 0). */
  readonly initialScale?: number;
  /** eps inside the square root (default true, optax's); false: g / (sqrt(nu) + eps), PyTorch's. */
  readonly epsInSqrt?: boolean;
  /** Divide by the standard deviation instead of the root mean square (default false). */
  readonly centered?: boolean;
}

const RMS_OPTIONS = { decay: "number", eps: "number", initialScale: "number", epsInSqrt: "boolean", centered: "boolean" } as const;

export interface RmsState {
  /** The mean square of the updates, shaped like the parameters. */
  readonly nu: Tree;
  /** Their mean, when centered (else null). */
  readonly mu: Tree | null;
}

/** Rescales updates by the root of their mean square (optax.scale_by_rms, or scale_by_stddev when centered). */
export function scaleByRms(options: RmsOptions = {}): GradientTransformation<RmsState> {
  checkOptions("scaleByRms", options, RMS_OPTIONS);
  const { decay = 0.9, eps = 1e-8, initialScale = 0, epsInSqrt = true, centered = false } = options;
  checkRange("scaleByRms", "decay", decay, 0, 1);
  const root = epsInSqrt ? (n: number) => 1 / Math.sqrt(n + eps) : (n: number) => 1 / (Math.sqrt(n) + eps);
  return gradientTransformation<RmsState>({
    init: (params) => ({ nu: fullLike(params, initialScale), mu: centered ? zerosLike(params) : null }),
    update: (updates, state) => {
      const nu = zip2("scaleByRms", ["updates", "state.nu"], (g, t) => (1 - decay) * (g * g) + decay * t, updates, state.nu);
      if (state.mu === null) return [zip2("scaleByRms", ["updates", "nu"], (g, n) => root(n) * g, updates, nu), { nu, mu: null }];
      const mu = zip2("scaleByRms", ["updates", "state.mu"], (g, t) => (1 - decay) * g + decay * t, updates, state.mu);
      const variance = zip2("scaleByRms", ["nu", "mu"], (n, m) => n - m * m, nu, mu);
      return [zip2("scaleByRms", ["updates", "variance"], (g, v) => root(v) * g, updates, variance), { nu, mu }];
    },
  });
}

export interface RmspropOptions extends RmsOptions {
  /** Momentum applied after the learning rate (default none). */
  readonly momentum?: number;
  /** Nesterov's momentum (default false). */
  readonly nesterov?: boolean;
}

/** RMSProp: optax.rmsprop. */
export function rmsprop(
  learningRate: ScalarOrSchedule,
  options: RmspropOptions = {},
): GradientTransformation<readonly [RmsState, CountState | null, MomentumState | null]> {
  checkRate("rmsprop", learningRate);
  checkOptions("rmsprop", options, { ...RMS_OPTIONS, momentum: "number", nesterov: "boolean" });
  const { momentum: mu, nesterov, ...rms } = options;
  return chain(scaleByRms(rms), scaleByLearningRate(learningRate), mu === undefined ? identity() : momentum(mu, { nesterov }));
}
