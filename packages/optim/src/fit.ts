/**
 * @file `fit`: the training loop every user of an optimizer writes, once. Each step
 * takes the loss and its gradient from one compiled gradient (compileGrad: the trace of
 * the loss replayed, compiled for reals, as long as its decisions hold), asks the
 * optimizer for updates and applies them, reporting progress as it goes.
 */
import { valueAndGradOf, type Objective } from "./core.js";
import { OptimOptionsError } from "./errors.js";
import { checkOptions } from "./options.js";
import { treeNorm } from "./tree-math.js";
import type { Shaped, Tree, TreeLike } from "./tree.js";
import { applyUpdates, type GradientTransformation } from "./transform.js";

/** What `fit` reports: the loss and gradient norm at `params`, after `step` updates. */
export interface Progress<T = Tree> {
  readonly step: number;
  readonly loss: number;
  readonly gradNorm: number;
  readonly params: T;
}

export interface FitOptions<T = Tree> {
  /** How many updates (required). */
  readonly steps: number;
  /** Report every this many steps, and after the last (default: a tenth of steps). */
  readonly every?: number;
  /** Called with each report; return false to stop there. */
  readonly onProgress?: (progress: Progress<T>) => boolean | void;
  /** Print each report with console.log (default false). */
  readonly log?: boolean;
  /** Stop when the gradient's norm falls below this (default 0: never). */
  readonly gradTol?: number;
}

export interface FitResult<T = Tree, S = unknown> {
  /** The parameters after the last update. */
  readonly params: T;
  /** The optimizer's state after the last update (to continue with). */
  readonly state: S;
  /** The loss before each update, and at the final parameters last (steps + 1 values when not stopped early). */
  readonly losses: number[];
  /** Updates made. */
  readonly steps: number;
  /** Why the loop ended. */
  readonly stopped: "steps" | "gradTol" | "onProgress";
}

/**
 * Minimizes `loss` from `params` by `steps` updates of `optimizer`. The parameters'
 * type is `params`'s (`loss` is checked against it, and typed by it when written inline).
 */
export function fit<const T extends TreeLike<T>, S>(
  loss: Objective<NoInfer<T>>,
  params: T,
  optimizer: GradientTransformation<S>,
  options: FitOptions<Shaped<NoInfer<T>>>,
): FitResult<Shaped<T>, S> {
  checkOptions("fit", options, { steps: "number", every: "number", onProgress: "function", log: "boolean", gradTol: "number" });
  const { steps, gradTol = 0 } = options ?? {};
  if (!(Number.isInteger(steps) && steps >= 0)) throw new OptimOptionsError(`fit: steps is ${String(steps)}; pass a whole number of updates, { steps: 1000 }.`);
  const every = options.every ?? Math.max(1, Math.round(steps / 10));
  if (!(Number.isInteger(every) && every > 0)) throw new OptimOptionsError(`fit: every is ${every}; pass a positive whole number of steps.`);
  const valueAndGrad = valueAndGradOf(loss);
  let state = optimizer.init(params);
  const losses: number[] = [];
  // cast: p is params, or params plus updates shaped like them (Shaped<Shaped<T>> is Shaped<T>)
  const shaped = (t: unknown) => t as Shaped<T>;
  let p = shaped(params);
  for (let step = 0; ; step++) {
    const [value, g] = valueAndGrad(p);
    losses.push(value);
    const last = step === steps;
    const reporting = step % every === 0 || last;
    const gradNorm = reporting || gradTol > 0 ? treeNorm(g) : NaN;
    const converged = gradNorm < gradTol;
    if (reporting || converged) {
      if (options.log) console.log(`fit: step ${step}  loss ${value.toPrecision(8)}  |grad| ${gradNorm.toPrecision(3)}`);
      if (options.onProgress?.({ step, loss: value, gradNorm, params: p }) === false) return { params: p, state, losses, steps: step, stopped: "onProgress" };
    }
    if (converged) return { params: p, state, losses, steps: step, stopped: "gradTol" };
    if (last) return { params: p, state, losses, steps: step, stopped: "steps" };
    const [updates, next] = optimizer.update(g, state, p);
    state = next;
    p = shaped(applyUpdates(p, updates));
  }
}
