/**
 * @file The one place @wengert/optim calls @wengert/core's derivatives, typed as this
 * package uses them.
 *
 * The runtime contract (README's API table): at the outermost level, a gradient and a
 * Hessian-vector product come back shaped like `x`, numbers as numbers and tensors in
 * the containers of `x`; a Hessian is shaped like `x` with, at each leaf, a tree shaped
 * like `x` whose leaves carry that leaf's dims first. Today's declarations say less
 * (`Cotangent<X>` admits traced values, `hessian` returns `unknown`), hence the casts
 * below and nowhere else: delete them when core's types say what the runtime does.
 */
import { compileGrad, hessian, hvp, type RdOptions, type Scalar, type Traced } from "@wengert/core";
import type { Tree } from "./tree.js";

/** A real-valued function of a parameter tree, written with wengert's operations. */
export type Objective<T extends Tree> = (x: Traced<T>) => Scalar;

/** `x ↦ [f(x), ∇f(x)]` for repeated calls (compileGrad: the trace replayed where it holds). */
export function valueAndGradOf<T extends Tree>(f: Objective<T>, options: RdOptions = {}): (x: T) => [number, T] {
  const compiled = compileGrad<T>(f, options);
  return (x) => compiled.valueAndGrad(x) as [number, T]; // cast: Cotangent<T> is T outside any rd
}

/** `∇²f(x)·v`, shaped like `x`. */
export function hvpAt<T extends Tree>(f: Objective<T>, x: T, v: T, options: RdOptions = {}): T {
  return hvp<T>(f, x, v, options) as T; // cast: Cotangent<T> is T outside any rd
}

/** `∇²f(x)`: shaped like `x`, each leaf a tree shaped like `x` with that leaf's dims prefixed. */
export function hessianAt<T extends Tree>(f: Objective<T>, x: T, options: RdOptions = {}): Tree {
  return hessian<T>(f, x, options) as Tree; // cast: hessian is declared unknown
}
