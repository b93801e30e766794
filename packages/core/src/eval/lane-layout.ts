/**
 * @file Lanes' values laid out element-major: element e of lane l at e·stride + first + l,
 * the lane innermost. runLanes's own layout is lane-major (lane l's S values side by side
 * at l·S); a forward-mode Jacobian's blocks [...S, ...D] have the columns, its lanes, as
 * their last axis (columns.ts), so jacfwd asks runLanes for its outputs element-major
 * rather than transposing them afterwards.
 *
 * An output that is a transpose of a value computed in the same loop (a fused chain, lanes.ts)
 * is written by that loop with its elements permuted: element (r, q) of the value (row r,
 * q along its last axis) at element rowAt[r] + q·step of the output (`Permuted`), so that
 * the transpose is never computed on its own (GradBench's ht: the residuals [3, N] returned
 * point by point as [N, 3]).
 */
import { kernels, release, size, strides as stridesOf, type Dims } from "@wengert/ops";

/** Where lane l's element e goes: e·stride + first + l (or its permuted place). */
export interface ElementMajor {
  readonly stride: number;
  readonly first: number;
  /** The elements permuted, the value's element (r, q) at rowAt[r] + q·step; absent: in order. */
  readonly permuted?: Permuted;
}

/** A value's elements permuted (see the file's comment): row r's start, and the step along its last axis. */
export interface Permuted {
  readonly rowAt: Int32Array;
  readonly step: number;
}

/**
 * The places of the elements of a value of dims `dims` in its transpose by `perm` (the
 * transpose's axis k is the value's axis perm[k]), as a Permuted.
 */
export function transposedPlaces(dims: Dims, perm: readonly number[]): Permuted {
  const outStrides = stridesOf(perm.map((ax) => dims[ax]));
  // the value's axis ax is the transpose's axis perm.indexOf(ax)
  const along = dims.map((_, ax) => outStrides[perm.indexOf(ax)]);
  const last = dims.length - 1;
  const R = size(dims.slice(0, last));
  const rowAt = new Int32Array(R);
  const index = new Array<number>(last).fill(0);
  for (let r = 0; r < R; r++) {
    let o = 0;
    for (let ax = 0; ax < last; ax++) o += index[ax] * along[ax];
    rowAt[r] = o;
    for (let ax = last - 1; ax >= 0; ax--) {
      if (++index[ax] < dims[ax]) break;
      index[ax] = 0;
    }
  }
  return { rowAt, step: along[last] };
}

/**
 * w lanes of S values each, lane-major in `from` (lane l's at l·S), as an S × w matrix
 * (row e holds element e of every lane): the tiled kernel's transpose, a buffer of the
 * pool for the caller to give back.
 */
export function lanesInner(from: Float64Array, w: number, S: number): Float64Array {
  return kernels.transpose(from.subarray(0, w * S), [w, S], [1, 0]);
}

/**
 * w lanes of S values each, lane-major in `from`, written into `out` element-major at
 * `place`; permuted, `n` is the value's last axis (its rows' length).
 */
export function writeElementMajor(from: Float64Array, w: number, S: number, out: Float64Array, place: ElementMajor, n = S): void {
  const t = lanesInner(from, w, S);
  const { stride, first, permuted } = place;
  if (permuted !== undefined) {
    const { rowAt, step } = permuted;
    for (let r = 0, e = 0; r < rowAt.length; r++) {
      for (let q = 0; q < n; q++, e++) {
        const o = (rowAt[r] + q * step) * stride + first;
        for (let l = 0; l < w; l++) out[o + l] = t[e * w + l];
      }
    }
  } else if (stride === w && first === 0) out.set(t.subarray(0, S * w));
  else for (let e = 0; e < S; e++) out.set(t.subarray(e * w, (e + 1) * w), e * stride + first);
  release(t);
}
