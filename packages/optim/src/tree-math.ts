/**
 * @file Trees as vectors: a tree's components (every number and tensor element) are the
 * coordinates of a vector, and trees of one structure form a vector space. Sums,
 * scalings, `a·x + y`, inner products and norms over whole trees, with `into` variants
 * that write into an existing tree (no allocation) for loops.
 */
import { components, forEachLeaf2, leafSize, treeLeaves, treeMap, zip2, type IntoOptions, type Tree } from "./tree.js";

/** A tree shaped like `tree`, every component `value` (0: zerosLike). */
export function fullLike<T extends Tree>(tree: T, value: number, options: IntoOptions = {}): T {
  return treeMap(() => value, tree, options);
}

/** A tree shaped like `tree`, every component 0. */
export function zerosLike<T extends Tree>(tree: T, options: IntoOptions = {}): T {
  return fullLike(tree, 0, options);
}

/** `x + y`. */
export function treeAdd<T extends Tree>(x: T, y: Tree, options: IntoOptions = {}): T {
  return zip2("treeAdd", ["x", "y"], (a, b) => a + b, x, y, options.into);
}

/** `x − y`. */
export function treeSub<T extends Tree>(x: T, y: Tree, options: IntoOptions = {}): T {
  return zip2("treeSub", ["x", "y"], (a, b) => a - b, x, y, options.into);
}

/** `alpha · x`. */
export function treeScale<T extends Tree>(alpha: number, x: T, options: IntoOptions = {}): T {
  return treeMap((a) => alpha * a, x, options);
}

/** `alpha · x + y` (BLAS's axpy); `{ into: y }` updates y in place. */
export function treeAxpy<T extends Tree>(alpha: number, x: T, y: Tree, options: IntoOptions = {}): T {
  return zip2("treeAxpy", ["x", "y"], (a, b) => alpha * a + b, x, y, options.into);
}

/** `⟨x, y⟩`: the sum of the products of their components. */
export function treeDot(x: Tree, y: Tree): number {
  let s = 0;
  forEachLeaf2("treeDot", ["x", "y"], x, y, (a, b) => {
    for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  });
  return s;
}

/** The Euclidean norm of all of `x`'s components together (optax's global norm). */
export function treeNorm(x: Tree): number {
  let s = 0;
  for (const leaf of treeLeaves(x)) {
    if (typeof leaf === "number") s += leaf * leaf;
    else for (const v of components(leaf)) s += v * v;
  }
  return Math.sqrt(s);
}

/** How many components (numbers and tensor elements) `x` has. */
export function treeSize(x: Tree): number {
  return treeLeaves(x).reduce<number>((n, leaf) => n + leafSize(leaf), 0);
}
