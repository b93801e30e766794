/**
 * @file Stochastic gradient descent, with heavy-ball or Nesterov momentum (optax's
 * `trace` and `sgd`; Sutskever et al. 2013).
 *
 *   m_t = g_t + μ m_{t−1};   u_t = −α_t m_t,  or with Nesterov  u_t = −α_t (g_t + μ m_t).
 */
import { checkOptions, checkRange } from "../options.js";
import { zerosLike } from "../tree-math.js";
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

export interface MomentumState {
  /** m_t, shaped like the parameters. */
  readonly trace: Tree;
}

/** Accumulates the updates with decay μ: m_t = g_t + μ m_{t−1}; emits m_t, or g_t + μ m_t with `nesterov`. */
export function momentum(decay: number, options: { nesterov?: boolean } = {}): GradientTransformation<MomentumState> {
  checkRange("momentum", "decay", decay, 0, 1);
  checkOptions("momentum", options, { nesterov: "boolean" });
  const accumulate = (g: number, t: number) => g + decay * t;
  return gradientTransformation<MomentumState>({
    init: (params) => ({ trace: zerosLike(params) }),
    update: (updates, state) => {
      const trace = zip2("momentum", ["updates", "state.trace"], accumulate, updates, state.trace);
      const out = options.nesterov ? zip2("momentum", ["updates", "trace"], accumulate, updates, trace) : trace;
      return [out, { trace }];
    },
  });
}

export interface SgdOptions {
  /** μ in [0, 1]; none (the default) is plain gradient descent. */
  readonly momentum?: number;
  /** Nesterov's momentum instead of the heavy ball (default false). */
  readonly nesterov?: boolean;
}

/** `u = −α g`, with momentum if asked: optax.sgd. */
export function sgd(learningRate: ScalarOrSchedule, options: SgdOptions = {}): GradientTransformation<readonly [MomentumState | null, CountState | null]> {
  checkRate("sgd", learningRate);
  checkOptions("sgd", options, { momentum: "number", nesterov: "boolean" });
  return chain(
    options.momentum === undefined ? identity() : momentum(options.momentum, { nesterov: options.nesterov }),
    scaleByLearningRate(learningRate),
  );
}
