/**
 * @file Elementwise arithmetic and column sums as WebAssembly SIMD kernels (f64x2), for
 * the large buffers of elementwise.ts and reduce.ts.
 *
 * A JavaScript loop does one element per step with a bounds check on each array; a
 * vector does two, unchecked. The operands are copied in and the result out (a memcpy
 * each), which large buffers (SIMD_FROM elements and more) repay.
 *
 * Same numbers: a lane of f64x2.add, sub, mul or div is the IEEE operation on one element,
 * as JavaScript's; a column sum adds the rows in order from zero in each lane, as the
 * loop does. No operation is fused or reordered, so the kernels agree to the bit.
 */
import { assemble, f64, f64x2, forLoop, i32, ifThen, lazyWorkspace, local, type, v128, type Code, type Func } from "./wasm.js";

export type Arith = "add" | "sub" | "mul" | "div";
const ARITH: readonly Arith[] = ["add", "sub", "mul", "div"];

const get = local.get;
const bump = (p: number, bytes: number): Code => local.set(p, i32.add(get(p), i32.const(bytes)));

// parameters (byte addresses, a count) and locals of the elementwise functions
const [R, A, B, N, END, LAST, VA, VB] = [0, 1, 2, 3, 4, 5, 6, 7];

/**
 * `${op}${a}${b}(r, a, b, n)`: r[i] = a[i] ∘ b[i] for i < n (n ≥ 1), where an operand
 * marked 0 is one element read for every i (a scalar, or one row's entry of a column).
 * Pairs as vectors, then the last element alone when n is odd.
 */
function binary(op: Arith, aWhole: boolean, bWhole: boolean): Func {
  const lanes = (whole: boolean, p: number, v: number): Code => (whole ? v128.load(get(p)) : get(v));
  const one = (p: number): Code => f64.load(get(p));
  return {
    name: `${op}${+aWhole}${+bWhole}`,
    params: [type.i32, type.i32, type.i32, type.i32],
    locals: [type.i32, type.i32, type.v128, type.v128],
    body: [
      local.set(END, i32.add(get(R), i32.mul(get(N), i32.const(8)))),
      local.set(LAST, i32.sub(get(END), i32.const(8))),
      ...(aWhole ? [] : [local.set(VA, v128.load64Splat(get(A)))]),
      ...(bWhole ? [] : [local.set(VB, v128.load64Splat(get(B)))]),
      forLoop(R, get(LAST), 16, [
        v128.store(get(R), f64x2[op](lanes(aWhole, A, VA), lanes(bWhole, B, VB))),
        ...(aWhole ? [bump(A, 16)] : []),
        ...(bWhole ? [bump(B, 16)] : []),
      ]),
      ifThen(i32.ltU(get(R), get(END)), [f64.store(get(R), f64[op](one(A), one(B)))]),
    ],
  };
}

// parameters and locals of columnSums
const [OUT, X, ROWS, COLS, I, P, OLAST, OEND] = [0, 1, 2, 3, 4, 5, 6, 7];

/**
 * columnSums(out, x, rows, cols): out[j] += x[i][j] for each row i in order (cols ≥ 1), the
 * rows streamed once; out starts as the caller left it (zeros).
 */
function columnSums(): Func {
  return {
    name: "columnSums",
    params: [type.i32, type.i32, type.i32, type.i32],
    locals: [type.i32, type.i32, type.i32, type.i32],
    body: [
      local.set(OEND, i32.add(get(OUT), i32.mul(get(COLS), i32.const(8)))),
      local.set(OLAST, i32.sub(get(OEND), i32.const(8))),
      forLoop(I, get(ROWS), 1, [
        local.set(P, get(OUT)),
        forLoop(P, get(OLAST), 16, [v128.store(get(P), f64x2.add(v128.load(get(P)), v128.load(get(X)))), bump(X, 16)]),
        ifThen(i32.ltU(get(P), get(OEND)), [f64.store(get(P), f64.add(f64.load(get(P)), f64.load(get(X)))), bump(X, 8)]),
      ]),
    ],
  };
}

/** The module: every operation with each operand whole or repeated (not both repeated), and columnSums. */
export function elementwiseModule(): Uint8Array {
  const funcs = ARITH.flatMap((op) => [binary(op, true, true), binary(op, true, false), binary(op, false, true)]);
  return assemble([...funcs, columnSums()]);
}

/**
 * From this many elements the callers use these kernels, with rows (one call each) of at
 * least MIN_ROW: below, copying into wasm memory and a call per row cost more than the
 * vectors save.
 */
export const SIMD_FROM = 1024;
export const MIN_ROW = 16;

type Kernel = (r: number, a: number, b: number, n: number) => void;

/** Operands and result of up to 32 MB (about 1.4 million elements each): larger ones stay in JavaScript. */
const workspace = lazyWorkspace(elementwiseModule, 32 * 1024 * 1024);

/**
 * How an operand is read for row i of a result of `rows` rows of `m`: "whole" (its own
 * row i), "row" (the same m elements for every row), "column" (its element i, repeated
 * along the row) or "scalar" (element 0 everywhere).
 */
export type Layout = "whole" | "row" | "column" | "scalar";

/** Where row i of an operand starts (in elements, from the operand's start `at`). */
export const rowStart = (layout: Layout, at: number, i: number, m: number): number =>
  layout === "whole" ? at + i * m : layout === "column" ? at + i : at;
/** Whether an operand is read element by element along a row (else one element is repeated). */
export const isVector = (layout: Layout): boolean => layout === "whole" || layout === "row";

/**
 * r (rows × m) = a ∘ b, the operands read by their layouts; false (nothing written) when
 * WebAssembly SIMD is unavailable or the operands are too large. Not both operands may be
 * repeated along the row ("column" or "scalar").
 */
export function simdArith(op: Arith, r: Float64Array, a: Float64Array, al: Layout, b: Float64Array, bl: Layout, rows: number, m: number): boolean {
  const s = workspace();
  if (s === null || rows * m === 0 || (!isVector(al) && !isVector(bl))) return false;
  // one copy when both operands are the same buffer (a square)
  const aAt = 0;
  const bAt = b === a ? aAt : a.length;
  const rAt = b === a ? a.length : bAt + b.length;
  const heap = s.heap(rAt + rows * m);
  if (heap === null) return false;
  heap.set(a, aAt);
  if (b !== a) heap.set(b, bAt);
  const kernel = s.exports[`${op}${+isVector(al)}${+isVector(bl)}`] as Kernel;
  for (let i = 0; i < rows; i++) kernel((rAt + i * m) * 8, rowStart(al, aAt, i, m) * 8, rowStart(bl, bAt, i, m) * 8, m);
  r.set(heap.subarray(rAt, rAt + rows * m));
  return true;
}

/**
 * out[j] = Σ_i x[i][j] (x rows × cols, the rows added in order, from zero), for each of
 * `blocks` consecutive blocks of x into consecutive rows of out; false (nothing written)
 * when WebAssembly SIMD is unavailable or x is too large.
 */
export function simdColumnSums(out: Float64Array, x: Float64Array, blocks: number, rows: number, cols: number): boolean {
  const s = workspace();
  if (s === null || cols === 0) return false;
  const oAt = x.length;
  const heap = s.heap(oAt + blocks * cols);
  if (heap === null) return false;
  heap.set(x, 0);
  heap.fill(0, oAt, oAt + blocks * cols);
  const kernel = s.exports.columnSums as Kernel;
  for (let k = 0; k < blocks; k++) kernel((oAt + k * cols) * 8, k * rows * cols * 8, rows, cols);
  out.set(heap.subarray(oAt, oAt + blocks * cols));
  return true;
}
