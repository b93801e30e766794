/**
 * @file Trees as vectors: a tree's components (every number and tensor element) are the
 * coordinates of a vector, and trees of one structure form a vector space. Sums,
 * scalings, `a·x + y`, inner products and norms over whole trees, with `into` variants
 * that write into an existing tree (no allocation) for loops.
 */
import { components, forEachLeaf2, leafSize, treeLeaves, treeMap, zip2, type IntoOptions, type Shaped, type TreeLike } from "./tree.js";

/** A tree shaped like `tree`, every component `value` (0: zerosLike). */
export function fullLike<const T extends TreeLike<T>>(tree: T, value: number, options: IntoOptions<NoInfer<T>> = {}): Shaped<T> {
  return treeMap(() => value, tree, options);
}

/** A tree shaped like `tree`, every component 0. */
export function zerosLike<const T extends TreeLike<T>>(tree: T, options: IntoOptions<NoInfer<T>> = {}): Shaped<T> {
  return fullLike(tree, 0, options);
}

/** `x + y`. */
export function treeAdd<const T extends TreeLike<T>>(x: T, y: TreeLike<NoInfer<T>>, options: IntoOptions<NoInfer<T>> = {}): Shaped<T> {
  return zip2("treeAdd", ["x", "y"], (a, b) => a + b, x, y, options.into);
}

/** `x − y`. */
export function treeSub<const T extends TreeLike<T>>(x: T, y: TreeLike<NoInfer<T>>, options: IntoOptions<NoInfer<T>> = {}): Shaped<T> {
  return zip2("treeSub", ["x", "y"], (a, b) => a - b, x, y, options.into);
}

/** `alpha · x`. */
export function treeScale<const T extends TreeLike<T>>(alpha: number, x: T, options: IntoOptions<NoInfer<T>> = {}): Shaped<T> {
  return treeMap((a) => alpha * a, x, options);
}

/** `alpha · x + y` (BLAS's axpy); `{ into: y }` updates y in place. */
export function treeAxpy<const T extends TreeLike<T>>(alpha: number, x: T, y: TreeLike<NoInfer<T>>, options: IntoOptions<NoInfer<T>> = {}): Shaped<T> {
  return zip2("treeAxpy", ["x", "y"], (a, b) => alpha * a + b, x, y, options.into);
}

/** `⟨x, y⟩`: the sum of the products of their components. */
export function treeDot<const T extends TreeLike<T>>(x: T, y: TreeLike<NoInfer<T>>): number {
  let s = 0;
  forEachLeaf2("treeDot", ["x", "y"], x, y, (a, b) => {
    for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  });
  return s;
}

/** The Euclidean norm of all of `x`'s components together (optax's global norm). */
export function treeNorm<const T extends TreeLike<T>>(x: T): number {
  let s = 0;
  for (const leaf of treeLeaves(x)) {
    if (typeof leaf === "number") s += leaf * leaf;
    else for (const v of components(leaf)) s += v * v;
  }
  return Math.sqrt(s);
}

/** How many components (numbers and tensor elements) `x` has. */
export function treeSize<const T extends TreeLike<T>>(x: T): number {
  return treeLeaves(x).reduce<number>((n, leaf) => n + leafSize(leaf), 0);
}
