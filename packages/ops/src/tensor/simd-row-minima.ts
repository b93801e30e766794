/**
 * @file Row minima (row-minima.ts) as a WebAssembly SIMD kernel (f64x2): two rows to a
 * vector, two vectors a step, the comparisons as masks.
 *
 * Same numbers: a lane computes bias[j] + scale·x[i][j] as JavaScript does (IEEE add and
 * multiply), and takes the definition's branches as selections: `lt` is `v < least`,
 * `pmin(a, b)` is `b < a ? b : a`, `bitselect` the if. No branch depends on the data, so
 * values in random order cost what sorted ones do.
 */
import { assemble, f64, f64x2, forLoop, i32, i32x4, lazyWorkspace, local, type, v128, type Code, type Func, type Workspace } from "./wasm.js";

/** Vectors per step: each holds two rows, and their chains of comparisons interleave (one alone waits on its `pmin`). */
const GROUPS = 2;
/** Rows per step. */
export const QUAD = 2 * GROUPS;

// parameters (byte addresses, the scale, counts) and locals
const [X, BIAS, SCALE, LEAST, SECOND, AT, QUADS, K] = [0, 1, 2, 3, 4, 5, 6, 7];
const [I, KB, PB, PEND] = [8, 9, 10, 11];
const P = (r: number) => 12 + r; // the read position in row r of the step's rows
const [SC, ONE, INF, NANV, JV, B] = [12 + QUAD, 13 + QUAD, 14 + QUAD, 15 + QUAD, 16 + QUAD, 17 + QUAD];
// per vector g: the least, the second, where the least is, whether a NaN was met, the value, v < least
const VEC = 18 + QUAD;
const [M1, M2, ATV, NANM, S, LT] = [0, 1, 2, 3, 4, 5].map((k) => (g: number) => VEC + 6 * g + k);

const get = local.get;
const bump = (p: number, bytes: number | Code): Code => local.set(p, i32.add(get(p), typeof bytes === "number" ? i32.const(bytes) : bytes));
const splat = (x: number): Code => f64x2.splat(f64.const(x));
const groups = Array.from({ length: GROUPS }, (_, g) => g);
const rowsOfStep = Array.from({ length: QUAD }, (_, r) => r);

/**
 * rowMinima(x, bias, scale, least, second, at, quads, k): rows 4q … 4q + 3 of x (k
 * columns each) in the lanes of two vectors; `at` written as 32-bit integers (counted as
 * doubles in the lanes, exact below 2⁵³).
 */
function kernel(): Code[] {
  const column: Code[] = [
    local.set(B, v128.load64Splat(get(PB))),
    ...groups.flatMap((g) => [
      local.set(S(g), f64x2.add(get(B), f64x2.mul(get(SC), f64x2.replaceLane(1)(v128.load64Splat(get(P(2 * g))), f64.load(get(P(2 * g + 1))))))),
      local.set(LT(g), f64x2.lt(get(S(g)), get(M1(g)))),
      local.set(M2(g), v128.bitselect(get(M1(g)), f64x2.pmin(get(M2(g)), get(S(g))), get(LT(g)))),
      local.set(M1(g), f64x2.pmin(get(M1(g)), get(S(g)))),
      local.set(ATV(g), v128.bitselect(get(JV), get(ATV(g)), get(LT(g)))),
      local.set(NANM(g), v128.or(get(NANM(g)), f64x2.ne(get(S(g)), get(S(g))))),
    ]),
    local.set(JV, f64x2.add(get(JV), get(ONE))),
    ...rowsOfStep.map((r) => bump(P(r), 8)),
  ];
  const step: Code[] = [
    ...groups.flatMap((g) => [
      local.set(M1(g), get(INF)),
      local.set(M2(g), get(INF)),
      local.set(ATV(g), v128.zero()),
      local.set(NANM(g), v128.zero()),
    ]),
    local.set(JV, v128.zero()),
    ...rowsOfStep.slice(1).map((r) => local.set(P(r), i32.add(get(P(r - 1)), get(KB)))),
    local.set(PB, get(BIAS)),
    forLoop(PB, get(PEND), 8, column),
    // the last row's position is where the next step's rows start
    local.set(P(0), get(P(QUAD - 1))),
    ...groups.flatMap((g) => [
      v128.store(get(LEAST), v128.bitselect(get(NANV), get(M1(g)), get(NANM(g))), 16 * g),
      v128.store(get(SECOND), get(M2(g)), 16 * g),
      v128.store64Lane(0, 8 * g)(get(AT), i32x4.truncSatF64x2SZero(get(ATV(g)))),
    ]),
    bump(LEAST, 16 * GROUPS),
    bump(SECOND, 16 * GROUPS),
    bump(AT, 8 * GROUPS),
  ];
  return [
    local.set(KB, i32.mul(get(K), i32.const(8))),
    local.set(PEND, i32.add(get(BIAS), get(KB))),
    local.set(SC, f64x2.splat(get(SCALE))),
    local.set(ONE, splat(1)),
    local.set(INF, splat(Infinity)),
    local.set(NANV, splat(NaN)),
    local.set(P(0), get(X)),
    forLoop(I, get(QUADS), 1, step),
  ];
}

/** The function `rowMinima(x, bias, scale, least, second, at, quads, k)` over the imported memory. */
export function rowMinimaFunc(): Func {
  const { i32: i, f64: d, v128: v } = type;
  return {
    name: "rowMinima",
    params: [i, i, d, i, i, i, i, i],
    locals: [i, i, i, i, ...rowsOfStep.map(() => i), v, v, v, v, v, v, ...groups.flatMap(() => [v, v, v, v, v, v])],
    body: kernel(),
  };
}

/** The module's bytes: the one function `rowMinima`. */
export function rowMinimaModule(): Uint8Array {
  return assemble([rowMinimaFunc()]);
}

/** The operands (row-minima.ts's arguments, restated here so that neither file imports the other). */
export interface RowMinimaOperands {
  readonly x: Float64Array;
  readonly rows: number;
  readonly cols: number;
  readonly bias: Float64Array;
  readonly scale: number;
}

/** Where the results go: arrays of at least `rows` elements. */
export interface RowMinimaResults {
  readonly least: Float64Array;
  readonly second: Float64Array;
  readonly at: Int32Array;
}

type Kernel = (x: number, bias: number, scale: number, least: number, second: number, at: number, quads: number, k: number) => void;

/** Operands and results of up to 64 MB; larger ones go to the JavaScript kernel. */
const workspace = lazyWorkspace(rowMinimaModule, 64 * 1024 * 1024);

/**
 * The row minima into `least`, `second` and `at` by the SIMD kernel; false (nothing written) where WebAssembly
 * SIMD is unavailable or the operands are too large. The rows are padded with rows of
 * zeros to a multiple of QUAD, whose results are not copied out.
 */
export function simdRowMinima({ x, rows, cols, bias, scale }: RowMinimaOperands, out: RowMinimaResults): boolean {
  const s = workspace();
  if (s === null || cols === 0) return false;
  const padded = Math.ceil(rows / QUAD) * QUAD;
  const heap = s.heap(padded * cols + minimaRoom(padded, cols));
  if (heap === null) return false;
  heap.set(x.subarray(0, rows * cols), 0);
  heap.fill(0, rows * cols, padded * cols);
  runRowMinima(s, heap, { xAt: 0, rows, padded, cols, bias, scale }, out);
  return true;
}

/** Doubles past x that runRowMinima takes: the bias and the results of `padded` rows. */
export const minimaRoom = (padded: number, cols: number): number => cols + 2 * padded + padded / 2;

/** Where x lies in a workspace (xAt, in doubles; `padded` rows, a multiple of QUAD, those past `rows` ignored) and the map's bias and scale. */
export interface PlacedRows {
  readonly xAt: number;
  readonly rows: number;
  readonly padded: number;
  readonly cols: number;
  readonly bias: Float64Array;
  readonly scale: number;
}

/**
 * The row minima of x already in the memory of `s` (a module exporting rowMinima; `heap`
 * its view, with room for minimaRoom doubles past x), written after x and copied out.
 */
export function runRowMinima(s: Workspace, heap: Float64Array, placed: PlacedRows, { least, second, at }: RowMinimaResults): void {
  const { xAt, rows, padded, cols, bias, scale } = placed;
  const bAt = xAt + padded * cols;
  const lAt = bAt + cols;
  const sAt = lAt + padded;
  const aAt = sAt + padded;
  heap.set(bias.subarray(0, cols), bAt);
  (s.exports.rowMinima as Kernel)(xAt * 8, bAt * 8, scale, lAt * 8, sAt * 8, aAt * 8, padded / QUAD, cols);
  least.set(heap.subarray(lAt, lAt + rows));
  second.set(heap.subarray(sAt, sAt + rows));
  at.set(new Int32Array(heap.buffer, aAt * 8, rows));
}
