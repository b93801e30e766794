/** @file Agreement of a candidate's gradient with the hand-written one. */
import type { Vec } from "./types.js";

export const FLOAT64_TOLERANCE = 1e-9;
export const FLOAT32_TOLERANCE = 1e-3;

/**
 * max_i |c_i − r_i| / max_i |r_i|: the error relative to the size of the reference
 * gradient (componentwise relative error would punish tiny components that float32
 * cannot resolve). Infinity when the lengths differ or a value is not finite.
 */
export function relativeError(candidate: Vec, reference: Vec): number {
  if (candidate.length !== reference.length) return Infinity;
  let scale = 0;
  for (let i = 0; i < reference.length; i++) scale = Math.max(scale, Math.abs(reference[i]));
  let err = 0;
  for (let i = 0; i < reference.length; i++) {
    const d = Math.abs(candidate[i] - reference[i]);
    if (!Number.isFinite(d)) return Infinity;
    err = Math.max(err, d);
  }
  return scale === 0 ? err : err / scale;
}

/** A gradient as returned by a candidate (number, array, typed array, or rows of those: a matrix) as a Float64Array copy, row-major. */
export function toVec(x: unknown): Float64Array {
  if (typeof x === "number") return Float64Array.of(x);
  if (Array.isArray(x) && x.length > 0 && x.every((r) => r !== null && typeof r === "object" && typeof (r as ArrayLike<number>).length === "number")) {
    return Float64Array.from((x as ArrayLike<number>[]).flatMap((r) => Array.from(r)));
  }
  if (x !== null && typeof x === "object" && typeof (x as ArrayLike<number>).length === "number") return Float64Array.from(x as ArrayLike<number>);
  throw new TypeError(`expected a gradient (number or array), got ${typeof x}`);
}
