/**
 * @file The function being minimized, as the algorithms see it: a function of a flat
 * vector x ∈ R^n (the components of the user's tree, raveled), with its gradient from
 * one compiled gradient (compileGrad), its Hessian-vector products and Hessian from
 * wengert's forward-over-reverse, jitted likewise, and SciPy's counters (nfev, njev, nhev).
 */
import { hessianOf, hvpOf, valueAndGradOf, type AnyObjective } from "../core.js";
import { ravelTree, type Raveled } from "../ravel.js";
import { components, defSizes, treeLeavesUpTo, type Shaped, type TensorLeaf, type Tree, type TreeDef, type TreeLike } from "../tree.js";

export interface Counts {
  /** Evaluations of f (each with its gradient: they come from one trace). */
  nfev: number;
  njev: number;
  /** Hessian-vector products, or Hessians, computed. */
  nhev: number;
}

export interface Problem {
  readonly n: number;
  readonly x0: Float64Array;
  readonly counts: Counts;
  /** f(x), writing ∇f(x) into g. */
  valueAndGrad(x: Float64Array, g: Float64Array): number;
  /** ∇²f(x)·v into out. */
  hvp(x: Float64Array, v: Float64Array, out: Float64Array): void;
  /** ∇²f(x), row-major n×n. */
  hessian(x: Float64Array): Float64Array;
}

/** `f` at trees shaped like `x0`, over the vectors of their components. */
export function problemOf<const T extends TreeLike<T>>(f: AnyObjective, x0: T): { problem: Problem; raveled: Raveled<Shaped<T>> } {
  const raveled = ravelTree(x0, { caller: "minimize", name: "x0" });
  const valueAndGrad = valueAndGradOf(f);
  const hvp = hvpOf(f);
  const hessian = hessianOf(f);
  const n = raveled.vector.length;
  const counts: Counts = { nfev: 0, njev: 0, nhev: 0 };
  const problem: Problem = {
    n,
    x0: raveled.vector,
    counts,
    valueAndGrad: (x, g) => {
      counts.nfev++;
      counts.njev++;
      const [value, grad] = valueAndGrad(raveled.unravel(x));
      raveled.ravel(grad, g);
      return value;
    },
    hvp: (x, v, out) => {
      counts.nhev++;
      raveled.ravel(hvp(raveled.unravel(x), raveled.unravel(v)), out);
    },
    hessian: (x) => {
      counts.nhev++;
      return denseHessian(raveled.structure, hessian(raveled.unravel(x)), n);
    },
  };
  return { problem, raveled };
}

/**
 * The Hessian as a row-major n×n matrix. wengert returns it shaped like x, with at each
 * leaf i of x a tree shaped like x whose leaf j holds the block ∂²f/∂x_i∂x_j with dims
 * dims(i) ++ dims(j), row-major: its (p, q) entry at p·size(j) + q.
 */
export function denseHessian(structure: TreeDef, h: Tree, n: number): Float64Array {
  const out = new Float64Array(n * n);
  const sizes = defSizes(structure);
  let row = 0;
  treeLeavesUpTo(structure, h, "hessian").forEach((sub, i) => {
    let col = 0;
    treeLeavesUpTo(structure, sub, "hessian").forEach((block, j) => {
      const values = typeof block === "number" ? [block] : components(block as TensorLeaf);
      for (let p = 0; p < sizes[i]; p++) for (let q = 0; q < sizes[j]; q++) out[(row + p) * n + col + q] = values[p * sizes[j] + q];
      col += sizes[j];
    });
    row += sizes[i];
  });
  return out;
}
