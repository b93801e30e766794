/**
 * @file The matrix product as a WebAssembly SIMD kernel (f64x2), for `gemm` (gemm.ts).
 *
 * Same arithmetic as the JavaScript kernel, element for element: each result is the
 * sum over p in order, from zero (see gemm.ts). The kernel computes ROWS×4 blocks of
 * the result, two columns to a vector, so each lane does one element's additions in
 * that order; wasm neither fuses a multiply-add nor reorders, so the two agree to the bit.
 *
 * A row of blocks stops where only zeros of A are left (blockDepths: a triangular A costs
 * half), which changes no bit where B is finite.
 *
 * Operands are copied into the module's memory, padded with zeros to whole blocks
 * (padding adds whole rows of A and columns of B that no kept element reads), and the
 * result copied out: O(nk + km + nm) against the product's O(nkm).
 */
import { assemble, f64, f64x2, forLoop, i32, ifThen, lazyWorkspace, local, type, v128, type Code, type Func, type Workspace } from "./wasm.js";

/** Rows of a result block: 2·ROWS vector accumulators, two vectors of B and one of A stay in 16 registers. */
export const ROWS = 4;
/** Columns of a result block: two f64x2 vectors. */
export const COLS = 4;

// the kernel's parameters (byte addresses; sizes in elements, padded but CM) and locals
const [A, B, C, N, K, M, CM, DEPTHS, PW, STEPS] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9];
const [I, J, KB, MB, PA, PB, PEND, PC, AV, B0, B1, JJ, CB, PD, DB, J0, JEND, PS, PSB, RUN, BITS, PA0, PSEND] = [
  10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32,
];
const ACC = 33; // ACC + 2r + h: row r, columns 2h and 2h + 1 of the block
const acc = (r: number, h: number) => ACC + 2 * r + h;
const OFF = ACC + 2 * ROWS; // OFF + r − 1: r·KB, the byte offset of row r of a block of A
const rowOffset = (r: number) => OFF + r - 1;

const get = local.get;
const add = (x: Code, y: Code) => i32.add(x, y);
const mul = (x: Code, y: Code) => i32.mul(x, y);
const rows = Array.from({ length: ROWS }, (_, r) => r);

/**
 * c[n×cm] = a[n×k] · b[k×m] (its first cm ≤ m columns), n a multiple of ROWS and m of
 * COLS, row-major doubles. For each block: the accumulators start at zero, and for
 * p = 0 … k−1 add a[i+r][p] · b[p][j…j+3]; then the block is stored, whole, at c's row
 * stride cm. A block past column cm spills its padding columns onto the start of the
 * next row; the blocks of a row go from the last to the first, so the spill lands where
 * a later block (this row's next, or the next row's) writes its own values, and the
 * result needs no copy that drops the padding (c needs room for COLS elements past its n·cm).
 *
 * The columns go in panels of pw (a multiple of COLS): every row of blocks takes one panel
 * before any takes the next, so the panel's k × pw elements of b stay in the cache while
 * all of a passes over them (Goto and van de Geijn, "Anatomy of high-performance matrix
 * multiplication", 2008: b's panel in L2). A row of blocks at a time read all of b once per
 * row of blocks, from memory once b outgrew the cache. Panels go from the last columns to
 * the first as the blocks do, so the padded block's spill still lands before column 0's
 * block is written.
 */
function kernel(skipping: boolean): Code[] {
  // A's row r of the block is PA + r·KB: a register offset (an immediate must be constant)
  const aRow = (r: number): Code => (r === 0 ? get(PA) : add(get(PA), get(rowOffset(r))));
  const multiplyAdd: Code[] = [
    local.set(B0, v128.load(get(PB))),
    local.set(B1, v128.load(get(PB), 16)),
    ...rows.flatMap((r) => [
      local.set(AV, v128.load64Splat(aRow(r))),
      local.set(acc(r, 0), f64x2.add(get(acc(r, 0)), f64x2.mul(get(AV), get(B0)))),
      local.set(acc(r, 1), f64x2.add(get(acc(r, 1)), f64x2.mul(get(AV), get(B1)))),
    ]),
  ];
  // some accumulator below the floor in magnitude (NaN is not below it); the floor a constant, not a register the whole loop holds
  const floor = f64x2.splat(f64.const(SKIP_FLOOR));
  const anySmall = v128.anyTrue(rows.flatMap((r) => [0, 1].map((h) => f64x2.lt(f64x2.abs(get(acc(r, h))), floor))).reduce((x, y) => v128.or(x, y)));
  const next = local.set(PB, add(get(PB), get(MB)));
  // whether a step is TINY: its four elements of a are zeros and subnormals, not all ±0. On their bits ORed together:
  // no exponent bit set, some bit of the magnitude set (integer operations: a float maximum costs several branches)
  const ored = rows.map((r) => v128.load64Splat(aRow(r))).reduce((x, y) => v128.or(x, y));
  const tinyOf = [
    local.set(BITS, ored),
    i32.and(v128.anyTrue(v128.and(get(BITS), v128.const(MAGNITUDE, MAGNITUDE))), i32.eqz(v128.anyTrue(v128.and(get(BITS), v128.const(EXPONENT, EXPONENT))))),
  ].flat();
  // a TINY step is computed only where an accumulator is small (see skipsSteps)
  const tinyStep: Code[] = [ifThen(anySmall, multiplyAdd), next];
  // the first column block of a row of blocks lists its TINY steps (at PSB: the list's bytes, then p's byte offset
  // in a row of A for each, and the depth's as the last) for the others, and takes each step as they will
  const listing: Code[] = [
    local.set(PS, add(get(PSB), i32.const(4))),
    local.set(PA0, get(PA)),
    forLoop(PA, get(PEND), 8, [
      local.set(RUN, tinyOf),
      ifThen(get(RUN), [i32.store(get(PS), i32.sub(get(PA), get(PA0))), local.set(PS, add(get(PS), i32.const(4))), ...tinyStep]),
      ifThen(i32.eqz(get(RUN)), [...multiplyAdd, next]),
    ]),
    i32.store(get(PS), i32.sub(get(PEND), get(PA0))),
    i32.store(get(PSB), i32.sub(get(PS), get(PSB))),
  ];
  // the others run the steps between two TINY ones as the plain kernel does, without a branch on each: branches
  // on every step (the accumulators live across them) took half again the plain kernel's time
  const listed: Code[] = [
    local.set(PA0, get(PA)),
    local.set(PS, add(get(PSB), i32.const(4))),
    local.set(PSEND, add(get(PSB), i32.load(get(PSB)))),
    forLoop(PS, add(get(PSEND), i32.const(1)), 4, [
      local.set(RUN, add(get(PA0), i32.load(get(PS)))),
      forLoop(PA, get(RUN), 8, [...multiplyAdd, next]),
      ifThen(i32.ltU(get(PA), get(PEND)), [...tinyStep, local.set(PA, add(get(PA), i32.const(8)))]),
    ]),
  ];
  const steps: Code[] = skipping ? [ifThen(i32.eqz(get(J)), listing), ifThen(get(J), listed)] : [forLoop(PA, get(PEND), 8, [...multiplyAdd, next])];
  const block: Code[] = [
    ...rows.flatMap((r) => [local.set(acc(r, 0), v128.zero()), local.set(acc(r, 1), v128.zero())]),
    local.set(PA, add(get(A), mul(get(I), get(KB)))),
    local.set(PEND, add(get(PA), get(DB))),
    local.set(PB, add(get(B), mul(get(JJ), i32.const(8)))),
    ...steps,
    local.set(PC, add(get(C), mul(add(mul(get(I), get(CM)), get(JJ)), i32.const(8)))),
    ...rows.flatMap((r) => [
      v128.store(get(PC), get(acc(r, 0))),
      v128.store(get(PC), get(acc(r, 1)), 16),
      local.set(PC, add(get(PC), get(CB))),
    ]),
  ];
  return [
    local.set(KB, mul(get(K), i32.const(8))),
    local.set(MB, mul(get(M), i32.const(8))),
    local.set(CB, mul(get(CM), i32.const(8))),
    ...rows.slice(1).map((r) => local.set(rowOffset(r), mul(get(KB), i32.const(r)))),
    local.set(J0, i32.const(0)),
    // J counts columns from the last: JJ = m − COLS − J, the column blocks from the last to the first
    forLoop(J0, get(M), 0 /* the body moves J0 to the next panel */, [
      local.set(JEND, add(get(J0), get(PW))),
      ifThen(i32.ltU(get(M), get(JEND)), [local.set(JEND, get(M))]),
      local.set(I, i32.const(0)),
      local.set(PD, get(DEPTHS)),
      local.set(PSB, get(STEPS)),
      forLoop(I, get(N), ROWS, [
        // DB: this row of blocks' depth (terms past it are zero), in bytes of a row of A
        local.set(DB, mul(i32.load(get(PD)), i32.const(8))),
        local.set(PD, add(get(PD), i32.const(4))),
        local.set(J, get(J0)),
        forLoop(J, get(JEND), COLS, [local.set(JJ, i32.sub(i32.sub(get(M), i32.const(COLS)), get(J))), ...block]),
        // PSB: the next row of blocks' list of TINY steps, k + 2 int32 after this one's
        local.set(PSB, add(get(PSB), mul(add(get(K), i32.const(2)), i32.const(4)))),
      ]),
      local.set(J0, get(JEND)),
    ]),
  ];
}

/**
 * The functions `gemm(a, b, c, n, k, m, cm, depths, pw, steps)` and `gemmSkipping(…)` (the
 * same, steps of zeros and subnormals skipped: skipsSteps; `steps` has room for k + 2 int32
 * per row of blocks) over the imported memory.
 */
export function gemmFuncs(): Func[] {
  const [i, v] = [type.i32, type.v128];
  const locals = [i, i, i, i, i, i, i, i, v, v, v, i, i, i, i, i, i, i, i, i, v, i, i, ...rows.flatMap(() => [v, v]), ...rows.slice(1).map(() => i)];
  const params = [i, i, i, i, i, i, i, i, i, i];
  return [
    { name: "gemm", params, locals, body: kernel(false) },
    { name: "gemmSkipping", params, locals, body: kernel(true) },
  ];
}

/** The module's bytes: gemmFuncs' functions. */
export function gemmModule(): Uint8Array {
  return assemble(gemmFuncs());
}

type GemmFn = (a: number, b: number, c: number, n: number, k: number, m: number, cm: number, depths: number, pw: number, steps: number) => void;

/** Bytes of b's panel (k × pw doubles): a quarter of a core's L2 here, the rest for a's rows, c's blocks and the rest of the program. */
const PANEL_BYTES = 512 * 1024;

/** Columns per panel for b of k rows and m4 (padded) columns: whole blocks, at least one. */
export const panelWidth = (k: number, m4: number): number => Math.min(m4, Math.max(COLS, Math.floor(PANEL_BYTES / 8 / Math.max(k, 1) / COLS) * COLS));

/** Operands and result of up to 256 MB; larger products go to the JavaScript kernel. */
const workspace = lazyWorkspace(gemmModule, 256 * 1024 * 1024);

const roundUp = (x: number, to: number) => Math.ceil(x / to) * to;

/** Where a product's operands and result lie in a workspace (in doubles) and its padded sizes; `end` is past them all. */
export interface ProductPlace {
  readonly n4: number;
  readonly m4: number;
  readonly bAt: number;
  readonly cAt: number;
  readonly dAt: number;
  readonly sAt: number;
  readonly end: number;
}

/**
 * A's rows padded to whole blocks at 0, B's columns padded after it, then the result (cm = m
 * columns, and the spill), then the depths (an int32 per row of blocks) and the lists of
 * TINY steps (k + 2 int32 per row of blocks: gemmSkipping).
 */
export function productPlace(n: number, k: number, m: number): ProductPlace {
  const n4 = roundUp(n, ROWS);
  const m4 = roundUp(m, COLS);
  const bAt = n4 * k;
  const cAt = bAt + k * m4;
  const dAt = cAt + n4 * m + COLS;
  const sAt = dAt + Math.ceil(n4 / ROWS / 2);
  return { n4, m4, bAt, cAt, dAt, sAt, end: sAt + Math.ceil(((n4 / ROWS) * (k + 2)) / 2) };
}

/** a[ao…] (n×k) and b[bo…] (k×m), row-major. */
export interface ProductOperands {
  readonly a: Float64Array;
  readonly ao: number;
  readonly b: Float64Array;
  readonly bo: number;
  readonly n: number;
  readonly k: number;
  readonly m: number;
}

/**
 * a (n×k) · b (k×m) into the workspace's memory at `at` (productPlace's; `heap` its view,
 * with room for at.end doubles): the operands copied in and padded, the kernel run. The
 * result's n4 rows (those past n zeros) of m columns are at at.cAt.
 */
export function runProduct(s: Workspace, heap: Float64Array, at: ProductPlace, operands: ProductOperands): void {
  const { n4, m4, bAt, cAt, dAt, sAt } = at;
  const { a, ao, b, bo, n, k, m } = operands;
  copyOperands(heap, at, operands);
  blockDepths(new Int32Array(heap.buffer, dAt * 8, n4 / ROWS), a, ao, b, bo, n, k, m);
  const skipping = skipsSteps(operands);
  (s.exports[skipping ? "gemmSkipping" : "gemm"] as GemmFn)(0, bAt * 8, cAt * 8, n4, k, m4, m, dAt * 8, panelWidth(k, m4), sAt * 8);
}

/** a and b into the workspace at `at`, padded with zeros to whole blocks. */
function copyOperands(heap: Float64Array, { m4, bAt }: ProductPlace, { a, ao, b, bo, n, k, m }: ProductOperands): void {
  heap.set(a.subarray(ao, ao + n * k), 0);
  heap.fill(0, n * k, bAt); // padding rows of A
  if (m4 === m) heap.set(b.subarray(bo, bo + k * m), bAt);
  else {
    // row by row with padding columns of zeros; loops, as a subarray per short row costs more
    for (let p = 0, from = bo, to = bAt; p < k; p++, from += m, to += m4) {
      for (let j = 0; j < m; j++) heap[to + j] = b[from + j];
      for (let j = m; j < m4; j++) heap[to + j] = 0;
    }
  }
}

/**
 * r[ro…] = a[ao…] (n×k) · b[bo…] (k×m) by the SIMD kernel; false (nothing written) when
 * WebAssembly SIMD is unavailable. r's block is overwritten, not added to.
 */
export function simdGemm(a: Float64Array, ao: number, b: Float64Array, bo: number, r: Float64Array, ro: number, n: number, k: number, m: number): boolean {
  const s = workspace();
  if (s === null) return false;
  const at = productPlace(n, k, m);
  const heap = s.heap(at.end);
  if (heap === null) return false;
  runProduct(s, heap, at, { a, ao, b, bo, n, k, m });
  r.set(heap.subarray(at.cAt, at.cAt + n * m), ro);
  return true;
}

/**
 * Each row of blocks' depth: how many terms p its elements sum before only zeros of A are
 * left (1 + the last p where one of its rows of A is not zero), written into `depths`. A
 * term a[i][p]·b[p][j] with a zero a[i][p] and a finite b[p][j] is ±0, and adding ±0
 * changes no sum: the sum is never −0 (it starts at +0, and +0 + −0 = +0; x + (−x) = +0),
 * so the bits are those of the whole sum (gemm.ts's definition). A lower-triangular A (a
 * Gaussian mixture's Cholesky factors times points, GradBench's gmm) then costs half the
 * multiply-adds. Where B holds an infinity or a NaN (0·∞ is NaN), every block takes every
 * term. A dense row ends the scan of its row at its last element.
 */
export function blockDepths(depths: Int32Array, a: Float64Array, ao: number, b: Float64Array, bo: number, n: number, k: number, m: number): void {
  let shallow = false;
  for (let blk = 0; blk < depths.length; blk++) {
    let depth = 0;
    for (let i = blk * ROWS; i < Math.min(n, (blk + 1) * ROWS) && depth < k; i++) {
      let p = k;
      const row = ao + i * k;
      while (p > depth && a[row + p - 1] === 0) p--;
      depth = Math.max(depth, p);
    }
    depths[blk] = depth;
    if (depth < k) shallow = true;
  }
  if (!shallow) return;
  // x − x is NaN for ±∞ and NaN, 0 for every finite x
  for (let q = bo; q < bo + k * m; q++) {
    if (b[q] - b[q] !== 0) {
      depths.fill(k);
      return;
    }
  }
}

/** Below 2⁻¹⁰²², a double is zero or subnormal: its exponent bits are zero. */
const SMALLEST_NORMAL = 2 ** -1022;
/** A double's exponent bits, and its magnitude's (all but the sign). */
const EXPONENT = 0x7ff0_0000_0000_0000n;
const MAGNITUDE = 0x7fff_ffff_ffff_ffffn;
/** b's elements at most this in magnitude, a subnormal times one of them is below 2⁻⁹⁵⁸: under half an ulp of SKIP_FLOOR. */
const B_BOUND = 2 ** 64;
/** An accumulator at least this in magnitude is unchanged by adding a subnormal times an element of b within B_BOUND. */
const SKIP_FLOOR = 2 ** -900;

/**
 * Whether gemmSkipping runs the product: a sample of a holds a zero or a subnormal, and b is
 * finite and within B_BOUND. That kernel skips a row of blocks' TINY steps p (its four
 * elements of a's column p all zero or subnormal, not all ±0) while every accumulator of the
 * block is at least SKIP_FLOOR in magnitude (or NaN, which stays NaN): each term is then
 * below 2⁻⁹⁵⁸, under half an ulp of the sum it would be added to, which it leaves as it is
 * (round to nearest). The same bits as every term added.
 *
 * Why: a product whose result is subnormal takes a microcode assist, ~30 ns here against
 * a fraction of a nanosecond (Intel's optimization manual, "floating-point denormals").
 * Reverse sweeps through a softmax carry many: GradBench gmm's jacobian at d = 64, k = 50
 * has 3 % subnormal elements in Q x's cotangent, whose product with the points took 133 ms
 * against 25 ms for the same product of normal numbers.
 */
export function skipsSteps({ a, ao, b, bo, n, k, m }: ProductOperands): boolean {
  if (!mayHaveSmall(a, ao, n * k)) return false;
  for (let q = bo; q < bo + k * m; q++) if (!(Math.abs(b[q]) <= B_BOUND)) return false;
  return true;
}

/** Elements of a between the ones mayHaveSmall looks at: a prime, so that no row length aligns with it. */
const SAMPLE_EVERY = 509;
/** Up to this many elements mayHaveSmall looks at all of a: where a sample would be a handful. */
const SCAN_BELOW = 4096;

/**
 * Whether a sample of a's elements holds a zero or a subnormal: where none does, the plain
 * kernel runs (it lists no steps, and nothing is read of a beyond the sample). Only a choice
 * of kernel: both give the same bits.
 */
function mayHaveSmall(a: Float64Array, ao: number, length: number): boolean {
  const every = length <= SCAN_BELOW ? 1 : SAMPLE_EVERY;
  for (let q = ao + ((length >> 1) % every); q < ao + length; q += every) if (Math.abs(a[q]) < SMALLEST_NORMAL) return true;
  return false;
}
