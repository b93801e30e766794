/**
 * @file GradBench `gmm`: ADBench's Gaussian mixture objective (log-likelihood plus a
 * Wishart prior term) and its gradient, on wengert's tensor path.
 *
 * The mathematics is GradBench's cpp/gradbench/evals/gmm.hpp (the eval checks against
 * the C++ "manual" tool; the old PyTorch reference has the prior term with the other
 * sign). With `Q_k` the lower-triangular inverse-covariance factor of component k
 * (diagonal `exp(icf[k][0..d))`, strictly lower part `icf[k][d..]` column by column):
 *
 *   objective = −n·d/2·log 2π + Σ_i logsumexp_k (α_k + Σ_j log Q_k,jj − ½‖Q_k (x_i − μ_k)‖²)
 *               − n·logsumexp(α) + Σ_k (½γ²‖Q_k‖²_F − m Σ_j log Q_k,jj) − k·C,
 *   C = N·d·(log γ − ½ log 2) − log Γ_d(N/2),  N = d + m + 1.
 *
 * Everything is whole-tensor operations: Q for all components by one gather,
 * Q_k(x_i − μ_k) as Q_k x_i − Q_k μ_k by batched matmuls ([k, d, d] · [d, n]),
 * logsumexp over the components. The points are taken in chunks (at most
 * `CHUNK_ELEMENTS` elements of [k, d, chunk]) so that memory stays bounded at ADBench's
 * largest sizes; the objective is a sum over points, so its gradient is the sum of the
 * chunks' gradients, each computed by wengert's `grad` (plus one `grad` of the terms that
 * do not involve the points).
 *
 * Input as evals/gmm/README.md (d, k, n, alpha, means, icf, x, gamma, m). `objective`
 * gives a number; `jacobian` the gradient with respect to alpha, means (row-major k×d)
 * and icf (row-major k×(d(d+1)/2)), concatenated.
 */
import ndarray from "ndarray";
import {
  add, concat, exp, gather, grad, logsumexp, matmul, mul, reshape, slice, square, sub, sum, vjp,
  type NdArray, type Operand, type Scalar, type TensorArg,
} from "@wengert/core";
import { defineFunction } from "../define.js";
import { field, InputError, integer, matrix, number, numbers, record } from "../json.js";
import type { EvalModule } from "../module.js";

type T = TensorArg;

/** The parameters differentiated: alpha [k], means [k, d], icf [k, d(d+1)/2]. */
export interface GmmParams {
  readonly alpha: Float64Array;
  readonly means: NdArray;
  readonly icf: NdArray;
}

export interface GmmPrepared {
  readonly d: number;
  readonly k: number;
  readonly n: number;
  readonly gamma: number;
  readonly m: number;
  readonly params: GmmParams;
  /** The points transposed, in chunks: each a constant [d, chunk] ndarray. */
  readonly chunks: readonly NdArray[];
  /** Where each entry of Q (row-major d×d) comes from in [exp(diag) | lower | 0]. */
  readonly qIndex: Int32Array;
  /** A [k, 1] zero column (the source of Q's upper triangle). */
  readonly zeroColumn: NdArray;
}

/** How many elements a [k, d, chunk] intermediate may hold (32 MB of float64). */
export const CHUNK_ELEMENTS = 1 << 22;

/** A `double[][]` field with the expected number of rows and columns, as an ndarray. */
function rowsOf(input: Record<string, unknown>, name: string, rows: number, cols: number): NdArray {
  const a = matrix(field(input, name), name);
  if (a.rows !== rows || (rows > 0 && a.cols !== cols)) throw new InputError(`${name} is ${a.rows} × ${a.cols}; expected ${rows} × ${cols}`);
  return ndarray(a.data, [rows, cols]);
}

/**
 * Index map for Q_k (row j, column i) into the row [exp(q_0..q_{d−1}) | ltri | 0]: the
 * diagonal from the first d entries, the strictly lower part (j > i) from ltri, whose
 * entries run column by column (i outer, j inner) as in gmm.hpp's Qtimesx, and zero above.
 */
export function qIndexMap(d: number): Int32Array {
  const nl = (d * (d - 1)) / 2;
  const map = new Int32Array(d * d).fill(d + nl);
  let l = 0;
  for (let i = 0; i < d; i++) {
    map[i * d + i] = i;
    for (let j = i + 1; j < d; j++) map[j * d + i] = d + l++;
  }
  return map;
}

export function prepareGmm(json: unknown, chunkElements = CHUNK_ELEMENTS): GmmPrepared {
  const input = record(json);
  const d = integer(field(input, "d"), "d", 1);
  const k = integer(field(input, "k"), "k", 1);
  const n = integer(field(input, "n"), "n", 1);
  const icfSize = (d * (d + 1)) / 2;
  const alpha = numbers(field(input, "alpha"), "alpha");
  if (alpha.length !== k) throw new InputError(`alpha has ${alpha.length} entries; expected k = ${k}`);
  const x = rowsOf(input, "x", n, d).data as Float64Array;
  const chunk = Math.max(1, Math.min(n, Math.floor(chunkElements / (k * d))));
  const chunks: NdArray[] = [];
  for (let start = 0; start < n; start += chunk) {
    const c = Math.min(chunk, n - start);
    const data = new Float64Array(d * c);
    for (let i = 0; i < c; i++) for (let j = 0; j < d; j++) data[j * c + i] = x[(start + i) * d + j];
    chunks.push(ndarray(data, [d, c]));
  }
  return {
    d, k, n, gamma: number(field(input, "gamma"), "gamma"), m: integer(field(input, "m"), "m"),
    params: { alpha, means: rowsOf(input, "means", k, d), icf: rowsOf(input, "icf", k, icfSize) },
    chunks,
    qIndex: qIndexMap(d),
    zeroColumn: ndarray(new Float64Array(k), [k, 1]),
  };
}

/**
 * log of the multivariate gamma function Γ_p(a), as gmm.hpp's log_gamma_distrib (with
 * its π, adbench/shared/defs.h's 3.14159265359).
 */
export function logGammaDistrib(a: number, p: number): number {
  let out = 0.25 * p * (p - 1) * Math.log(3.14159265359);
  for (let j = 1; j <= p; j++) out += lgamma(a + 0.5 * (1 - j));
  return out;
}

/** log Γ(x) for x > 0 (Lanczos, g = 7, n = 9; about 1e-15 relative). */
export function lgamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - lgamma(1 - x);
  const c = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
    12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
  ];
  const z = x - 1;
  let s = c[0];
  for (let i = 1; i < 9; i++) s += c[i] / (z + i);
  const t = z + 7.5;
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(s);
}

/** Q for every component ([k, d, d]), with the pieces the prior needs. */
function factors(p: GmmPrepared, icf: T) {
  const { d, k } = p;
  const icfSize = (d * (d + 1)) / 2;
  const logDiag = slice(icf, [0, 0], [k, d]) as T;
  const qDiag = exp(logDiag) as T;
  const lower = d > 1 ? (slice(icf, [0, d], [k, icfSize]) as T) : null;
  const rows = concat(lower === null ? [qDiag, p.zeroColumn] : [qDiag, lower, p.zeroColumn], 1) as T;
  const Q = reshape(gather(rows, p.qIndex, 1) as T, [k, d, d]) as T;
  return { sumQs: sum(logDiag, 1) as T, qDiag, lower, Q };
}

/** Σ over the chunk's points of logsumexp_k main_term (the data term of the objective). */
function chunkTerm(p: GmmPrepared, params: { alpha: T; means: T; icf: T }, xT: NdArray): Scalar {
  const { d, k } = p;
  const { sumQs, Q } = factors(p, params.icf);
  // Q_k (x − μ_k) as Q_k x − Q_k μ_k: a column broadcast rather than a [k, d, c] centring
  const Qx = matmul(Q, xT); // [k, d, c]
  const Qmu = matmul(Q, reshape(params.means, [k, d, 1]) as T); // [k, d, 1]
  const sqnorm = sum(square(sub(Qx, Qmu)), 1) as T; // [k, c]
  const main = sub(reshape(add(params.alpha, sumQs) as T, [k, 1]) as T, mul(0.5, sqnorm)) as T;
  return sum(logsumexp(main, 0) as T);
}

/** The terms that do not involve the points: −n·lse(α), the Wishart prior, the constants. */
function paramTerm(p: GmmPrepared, params: { alpha: T; icf: T }): Scalar {
  const { d, k, n, gamma, m } = p;
  const { sumQs, qDiag, lower } = factors(p, params.icf);
  const frobenius = lower === null ? sum(square(qDiag)) : add(sum(square(qDiag)), sum(square(lower)));
  const dof = d + m + 1;
  const C = dof * d * (Math.log(gamma) - 0.5 * Math.log(2)) - logGammaDistrib(0.5 * dof, d);
  const prior = sub(mul(0.5 * gamma * gamma, frobenius), mul(m, sum(sumQs)));
  const constant = -n * d * 0.5 * Math.log(2 * Math.PI) - k * C;
  return add(sub(prior, mul(n, logsumexp(params.alpha))), constant);
}

/**
 * The objective. Computed under a trace (`vjp`'s value; the pullback is never called):
 * on untraced ndarrays every operation re-reads its argument through the general
 * strided copy (toDense), which costs about as much as the arithmetic here.
 */
export function gmmObjective(p: GmmPrepared): number {
  let total = vjp((q) => paramTerm(p, q), p.params)[0] as number;
  for (const xT of p.chunks) total += vjp((q) => chunkTerm(p, q, xT), p.params)[0] as number;
  return total;
}

export function gmmGradient(p: GmmPrepared): Float64Array {
  const { d, k } = p;
  const icfSize = (d * (d + 1)) / 2;
  const out = new Float64Array(k + k * d + k * icfSize);
  const accumulate = (g: { alpha?: Operand; means?: Operand; icf?: Operand }) => {
    const parts: [Operand | undefined, number][] = [[g.alpha, 0], [g.means, k], [g.icf, k + k * d]];
    for (const [v, offset] of parts) {
      if (v === undefined) continue;
      const data = v instanceof Float64Array ? v : ((v as NdArray).data as Float64Array);
      for (let i = 0; i < data.length; i++) out[offset + i] += data[i];
    }
  };
  const { alpha, means, icf } = p.params;
  accumulate(grad((q) => paramTerm(p, q), { alpha, icf }));
  for (const xT of p.chunks) accumulate(grad((q) => chunkTerm(p, q, xT), { alpha, means, icf }));
  return out;
}

const prepare = (input: unknown): GmmPrepared => prepareGmm(input);

export const gmm: EvalModule = {
  objective: defineFunction({ prepare, run: gmmObjective }),
  jacobian: defineFunction({ prepare, run: gmmGradient }),
};
