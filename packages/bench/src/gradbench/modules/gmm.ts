/**
 * @file GradBench `gmm`: the log posterior of a Gaussian mixture with a Wishart prior on
 * its precision matrices, and its gradient, on wengert's tensor path.
 *
 * Follows the eval's source at GradBench f26651a (the eval validates against the C++
 * "manual" tool): python/gradbench/gradbench/evals/gmm/run.py (the input it sends) and
 * cpp/gradbench/evals/gmm.hpp (`objective`, `log_wishart_prior`, `Qtimesx`,
 * `from_json`/`to_json`), since GradBench's 161e806 ("Define the GMM objective
 * function mathematically"). With `Q_k` the lower-triangular factor of component k's
 * precision matrix (diagonal `exp(q[k])`, strictly lower part `l[k]` column by column):
 *
 *   objective = −n·d/2·log 2π + Σ_i logsumexp_k (α_k + Σ_j q_kj − ½‖Q_k (x_i − μ_k)‖²)
 *               − n·logsumexp(α) − Σ_k (½γ²‖Q_k‖²_F − m Σ_j q_kj) + k·C,
 *   C = N·d·(log γ − ½ log 2) − log Γ_d(N/2),  N = d + m + 1
 *
 * (the prior is log_wishart_prior's `−out + k·C`: the log of the Wishart density).
 *
 * Everything is whole-tensor operations: Q for all components by one gather,
 * Q_k(x_i − μ_k) as [−Q_k μ_k | Q_k]·[1; x_i] (for all k and i by one [k·d, 1 + d] · [1 + d, n] product),
 * logsumexp over the components. The points are taken in chunks (at most
 * `CHUNK_ELEMENTS` elements of [k, d, chunk]) so that memory stays bounded at ADBench's
 * largest sizes; the objective is a sum over points, so its gradient is the sum of the
 * chunks' gradients, each computed by wengert's `grad` (plus one `grad` of the terms that
 * do not involve the points). GradBench calls each function repeatedly on one input: the
 * objective and (up to a size) the grads are `jit`ted once per input, as its JAX tool
 * jits (see Compiled below).
 *
 * Input (run.py's `generate`): d, k, n, x [n][d], m, gamma, and the independent
 * variables alpha [k], mu [k][d], q [k][d], l [k][d(d−1)/2]. `objective` gives a number;
 * `jacobian` the gradient as a record of the same four fields and shapes (gmm.hpp's
 * `to_json` of JacOutput).
 */
import ndarray from "ndarray";
import {
  add, concat, exp, gather, grad, jit, logsumexp, matmul, mul, neg, reshape, slice, square, sub, sum,
  type NdArray, type Operand, type Scalar, type TensorArg, type Traced,
} from "@wengert/core";
import { defineFunction } from "../define.js";
import { field, InputError, integer, matrix, number, numbers, record } from "../json.js";
import type { EvalModule } from "../module.js";

type T = TensorArg;

/** The independent variables: alpha [k], mu [k, d], q [k, d], l [k, d(d−1)/2]. */
export interface GmmParams {
  readonly alpha: Float64Array;
  readonly mu: NdArray;
  readonly q: NdArray;
  readonly l: NdArray;
}

/** The gradient, shaped as the parameters (gmm.hpp's JacOutput). */
export interface GmmGradient {
  readonly alpha: Float64Array;
  readonly mu: NdArray;
  readonly q: NdArray;
  readonly l: NdArray;
}

export interface GmmPrepared {
  readonly d: number;
  readonly k: number;
  readonly n: number;
  readonly gamma: number;
  readonly m: number;
  readonly params: GmmParams;
  /** The points transposed, in chunks, under a row of ones: each a constant [1 + d, chunk] ndarray (see chunkTerm). */
  readonly chunks: readonly NdArray[];
  /** Where each entry of Q (row-major d×d) comes from in [exp(q) | l | 0]. */
  readonly qIndex: Int32Array;
  /** A [k, 1] zero column (the source of Q's upper triangle). */
  readonly zeroColumn: NdArray;
}

/** How many elements a [k, d, chunk] intermediate may hold (32 MB of float64). */
export const CHUNK_ELEMENTS = 1 << 22;

/** A `double[][]` field with the expected number of rows and columns, as an ndarray. */
function rowsOf(input: Record<string, unknown>, name: string, rows: number, cols: number): NdArray {
  const a = matrix(field(input, name), name);
  // a row of l is empty when d = 1: `matrix` cannot tell its width from nothing
  if (a.rows !== rows || (rows > 0 && cols > 0 && a.cols !== cols)) throw new InputError(`${name} is ${a.rows} × ${a.cols}; expected ${rows} × ${cols}`);
  return ndarray(a.data, [rows, cols]);
}

/**
 * Index map for Q_k (row j, column i) into the row [exp(q_0..q_{d−1}) | l | 0]: the
 * diagonal from q, the strictly lower part (j > i) from l, whose entries run column by
 * column (i outer, j inner) as in gmm.hpp's Qtimesx, and zero above.
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
  const alpha = numbers(field(input, "alpha"), "alpha");
  if (alpha.length !== k) throw new InputError(`alpha has ${alpha.length} entries; expected k = ${k}`);
  const x = rowsOf(input, "x", n, d).data as Float64Array;
  const chunk = Math.max(1, Math.min(n, Math.floor(chunkElements / (k * d))));
  const chunks: NdArray[] = [];
  for (let start = 0; start < n; start += chunk) {
    const c = Math.min(chunk, n - start);
    const data = new Float64Array((1 + d) * c).fill(1, 0, c);
    for (let i = 0; i < c; i++) for (let j = 0; j < d; j++) data[(1 + j) * c + i] = x[(start + i) * d + j];
    chunks.push(ndarray(data, [1 + d, c]));
  }
  return {
    d, k, n, gamma: number(field(input, "gamma"), "gamma"), m: integer(field(input, "m"), "m"),
    params: { alpha, mu: rowsOf(input, "mu", k, d), q: rowsOf(input, "q", k, d), l: rowsOf(input, "l", k, (d * (d - 1)) / 2) },
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

/** The parameters one `grad` differentiates: `l` is absent when d = 1 (it has no entries). */
interface Independent { alpha: Float64Array; q: NdArray; l?: NdArray }
/** With the means: the data term's parameters. */
interface WithMeans extends Independent { mu: NdArray }

/** Q for every component ([k, d, d]) and the pieces the prior needs. */
function factors(p: GmmPrepared, v: Traced<Independent>) {
  const { d, k } = p;
  const qDiag = exp(v.q) as T;
  const rows = concat(v.l === undefined ? [qDiag, p.zeroColumn] : [qDiag, v.l, p.zeroColumn], 1) as T;
  const Q = reshape(gather(rows, p.qIndex, 1) as T, [k, d, d]) as T;
  return { sumQs: sum(v.q, 1) as T, qDiag, Q };
}

/**
 * From this dimension on, an unsliced term's Q_k x is each component's own product (the
 * batched [k, d, d + 1] · [d + 1, c]); below it, one product of all components,
 * [k·d, d + 1] · [d + 1, c] (see squaredNorms).
 */
export const BATCHED_FROM_D = 16;

/**
 * How squaredNorms takes the coordinates of Q_k (x − μ_k): by slices of one product's rows
 * (compiled chains read them in place), or from a product of [k, d, c] summed over its middle
 * axis. Sliced where jit runs the term: the objective at every d, the gradient below
 * BATCHED_FROM_D (from it the sliced gradient took ×1.1 at d = 20, k = 25 and ×2.1 at d = 64,
 * k = 5: the adjoint embeds d slices' cotangents); the traced gradient is never sliced (each
 * slice, square and sum a buffer and a pass of its own: ×1.3 at d = 15, k = 50).
 */
export type Coordinates = "sliced" | "unsliced";

/**
 * ‖Q_k (x_i − μ_k)‖² for every component and point, [k, c], from W = [−Q_k μ_k | Q_k]
 * ([k, d, d + 1]) and the chunk's [1; x] ([d + 1, c]).
 *
 * Unsliced: from BATCHED_FROM_D, the batched product [k, d, c]; below, W as [k·d, d + 1]
 * and the product reshaped back to [k, d, c] (a reshape on a tape copies its argument, ops.ts,
 * and its pullback the cotangent back); either squared and summed over its middle axis.
 * Sliced: W's rows taken coordinate by coordinate (row j·k + k' is component k''s row j), so
 * that the product P = [d·k, c] holds coordinate j of every component and point in rows
 * j·k … j·k + k − 1, a slice of whole rows, which jit's chains read in place (a middle-axis
 * sum is a kernel, and a reshape a copy). The squares of the d slices are added in order, a
 * fold from the first: the sum kernel's additions from 0 (0 + a = a), the same numbers;
 * each element of P is the same dot product in every form (gemm.ts). At d = 2, k = 25 the
 * reshape, the square's pass, the sum's and −½·'s were a third of the jitted objective's
 * time, and at d = 20, k = 100 the square's pass and the sum's 40 %; sliced, they are one loop.
 * (The batched form was measured against the reshaped one when the batched product made k
 * kernel calls; ops' matmul now makes a stack times one shared matrix a single product,
 * kernels.ts, and a first paired run found them within the noise.)
 */
function squaredNorms(W: T, xT: NdArray, k: number, d: number, coordinates: Coordinates): T {
  if (d >= BATCHED_FROM_D && coordinates === "unsliced") return sum(square(matmul(W, xT) as T), 1) as T;
  const c = xT.shape[1];
  if (coordinates === "unsliced") return sum(square(reshape(matmul(reshape(W, [k * d, d + 1]) as T, xT) as T, [k, d, c]) as T), 1) as T;
  const byCoordinate = Int32Array.from({ length: d * k }, (_, r) => (r % k) * d + Math.floor(r / k));
  const P = matmul(gather(reshape(W, [k * d, d + 1]) as T, byCoordinate, 0) as T, xT) as T;
  let total: T | null = null;
  for (let j = 0; j < d; j++) {
    const s = square(slice(P, [j * k, 0], [(j + 1) * k, c]) as T) as T;
    total = total === null ? s : (add(total, s) as T);
  }
  return total!;
}

/** Σ over the chunk's points of logsumexp_k main_term (the data term of the objective). */
function chunkTerm(p: GmmPrepared, v: Traced<WithMeans>, xT: NdArray, coordinates: Coordinates): Scalar {
  const { d, k } = p;
  const { sumQs, Q } = factors(p, v);
  // Q_k (x − μ_k) as [−Q_k μ_k | Q_k] · [1; x]: the centring is the product's first term, so
  // no [k, d, c] pass adds it (a broadcast add, a third of the objective's time at d = 20,
  // k = 100); the rows of the factor stay lower-triangular past their first column (gemm's
  // block depths). −(Q_k μ_k) is negated after the product, on [k, d, 1].
  const Qmu = matmul(Q, reshape(v.mu, [k, d, 1]) as T); // [k, d, 1]
  // (the [k, 1] column first: its reshape, a kernel, would close the chain of −½‖·‖²)
  const a = reshape(add(v.alpha, sumQs) as T, [k, 1]) as T;
  const sqnorm = squaredNorms(concat([neg(Qmu) as T, Q], 2) as T, xT, k, d, coordinates); // [k, c]
  // a − ½‖·‖² as a + (−½)‖·‖²: the same numbers, and no negation of [k, c] in the reverse sweep
  const main = add(a, mul(-0.5, sqnorm)) as T;
  return sum(logsumexp(main, 0) as T);
}

/** The terms that do not involve the points: −n·lse(α), the log Wishart prior, the constants. */
function paramTerm(p: GmmPrepared, v: Traced<Independent>): Scalar {
  const { d, k, n, gamma, m } = p;
  const { sumQs, qDiag } = factors(p, v);
  const frobenius = v.l === undefined ? sum(square(qDiag)) : add(sum(square(qDiag)), sum(square(v.l)));
  const dof = d + m + 1;
  const C = dof * d * (Math.log(gamma) - 0.5 * Math.log(2)) - logGammaDistrib(0.5 * dof, d);
  // log_wishart_prior: −Σ_k (½γ²‖Q_k‖²_F − m Σ_j q_kj) + k·C
  const prior = sub(mul(m, sum(sumQs)), mul(0.5 * gamma * gamma, frobenius));
  const constant = -n * d * 0.5 * Math.log(2 * Math.PI) + k * C;
  return add(sub(prior, mul(n, logsumexp(v.alpha))), constant);
}

/** The parameters as `grad` differentiates them: without `l` when it is empty (d = 1). */
function independent(p: GmmPrepared): Independent {
  const { alpha, q, l } = p.params;
  return p.d > 1 ? { alpha, q, l } : { alpha, q };
}

const withMeans = (p: GmmPrepared): WithMeans => ({ ...independent(p), mu: p.params.mu });

/**
 * Below this many elements of [k, d, n] (the largest intermediates) the gradient's grads
 * are `jit`ted. A jitted function's first call traces, compiles and replays (two to ten
 * times a plain call); its later calls replay compiled loops, with the intermediates'
 * buffers reused: ×0.4–0.7 of a plain grad here, but only ×0.9–1 from 1.6·10⁶ elements
 * (d = 32, k = 50), where GradBench's second of runs (a dozen calls) would not repay the
 * first. Measured by paired CPU time (the module's commit message).
 */
export const JIT_GRADIENT_BELOW = 600_000;

/**
 * The jitted functions of one prepared input (prepare runs once per GradBench evaluate
 * message, which then calls `run` repeatedly): the objective's and, below
 * JIT_GRADIENT_BELOW, the gradient's. They close over the prepared points (constants of
 * the trace), so they live as long as the prepared input.
 */
interface Compiled {
  readonly objective: (v: WithMeans) => number;
  readonly gradients?: { readonly param: (v: Independent) => Gradients; readonly chunks: readonly ((v: WithMeans) => Gradients)[] };
}
type Gradients = { alpha?: Operand; mu?: Operand; q?: Operand; l?: Operand };
const compiled = new WeakMap<GmmPrepared, Compiled>();

/**
 * The objective as a term (gmmObjective jits it, sliced): the terms added in the order the
 * gradient's are, the parameters' term, then the chunks'.
 */
export function objectiveTerm(p: GmmPrepared, v: Traced<WithMeans>, coordinates: Coordinates): Scalar {
  const param: Traced<Independent> = p.d > 1 ? { alpha: v.alpha, q: v.q, l: v.l } : { alpha: v.alpha, q: v.q };
  return p.chunks.reduce((total, xT) => add(total, chunkTerm(p, v, xT, coordinates)) as Scalar, paramTerm(p, param));
}

function compiledOf(p: GmmPrepared): Compiled {
  let c = compiled.get(p);
  if (c !== undefined) return c;
  const objective = jit((v: Traced<WithMeans>): Scalar => objectiveTerm(p, v, "sliced"));
  // the gradient sliced below BATCHED_FROM_D only (Coordinates)
  const gradientSlicing: Coordinates = p.d < BATCHED_FROM_D ? "sliced" : "unsliced";
  const gradients =
    p.k * p.d * p.n < JIT_GRADIENT_BELOW
      ? {
          param: jit((v: Independent) => grad((w) => paramTerm(p, w), v)) as unknown as (v: Independent) => Gradients,
          chunks: p.chunks.map((xT) => jit((v: WithMeans) => grad((w) => chunkTerm(p, w, xT, gradientSlicing), v)) as unknown as (v: WithMeans) => Gradients),
        }
      : undefined;
  c = { objective: objective as unknown as (v: WithMeans) => number, gradients };
  compiled.set(p, c);
  return c;
}

/**
 * The objective, jitted (see Compiled): traced, it kept every intermediate of the trace
 * (its buffers never went back to the pool, ~36 fresh ones a call); jitted, the replay's
 * buffers are reused and its elementwise chains fused (×0.3–0.7 of the traced value, the
 * same numbers).
 */
export function gmmObjective(p: GmmPrepared): number {
  return compiledOf(p).objective(withMeans(p));
}

const dataOf = (v: Operand): ArrayLike<number> => (v instanceof Float64Array ? v : ((v as NdArray).data as Float64Array));

/** The gradient: the parameters' term's and each chunk's `grad` (jitted below JIT_GRADIENT_BELOW), summed. */
export function gmmGradient(p: GmmPrepared): GmmGradient {
  const { d, k } = p;
  const ls = (d * (d - 1)) / 2;
  const out = { alpha: new Float64Array(k), mu: new Float64Array(k * d), q: new Float64Array(k * d), l: new Float64Array(k * ls) };
  const accumulate = (g: Gradients) => {
    for (const key of ["alpha", "mu", "q", "l"] as const) {
      const v = g[key];
      if (v === undefined) continue;
      const data = dataOf(v);
      const acc = out[key];
      for (let i = 0; i < data.length; i++) acc[i] += data[i];
    }
  };
  const jitted = compiledOf(p).gradients;
  if (jitted !== undefined) {
    accumulate(jitted.param(independent(p)));
    for (const f of jitted.chunks) accumulate(f(withMeans(p)));
  } else {
    accumulate(grad((v) => paramTerm(p, v), independent(p)));
    for (const xT of p.chunks) accumulate(grad((v) => chunkTerm(p, v, xT, "unsliced"), withMeans(p)));
  }
  return { alpha: out.alpha, mu: ndarray(out.mu, [k, d]), q: ndarray(out.q, [k, d]), l: ndarray(out.l, [k, ls]) };
}

const prepare = (input: unknown): GmmPrepared => prepareGmm(input);

export const gmm: EvalModule = {
  objective: defineFunction({ prepare, run: gmmObjective }),
  jacobian: defineFunction({ prepare, run: gmmGradient }),
};
