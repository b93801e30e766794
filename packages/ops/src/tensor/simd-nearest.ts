/**
 * @file Nearest centroids of a fixed set of points (k-means' assignment step, GradBench's
 * kmeans), as one WebAssembly SIMD kernel over points kept in the module's memory.
 *
 * It ranks the centroids of each point in single precision (f32x4: four points to a
 * vector, twice the lanes of f64x2): v_j = ‖c_j‖² − 2 p·c_j, whose least is the nearest
 * centroid up to rounding, as productRowMinima's, at half the cost of its n·k·d
 * multiply-adds. A point is settled where the second least v_j lies beyond the least by
 * more than the bound on both roundings (`cut`): then its nearest centroid by the
 * distances computed directly in double precision, the first on a tie (kmeans.hpp's
 * loop), is where the least is. The others (near-ties, a point equidistant from two
 * centroids) are listed for the caller to decide in double precision.
 *
 * For the settled points it then computes that distance, Σ_l (p_l − c_l)² from 0 in order
 * in double precision, two points to a vector (each lane one point's additions in
 * kmeans.hpp's order, so the same bits), while the step's points are still in the cache:
 * k-means' cost without a second pass over the points.
 *
 * The points are copied into the module's memory once per point set (`PointSet`), not on
 * every call: at GradBench's n = 10⁴ points of 16 that copy alone took a fifth of the time.
 *
 * The bound. With u = 2⁻²⁴ (single precision's unit roundoff), inputs finite and at most
 * 2⁴⁰ in magnitude (no overflow; underflow's absolute errors are below 2⁻¹⁰⁰), the computed
 * v_j differs from ‖c_j‖² − 2 p·c_j = ‖p − c_j‖² − ‖p‖² by at most (d + 6)·u·(‖p‖² + ‖c_j‖²)
 * (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., §3.1: the rounding of
 * p and c to floats, d products and additions, the bias's rounding and the last addition);
 * a directly computed distance differs from the exact one by at most (d + 3)·2⁻⁵³ times it.
 * If the first nearest centroid by direct distances were not where the least v is, its v
 * would lie within twice the first bound plus twice the second (each ≤ 2(‖p‖² + ‖c‖²)) of
 * the least: `cut` is 8 (d + 6)·u·(‖p‖² + max‖c‖²) + 2⁻⁹⁰, a factor two to spare over the
 * sum of those bounds with ‖p‖² and max‖c‖² overestimated by up to twice (‖p‖² is the
 * kernel's single-precision sum). The kernel evaluates the cut in single precision: its
 * roundings, a few u of ‖p‖² + max‖c‖², are far inside that spare factor.
 */
import { assemble, f32, f32x4, f64, f64x2, forLoop, i32, i32x4, i32x4Shuffle, ifThen, lazyWorkspace, local, type, v128, type Code, type Func } from "./wasm.js";

/** Points per step: four vectors of four floats, eight of two doubles. */
const STEP = 16;
/** Largest magnitude of a coordinate the filter takes: squares and their sums stay far from single precision's overflow. */
const MAX_COORDINATE = 2 ** 40;

const get = local.get;
const bump = (p: number, bytes: number | Code): Code => local.set(p, i32.add(get(p), typeof bytes === "number" ? i32.const(bytes) : bytes));
const vectors = [0, 1, 2, 3];
const pairsOfStep = Array.from({ length: STEP / 2 }, (_, v) => v);
const rowsOfStep = Array.from({ length: STEP }, (_, r) => r);

// parameters: byte addresses, counts, whether to compute the distances, and the cut's terms
const [P, W, BIAS, C, S, AT_OUT, D_OUT, MASKS, FLAGS, STEPS, D, PAIRS, DIST, CN_MAX, WIDTH, TINY] = Array.from({ length: 16 }, (_, i) => i);
// i32 locals
const [I, PR, PS, PSE, PW, Q, DB, PSTEP, DL, DB2] = Array.from({ length: 10 }, (_, i) => 16 + i);
const RA = (r: number) => 26 + r; // row r of the step's points
const CA = (r: number) => 26 + STEP + r; // the row of its centroid
const I32_LOCALS = 10 + 2 * STEP;
// v128 locals
const V = 16 + I32_LOCALS;
const [W0, W1, PV, F, LT, JV, ONE, INF, CNM, WID, TIN, U] = Array.from({ length: 12 }, (_, i) => V + i);
const ACC = (v: number, c: number) => V + 12 + 2 * v + c;
const [LEAST, SECOND, AT, NORM] = [0, 1, 2, 3].map((k) => (v: number) => V + 20 + 4 * k + v);
const E = V + 36;
const DACC = (v: number) => V + 37 + v;
const X = (q: number) => V + 37 + STEP / 2 + q; // four rows' pairs of coordinates as floats, then (X4, X5) two of them interleaved
const V128_LOCALS = 43 + STEP / 2;

/**
 * The step's 16 points rounded to floats and transposed into the scratch (d vectors of
 * four lanes for each group of four points: point r's coordinate l at S + 64l + 4r), and
 * their squared norms in single precision. Two coordinates of four points at a time: each
 * row's pair rounded (f32x4.demote), the four pairs interleaved into coordinate l's vector
 * and l + 1's by shuffles; an odd d's last coordinate element by element.
 */
function convert(): Code[] {
  const group = (g: number): Code[] => [
    ...vectors.map((q) => local.set(X(q), f32x4.demoteF64x2Zero(v128.load(i32.add(get(RA(4 * g + q)), get(DL)))))),
    // (p₀ₗ, p₁ₗ, p₀ₗ₊₁, p₁ₗ₊₁) and the same of rows 2 and 3
    local.set(X(4), i32x4Shuffle([0, 4, 1, 5])(get(X(0)), get(X(1)))),
    local.set(X(5), i32x4Shuffle([0, 4, 1, 5])(get(X(2)), get(X(3)))),
    v128.store(get(PS), i32x4Shuffle([0, 1, 4, 5])(get(X(4)), get(X(5))), 16 * g),
    v128.store(get(PS), i32x4Shuffle([2, 3, 6, 7])(get(X(4)), get(X(5))), 64 + 16 * g),
  ];
  return [
    local.set(PSTEP, get(PR)),
    local.set(RA(0), get(PR)),
    ...rowsOfStep.slice(1).map((r) => local.set(RA(r), i32.add(get(RA(r - 1)), get(DB)))),
    local.set(PS, get(S)),
    local.set(DL, i32.const(0)),
    forLoop(DL, get(DB2), 16, [...vectors.flatMap(group), bump(PS, 128)]),
    ifThen(
      i32.ltU(get(DL), get(DB)),
      rowsOfStep.map((r) => f32.store(get(PS), f32.demoteF64(f64.load(i32.add(get(RA(r)), get(DL)))), 4 * r)),
    ),
    local.set(PR, i32.add(get(RA(STEP - 1)), get(DB))),
    ...vectors.map((v) => local.set(NORM(v), v128.zero())),
    local.set(PS, get(S)),
    forLoop(
      PS,
      get(PSE),
      64,
      vectors.map((v) => local.set(NORM(v), f32x4.add(get(NORM(v)), f32x4.mul(v128.load(get(PS), 16 * v), v128.load(get(PS), 16 * v))))),
    ),
  ];
}

/**
 * For each pair of centroids, v_j = bias_j + Σ_l p_l·w_jl (from 0, in order) for the
 * step's points, folded into the least, the second least (min(second, max(least, v)): the
 * least of the others, a tie included) and where the least first is.
 */
function rank(): Code[] {
  const products: Code[] = [
    local.set(W0, v128.load32Splat(get(PW))),
    local.set(W1, v128.load32Splat(get(PW), 4)),
    ...vectors.flatMap((v) => [
      local.set(PV, v128.load(get(PS), 16 * v)),
      local.set(ACC(v, 0), f32x4.add(get(ACC(v, 0)), f32x4.mul(get(PV), get(W0)))),
      local.set(ACC(v, 1), f32x4.add(get(ACC(v, 1)), f32x4.mul(get(PV), get(W1)))),
    ]),
    bump(PW, 8),
  ];
  const fold = (c: number): Code[] => [
    ...vectors.flatMap((v) => [
      local.set(F, f32x4.add(get(ACC(v, c)), get(c === 0 ? W0 : W1))),
      local.set(LT, f32x4.lt(get(F), get(LEAST(v)))),
      local.set(SECOND(v), f32x4.pmin(get(SECOND(v)), f32x4.pmax(get(LEAST(v)), get(F)))),
      local.set(LEAST(v), f32x4.pmin(get(LEAST(v)), get(F))),
      local.set(AT(v), v128.bitselect(get(JV), get(AT(v)), get(LT))),
    ]),
    local.set(JV, i32x4.add(get(JV), get(ONE))),
  ];
  const pair: Code[] = [
    ...vectors.flatMap((v) => [local.set(ACC(v, 0), v128.zero()), local.set(ACC(v, 1), v128.zero())]),
    local.set(PS, get(S)),
    forLoop(PS, get(PSE), 64, products),
    // the pair's biases, in the registers of its w
    local.set(W0, v128.load32Splat(get(BIAS), 0)),
    local.set(W1, v128.load32Splat(get(BIAS), 4)),
    ...fold(0),
    ...fold(1),
    bump(BIAS, 8),
  ];
  return [
    ...vectors.flatMap((v) => [local.set(LEAST(v), get(INF)), local.set(SECOND(v), get(INF)), local.set(AT(v), v128.zero())]),
    local.set(JV, v128.zero()),
    local.set(PW, get(W)),
    local.set(Q, i32.const(0)),
    forLoop(Q, get(PAIRS), 1, pair),
    // BIAS walked the biases pair by pair
    local.set(BIAS, i32.sub(get(BIAS), i32.mul(get(PAIRS), i32.const(8)))),
  ];
}

/** Each point's least and where it is; the points whose second least lies within the cut (unsettled), and whether the step has any. */
function settle(): Code[] {
  const unsettled = (v: number): Code =>
    f32x4.le(get(SECOND(v)), f32x4.add(get(LEAST(v)), f32x4.add(f32x4.mul(f32x4.add(get(NORM(v)), get(CNM)), get(WID)), get(TIN))));
  return [
    local.set(U, v128.zero()),
    ...vectors.flatMap((v) => [
      v128.store(get(AT_OUT), get(AT(v)), 16 * v),
      local.set(LT, unsettled(v)),
      v128.store(get(MASKS), get(LT), 16 * v),
      local.set(U, v128.or(get(U), get(LT))),
    ]),
    i32.store(get(FLAGS), v128.anyTrue(get(U))),
    bump(MASKS, 16 * vectors.length),
    bump(FLAGS, 4),
  ];
}

/**
 * Each point's squared distance to the centroid at its least, Σ_l (p_l − c_l)² from 0 in
 * order (kmeans.hpp's euclid_dist_2) in double precision: points 2v and 2v + 1 of the step
 * in the lanes of vector v.
 */
function distances(): Code[] {
  const pairOf = (addr: (r: number) => number, v: number): Code =>
    v128.load64Lane(1)(i32.add(get(addr(2 * v + 1)), get(DL)), v128.load64Splat(i32.add(get(addr(2 * v)), get(DL))));
  const coordinate: Code[] = pairsOfStep.flatMap((v) => [
    local.set(E, f64x2.sub(pairOf(RA, v), pairOf(CA, v))),
    local.set(DACC(v), f64x2.add(get(DACC(v)), f64x2.mul(get(E), get(E)))),
  ]);
  return [
    local.set(RA(0), get(PSTEP)),
    ...rowsOfStep.slice(1).map((r) => local.set(RA(r), i32.add(get(RA(r - 1)), get(DB)))),
    ...rowsOfStep.map((r) => local.set(CA(r), i32.add(get(C), i32.mul(i32.load(get(AT_OUT), 4 * r), get(DB))))),
    ...pairsOfStep.map((v) => local.set(DACC(v), v128.zero())),
    local.set(DL, i32.const(0)),
    forLoop(DL, get(DB), 8, coordinate),
    ...pairsOfStep.map((v) => v128.store(get(D_OUT), get(DACC(v)), 16 * v)),
    bump(D_OUT, 8 * STEP),
  ];
}

/**
 * nearest(points, w, bias, centroids, scratch, at, dist, masks, flags, steps, d, pairs,
 * withDistances, cnMax, width, tiny), steps of 16 points (rows of d doubles): w holds −2c_j
 * rounded to floats, for each pair of centroids d × 2 floats coordinate by coordinate, bias
 * ‖c_j‖² rounded; `centroids` the centroids as doubles (k × d). Writes per point where the
 * least v_j is (i32), its direct distance (when withDistances ≠ 0), whether the second
 * least lies within least + width·(‖p‖² + cnMax) + tiny (all ones, i32), and per step
 * whether any point does.
 */
function kernel(): Code[] {
  const splat = (x: number): Code => f32x4.splat(f32.demoteF64(get(x)));
  return [
    local.set(DB, i32.mul(get(D), i32.const(8))),
    // the bytes of a row's whole pairs of coordinates
    local.set(DB2, i32.mul(i32.and(get(D), i32.const(-2)), i32.const(8))),
    local.set(PSE, i32.add(get(S), i32.mul(get(D), i32.const(64)))),
    local.set(ONE, v128.const(0x0000000100000001n, 0x0000000100000001n)),
    local.set(INF, v128.const(0x7f8000007f800000n, 0x7f8000007f800000n)),
    local.set(CNM, splat(CN_MAX)),
    local.set(WID, splat(WIDTH)),
    local.set(TIN, splat(TINY)),
    local.set(PR, get(P)),
    local.set(I, i32.const(0)),
    forLoop(I, get(STEPS), 1, [...convert(), ...rank(), ...settle(), ifThen(get(DIST), distances()), bump(AT_OUT, 4 * STEP)]),
  ];
}

function nearestFunc(): Func {
  const { i32: i, f64: d, v128: v } = type;
  return {
    name: "nearest",
    params: [i, i, i, i, i, i, i, i, i, i, i, i, i, d, d, d],
    locals: [...Array.from({ length: I32_LOCALS }, () => i), ...Array.from({ length: V128_LOCALS }, () => v)],
    body: kernel(),
  };
}

/** The module's bytes: the one function `nearest`. */
export function nearestModule(): Uint8Array {
  return assemble([nearestFunc()]);
}

/** Points and scratch of up to 256 MB; larger sets go to the caller's double-precision path. */
const workspace = lazyWorkspace(nearestModule, 256 * 1024 * 1024);

/**
 * n points of d coordinates (row-major), copied: the kernels keep them in their memory from
 * one call to the next, and the copy is what they hold, whatever becomes of the array given.
 */
export class PointSet {
  readonly data: Float64Array;
  /** Whether the filter takes these points: every coordinate finite and at most MAX_COORDINATE in magnitude. */
  readonly filterable: boolean;
  constructor(
    points: Float64Array,
    readonly n: number,
    readonly d: number,
  ) {
    this.data = points.slice(0, n * d);
    this.filterable = this.data.every((x) => Math.abs(x) <= MAX_COORDINATE);
  }
}

/** The point set whose points the workspace's memory holds at 0, and that memory. */
let resident: { set: PointSet; buffer: ArrayBufferLike } | null = null;

const roundUp = (x: number, to: number) => Math.ceil(x / to) * to;

/** Where the operands lie (in doubles), past the points at 0. */
function layout(n: number, d: number, k: number) {
  const n16 = roundUp(Math.max(n, 1), STEP);
  const steps = n16 / STEP;
  const pairs = Math.ceil(k / 2);
  const cAt = n16 * d;
  const wAt = cAt + k * d;
  const bAt = wAt + pairs * d;
  const sAt = bAt + pairs;
  const atAt = sAt + 8 * d;
  const dAt = atAt + n16 / 2;
  const masksAt = dAt + n16;
  const flagsAt = masksAt + n16 / 2;
  return { n16, steps, pairs, cAt, wAt, bAt, sAt, atAt, dAt, masksAt, flagsAt, end: flagsAt + steps / 2 + 1 };
}

/** The workspace's memory with the set's points at 0 (copied in where they are not yet), or null. */
function place(set: PointSet, k: number) {
  const s = workspace();
  if (s === null) return null;
  const at = layout(set.n, set.d, k);
  const heap = s.heap(at.end);
  if (heap === null) return null;
  if (resident === null || resident.set !== set || resident.buffer !== heap.buffer) {
    heap.set(set.data, 0);
    // padding points at the origin: their results are never read
    heap.fill(0, set.n * set.d, at.cAt);
    resident = { set, buffer: heap.buffer };
  }
  return { s, heap, at };
}

type NearestFn = (...args: number[]) => void;

/**
 * The nearest of the k centroids (row-major, k × d) to each point of `set`, into `at`, and
 * when `dist` is given its squared distance computed as kmeans.hpp does, where the
 * single-precision filter settles it (see the file's comment). Returns the points it
 * leaves to the caller (their at and dist are then meaningless), or null where the filter
 * does not apply (no WebAssembly SIMD, too large, or coordinates it does not take).
 */
export function nearestCentroids(set: PointSet, centroids: Float64Array, k: number, at: Int32Array, dist?: Float64Array): number[] | null {
  const { n, d } = set;
  if (!set.filterable || k === 0 || d === 0) return null;
  const c = centroids.subarray(0, k * d);
  if (!c.every((x) => Math.abs(x) <= MAX_COORDINATE)) return null;
  const placed = place(set, k);
  if (placed === null) return null;
  const { s, heap, at: l } = placed;
  const floats = new Float32Array(heap.buffer);
  // w: −2c_j rounded to floats, a pair of centroids side by side (an odd k's last paired with nothing: w 0, bias +∞)
  const w = l.wAt * 2;
  const b = l.bAt * 2;
  let cnMax = 0;
  for (let j = 0; j < 2 * l.pairs; j++) {
    const q = w + (j >> 1) * 2 * d + (j & 1);
    if (j >= k) {
      for (let p = 0; p < d; p++) floats[q + 2 * p] = 0;
      floats[b + j] = Infinity;
      continue;
    }
    let cn = 0;
    for (let p = 0; p < d; p++) {
      const x = c[j * d + p];
      cn += x * x;
      floats[q + 2 * p] = -2 * x;
    }
    floats[b + j] = cn;
    cnMax = Math.max(cnMax, cn);
  }
  heap.set(c, l.cAt);
  const width = (d + 6) * 2 ** -21;
  const B = 8;
  (s.exports.nearest as NearestFn)(
    0,
    l.wAt * B,
    l.bAt * B,
    l.cAt * B,
    l.sAt * B,
    l.atAt * B,
    l.dAt * B,
    l.masksAt * B,
    l.flagsAt * B,
    l.steps,
    d,
    l.pairs,
    dist === undefined ? 0 : 1,
    cnMax,
    width,
    2 ** -90,
  );
  const ints = new Int32Array(heap.buffer);
  at.set(ints.subarray(l.atAt * 2, l.atAt * 2 + n));
  if (dist !== undefined) dist.set(heap.subarray(l.dAt, l.dAt + n));
  const unsettled: number[] = [];
  for (let step = 0; step < l.steps; step++) {
    if (ints[l.flagsAt * 2 + step] === 0) continue;
    for (let i = step * STEP; i < Math.min(n, (step + 1) * STEP); i++) if (ints[l.masksAt * 2 + i] !== 0) unsettled.push(i);
  }
  return unsettled;
}
