/**
 * @file Structures of values: the paper's types `real`, `unit`, `T × U`, plus records.
 *
 * A value at the API boundary is a number, `[]` (unit), an array (tuple) or a plain
 * object (record) of values, nested freely. It is handled as a `Shape` (the type) and
 * its leaves in depth-first order. Recursion here follows the nesting of the user's
 * data, never the length of a trace.
 */
import { sameDims, showDims, type Dims } from "@wengert/ops";
import { InputTypeError } from "./errors.js";

/** The structure of a value: the paper's `real`, `unit` and products, with tensors and records (a trace term's parameters and output). */
export type Shape =
  | { readonly kind: "real" }
  /** A tensor leaf: its dims, and the container it came in (its cotangent goes back in one). */
  | { readonly kind: "tensor"; readonly dims: Dims; readonly container: "ndarray" | "float64array" }
  | { readonly kind: "tuple"; readonly items: readonly Shape[] }
  | { readonly kind: "record"; readonly keys: readonly string[]; readonly fields: readonly Shape[] };

export const REAL: Shape = { kind: "real" };

export interface Flat<L> {
  readonly shape: Shape;
  readonly leaves: L[];
}

/** `x[1].w`: where a part of a value is, for messages. */
export function childPath(path: string, key: string | number): string {
  if (typeof key === "number") return `${path}[${key}]`;
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

export function describe(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return `an array of length ${v.length}`;
  if (typeof v === "string") return `a string (${JSON.stringify(v.length > 20 ? v.slice(0, 20) + "…" : v)})`;
  // a generator object's constructor has no name
  if (typeof v === "object") return `an object of class ${(v as object).constructor?.name || "(none)"}`;
  return `${typeof v === "undefined" ? "undefined" : `a ${typeof v}`}`;
}

/** An option's value in a message: a number or boolean as written, anything else described. */
export const showValue = (v: unknown): string => (typeof v === "number" || typeof v === "boolean" ? String(v) : describe(v));

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== "object" || v === null) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** Whether every element is a number (a hole is not; a loop: `every` skips holes, and its callback costs a few times more). */
export function allNumbers(x: readonly unknown[]): x is number[] {
  for (let i = 0; i < x.length; i++) if (typeof x[i] !== "number") return false;
  return true;
}

/**
 * Split a value into its shape and its leaves. `isLeaf` says what a leaf is (numbers,
 * and traced reals where those are allowed); `what` names the role of the value in
 * messages ("an input", "an output"); `leafShape` tells a tensor leaf from a real one.
 */
export function flatten<L>(
  value: unknown,
  root: string,
  isLeaf: (v: unknown) => v is L,
  what: string,
  fail: (message: string) => Error = (m) => new InputTypeError(m),
  leafShape: (leaf: L) => Shape = () => REAL,
): Flat<L> {
  // a number, or x as an array of numbers, the most common inputs by far: no walk (a number is a `real` leaf)
  if (typeof value === "number" && isLeaf(value)) return { shape: REAL, leaves: [value] };
  if (Array.isArray(value) && allNumbers(value) && isLeaf(0)) return { shape: realVector(value.length), leaves: value.slice() as L[] };
  const leaves: L[] = [];
  // the keys from the root down to the part being walked: its path is written only for a message
  const keys: (string | number)[] = [];
  const walk = (v: unknown): Shape => {
    if (isLeaf(v)) {
      leaves.push(v);
      return leafShape(v);
    }
    if (Array.isArray(v)) {
      const items = new Array<Shape>(v.length);
      for (let i = 0; i < v.length; i++) {
        const e = v[i];
        // a number (the common leaf: x as an array of numbers) needs no path kept for it
        if (typeof e === "number" && isLeaf(e)) {
          leaves.push(e);
          items[i] = leafShape(e);
          continue;
        }
        keys.push(i);
        items[i] = walk(e);
        keys.pop();
      }
      return { kind: "tuple", items };
    }
    if (isPlainObject(v)) {
      const names = Object.keys(v);
      const fields = names.map((k) => {
        keys.push(k);
        const field = walk(v[k]);
        keys.pop();
        return field;
      });
      return { kind: "record", keys: names, fields };
    }
    const path = keys.reduce<string>(childPath, root);
    throw fail(`${path} is ${describe(v)}; ${what} must be a number, a tensor (ndarray or Float64Array), [] (unit), an array or a plain object of them.`);
  };
  return { shape: walk(value), leaves };
}

/** Tuple shapes whose items are all reals, made by `realVector`: assembled without a walk. */
const realVectors = new WeakSet<Shape>();

/** The last shape `realVector` made: a grad called in a loop asks for the same n every time. */
let lastRealVector: Shape | null = null;

/** The shape `real^n` of an array of n numbers (shapes are immutable: one may serve many values). */
export function realVector(n: number): Shape {
  if (lastRealVector?.kind === "tuple" && lastRealVector.items.length === n) return lastRealVector;
  const s: Shape = { kind: "tuple", items: new Array<Shape>(n).fill(REAL) };
  realVectors.add(s);
  lastRealVector = s;
  return s;
}

/** Whether `shape` was made by `realVector` (an array of numbers flattened: its leaves are numbers). */
export function isRealVector(shape: Shape): boolean {
  return realVectors.has(shape);
}

/** n if `shape` is a `realVector(n)`, else -1. */
function realVectorLength(shape: Shape): number {
  return realVectors.has(shape) && shape.kind === "tuple" ? shape.items.length : -1;
}

/**
 * Rebuild something of `shape` from its leaves (depth-first order): `tuple` and
 * `record` say how parts are put together (they also get the parts' shapes).
 */
export function assemble<R>(
  shape: Shape,
  leaves: readonly R[],
  tuple: (items: R[], shapes: readonly Shape[]) => R,
  record: (keys: readonly string[], fields: R[], shapes: readonly Shape[]) => R,
): R {
  if (shape.kind === "real" || shape.kind === "tensor") return leaves[0];
  const n = realVectorLength(shape);
  if (n >= 0) return tuple(leaves.slice(0, n), (shape as { items: readonly Shape[] }).items);
  let next = 0;
  const build = (s: Shape): R => {
    switch (s.kind) {
      case "real":
      case "tensor":
        return leaves[next++];
      case "tuple": {
        const items = new Array<R>(s.items.length);
        for (let i = 0; i < items.length; i++) {
          const t = s.items[i];
          items[i] = t.kind === "real" || t.kind === "tensor" ? leaves[next++] : build(t);
        }
        return tuple(items, s.items);
      }
      case "record":
        return record(s.keys, s.fields.map(build), s.fields);
      default:
        return assertNever(s);
    }
  };
  return build(shape);
}

/** Rebuild a value (arrays and plain objects) of `shape` from its leaves. */
export function unflatten<L>(shape: Shape, leaves: readonly L[]): unknown {
  return assemble<unknown>(shape, leaves, (items) => items, (keys, fields) => Object.fromEntries(keys.map((k, i) => [k, fields[i]])));
}

/** The structures of the leaves, depth-first. */
export function leafShapes(shape: Shape): Shape[] {
  const out: Shape[] = [];
  const walk = (s: Shape): void => {
    if (s.kind === "tuple") s.items.forEach(walk);
    else if (s.kind === "record") s.fields.forEach(walk);
    else out.push(s);
  };
  walk(shape);
  return out;
}

export function countLeaves(shape: Shape): number {
  switch (shape.kind) {
    case "real":
    case "tensor":
      return 1;
    case "tuple":
      return shape.items.reduce((n, s) => n + countLeaves(s), 0);
    case "record":
      return shape.fields.reduce((n, s) => n + countLeaves(s), 0);
    default:
      return assertNever(shape);
  }
}

/** The type in the paper's notation: `real`, `unit`, `real × (real × real)`, `{w: real}`. */
export function typeString(shape: Shape): string {
  switch (shape.kind) {
    case "real":
      return "real";
    case "tensor":
      return `real${showDims(shape.dims)}`;
    case "tuple":
      if (shape.items.length === 0) return "unit";
      // a one-element array is no product in the paper; ⟨T⟩ keeps it apart from T
      if (shape.items.length === 1) return `⟨${typeString(shape.items[0])}⟩`;
      {
        const parts = shape.items.map((s) => (s.kind === "tuple" && s.items.length > 1 ? `(${typeString(s)})` : typeString(s)));
        // a long product of one type as the language writes it: real^1000
        if (parts.length > 4 && parts.every((p) => p === parts[0])) return `${parts[0].includes(" ") ? `(${parts[0]})` : parts[0]}^${parts.length}`;
        return parts.join(" × ");
      }
    case "record":
      return `{${shape.keys.map((k, i) => `${k}: ${typeString(shape.fields[i])}`).join(", ")}}`;
    default:
      return assertNever(shape);
  }
}

/**
 * The leaves of `value` in the order of `expected` (records may list their keys in
 * any order). Throws `mismatch(path, expected, actualType)` at the first place where
 * the value does not have the expected structure.
 */
export function flattenLike<L>(
  expected: Shape,
  value: unknown,
  root: string,
  isLeaf: (v: unknown) => v is L,
  mismatch: (path: string, expected: Shape, actual: string) => Error,
  leafShape: (leaf: L) => Shape = () => REAL,
): L[] {
  // a number, or a vector of numbers, where one is expected (a seed, a tangent for x = number[]): no walk
  if (expected.kind === "real" && typeof value === "number" && isLeaf(value)) return [value];
  if (Array.isArray(value) && value.length === realVectorLength(expected) && allNumbers(value) && isLeaf(0)) return value.slice() as L[];
  const leaves: L[] = [];
  const typeOf = (v: unknown): string => {
    try {
      return typeString(flatten(v, "", isLeaf, "", undefined, leafShape).shape);
    } catch {
      return describe(v);
    }
  };
  const walk = (e: Shape, v: unknown, path: string): void => {
    switch (e.kind) {
      case "real":
      case "tensor": {
        if (!isLeaf(v)) throw mismatch(path, e, typeOf(v));
        const s = leafShape(v);
        if (s.kind !== e.kind || (s.kind === "tensor" && e.kind === "tensor" && !sameDims(s.dims, e.dims))) throw mismatch(path, e, typeOf(v));
        leaves.push(v);
        return;
      }
      case "tuple":
        if (!Array.isArray(v) || v.length !== e.items.length) throw mismatch(path, e, typeOf(v));
        e.items.forEach((item, i) => walk(item, v[i], childPath(path, i)));
        return;
      case "record": {
        if (!isPlainObject(v)) throw mismatch(path, e, typeOf(v));
        const keys = Object.keys(v);
        // own keys only: `in` counts inherited ones (toString, __proto__)
        if (keys.length !== e.keys.length || e.keys.some((k) => !Object.prototype.hasOwnProperty.call(v, k))) throw mismatch(path, e, typeOf(v));
        e.keys.forEach((k, i) => walk(e.fields[i], v[k], childPath(path, k)));
        return;
      }
      default:
        return assertNever(e);
    }
  };
  walk(expected, value, root);
  return leaves;
}

export function assertNever(x: never): never {
  throw new Error(`unexpected case: ${JSON.stringify(x)}`);
}
