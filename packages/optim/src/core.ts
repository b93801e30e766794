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
import { compileGrad, hessian, hvp, type RdOptions, type Scalar, type Traced } from "@wengert/core";
import type { Tree } from "./tree.js";

/** A real-valued function of a parameter tree of type `T`, written with wengert's operations. */
export type Objective<T> = (x: Traced<T>) => Scalar;

/** An objective of any tree, as this package calls it: at trees of its type, which core traces. */
export type AnyObjective = (x: never) => Scalar;

/** What core's derivatives are at trees, outside any rd. */
interface AtTrees {
  compileGrad(f: AnyObjective, options: RdOptions): { valueAndGrad(x: unknown): [number, Tree] };
  hvp(f: AnyObjective, x: unknown, v: unknown, options: RdOptions): Tree;
  hessian(f: AnyObjective, x: unknown, options: RdOptions): Tree;
}
// cast: Cotangent<T> is T, and Hessian<T> a tree, outside any rd
const core = { compileGrad, hvp, hessian } as unknown as AtTrees;

/** `x ↦ [f(x), ∇f(x)]` for repeated calls (compileGrad: the trace replayed where it holds). */
export function valueAndGradOf(f: AnyObjective, options: RdOptions = {}): (x: unknown) => [number, Tree] {
  const compiled = core.compileGrad(f, options);
  return (x) => compiled.valueAndGrad(x);
}

/** `∇²f(x)·v`, shaped like `x`. */
export function hvpAt(f: AnyObjective, x: unknown, v: unknown, options: RdOptions = {}): Tree {
  return core.hvp(f, x, v, options);
}

/** `∇²f(x)`: shaped like `x`, each leaf a tree shaped like `x` with that leaf's dims prefixed. */
export function hessianAt(f: AnyObjective, x: unknown, options: RdOptions = {}): Tree {
  return core.hessian(f, x, options);
}
