/**
 * @file Lanes' values laid out element-major: element e of lane l at e·stride + first + l,
 * the lane innermost. runLanes's own layout is lane-major (lane l's S values side by side
 * at l·S); a forward-mode Jacobian's blocks [...S, ...D] have the columns, its lanes, as
 * their last axis (columns.ts), so jacfwd asks runLanes for its outputs element-major
 * rather than transposing them afterwards.
 */
import { kernels, release } from "@wengert/ops";

/** Where lane l's element e goes: e·stride + first + l. */
export interface ElementMajor {
  readonly stride: number;
  readonly first: number;
}

/**
 * w lanes of S values each, lane-major in `from` (lane l's at l·S), as an S × w matrix
 * (row e holds element e of every lane): the tiled kernel's transpose, a buffer of the
 * pool for the caller to give back.
 */
export function lanesInner(from: Float64Array, w: number, S: number): Float64Array {
  return kernels.transpose(from.subarray(0, w * S), [w, S], [1, 0]);
}

/** w lanes of S values each, lane-major in `from`, written into `out` element-major at `place`. */
export function writeElementMajor(from: Float64Array, w: number, S: number, out: Float64Array, place: ElementMajor): void {
  const t = lanesInner(from, w, S);
  if (place.stride === w && place.first === 0) out.set(t.subarray(0, S * w));
  else for (let e = 0; e < S; e++) out.set(t.subarray(e * w, (e + 1) * w), e * place.stride + place.first);
  release(t);
}
