/**
 * @file Gradient transformations, as optax's: a pure pair `init(params) → state`,
 * `update(updates, state, params) → [updates, state]` over trees. An optimizer is a
 * chain of them (`adam = chain(scaleByAdam(), scaleByLearningRate(lr))`), and a step
 * is `applyUpdates(params, updates)`. No transformation mutates its arguments.
 */
import { OptimOptionsError } from "./errors.js";
import { checkOptions } from "./options.js";
import { zip2, treeMap, type Shaped, type Tree, type TreeLike } from "./tree.js";

/** A learning rate (or any step size) as a function of the update count, starting at 0. */
export type Schedule = (count: number) => number;
/** A constant or a schedule. */
export type ScalarOrSchedule = number | Schedule;

/**
 * A gradient transformation, with state of type `S`. `update` takes the incoming updates
 * (gradients, or the output of the transformation before it in a chain), the state, and
 * the current parameters (needed by some, such as weight decay), and returns the
 * outgoing updates, shaped like the incoming ones, and the new state.
 */
export interface GradientTransformation<S = unknown> {
  init<const P extends TreeLike<P>>(params: P): S;
  update<const T extends TreeLike<T>>(updates: T, state: S, params?: TreeLike<NoInfer<T>>): [Shaped<T>, S];
}

/**
 * A gradient transformation from its two functions, written over trees (optax's
 * `GradientTransformation(init, update)`): `update` must return updates shaped like the
 * ones it is given, which the result's type then says.
 */
export function gradientTransformation<S>(functions: {
  init(params: Tree): S;
  update(updates: Tree, state: S, params?: Tree): [Tree, S];
}): GradientTransformation<S> {
  // cast: the trees given are trees (their types say so), and update returns updates shaped like its own (the contract above)
  return functions as GradientTransformation<S>;
}

/** The transformation that changes nothing. */
export function identity(): GradientTransformation<null> {
  return gradientTransformation({ init: () => null, update: (updates, state) => [updates, state] });
}

/** The state of a chain of transformations: theirs, in order. */
export type ChainState<Ts extends readonly GradientTransformation[]> = { readonly [K in keyof Ts]: StateOf<Ts[K]> };
type StateOf<G> = G extends GradientTransformation<infer S> ? S : never;

/** Applies the transformations in order; the state is the array of their states. */
export function chain<const Ts extends readonly GradientTransformation[]>(...transforms: Ts): GradientTransformation<ChainState<Ts>> {
  return gradientTransformation<readonly unknown[]>({
    init: (params) => transforms.map((t) => t.init(params)),
    update: (updates, state, params) => {
      const next: unknown[] = [];
      let u = updates;
      transforms.forEach((t, i) => {
        const [out, s] = t.update(u, state[i], params);
        u = out;
        next.push(s);
      });
      return [u, next];
    },
  }) as GradientTransformation<ChainState<Ts>>; // cast: the k-th state is the k-th transformation's
}

/** Multiplies the updates by a constant. */
export function scale(stepSize: number): GradientTransformation<null> {
  checkNumber("scale", "stepSize", stepSize);
  return gradientTransformation({ init: () => null, update: (updates, state) => [treeMap((g) => stepSize * g, updates), state] });
}

/** The state of a transformation that counts its updates. */
export interface CountState {
  readonly count: number;
}

/** Multiplies the updates by `stepSize(count)`, count = 0 at the first update (optax's scale_by_schedule). */
export function scaleBySchedule(stepSize: Schedule): GradientTransformation<CountState> {
  return gradientTransformation<CountState>({
    init: () => ({ count: 0 }),
    update: (updates, state) => {
      const s = stepSize(state.count);
      return [treeMap((g) => s * g, updates), { count: state.count + 1 }];
    },
  });
}

/** Multiplies the updates by −learningRate (a descent step), or +learningRate with `flipSign: false`. */
export function scaleByLearningRate(learningRate: ScalarOrSchedule, options: { flipSign?: boolean } = {}): GradientTransformation<CountState | null> {
  checkOptions("scaleByLearningRate", options, { flipSign: "boolean" });
  const m = options.flipSign === false ? 1 : -1;
  if (typeof learningRate === "function") return scaleBySchedule((count) => m * learningRate(count));
  checkNumber("scaleByLearningRate", "learningRate", learningRate);
  return scale(m * learningRate);
}

/** The parameters after a step: `params + updates`, componentwise. */
export function applyUpdates<const T extends TreeLike<T>>(params: T, updates: TreeLike<NoInfer<T>>): Shaped<T> {
  return zip2("applyUpdates", ["params", "updates"], (p, u) => p + u, params, updates);
}

/** That an argument is a finite number, or that it is a schedule. */
export function checkNumber(caller: string, name: string, v: unknown): asserts v is number {
  if (typeof v !== "number" || !Number.isFinite(v)) {
    throw new OptimOptionsError(`${caller}: ${name} is ${typeof v === "string" ? JSON.stringify(v) : String(v)}; expected a finite number.`);
  }
}

/** That a learning rate is a finite number or a schedule (a function of the count). */
export function checkRate(caller: string, v: unknown): asserts v is ScalarOrSchedule {
  if (typeof v !== "function") checkNumber(caller, "learningRate", v);
}
