/**
 * @file The library's own copies of the index vectors gather and scatterAdd are given: ops
 * keep them in the trace, and keep facts about them (ops' index-range.ts: the vector's
 * range, found once), and a lane plan holds them (eval/lane-plans.ts: keyed by the
 * vector's identity).
 *
 * A caller passes the same vector again and again (GradBench ht's correspondences, at every
 * call of its Jacobian): the copy made for it last time is kept beside it and given again
 * while its entries are still the vector's. Comparing is a pass over the vector, as copying
 * was; but the copy is the same object, so what was found about it (its range, the plans
 * made with it) is found again rather than made again. A vector written since gets a new
 * copy (never written, a copy may be shared by every trace that holds it).
 */
import { shapeError } from "../trace/callsite.js";
import { isConcreteTensor, toDense, type ConcreteTensor } from "../trace/host-tensor.js";
import { showDims } from "@wengert/ops";

/** Per vector a caller passed, the copy last made of it. */
const copies = new WeakMap<object, Int32Array>();

/** How many copies were made (tests: one for a vector passed again unchanged). */
export const indexCopyStats = { made: 0 };

/** The library's copy of `given` (see the file's comment), its entries checked to be integers. */
export function indicesOf(name: string, given: ArrayLike<number> | ConcreteTensor): Int32Array {
  // an ndarray of indices: its elements (a vector)
  const indices = given instanceof Int32Array || given instanceof Float64Array || !isConcreteTensor(given) ? given : vectorOf(name, given);
  const kept = copies.get(given);
  if (kept !== undefined && sameEntries(kept, indices as ArrayLike<number>)) return kept;
  const r = given instanceof Int32Array ? given.slice() : Int32Array.from(indices as ArrayLike<number>);
  for (let k = 0; k < indices.length; k++) {
    if (r[k] !== indices[k]) throw shapeError(name, `index ${indices[k]} (position ${k}) is not an integer`);
  }
  indexCopyStats.made++;
  copies.set(given, r);
  return r;
}

function sameEntries(copy: Int32Array, indices: ArrayLike<number>): boolean {
  if (copy.length !== indices.length) return false;
  for (let k = 0; k < copy.length; k++) if (copy[k] !== indices[k]) return false;
  return true;
}

function vectorOf(name: string, t: ConcreteTensor): Float64Array {
  const { data, dims } = toDense(t, `${name}'s indices`);
  if (dims.length !== 1) throw shapeError(name, `the indices have dims ${showDims(dims)}; expected a vector`);
  return data;
}
