/**
 * @file Reductions (sum, max, min, logsumexp) over axes of a buffer, and logSoftmax.
 *
 * Reduced axes that are contiguous read x as [A, R, B] (A: the axes before, R: the
 * reduced ones, B: those after): each output element is a run of x when B is 1, and
 * otherwise R rows of x are folded into a row of out. Each fold is a small loop function
 * of its own, taking its arrays as arguments: a closure over them would be a new function
 * made on every call, which V8 optimises afresh or not at all. Large column
 * sums go to the SIMD kernel (simd-elementwise.ts), logsumexp's long runs to simd-exp.ts's,
 * and its columns (the reduced axes not last) to simd-exp.ts's column passes.
 * Elements are combined in memory order, from the identity, whichever loop runs: the
 * numbers of the plain definition; but logsumexp's runs (the reduced axes last), whose
 * exponentials are added in four partial sums (expRun), the SIMD kernel's order.
 */
import { exp } from "../exp.js";
import { alloc, release } from "./pool.js";
import { size, type Dims } from "./dims.js";
import { odometer } from "./odometer.js";
import { MIN_ROW, SIMD_FROM, simdColumnSums } from "./simd-elementwise.js";
import { EXP_SIMD_FROM, simdColumnMaxAndExpSums, simdMaxAndExpSums } from "./simd-exp.js";

export type Reduction = "sum" | "max" | "min" | "logsumexp";

/** out[o + b] ⊕= x[i + b] for b < len: one row of x folded into a row of out. */
type Row = (out: Float64Array, o: number, x: Float64Array, i: number, len: number) => void;
/**
 * acc ⊕ x[from…to): a run of x folded into one number, which the caller stores. (Stored
 * here, after a loop that V8 compiles while it runs, the store had never run when the
 * code was made: V8 threw the code away at it, and did so again at every call.)
 */
type Run = (acc: number, x: Float64Array, from: number, to: number) => number;

// max and min take a NaN as soon as they meet one (NaN is neither greater nor less)
function sumRow(out: Float64Array, o: number, x: Float64Array, i: number, len: number): void {
  for (let b = 0; b < len; b++) out[o + b] += x[i + b];
}
function maxRow(out: Float64Array, o: number, x: Float64Array, i: number, len: number): void {
  for (let b = 0; b < len; b++) out[o + b] = x[i + b] > out[o + b] || Number.isNaN(x[i + b]) ? x[i + b] : out[o + b];
}
function minRow(out: Float64Array, o: number, x: Float64Array, i: number, len: number): void {
  for (let b = 0; b < len; b++) out[o + b] = x[i + b] < out[o + b] || Number.isNaN(x[i + b]) ? x[i + b] : out[o + b];
}
function sumRun(acc: number, x: Float64Array, from: number, to: number): number {
  for (let i = from; i < to; i++) acc += x[i];
  return acc;
}
// one comparison per element, false for the common one (v ≤ acc, or a NaN among them), and
// a branch where a select made each step wait for the last: the loop runs at memory speed
function maxRun(acc: number, x: Float64Array, from: number, to: number): number {
  if (acc !== acc) return acc;
  for (let i = from; i < to; i++) {
    const v = x[i];
    if (!(v <= acc)) {
      if (v !== v) return v;
      acc = v;
    }
  }
  return acc;
}
function minRun(acc: number, x: Float64Array, from: number, to: number): number {
  if (acc !== acc) return acc;
  for (let i = from; i < to; i++) {
    const v = x[i];
    if (!(v >= acc)) {
      if (v !== v) return v;
      acc = v;
    }
  }
  return acc;
}

const FOLDS = {
  sum: { identity: 0, row: sumRow, run: sumRun, step: (a: number, v: number) => a + v },
  max: { identity: -Infinity, row: maxRow, run: maxRun, step: (a: number, v: number) => (v > a || Number.isNaN(v) ? v : a) },
  min: { identity: Infinity, row: minRow, run: minRun, step: (a: number, v: number) => (v < a || Number.isNaN(v) ? v : a) },
} as const;

/**
 * Reduce `axes` (sorted) of `x`. The output has the kept axes in order; it is the same
 * buffer whether or not the caller keeps reduced axes as 1.
 */
export function reduce(x: Float64Array, xd: Dims, axes: readonly number[], kind: Reduction): Float64Array {
  if (kind === "logsumexp") return logsumexp(x, xd, axes);
  const fold = FOLDS[kind];
  const out = alloc(outSize(xd, axes), true).fill(fold.identity);
  const abr = split(x, xd, axes);
  if (abr === null) {
    const step = fold.step;
    odometer(xd, [keptDims(xd, axes)], (i, offs) => (out[offs[0]] = step(out[offs[0]], x[i])));
  } else if (!(kind === "sum" && columnSums(out, x, abr))) fold3(out, x, abr, fold.row, fold.run);
  return out;
}

/**
 * Sums over leading axes ([A, R, B] with B ≥ 2: each output element in a lane of its own)
 * by the SIMD kernel, for large x; false when it does not apply.
 */
function columnSums(out: Float64Array, x: Float64Array, [A, R, B]: readonly [number, number, number]): boolean {
  return B >= 2 && x.length >= SIMD_FROM && R * B >= MIN_ROW && simdColumnSums(out, x, A, R, B);
}

/** Rows or runs of x (read as [A, R, B]) folded into out. */
function fold3(out: Float64Array, x: Float64Array, [A, R, B]: readonly [number, number, number], row: Row, run: Run): void {
  if (B === 1) for (let a = 0; a < A; a++) out[a] = run(out[a], x, a * R, (a + 1) * R);
  else for (let a = 0; a < A; a++) for (let r = 0; r < R; r++) row(out, a * B, x, (a * R + r) * B, B);
}

/** x read as [A, R, B] around the reduced axes; null when they are not contiguous. */
function split(x: Float64Array, xd: Dims, axes: readonly number[]): [number, number, number] | null {
  if (axes.length > 0 && axes[axes.length - 1] - axes[0] !== axes.length - 1) return null;
  // products of the dims before and across the reduced axes, without slicing them out
  const first = axes[0] ?? xd.length;
  const last = (axes[axes.length - 1] ?? -1) + 1;
  let A = 1;
  for (let i = 0; i < first; i++) A *= xd[i];
  let R = 1;
  for (let i = first; i < last; i++) R *= xd[i];
  return [A, R, x.length / Math.max(A * R, 1)];
}

const keptDims = (xd: Dims, axes: readonly number[]): Dims => xd.map((d, i) => (axes.includes(i) ? 1 : d));
const outSize = (xd: Dims, axes: readonly number[]): number => size(keptDims(xd, axes));

/** Per group: m, the max (0 where it is ±∞), and log Σ exp(x − m) (logsumexp and logSoftmax both). */
function maxAndLogSum(x: Float64Array, xd: Dims, axes: readonly number[]): [Float64Array, Float64Array] {
  const abr = split(x, xd, axes);
  const logSum = alloc(outSize(xd, axes));
  const m = simdMaxAndSums(x, abr, logSum) ?? simdColumnMaxAndSums(x, abr, logSum) ?? maxThenSums(x, xd, axes, abr, logSum);
  for (let o = 0; o < logSum.length; o++) logSum[o] = Math.log(logSum[o]);
  return [m, logSum];
}

/** m ← 0 where it is ±∞ or NaN (x − m would be NaN everywhere). */
function finiteOrZero(m: Float64Array): void {
  for (let o = 0; o < m.length; o++) if (!Number.isFinite(m[o])) m[o] = 0;
}

/**
 * The max and the sums Σ exp(x − m) of long runs (the reduced axes last) by simd-exp.ts's
 * passes, which compute the same max and the same exponentials, added in the same order;
 * null (nothing written) where they do not apply.
 */
function simdMaxAndSums(x: Float64Array, abr: readonly [number, number, number] | null, sums: Float64Array): Float64Array | null {
  if (abr === null || abr[2] !== 1 || x.length < EXP_SIMD_FROM || abr[1] < MIN_ROW) return null;
  const m = alloc(abr[0], true);
  if (!simdMaxAndExpSums(x, abr[0], abr[1], m, sums)) {
    release(m);
    return null;
  }
  finiteOrZero(m);
  return m;
}

/**
 * The max and the sums Σ exp(x − m) of columns (the reduced axes not last: [A, R, B] with
 * B ≥ 2) by simd-exp.ts's passes, which compute maxThenSums' max and exponentials and add
 * them in its order; null (nothing written) where they do not apply.
 */
function simdColumnMaxAndSums(x: Float64Array, abr: readonly [number, number, number] | null, sums: Float64Array): Float64Array | null {
  if (abr === null || abr[2] < 2 || x.length < EXP_SIMD_FROM) return null;
  const m = alloc(abr[0] * abr[2], true);
  if (simdColumnMaxAndExpSums(x, abr[0], abr[1], abr[2], m, sums)) return m;
  release(m);
  return null;
}

/** The max, then the sums Σ exp(x − m) (from zero: `sums` is), by the JavaScript loops. */
function maxThenSums(x: Float64Array, xd: Dims, axes: readonly number[], abr: readonly [number, number, number] | null, sums: Float64Array): Float64Array {
  const m = reduce(x, xd, axes, "max");
  finiteOrZero(m);
  if (abr === null) odometer(xd, [keptDims(xd, axes)], (i, offs) => (sums[offs[0]] += exp(x[i] - m[offs[0]])));
  else {
    const [A, R, B] = abr;
    if (B === 1) for (let a = 0; a < A; a++) sums[a] = expRun(m[a], x, a * R, (a + 1) * R);
    else for (let a = 0; a < A; a++) for (let r = 0; r < R; r++) expRow(sums, m, a * B, x, (a * R + r) * B, B);
  }
  return m;
}

/** log Σ exp(x) = m + log Σ exp(x − m). */
function logsumexp(x: Float64Array, xd: Dims, axes: readonly number[]): Float64Array {
  const [m, out] = maxAndLogSum(x, xd, axes);
  for (let o = 0; o < out.length; o++) out[o] = m[o] + out[o];
  release(m);
  return out;
}

/**
 * Σ exp(x[from…to) − m), which the caller stores (see Run), in four partial sums: element i
 * into sum (i − from) mod 4, in order from 0, then (s₀ + s₂) + (s₁ + s₃). simd-exp.ts's
 * order (two vectors of two sums), which one chain of additions would hold to an addition's
 * latency per element; here too the four chains run side by side.
 */
function expRun(m: number, x: Float64Array, from: number, to: number): number {
  let [s0, s1, s2, s3] = [0, 0, 0, 0];
  let i = from;
  for (; i + 3 < to; i += 4) {
    s0 += exp(x[i] - m);
    s1 += exp(x[i + 1] - m);
    s2 += exp(x[i + 2] - m);
    s3 += exp(x[i + 3] - m);
  }
  if (i + 1 < to) {
    s0 += exp(x[i] - m);
    s1 += exp(x[i + 1] - m);
    i += 2;
  }
  if (i < to) {
    if (((i - from) & 3) === 0) s0 += exp(x[i] - m);
    else s2 += exp(x[i] - m);
  }
  return s0 + s2 + (s1 + s3);
}
function expRow(out: Float64Array, m: Float64Array, o: number, x: Float64Array, i: number, len: number): void {
  for (let b = 0; b < len; b++) out[o + b] += exp(x[i + b] - m[o + b]);
}

/**
 * log-probabilities over the axes: (x − m) − log Σ exp(x − m), m the group's max. Not
 * x − logsumexp(x), which is rounded at the size of x: equal logits of 10¹⁶ gave a
 * softmax of [1, 1]; here x − m is exact for them, and they get −log 2.
 */
export function logSoftmax(x: Float64Array, xd: Dims, axes: readonly number[]): Float64Array {
  const [m, logSum] = maxAndLogSum(x, xd, axes);
  const y = alloc(x.length, true);
  odometer(xd, [keptDims(xd, axes)], (i, offs) => (y[i] = x[i] - m[offs[0]] - logSum[offs[0]]));
  release(m);
  release(logSum);
  return y;
}

/** How many elements of each reduced group equal the group's max (or min): > 1 is a tie. */
export function countEqual(x: Float64Array, xd: Dims, axes: readonly number[], y: Float64Array): Float64Array {
  const count = alloc(outSize(xd, axes));
  const abr = split(x, xd, axes);
  if (abr === null) {
    odometer(xd, [keptDims(xd, axes)], (i, offs) => {
      if (x[i] === y[offs[0]]) count[offs[0]]++;
    });
    return count;
  }
  // contiguous axes (a whole-vector max among them): straight loops, as reduce's, since
  // rd asks this of every max it records (a closure call per element cost more than the max)
  const [A, R, B] = abr;
  for (let a = 0, i = 0; a < A; a++) {
    for (let r = 0; r < R; r++) {
      for (let b = 0, o = a * B; b < B; b++, o++, i++) if (x[i] === y[o]) count[o]++;
    }
  }
  return count;
}
