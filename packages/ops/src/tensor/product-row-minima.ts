/**
 * @file Row minima of an affine map of a matrix product: rowMinima (row-minima.ts) of
 * v_ij = bias[j] + scale·(a·b)[i][j], the product by gemm's definition (gemm.ts). k-means'
 * nearest centroid is this: ‖c_j‖² − 2 p·c_j for every point p and centroid c_j.
 *
 * The same numbers as `gemm` then `rowMinima`, to the bit. Both SIMD kernels live in one
 * module here, sharing its memory: the product is left where the gemm kernel writes it and
 * the row minima read it there, instead of copying the n × m product out of one module's
 * memory and into the other's (at k = 10 centroids and n = 1000 points of 8, GradBench's
 * kmeans, those two copies cost about what the product does).
 */
import { gemm } from "./gemm.js";
import { jsRowMinima, type RowMinima } from "./row-minima.js";
import { gemmFuncs, productPlace, runProduct } from "./simd-gemm.js";
import { minimaRoom, QUAD, rowMinimaFunc, runRowMinima } from "./simd-row-minima.js";
import { assemble, lazyWorkspace } from "./wasm.js";

/** a (n × k) and b (k × m), row-major, and the bias (one number per column of the product) and scale of v_ij = bias[j] + scale·(a·b)[i][j]. */
export interface ProductRowMinimaArgs {
  readonly a: Float64Array;
  readonly b: Float64Array;
  readonly n: number;
  readonly k: number;
  readonly m: number;
  readonly bias: Float64Array;
  readonly scale: number;
}

/** Operands, product and results of up to 64 MB; larger ones go to the kernels one after the other. */
const workspace = lazyWorkspace(() => assemble([...gemmFuncs(), rowMinimaFunc()]), 64 * 1024 * 1024);

/**
 * The row minima of v_ij = bias[j] + scale·(a·b)[i][j] (row-minima.ts's definition, the
 * product gemm.ts's), into `into` when given (arrays of at least n elements), else into
 * fresh arrays.
 */
export function productRowMinima(args: ProductRowMinimaArgs, into?: RowMinima): RowMinima {
  const { a, b, n, k, m, bias, scale } = args;
  const out = into ?? { least: new Float64Array(n), second: new Float64Array(n), at: new Int32Array(n) };
  if (n === 0 || (m > 0 && simdProductRowMinima(args, out))) return out;
  const x = new Float64Array(n * m);
  gemm(a, 0, b, 0, x, 0, n, k, m);
  jsRowMinima({ x, rows: n, cols: m, bias, scale }, out);
  return out;
}

/** Both SIMD kernels on the module's memory; false (nothing written) where WebAssembly SIMD is unavailable or the operands too large. */
function simdProductRowMinima({ a, b, n, k, m, bias, scale }: ProductRowMinimaArgs, out: RowMinima): boolean {
  const s = workspace();
  if (s === null) return false;
  const at = productPlace(n, k, m);
  // the product's rows, padded to gemm's blocks (its padding rows are zeros), are the row minima's steps
  if (at.n4 % QUAD !== 0) return false;
  // the row minima's bias and results go past the product, over its spill and depths (read by then)
  const heap = s.heap(Math.max(at.end, at.cAt + at.n4 * m + minimaRoom(at.n4, m)));
  if (heap === null) return false;
  runProduct(s, heap, at, { a, ao: 0, b, bo: 0, n, k, m });
  runRowMinima(s, heap, { xAt: at.cAt, rows: n, padded: at.n4, cols: m, bias, scale }, out);
  return true;
}
