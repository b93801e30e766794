/**
 * @file AdamW (Loshchilov & Hutter 2019): Adam with weight decay decoupled from the
 * gradient, as optax.adamw = chain(scaleByAdam, addDecayedWeights, scaleByLearningRate):
 * u = −lr · (adam's u + λ·p).
 */
import { OptimOptionsError } from "../errors.js";
import { checkOptions } from "../options.js";
import { zip2 } from "../tree.js";
import {
  chain,
  checkRate,
  gradientTransformation,
  scaleByLearningRate,
  type CountState,
  type GradientTransformation,
  type ScalarOrSchedule,
} from "../transform.js";
import { ADAM_OPTIONS, scaleByAdam, type AdamOptions, type AdamState } from "./adam.js";

/** Adds `weightDecay · params` to the updates (a schedule is read at the update count, from 0). */
export function addDecayedWeights(weightDecay: ScalarOrSchedule): GradientTransformation<CountState> {
  checkRate("addDecayedWeights", weightDecay);
  return gradientTransformation<CountState>({
    init: () => ({ count: 0 }),
    update: (updates, state, params) => {
      if (params === undefined) {
        throw new OptimOptionsError("addDecayedWeights: update needs the parameters; call update(grads, state, params).");
      }
      const s = typeof weightDecay === "function" ? weightDecay(state.count) : weightDecay;
      const out = s === 0 ? updates : zip2("addDecayedWeights", ["updates", "params"], (g, p) => g + s * p, updates, params);
      return [out, { count: state.count + 1 }];
    },
  });
}

export interface AdamWOptions extends AdamOptions {
  /** λ, the decay rate of the weights (default 1e-4, as optax's). */
  readonly weightDecay?: number;
}

/** AdamW: optax.adamw. */
export function adamw(learningRate: ScalarOrSchedule, options: AdamWOptions = {}): GradientTransformation<readonly [AdamState, CountState, CountState | null]> {
  checkRate("adamw", learningRate);
  checkOptions("adamw", options, { ...ADAM_OPTIONS, weightDecay: "number" });
  const { weightDecay = 1e-4, ...adamOptions } = options;
  return chain(scaleByAdam(adamOptions), addDecayedWeights(weightDecay), scaleByLearningRate(learningRate));
}
