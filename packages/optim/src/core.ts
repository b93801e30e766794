/**
 * @file The one place @wengert/optim calls @wengert/core's derivatives, typed as this
 * package uses them.
 *
 * The runtime contract (README's API table): at the outermost level, a gradient and a
 * Hessian-vector product come back shaped like `x`, numbers as numbers and tensors in
 * the containers of `x`; a Hessian is shaped like `x` with, at each leaf, a tree shaped
 * like `x` whose leaves carry that leaf's dims first. Core's declarations say exactly
 * that for a concrete `x`, but this package is generic over a tree type `T`, and
 * TypeScript does not resolve core's conditional types (`Traced<T>`, `Cotangent<T>`)
 * for a type parameter: hence the casts below, and nowhere else.
 */
import { compileGrad, hessian, hvp, type RdOptions, type Scalar, type Traced } from "@wengert/core";
import type { Tree } from "./tree.js";

/** A real-valued function of a parameter tree, written with wengert's operations. */
export type Objective<T extends Tree> = (x: Traced<T>) => Scalar;

/** `x ↦ [f(x), ∇f(x)]` for repeated calls (compileGrad: the trace replayed where it holds). */
export function valueAndGradOf<T extends Tree>(f: Objective<T>, options: RdOptions = {}): (x: T) => [number, T] {
  // cast: Cotangent<T> is T outside any rd
  const compiled = compileGrad(f as (x: unknown) => Scalar, options) as unknown as { valueAndGrad(x: T): [number, T] };
  return (x) => compiled.valueAndGrad(x);
}

/** `∇²f(x)·v`, shaped like `x`. */
export function hvpAt<T extends Tree>(f: Objective<T>, x: T, v: T, options: RdOptions = {}): T {
  const hvpOf = hvp as unknown as (f: Objective<T>, x: T, v: T, options: RdOptions) => T; // cast: Cotangent<T> is T outside any rd
  return hvpOf(f, x, v, options);
}

/** `∇²f(x)`: shaped like `x`, each leaf a tree shaped like `x` with that leaf's dims prefixed. */
export function hessianAt<T extends Tree>(f: Objective<T>, x: T, options: RdOptions = {}): Tree {
  const hessianOf = hessian as unknown as (f: Objective<T>, x: T, options: RdOptions) => Tree; // cast: Hessian<T> is a tree outside any rd
  return hessianOf(f, x, options);
}
