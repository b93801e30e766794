/**
 * @file A structure of reals and tensors as one flat list of its scalar components.
 *
 * Finite differences (checkGrad) and Jacobians work component by component: a real is
 * one component, a tensor of dims D is size(D) of them, in row-major order.
 */
import { size } from "@wengert/ops";
import { WengertError } from "../errors.js";
import { leafShapes, unflatten, type Shape } from "../structure.js";
import { fromDense, isConcreteTensor, toDense } from "../trace/host-tensor.js";
import { isOperand, leafShape } from "../trace/traced.js";
import { flatten } from "../structure.js";

/** The components of an untraced value of structure `shape` (numbers and tensors). */
export function componentsOf(value: unknown, caller: string): { shape: Shape; values: number[] } {
  const flat = flatten(value, "x", isOperand, `${caller}'s input`, undefined, leafShape);
  const values: number[] = [];
  for (const leaf of flat.leaves) for (const t of leafComponents(leaf, caller)) values.push(t);
  return { shape: flat.shape, values };
}

/** The components of one untraced leaf, a number or a tensor: its data, read, not copied. */
export function leafComponents(leaf: unknown, caller: string): ArrayLike<number> & Iterable<number> {
  if (typeof leaf === "number") return [leaf];
  if (isConcreteTensor(leaf)) return toDense(leaf, caller).data;
  throw new WengertError(`${caller}: works on numbers and tensors you hold; call it outside rd.`);
}

/** A value of structure `shape` from its components (tensors in their containers). */
export function fromComponents(shape: Shape, values: ArrayLike<number>): unknown {
  let o = 0;
  const leaves = leafShapes(shape).map((s) => {
    if (s.kind !== "tensor") return values[o++];
    const n = size(s.dims);
    const data = Float64Array.from({ length: n }, (_, i) => values[o + i]);
    o += n;
    return fromDense({ dims: s.dims, data }, s.container);
  });
  return unflatten(shape, leaves);
}

/** How many components a structure has. */
export function componentCount(shape: Shape): number {
  return leafShapes(shape).reduce((n, s) => n + (s.kind === "tensor" ? size(s.dims) : 1), 0);
}

/** Each scalar component of a structure, in order: its leaf, and its flat index in the leaf. */
export function components(shape: Shape): { leaf: number; at: number }[] {
  return leafShapes(shape).flatMap((s, leaf) => Array.from({ length: s.kind === "tensor" ? size(s.dims) : 1 }, (_, at) => ({ leaf, at })));
}

/** The structure `shape` with zeros everywhere but a 1 at component c. */
export function basisVector(shape: Shape, c: number): unknown {
  const v = new Float64Array(componentCount(shape));
  v[c] = 1;
  return fromComponents(shape, v);
}
