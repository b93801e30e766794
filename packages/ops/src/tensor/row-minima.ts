/**
 * @file Row minima of an affine map of a matrix: for each row i of x (rows × cols), over
 * the values v_ij = bias[j] + scale·x[i][j], the least, where it first is, and the least of
 * the others. k-means' nearest centroid (GradBench's kmeans) is this scan over the
 * products of points and centroids: ‖c_j‖² − 2 p·c_j.
 *
 * Definition, which both kernels follow to the bit, the columns in order from j = 0:
 *
 *     if (v < least) { second = least; least = v; at = j } else if (v < second) second = v
 *
 * from least = second = +∞ and at = 0; least is NaN where any v of the row is NaN (the
 * comparisons skip a NaN, so without that mark a row of NaNs would look like one of +∞).
 *
 * The JavaScript loop mispredicts its comparisons on data in random order (about 7 ns a
 * value at k = 10, against 1 ns for a plain sum); the SIMD kernel (simd-row-minima.ts)
 * takes them as masks, two rows to a vector, without a branch.
 */
import { simdRowMinima, type RowMinimaOperands, type RowMinimaResults } from "./simd-row-minima.js";

/** Per row: the least value (NaN where the row holds a NaN), the least of the others (+∞ with one column), the first column of the least. */
export type RowMinima = RowMinimaResults;
/** x (rows × cols, row-major), and the bias (one number per column) and scale of v_ij = bias[j] + scale·x[i][j]. */
export type RowMinimaArgs = RowMinimaOperands;

/** Below this many values the JavaScript loop wins: the SIMD kernel's copies and call cost more than its branches save. */
const SIMD_FROM = 1024;

/**
 * The row minima of v_ij = bias[j] + scale·x[i][j] (see the file's comment), into `into`
 * when given (arrays of at least `rows` elements, reused by a caller that scans block
 * after block), else into fresh arrays.
 */
export function rowMinima(args: RowMinimaArgs, into?: RowMinima): RowMinima {
  const { rows } = args;
  const out = into ?? { least: new Float64Array(rows), second: new Float64Array(rows), at: new Int32Array(rows) };
  if (rows > 0 && (rows * args.cols < SIMD_FROM || !simdRowMinima(args, out))) jsRowMinima(args, out);
  return out;
}

/** The JavaScript kernel, and the reference for the SIMD one. */
export function jsRowMinima({ x, rows, cols, bias, scale }: RowMinimaArgs, out: RowMinima): void {
  for (let i = 0; i < rows; i++) {
    const row = i * cols;
    let least = Infinity;
    let second = Infinity;
    let at = 0;
    let nan = false;
    for (let j = 0; j < cols; j++) {
      const v = bias[j] + scale * x[row + j];
      if (v < least) {
        second = least;
        least = v;
        at = j;
      } else if (v < second) second = v;
      else if (v !== v) nan = true;
    }
    out.least[i] = nan ? NaN : least;
    out.second[i] = second;
    out.at[i] = at;
  }
}
