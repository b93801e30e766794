/**
 * @file Parameter trees: the values wengert differentiates (numbers, arrays, records,
 * Float64Arrays, ndarrays, nested freely) seen as trees whose leaves are numbers and
 * tensors, as JAX's pytrees are. A gradient comes back shaped like its parameters, so
 * parameters, gradients, updates and optimizer state are all trees of one structure.
 *
 * Here: what a tree is (its structure, `TreeDef`, and its leaves), and walking one tree
 * or several of one structure together, elementwise. Zipped trees must match at every
 * node; where they do not, a TreeStructureError names the path (`b.layers[1].W`).
 */
import ndarray from "ndarray";
import { Real, Tensor, type NdArray } from "@wengert/core";
import { TreeStructureError } from "./errors.js";

/** A tensor leaf: a bare Float64Array (1-D) or an ndarray (any numeric data; results are float64). */
export type TensorLeaf = Float64Array | NdArray;
/** A leaf: a number or a tensor. */
export type Leaf = number | TensorLeaf;
/** A parameter tree: leaves in arrays (tuples) and plain objects (records), nested freely. */
export type Tree = Leaf | readonly Tree[] | { readonly [key: string]: Tree };

/**
 * What a type `T` of trees is (`T extends TreeLike<T>`): a `Tree`, or a type whose fields
 * are trees — so that an interface is a type of trees too (an interface has no index
 * signature: it is no `{ readonly [key: string]: Tree }`). Where a second tree must be
 * shaped like a first of type `T`, it is typed `TreeLike<T>`.
 */
export type TreeLike<T> = Tree | { readonly [K in keyof T]: TreeField<T[K]> };
type TreeField<T> = Tree extends T
  ? Tree
  : T extends Leaf
    ? Leaf
    : T extends (...args: never) => unknown
      ? never
      : T extends object
        ? { readonly [K in keyof T]: TreeField<T[K]> }
        : Tree;

/**
 * A new tree shaped like a tree of type `T`, as this package returns one (a gradient as
 * core returns it has this type too: core's `Untraced<T>`): numbers (a literal type
 * widened), Float64Arrays and float64 ndarrays, in new, mutable arrays (a tuple stays a
 * tuple) and records. For a tree type that has none of those literal types and readonly
 * containers it is `T` itself; for `Tree` it is `Tree`.
 */
export type Shaped<T> = Tree extends T
  ? Tree
  : T extends number
    ? number
    : T extends Float64Array
      ? Float64Array
      : T extends NdArray
        ? NdArray
        : { -readonly [K in keyof T]: Shaped<T[K]> };

/** The type of the trees a structure describes: no value has this key (treeUnflatten's result type). */
declare const treeType: unique symbol;

/**
 * A tree's structure, without its numbers: what two trees must share to be zipped. `T` is
 * the type of the trees it describes, for `treeUnflatten` to return.
 */
export type TreeDef<T = Tree> = TreeNode & { readonly [treeType]?: T };
type TreeNode =
  | { readonly kind: "number" }
  | { readonly kind: "vector"; readonly length: number }
  | { readonly kind: "ndarray"; readonly shape: readonly number[] }
  | { readonly kind: "array"; readonly items: readonly TreeDef[] }
  | { readonly kind: "record"; readonly keys: readonly string[]; readonly items: readonly TreeDef[] };

/** Options of the elementwise maps: write the result into this tree (of the same structure) instead of a new one. */
export interface IntoOptions<T = Tree> {
  /**
   * The tree to write the result into: its tensors are overwritten and its arrays and
   * records get the new numbers, so no buffer is allocated (a number at the root cannot
   * be overwritten: the result is returned). It may be one of the inputs.
   */
  readonly into?: TreeLike<T>;
}

/** Whether `v` is an ndarray (the npm package's view: data, shape, stride, offset). */
export function isNdArray(v: unknown): v is NdArray {
  if (typeof v !== "object" || v === null) return false;
  const o = v as Partial<NdArray>;
  return Array.isArray(o.shape) && Array.isArray(o.stride) && typeof o.offset === "number" && o.data !== undefined;
}

/** Whether `v` is a leaf of a tree: a number, a Float64Array or an ndarray. */
export function isLeaf(v: unknown): v is Leaf {
  return typeof v === "number" || v instanceof Float64Array || isNdArray(v);
}

/** A leaf's dims: [] for a number, [n] for a Float64Array, an ndarray's shape. */
export function leafDims(leaf: Leaf): readonly number[] {
  if (typeof leaf === "number") return [];
  return leaf instanceof Float64Array ? [leaf.length] : leaf.shape;
}

/** A leaf's number of components. */
export function leafSize(leaf: Leaf): number {
  if (typeof leaf === "number") return 1;
  return leaf instanceof Float64Array ? leaf.length : leaf.shape.reduce((a, b) => a * b, 1);
}

const isRecord = (v: unknown): v is { readonly [key: string]: unknown } => {
  if (typeof v !== "object" || v === null) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
};

const showDims = (dims: readonly number[]): string => `[${dims.join(", ")}]`;
const childPath = (path: string, key: string | number): string =>
  typeof key === "number" ? `${path}[${key}]` : /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;

/** What `v` is, for messages. */
function describe(v: unknown): string {
  if (typeof v === "number") return "a number";
  if (v instanceof Float64Array) return `a Float64Array of ${v.length}`;
  if (isNdArray(v)) return `an ndarray of dims ${showDims(v.shape)}`;
  if (Array.isArray(v)) return `an array of ${v.length}`;
  if (isRecord(v)) return `a record {${Object.keys(v).join(", ")}}`;
  if (v instanceof Real || v instanceof Tensor) return "a traced value";
  if (v === null || v === undefined) return String(v);
  return typeof v === "object" ? `a ${(v as object).constructor?.name ?? "object"}` : `a ${typeof v}`;
}

/** The error for a node that is no part of a parameter tree. */
function notATree(caller: string, where: string, v: unknown): TreeStructureError {
  const traced = v instanceof Real || v instanceof Tensor;
  return new TreeStructureError(
    `${caller}: ${where} is ${describe(v)}, not a parameter: trees hold numbers, Float64Arrays, ndarrays, arrays and plain objects` +
      (traced ? " (optimizers work on concrete values: call them outside grad, on what grad returned)." : "."),
  );
}

/** The structure of `tree`. */
export function treeStructure<const T extends TreeLike<T>>(tree: T, caller = "treeStructure", name = "tree"): TreeDef<Shaped<T>> {
  return structureOf(caller, tree, name) as TreeDef<Shaped<T>>; // cast: the structure of trees of tree's type
}

function structureOf(caller: string, v: unknown, path: string): TreeDef {
  if (typeof v === "number") return { kind: "number" };
  if (v instanceof Float64Array) return { kind: "vector", length: v.length };
  if (isNdArray(v)) return { kind: "ndarray", shape: v.shape.slice() };
  if (Array.isArray(v)) return { kind: "array", items: v.map((item, i) => structureOf(caller, item, childPath(path, i))) };
  if (isRecord(v)) {
    const keys = Object.keys(v);
    return { kind: "record", keys, items: keys.map((k) => structureOf(caller, v[k], childPath(path, k))) };
  }
  throw notATree(caller, path, v);
}

/** The leaves of `tree`, in order (arrays by index, records by their keys' order). */
export function treeLeaves<const T extends TreeLike<T>>(tree: T): Leaf[] {
  const out: Leaf[] = [];
  walk("treeLeaves", ["tree"], [tree], undefined, (leaves) => {
    out.push(leaves[0]);
    return leaves[0];
  });
  return out;
}

/** `[leaves, structure]`, as jax.tree.flatten. */
export function treeFlatten<const T extends TreeLike<T>>(tree: T): [Leaf[], TreeDef<Shaped<T>>] {
  return [treeLeaves(tree), treeStructure(tree, "treeFlatten")];
}

/** The tree of structure `def` with these leaves (each of the dims `def` says), as jax.tree.unflatten. */
export function treeUnflatten<T = Tree>(def: TreeDef<T>, leaves: readonly Leaf[]): T {
  let next = 0;
  const build = (d: TreeDef<unknown>, path: string): Tree => {
    switch (d.kind) {
      case "number":
      case "vector":
      case "ndarray": {
        if (next >= leaves.length) {
          throw new TreeStructureError(
            `treeUnflatten: the structure has a leaf at ${path || "the root"} beyond the ${leaves.length} leaves given; ` +
              "pass one leaf per leaf of the structure.",
          );
        }
        const leaf = leaves[next++];
        const want = d.kind === "number" ? [] : d.kind === "vector" ? [d.length] : d.shape;
        if (!isLeaf(leaf) || !sameDims(leafDims(leaf), want)) {
          throw new TreeStructureError(
            `treeUnflatten: leaf ${next - 1} (for ${path || "the root"}) is ${describe(leaf)}, the structure expects dims ${showDims(want)}.`,
          );
        }
        return leaf;
      }
      case "array":
        return d.items.map((item, i) => build(item, childPath(path, i)));
      case "record":
        return Object.fromEntries(d.keys.map((k, i) => [k, build(d.items[i], childPath(path, k))]));
      default:
        return assertNever(d);
    }
  };
  const tree = build(def, "");
  if (next !== leaves.length) {
    throw new TreeStructureError(`treeUnflatten: ${leaves.length} leaves given, the structure has ${next}; pass one leaf per leaf of the structure.`);
  }
  return tree as T; // cast: built as def says, of the dims it says, as the trees def was taken from
}

/** The sizes of the leaves of a structure, in order. */
export function defSizes(def: TreeDef): number[] {
  switch (def.kind) {
    case "number":
      return [1];
    case "vector":
      return [def.length];
    case "ndarray":
      return [def.shape.reduce((a, b) => a * b, 1)];
    case "array":
    case "record":
      return def.items.flatMap(defSizes);
    default:
      return assertNever(def);
  }
}

/**
 * The subtrees of `tree` at the places of the leaves of `def` (jax's flatten_up_to):
 * `tree` has def's containers down to them, and anything where def has a leaf.
 */
export function treeLeavesUpTo(def: TreeDef, tree: unknown, caller = "treeLeavesUpTo"): unknown[] {
  const out: unknown[] = [];
  const go = (d: TreeDef, v: unknown, path: string): void => {
    switch (d.kind) {
      case "number":
      case "vector":
      case "ndarray":
        out.push(v);
        return;
      case "array":
        if (!Array.isArray(v) || v.length !== d.items.length) {
          throw new TreeStructureError(`${caller}: ${path || "the root"} is ${describe(v)}, expected an array of ${d.items.length}.`);
        }
        d.items.forEach((item, i) => go(item, v[i], childPath(path, i)));
        return;
      case "record":
        if (!isRecord(v)) throw new TreeStructureError(`${caller}: ${path || "the root"} is ${describe(v)}, expected a record {${d.keys.join(", ")}}.`);
        d.keys.forEach((k, i) => {
          if (!(k in v)) throw new TreeStructureError(`${caller}: ${path || "the root"} lacks ${k}.`);
          go(d.items[i], v[k], childPath(path, k));
        });
        return;
      default:
        return assertNever(d);
    }
  };
  go(def, tree, "");
  return out;
}

function assertNever(x: never): never {
  throw new Error(`unexpected ${JSON.stringify(x)}`);
}

const sameDims = (a: readonly number[], b: readonly number[]): boolean => a.length === b.length && a.every((d, i) => d === b[i]);

/** Where the k-th tree of a zip is, in messages: its name and the path. */
const at = (names: readonly string[], k: number, path: string): string => `${names[k]}${path}`;

/**
 * Walks trees of one structure (that of `trees[0]`) together and calls `visit` with the
 * leaves at each place (and the leaf of `into` there, if any); returns the tree of
 * `visit`'s results, shaped like `trees[0]`: new containers, or `into`'s, written in place.
 * Recursion is as deep as the trees are nested, not as long as they are.
 */
export function walk(
  caller: string,
  names: readonly string[],
  trees: readonly unknown[],
  into: unknown,
  visit: (leaves: Leaf[], path: string, target: Leaf | undefined) => Leaf,
): Tree {
  const all = into === undefined ? trees : [...trees, into];
  const allNames = into === undefined ? names : [...names, "into"];
  const go = (nodes: readonly unknown[], path: string): Tree => {
    const first = nodes[0];
    if (isLeaf(first)) {
      const dims = leafDims(first);
      for (let k = 1; k < nodes.length; k++) {
        const v = nodes[k];
        if (!isLeaf(v)) throw mismatch(caller, allNames, k, path, v, first);
        if (!sameDims(leafDims(v), dims)) {
          throw new TreeStructureError(
            `${caller}: ${at(allNames, k, path)} has dims ${showDims(leafDims(v))}, ${at(allNames, 0, path)} has ${showDims(dims)}; ` +
              "zip trees of one structure (a gradient with the parameters it was taken at).",
          );
        }
      }
      const target = into === undefined ? undefined : (nodes[nodes.length - 1] as Leaf);
      return visit((into === undefined ? nodes : nodes.slice(0, -1)) as Leaf[], path, target);
    }
    if (Array.isArray(first)) {
      for (let k = 1; k < nodes.length; k++) {
        const v = nodes[k];
        if (!Array.isArray(v) || v.length !== first.length) throw mismatch(caller, allNames, k, path, v, first);
      }
      const out = (into === undefined ? new Array(first.length) : nodes[nodes.length - 1]) as Tree[];
      for (let i = 0; i < first.length; i++) out[i] = go(nodes.map((n) => (n as unknown[])[i]), childPath(path, i));
      return out;
    }
    if (isRecord(first)) {
      const keys = Object.keys(first);
      for (let k = 1; k < nodes.length; k++) {
        const v = nodes[k];
        if (!isRecord(v)) throw mismatch(caller, allNames, k, path, v, first);
        const missing = keys.filter((key) => !(key in v));
        const extra = Object.keys(v).filter((key) => !(key in first));
        if (missing.length > 0 || extra.length > 0) {
          const lacks = missing.length > 0 ? `lacks ${missing.join(", ")}` : "";
          const has = extra.length > 0 ? `has ${extra.join(", ")} too` : "";
          const what = [lacks, has].filter(Boolean).join(" and ");
          throw new TreeStructureError(
            `${caller}: ${at(allNames, k, path)} ${what}, beside ${at(allNames, 0, path)} {${keys.join(", ")}}; zip trees of one structure.`,
          );
        }
      }
      const out = (into === undefined ? {} : nodes[nodes.length - 1]) as Record<string, Tree>;
      for (const key of keys) out[key] = go(nodes.map((n) => (n as Record<string, unknown>)[key]), childPath(path, key));
      return out;
    }
    throw notATree(caller, at(allNames, 0, path) || "the root", first);
  };
  return go(all, "");
}

function mismatch(caller: string, names: readonly string[], k: number, path: string, v: unknown, first: unknown): TreeStructureError {
  if (!isLeaf(v) && !Array.isArray(v) && !isRecord(v)) return notATree(caller, at(names, k, path), v);
  return new TreeStructureError(
    `${caller}: ${at(names, k, path)} is ${describe(v)}, ${at(names, 0, path)} is ${describe(first)}; ` +
      "zip trees of one structure (a gradient with the parameters it was taken at).",
  );
}

/** A tensor's components in row-major order: a view where they lie so in a Float64Array, else a copy. */
export function components(leaf: TensorLeaf): Float64Array {
  if (leaf instanceof Float64Array) return leaf;
  const n = leafSize(leaf);
  if (leaf.data instanceof Float64Array && isRowMajor(leaf)) return leaf.data.subarray(leaf.offset, leaf.offset + n);
  const out = new Float64Array(n);
  forEachPosition(leaf, (pos, k) => {
    out[k] = leaf.data[pos] as number;
  });
  return out;
}

function isRowMajor(nd: NdArray): boolean {
  let expected = 1;
  for (let d = nd.shape.length - 1; d >= 0; d--) {
    if (nd.shape[d] !== 1 && nd.stride[d] !== expected) return false;
    expected *= nd.shape[d];
  }
  return true;
}

/** Calls `body(position in data, k)` for the k-th component in row-major order of a strided ndarray. */
function forEachPosition(nd: NdArray, body: (pos: number, k: number) => void): void {
  const { shape, stride } = nd;
  const n = leafSize(nd);
  const index = new Array<number>(shape.length).fill(0);
  let pos = nd.offset;
  for (let k = 0; k < n; k++) {
    body(pos, k);
    for (let d = shape.length - 1; d >= 0; d--) {
      if (++index[d] < shape[d]) {
        pos += stride[d];
        break;
      }
      pos -= stride[d] * (shape[d] - 1);
      index[d] = 0;
    }
  }
}

/** A new leaf like `like` (a Float64Array or an ndarray of its dims) holding `data`. */
export function leafLike(like: TensorLeaf, data: Float64Array): TensorLeaf {
  return like instanceof Float64Array ? data : ndarray(data, like.shape.slice());
}

/**
 * Where to write a tensor result: the target's own buffer when it is row-major float64,
 * else a new buffer (copied into a strided target by `finish`).
 */
function output(like: TensorLeaf, target: Leaf | undefined): { data: Float64Array; finish: () => TensorLeaf } {
  const n = leafSize(like);
  if (target === undefined || typeof target === "number") {
    const data = new Float64Array(n);
    return { data, finish: () => leafLike(like, data) };
  }
  if (target instanceof Float64Array) return { data: target, finish: () => target };
  if (target.data instanceof Float64Array && isRowMajor(target)) {
    return { data: target.data.subarray(target.offset, target.offset + n), finish: () => target };
  }
  const data = new Float64Array(n);
  return {
    data,
    finish: () => {
      forEachPosition(target, (pos, k) => {
        (target.data as unknown as number[])[pos] = data[k];
      });
      return target;
    },
  };
}

/** `fn` applied to every component of `tree`, as a tree of its structure. */
export function treeMap<const T extends TreeLike<T>>(fn: (x: number) => number, tree: T, options: IntoOptions<NoInfer<T>> = {}): Shaped<T> {
  return walk("treeMap", ["tree"], [tree], options.into, ([x], _path, target) => {
    if (typeof x === "number") return fn(x);
    const xs = components(x);
    const out = output(x, target);
    const o = out.data;
    for (let i = 0; i < o.length; i++) o[i] = fn(xs[i]);
    return out.finish();
  }) as Shaped<T>; // cast: walk builds a tree shaped like its first, of numbers and float64 tensors
}

/** `fn` applied to the components of `a` and `b` (trees of one structure) pairwise, as a tree shaped like `a`. */
export function treeMap2<const T extends TreeLike<T>>(
  fn: (a: number, b: number) => number,
  a: T,
  b: TreeLike<NoInfer<T>>,
  options: IntoOptions<NoInfer<T>> = {},
): Shaped<T> {
  return zip2("treeMap2", ["a", "b"], fn, a, b, options.into);
}

/** treeMap2 under another caller's name (the vector-space operations and the optimizers). */
export function zip2<const T extends TreeLike<T>>(
  caller: string,
  names: readonly [string, string],
  fn: (a: number, b: number) => number,
  a: T,
  b: TreeLike<NoInfer<T>>,
  into?: TreeLike<NoInfer<T>>,
): Shaped<T> {
  return walk(caller, names, [a, b], into, ([x, y], _path, target) => {
    if (typeof x === "number") return fn(x, y as number);
    const xs = components(x);
    const ys = components(y as TensorLeaf);
    const out = output(x, target);
    const o = out.data;
    for (let i = 0; i < o.length; i++) o[i] = fn(xs[i], ys[i]);
    return out.finish();
  }) as Shaped<T>; // cast: as treeMap's
}

/** Calls `body` with the components of every leaf of `a` and `b` (trees of one structure), in order. */
export function forEachLeaf2(
  caller: string,
  names: readonly [string, string],
  a: unknown,
  b: unknown,
  body: (x: ArrayLike<number>, y: ArrayLike<number>) => void,
): void {
  walk(caller, names, [a, b], undefined, ([x, y]) => {
    if (typeof x === "number") body([x], [y as number]);
    else body(components(x), components(y as TensorLeaf));
    return x;
  });
}
