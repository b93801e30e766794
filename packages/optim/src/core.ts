/**
 * @file The one place @wengert/optim calls @wengert/core's derivatives, typed as this
 * package uses them.
 *
 * The runtime contract (README's API table): at the outermost level, a gradient and a
 * Hessian-vector product come back shaped like `x`, numbers as numbers and tensors in
 * the containers of `x`; a Hessian is shaped like `x` with, at each leaf, a tree shaped
 * like `x` whose leaves carry that leaf's dims first. Core's declarations say exactly
 * that for a concrete `x`, but this package calls them at any tree, and TypeScript does
 * not resolve core's conditional types (`Traced<T>`, `Cotangent<T>`) for a type
 * parameter, nor instantiate them at `Tree` (too deep): hence the casts below, and
 * nowhere else.
 */
import { compileGrad, hessian, hvp, jit, type RdOptions, type Scalar, type Traced } from "@wengert/core";
import { treeLeaves, type Tree } from "./tree.js";

/** A real-valued function of a parameter tree of type `T`, written with wengert's operations. */
export type Objective<T> = (x: Traced<T>) => Scalar;

/** An objective of any tree, as this package calls it: at trees of its type, which core traces. */
export type AnyObjective = (x: never) => Scalar;

/** What core's derivatives are at trees, outside any rd. */
interface AtTrees {
  compileGrad(f: AnyObjective, options: RdOptions): { valueAndGrad(x: unknown): [number, Tree] };
  hvp(f: AnyObjective, x: unknown, v: unknown, options: RdOptions): Tree;
  hessian(f: AnyObjective, x: unknown, options: RdOptions): Tree;
  jit<P>(f: (x: P) => unknown): (x: P) => Tree;
}
// cast: Cotangent<T> is T, and Hessian<T> a tree, outside any rd
const core = { compileGrad, hvp, hessian, jit } as unknown as AtTrees;

/** `x ↦ [f(x), ∇f(x)]` for repeated calls (compileGrad: the trace replayed where it holds). */
export function valueAndGradOf(f: AnyObjective, options: RdOptions = {}): (x: unknown) => [number, Tree] {
  const compiled = core.compileGrad(f, options);
  return (x) => compiled.valueAndGrad(x);
}

/**
 * `(x, v) ↦ ∇²f(x)·v`, shaped like `x`, for repeated calls: `jit` of `hvp`, its trace (f's,
 * and its forward-over-reverse derivative) kept and replayed where its decisions hold, as
 * compileGrad keeps the gradient's; f is a function of x alone, as there. With `checkNaN`,
 * every call traces (a replay checks nothing).
 */
export function hvpOf(f: AnyObjective, options: RdOptions = {}): (x: unknown, v: unknown) => Tree {
  if (options.checkNaN === true) return (x, v) => core.hvp(f, x, v, options);
  const kept = core.jit(([x, v]: [unknown, unknown]) => core.hvp(f, x, v, options));
  return (x, v) => kept([x, v]);
}

/**
 * `x ↦ ∇²f(x)` for repeated calls: shaped like `x`, each leaf a tree shaped like `x` with
 * that leaf's dims prefixed. Of reals, jit of `hessian`, as `hvpOf`; with tensors among x's
 * leaves core's `hessian` runs at the outermost level only, so it traces at every call.
 */
export function hessianOf(f: AnyObjective, options: RdOptions = {}): (x: unknown) => Tree {
  const each = (x: unknown): Tree => core.hessian(f, x, options);
  if (options.checkNaN === true) return each;
  const kept = core.jit(each);
  return (x) => (treeLeaves(x as Tree).every((leaf) => typeof leaf === "number") ? kept(x) : each(x));
}
