/**
 * @file Indices held in a tensor (gatherAt's, scatterAddAt's): checked to be whole
 * numbers within their axis when the kernel runs, since they are values, not parameters.
 *
 * gather's indices are a parameter of the instruction: a trace, and a jitted replay of
 * it, reads those same indices every time. Indices that change from call to call (kmeans'
 * nearest centroid of each point) are a tensor argument instead, an input of the trace
 * like any other, that carries no derivative (they are a decision, as the paper's `pred`:
 * the function is piecewise the gather at fixed indices).
 */

/** Thrown by a kernel given an index tensor with an entry that is not a position along its axis. */
export class IndexValueError extends RangeError {
  override readonly name = "IndexValueError";
}

/**
 * `indices` as whole positions along an axis of `length`, or an IndexValueError naming the
 * first entry that is not one (NaN, a fraction, negative, or `length` and beyond).
 */
export function indexVector(op: string, indices: Float64Array, length: number, axis: number): Int32Array {
  const r = new Int32Array(indices.length);
  for (let k = 0; k < indices.length; k++) {
    const i = indices[k];
    // (i | 0) === i: a whole number within int32, NaN and ±∞ excluded
    if ((i | 0) !== i || i < 0 || i >= length) {
      throw new IndexValueError(
        `${op}: index ${i} (position ${k}) is not a position along axis ${axis} of length ${length}; ` +
          `the index tensor must hold whole numbers from 0 to ${length - 1}`,
      );
    }
    r[k] = i;
  }
  return r;
}
