/**
 * @file Row minima (row-minima.ts) as a WebAssembly SIMD kernel (f64x2): two rows to a
 * vector, the comparisons as masks.
 *
 * Same numbers: a lane computes bias[j] + scale·x[i][j] as JavaScript does (IEEE add and
 * multiply), and takes the definition's branches as selections: `lt` is `v < least`,
 * `pmin(a, b)` is `b < a ? b : a`, `bitselect` the if. No branch depends on the data, so
 * values in random order cost what sorted ones do.
 */
import { assemble, f64, f64x2, forLoop, i32, i32x4, lazyWorkspace, local, type, v128, type Code } from "./wasm.js";

// parameters (byte addresses, the scale, counts) and locals
const [X, BIAS, SCALE, LEAST, SECOND, AT, PAIRS, K] = [0, 1, 2, 3, 4, 5, 6, 7];
const [I, KB, PX, P1, PB, PEND] = [8, 9, 10, 11, 12, 13];
const [SC, M1, M2, ATV, NANM, JV, ONE, S, LT, INF, NANV] = [14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24];

const get = local.get;
const bump = (p: number, bytes: number | Code): Code => local.set(p, i32.add(get(p), typeof bytes === "number" ? i32.const(bytes) : bytes));
const splat = (x: number): Code => f64x2.splat(f64.const(x));

/**
 * rowMinima(x, bias, scale, least, second, at, pairs, k): rows 2p and 2p + 1 of x (k
 * columns each) in the lanes of vector p; `at` written as 32-bit integers (counted as
 * doubles in the lanes, exact below 2⁵³).
 */
function kernel(): Code[] {
  const column: Code[] = [
    local.set(S, f64x2.add(v128.load64Splat(get(PB)), f64x2.mul(get(SC), f64x2.replaceLane(1)(v128.load64Splat(get(PX)), f64.load(get(P1)))))),
    local.set(LT, f64x2.lt(get(S), get(M1))),
    local.set(M2, v128.bitselect(get(M1), f64x2.pmin(get(M2), get(S)), get(LT))),
    local.set(M1, f64x2.pmin(get(M1), get(S))),
    local.set(ATV, v128.bitselect(get(JV), get(ATV), get(LT))),
    local.set(NANM, v128.or(get(NANM), f64x2.ne(get(S), get(S)))),
    local.set(JV, f64x2.add(get(JV), get(ONE))),
    bump(PX, 8),
    bump(P1, 8),
  ];
  const pair: Code[] = [
    local.set(M1, get(INF)),
    local.set(M2, get(INF)),
    local.set(ATV, v128.zero()),
    local.set(NANM, v128.zero()),
    local.set(JV, v128.zero()),
    local.set(P1, i32.add(get(PX), get(KB))),
    local.set(PB, get(BIAS)),
    forLoop(PB, get(PEND), 8, column),
    // PX is at the end of the pair's first row: the next pair starts where P1 stopped
    local.set(PX, get(P1)),
    v128.store(get(LEAST), v128.bitselect(get(NANV), get(M1), get(NANM))),
    v128.store(get(SECOND), get(M2)),
    v128.store64Lane(0)(get(AT), i32x4.truncSatF64x2SZero(get(ATV))),
    bump(LEAST, 16),
    bump(SECOND, 16),
    bump(AT, 8),
  ];
  return [
    local.set(KB, i32.mul(get(K), i32.const(8))),
    local.set(PEND, i32.add(get(BIAS), get(KB))),
    local.set(SC, f64x2.splat(get(SCALE))),
    local.set(ONE, splat(1)),
    local.set(INF, splat(Infinity)),
    local.set(NANV, splat(NaN)),
    local.set(PX, get(X)),
    forLoop(I, get(PAIRS), 1, pair),
  ];
}

/** The module's bytes: one function `rowMinima`. */
export function rowMinimaModule(): Uint8Array {
  const { i32: i, f64: d, v128: v } = type;
  return assemble([
    {
      name: "rowMinima",
      params: [i, i, d, i, i, i, i, i],
      locals: [i, i, i, i, i, i, v, v, v, v, v, v, v, v, v, v, v],
      body: kernel(),
    },
  ]);
}

/** The operands and the results' arrays (row-minima.ts's arguments and results, one object). */
export interface RowMinimaCall {
  readonly x: Float64Array;
  readonly rows: number;
  readonly cols: number;
  readonly bias: Float64Array;
  readonly scale: number;
  readonly least: Float64Array;
  readonly second: Float64Array;
  readonly at: Int32Array;
}

type Kernel = (x: number, bias: number, scale: number, least: number, second: number, at: number, pairs: number, k: number) => void;

/** Operands and results of up to 64 MB; larger ones go to the JavaScript kernel. */
const workspace = lazyWorkspace(rowMinimaModule, 64 * 1024 * 1024);

/**
 * The row minima into `least`, `second` and `at` by the SIMD kernel; false (nothing written) where WebAssembly
 * SIMD is unavailable or the operands are too large. An odd last row is paired with a row
 * of zeros, whose results are not copied out.
 */
export function simdRowMinima({ x, rows, cols, bias, scale, least, second, at }: RowMinimaCall): boolean {
  const s = workspace();
  if (s === null || cols === 0) return false;
  const pairs = Math.ceil(rows / 2);
  const bAt = 2 * pairs * cols;
  const lAt = bAt + cols;
  const sAt = lAt + 2 * pairs;
  const aAt = sAt + 2 * pairs;
  const heap = s.heap(aAt + pairs);
  if (heap === null) return false;
  heap.set(x.subarray(0, rows * cols), 0);
  heap.fill(0, rows * cols, bAt);
  heap.set(bias.subarray(0, cols), bAt);
  (s.exports.rowMinima as Kernel)(0, bAt * 8, scale, lAt * 8, sAt * 8, aAt * 8, pairs, cols);
  least.set(heap.subarray(lAt, lAt + rows));
  second.set(heap.subarray(sAt, sAt + rows));
  at.set(new Int32Array(heap.buffer, aAt * 8, rows));
  return true;
}
