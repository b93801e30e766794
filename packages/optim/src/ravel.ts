/**
 * @file A tree as one flat vector and back (jax.flatten_util.ravel_pytree): what
 * `minimize` works on, its algorithms being written over R^n.
 */
import ndarray from "ndarray";
import { components, treeStructure, walk, type Leaf, type Shaped, type Tree, type TreeDef, type TreeLike } from "./tree.js";

/** A tree raveled: `T` is the type of the trees `unravel` makes (shaped like the raveled tree). */
export interface Raveled<T = Tree> {
  /** The components of the tree, in the order of its leaves (each tensor row-major). */
  readonly vector: Float64Array;
  readonly structure: TreeDef<T>;
  /** A new tree of the structure, holding the components of `v` (copied). */
  unravel(v: ArrayLike<number>): T;
  /** The components of a tree of the same structure (a gradient), written into `out`. */
  ravel(tree: TreeLike<T>, out?: Float64Array): Float64Array;
}

/** Ravels `tree`; `name` is how messages call it (a gradient of another structure names the path). */
export function ravelTree<const T extends TreeLike<T>>(tree: T, options: { caller?: string; name?: string } = {}): Raveled<Shaped<T>> {
  const caller = options.caller ?? "ravelTree";
  const name = options.name ?? "tree";
  const structure = treeStructure(tree, caller, name);
  const numbers = structure.kind === "array" && structure.items.every((d) => d.kind === "number");
  const unravel = (v: ArrayLike<number>): Shaped<T> => {
    let at = 0;
    const build = (d: TreeDef): Tree => {
      switch (d.kind) {
        case "number":
          return v[at++];
        case "vector": {
          const out = Float64Array.from({ length: d.length }, (_, i) => v[at + i]);
          at += d.length;
          return out;
        }
        case "ndarray": {
          const n = d.shape.reduce((a, b) => a * b, 1);
          const out = Float64Array.from({ length: n }, (_, i) => v[at + i]);
          at += n;
          return ndarray(out, d.shape.slice());
        }
        case "array":
          return d.items.map(build);
        case "record":
          return Object.fromEntries(d.keys.map((k, i) => [k, build(d.items[i])]));
        default:
          return assertNever(d);
      }
    };
    const fresh: Tree = numbers ? Array.from(v) : structure.kind === "vector" ? Float64Array.from(v) : build(structure);
    return fresh as Shaped<T>; // cast: built as tree's structure says, of numbers and float64 tensors
  };
  const vector = flat(tree);
  const size = vector.length;
  const template = unravel(vector);
  const ravel = (other: unknown, out = new Float64Array(size)): Float64Array => {
    // the common cases without walking the tree: an array of numbers, a Float64Array
    if (numbers && Array.isArray(other) && other.length === size && copyNumbers(other, out)) return out;
    if (structure.kind === "vector" && other instanceof Float64Array && other.length === size) {
      out.set(other);
      return out;
    }
    let at = 0;
    walk(caller, [name, "value"], [template, other], undefined, ([, leaf]) => {
      at = put(leaf, out, at);
      return leaf;
    });
    return out;
  };
  return { vector, structure, unravel, ravel };
}

/** All of a tree's components in one new vector. */
function flat(tree: unknown): Float64Array {
  const parts: Leaf[] = [];
  let n = 0;
  walk("ravelTree", ["tree"], [tree], undefined, ([leaf]) => {
    parts.push(leaf);
    n += typeof leaf === "number" ? 1 : components(leaf).length;
    return leaf;
  });
  const out = new Float64Array(n);
  let at = 0;
  for (const leaf of parts) at = put(leaf, out, at);
  return out;
}

/** Copies an array's numbers into `out`; false if it holds anything else. */
function copyNumbers(xs: readonly unknown[], out: Float64Array): boolean {
  for (let i = 0; i < xs.length; i++) {
    const v = xs[i];
    if (typeof v !== "number") return false;
    out[i] = v;
  }
  return true;
}

function put(leaf: Leaf, out: Float64Array, at: number): number {
  if (typeof leaf === "number") {
    out[at] = leaf;
    return at + 1;
  }
  const c = components(leaf);
  out.set(c, at);
  return at + c.length;
}

function assertNever(x: never): never {
  throw new Error(`unexpected ${JSON.stringify(x)}`);
}
