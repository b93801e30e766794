/**
 * @file GradBench's `llsq` eval: a linear least-squares objective and its gradient.
 *
 * As llsq.hpp: with tᵢ = −1 + 2i/(n − 1) and sᵢ = sign(tᵢ) for i < n,
 *
 *     y(x) = ½ Σᵢ (sᵢ − Σⱼ xⱼ tᵢʲ)²
 *
 * for x of length m. Vectorised: the powers tᵢʲ form a constant n × m matrix T (built
 * in the timed function, by running products as llsq.hpp does), and y = ½ ‖s − T x‖²:
 * matmul, sub, square, sum, div on tensors. The primal takes the sum a block of rows at a
 * time (blockedPrimal), the gradient the sum of the blocks' gradients (blockedGradient).
 *
 * Input `{x: double[], n: int}`; `primal` gives a number, `gradient` an array like `x`.
 */
import ndarray from "ndarray";
import { div, grad, jit, matmul, square, sub, sum, type NdArray, type Operand, type Scalar, type TensorArg } from "@wengert/core";
import { defineFunction } from "../define.js";
import { field, integer, numbers, record } from "../json.js";
import type { EvalModule } from "../module.js";

export interface LlsqInput {
  readonly x: Float64Array;
  readonly n: number;
}

/** T and s, or rows of them. */
interface Buffers {
  readonly T: Float64Array;
  readonly s: Float64Array;
}

/**
 * The buffers of T and s for each input, written again at every call: a fresh n × m
 * buffer (16 MB at n = 16 392) cost twice the writing, in page faults and zeroing.
 */
const scratch = new WeakMap<LlsqInput, Buffers>();

/** Buffers of `length` and `n` elements kept for `input` in `store`, made at its first call. */
function buffersOf(store: WeakMap<LlsqInput, Buffers>, input: LlsqInput, length: number, n: number): Buffers {
  let buffers = store.get(input);
  if (buffers === undefined) store.set(input, (buffers = { T: new Float64Array(length), s: new Float64Array(n) }));
  return buffers;
}

/**
 * Rows `from` … `to` − 1 of T (Tᵢⱼ = tᵢʲ, m columns) and s, written from the start of
 * T and s: llsq.hpp's running products, four rows at a time (each row's powers are a
 * chain of dependent products, a multiplication's latency per element; four rows run
 * four chains side by side).
 */
function writeRows(T: Float64Array, s: Float64Array, n: number, m: number, from: number, to: number): void {
  const point = (i: number): number => -1 + (i * 2) / (n - 1);
  for (let i = from; i < to; i++) {
    const t = point(i);
    s[i - from] = Number(0 < t) - Number(t < 0);
  }
  let i = from;
  for (; i + 3 < to; i += 4) {
    const t0 = point(i), t1 = point(i + 1), t2 = point(i + 2), t3 = point(i + 3);
    const r0 = (i - from) * m, r1 = r0 + m, r2 = r1 + m, r3 = r2 + m;
    let p0 = 1, p1 = 1, p2 = 1, p3 = 1;
    for (let j = 0; j < m; j++) {
      T[r0 + j] = p0;
      T[r1 + j] = p1;
      T[r2 + j] = p2;
      T[r3 + j] = p3;
      p0 *= t0;
      p1 *= t1;
      p2 *= t2;
      p3 *= t3;
    }
  }
  for (; i < to; i++) {
    const t = point(i);
    const r0 = (i - from) * m;
    let p = 1;
    for (let j = 0; j < m; j++) {
      T[r0 + j] = p;
      p *= t;
    }
  }
}

/** The powers T (n × m, Tᵢⱼ = tᵢʲ) and signs s of llsq's sample points, written into `input`'s buffers. */
export function samples(input: LlsqInput): { T: NdArray; s: Float64Array } {
  const { n } = input;
  const m = input.x.length;
  const { T, s } = buffersOf(scratch, input, n * m, n);
  writeRows(T, s, n, m, 0, n);
  return { T: ndarray(T, [n, m]), s };
}

/** Σᵢ (sᵢ − (T x)ᵢ)² over the rows of T and s given. */
function residualSquares(x: TensorArg, T: TensorArg, s: TensorArg): Scalar {
  return sum(square(sub(s, matmul(T, x))));
}

export function objective(x: TensorArg, T: TensorArg, s: TensorArg): Scalar {
  return div(residualSquares(x, T, s), 2);
}

/**
 * Rows of T per block in the primal: 128 rows of m = 128 columns are 128 KB, which stay
 * in the cache from their writing to their reading. The whole T (16 MB at n = 16 392) went
 * out to memory and came back: the primal took twice as long, three to four times
 * llsq.hpp's, which never stores T.
 */
const BLOCK_ROWS = 128;

/**
 * Rows of T per block in the gradient: 1024 rows of m = 128 columns are 1 MB, which stay in
 * a core's L2 from their writing through T x and Tᵀ(T x − s). The whole T (16 MB at n =
 * 16 392) went to memory and back three times: written, read by T x, read by the product
 * with the residuals.
 */
const GRADIENT_BLOCK_ROWS = 1024;

/** A jitted function's blocks: their rows, and per input the buffers they are written into and a full block's arguments. */
interface BlockStore {
  readonly rows: number;
  readonly buffers: WeakMap<LlsqInput, Buffers>;
  /** A full block's arguments per input (x, T's rows, s), made once: an ndarray made per call cost a tenth of n = 16's primal. */
  readonly args: WeakMap<LlsqInput, [TensorArg, TensorArg, TensorArg]>;
}
const blockStore = (rows: number): BlockStore => ({ rows, buffers: new WeakMap(), args: new WeakMap() });

/** `f` of each block of rows of T and s in order ([x, T's rows, s's rows]), the rows written just before. */
function eachBlock(input: LlsqInput, store: BlockStore, f: (args: [TensorArg, TensorArg, TensorArg]) => void): void {
  const { n, x } = input;
  const m = x.length;
  const rows = Math.min(n, store.rows);
  const { T, s } = buffersOf(store.buffers, input, rows * m, rows);
  let full = store.args.get(input);
  if (full === undefined) store.args.set(input, (full = [x, ndarray(T, [rows, m]), s]));
  for (let from = 0; from < n; from += rows) {
    const to = Math.min(n, from + rows);
    writeRows(T, s, n, m, from, to);
    const k = to - from;
    f(k === rows ? full : [x, ndarray(T.subarray(0, k * m), [k, m]), s.subarray(0, k)]);
  }
}

/** Σᵢ (sᵢ − (T x)ᵢ)² of one block, jitted: a replay runs its operations on pooled buffers, its shapes checked once. */
const blockSquares = jit(([x, T, s]: [TensorArg, TensorArg, TensorArg]) => residualSquares(x, T, s));
const primalBlocks = blockStore(BLOCK_ROWS);

/** y(x), the rows of T written and used a block at a time (BLOCK_ROWS): the same sum, in blocks. */
export function blockedPrimal(input: LlsqInput): number {
  let total = 0;
  eachBlock(input, primalBlocks, (args) => (total += blockSquares(args) as number));
  return total / 2;
}

/**
 * ∇y at x for the T and s given, jitted (T and s arguments, not captured): traced once per
 * shape and replayed, where `grad` traced and differentiated the five operations at every
 * call (most of its time at n = 16).
 */
const gradient = jit(([x, T, s]: [TensorArg, TensorArg, TensorArg]) => grad((v) => objective(v, T, s), x));
const gradientBlocks = blockStore(GRADIENT_BLOCK_ROWS);

/** ∇y as the sum of each block of rows' gradient (y is a sum over rows), T's rows written a block at a time. */
export function blockedGradient(input: LlsqInput): Float64Array {
  const total = new Float64Array(input.x.length);
  eachBlock(input, gradientBlocks, (args) => {
    const g = gradient(args) as unknown as Operand;
    const data = g instanceof Float64Array ? g : ((g as NdArray).data as Float64Array);
    for (let j = 0; j < total.length; j++) total[j] += data[j];
  });
  return total;
}

const prepare = (input: unknown): LlsqInput => {
  const r = record(input);
  return { x: numbers(field(r, "x"), "x"), n: integer(field(r, "n"), "n", 1) };
};

export const llsq: EvalModule = {
  primal: defineFunction({ prepare, run: blockedPrimal }),
  gradient: defineFunction({ prepare, run: blockedGradient }),
};
