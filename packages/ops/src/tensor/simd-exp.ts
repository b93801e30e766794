/**
 * @file exp.ts's exp on two lanes at once (WebAssembly SIMD, f64x2), for long buffers: the
 * elementwise exp, and logsumexp's passes (a group's max, then Σ exp(x − max)).
 *
 * The same function to the bit: every step of exp.ts — Tang's reduction with the same
 * constants, the table lookup (per lane), the degree-4 polynomial and the final s + s·p —
 * is the same IEEE operation on each lane, in the same order, with no fused multiply-add
 * (wasm has none outside relaxed SIMD). Two steps are written differently with the same
 * result: k is read from the bits of x·N/ln 2 + 1.5·2⁵² (the integer kd, in its low bits),
 * and s = S_j · 2^⌊k/N⌋ is formed by adding ⌊k/N⌋ to S_j's exponent, which is that product
 * exactly (it is normal: |x| ≤ 700). Past |x| > 700 (or NaN) in either lane, the pair
 * takes exp.ts's `beyond` steps: s at 2^(m ∓ 128), scaled after by 2^(±128) (by 1 in a lane
 * within 700, which changes nothing), and ∞, 0 or x itself past overflow, underflow, NaN.
 *
 * logsumexp's sum adds the exponentials in four partial sums, element i into sum i mod 4,
 * as the JavaScript loop of reduce.ts does (its contract). The max is
 * reduce.ts's too: the first element of the greatest value (which of 0 and −0 comes first
 * matters to logSoftmax), NaN where there is one. Its pass also finds the least element,
 * which tells when no x − max can leave exp's range (x − max ≥ −700), and the sum then
 * runs without exp's check.
 *
 * Operands are copied into the workspace (a memcpy, which long buffers repay), after the
 * table (S_j and T_j side by side, one load a lane) and exp's constants, which each instance
 * holds from its data segment; logsumexp's passes read an operand placed there beforehand
 * (`residentOperand`) where it lies.
 */
import { C2, C3, C4, INV_LN2_N, LN2_N_HI, LN2_N_LO, SCALE, SHIFT, TAIL } from "../exp.js";
import {
  assemble, f64, f64x2, forLoop, i32, i32x4, i32x4Shuffle, i64x2, ifThen, lazyWorkspace, local, type, v128, type Code, type Func, type ValType, type Workspace,
} from "./wasm.js";

const get = local.get;

/** Byte addresses in the workspace: the table (S_j, T_j pairs), two result slots, exp's constants, then the operand. */
const TABLE_AT = 0;
const RESULT_AT = 8192;
const CONSTANTS_AT = 8208;
/** The operand's first element (in doubles: byte 12288). */
const OPERAND = 1536;

/** The shuffles that take the first, or second, double of each of two vectors (as pairs of i32 lanes). */
const FIRSTS = i32x4Shuffle([0, 1, 4, 5]);
const SECONDS = i32x4Shuffle([2, 3, 6, 7]);

const bitsOf = (x: number): bigint => new BigUint64Array(new Float64Array([x]).buffer)[0];
/** A constant vector: a double in both lanes. */
function splat(x: number): Code {
  const bits = bitsOf(x);
  return v128.const(bits, bits);
}
/** A constant vector: an integer in both 64-bit lanes. */
const splatI64 = (n: number): Code => v128.const(BigInt(n), BigInt(n));

/**
 * The constants of exp's steps, each in both lanes of a vector stored at CONSTANTS_AT, which a
 * pass reads into locals before its loop. V8 builds a v128.const afresh at each use inside
 * the loop (a 64-bit immediate into a general register, then into both lanes: three
 * instructions), even from a local set once before the loop, which it folds back to the
 * constant; a value loaded from memory stays in its register (or a stack slot that the
 * arithmetic reads directly). A third of the loop's instructions, and as much of its time.
 */
const CONSTANT_BITS = {
  invLn2N: bitsOf(INV_LN2_N),
  shift: bitsOf(SHIFT),
  ln2Hi: bitsOf(LN2_N_HI),
  ln2Lo: bitsOf(LN2_N_LO),
  c2: bitsOf(C2),
  c3: bitsOf(C3),
  c4: bitsOf(C4),
  /** |x|'s bits: all but the sign. */
  magnitude: 0x7fffffffffffffffn,
  /** 700's bits: |x| ≤ 700 exactly where |x|'s bits are not greater (as integers; NaN's are). */
  limit: bitsOf(700),
} as const;
type Constant = keyof typeof CONSTANT_BITS;
const CONSTANT_NAMES = Object.keys(CONSTANT_BITS) as Constant[];

/** The v128 locals exp's steps use (indices into the function's locals), two i32 ones, and the constants'. */
interface ExpLocals {
  readonly x: number;
  readonly t: number;
  readonly r: number;
  readonly r2: number;
  readonly k: number;
  readonly sj: number;
  readonly p: number;
  readonly s: number;
  readonly y: number;
  readonly half: number;
  readonly o0: number;
  readonly o1: number;
  readonly c: Readonly<Record<Constant, number>>;
}
/**
 * The locals, numbered from `at`: ten v128 and two i32, then a v128 per constant (see
 * `EXP_LOCAL_TYPES`), or, given `constants`, those of another set (a second exp in the loop).
 */
function expLocals(at: number, constants?: ExpLocals): ExpLocals {
  const [x, t, r, r2, k, sj, p, s, y, half, o0, o1] = Array.from({ length: 12 }, (_, i) => at + i);
  const c = constants?.c ?? (Object.fromEntries(CONSTANT_NAMES.map((name, i) => [name, at + 12 + i])) as Record<Constant, number>);
  return { x, t, r, r2, k, sj, p, s, y, half, o0, o1, c };
}
const WORK_LOCAL_TYPES: readonly ValType[] = [...new Array<ValType>(10).fill(type.v128), type.i32, type.i32];
const EXP_LOCAL_TYPES: readonly ValType[] = [...WORK_LOCAL_TYPES, ...new Array<ValType>(CONSTANT_NAMES.length).fill(type.v128)];

/** The constants into their locals: before a pass's loop. */
const loadConstants = (l: ExpLocals): Code[] => CONSTANT_NAMES.map((name, i) => local.set(l.c[name], v128.load(i32.const(CONSTANTS_AT + 16 * i))));

/**
 * y = exp(x), lanewise: exp.ts's `exp`, step for step (comments name its variables).
 * Reads x from local `l.x`, leaves the result in `l.y`. `checked`: lanes past |x| ≤ 700 (or
 * NaN) take `beyond`'s steps; a pass may leave the check out where no lane can be.
 */
function expSteps(l: ExpLocals, checked: boolean): Code[] {
  const x = get(l.x);
  const c = (name: Constant): Code => get(l.c[name]);
  return [
    // t = x·N/ln 2 + SHIFT (kept in l.k: its bits are k + SHIFT's, whose low 51 bits are 0); kd = t − SHIFT
    local.set(l.k, f64x2.add(f64x2.mul(x, c("invLn2N")), c("shift"))),
    local.set(l.t, f64x2.sub(get(l.k), c("shift"))),
    // r = x − kd·HI − kd·LO
    local.set(l.r, f64x2.sub(f64x2.sub(x, f64x2.mul(get(l.t), c("ln2Hi"))), f64x2.mul(get(l.t), c("ln2Lo")))),
    // j = k & 511 (t's low 9 bits), as byte offsets into the table (j·16), per lane: from the
    // low halves of the 64-bit lanes (i32 lanes 0 and 2), in general registers, whose
    // arithmetic leaves the vector units (the loops' bottleneck) to the rest
    local.set(l.o0, i32.shl(i32.and(i32x4.extractLane(0)(get(l.k)), i32.const(511)), i32.const(4))),
    local.set(l.o1, i32.shl(i32.and(i32x4.extractLane(2)(get(l.k)), i32.const(511)), i32.const(4))),
    // each lane's pair (S_j, T_j) in one load; S_j of both lanes, then T_j of both
    local.set(l.sj, v128.load(get(l.o0), TABLE_AT)),
    local.set(l.t, v128.load(get(l.o1), TABLE_AT)),
    local.set(l.p, FIRSTS(get(l.sj), get(l.t))),
    local.set(l.t, SECONDS(get(l.sj), get(l.t))), // T_j
    local.set(l.sj, get(l.p)),
    // polynomial: T_j + r + r²·(C2 + r·C3 + r²·C4), left to right
    local.set(l.r2, f64x2.mul(get(l.r), get(l.r))),
    local.set(
      l.p,
      f64x2.add(
        f64x2.add(get(l.t), get(l.r)),
        f64x2.mul(get(l.r2), f64x2.add(f64x2.add(c("c2"), f64x2.mul(get(l.r), c("c3"))), f64x2.mul(get(l.r2), c("c4")))),
      ),
    ),
    // s = S_j · 2^m, m = k >> 9, as S_j with m added to its exponent: m·2⁵² is (k − j)·2⁴³, and
    // the table holds S_j's bits − j·2⁴³ (S'_j, `expModule`), so s's bits are S'_j + k·2⁴³, and
    // k·2⁴³ is t's bits · 2⁴³ (SHIFT's bits times 2⁴³ vanish mod 2⁶⁴): a shift and an addition
    local.set(l.s, i64x2.add(get(l.sj), i64x2.shl(get(l.k), i32.const(43)))),
    // y = s + s·p
    local.set(l.y, f64x2.add(get(l.s), f64x2.mul(get(l.s), get(l.p)))),
    ...(checked ? [ifThen(v128.anyTrue(i64x2.gtS(v128.and(x, c("magnitude")), c("limit"))), beyondSteps(l))] : []),
  ];
}

/**
 * exp.ts's `beyond` for the lanes past |x| ≤ 700: half = ±128 by x's sign there (0 in a
 * lane within), s = S_j · 2^(m − half), y = (s + s·p) · 2^half; then ∞ past 710, 0 below
 * −746, x where it is NaN.
 */
function beyondSteps(l: ExpLocals): Code[] {
  const x = get(l.x);
  const within = f64x2.le(f64x2.abs(x), splat(700));
  return [
    local.set(l.half, v128.andnot(v128.bitselect(splatI64(128), splatI64(-128), f64x2.gt(x, splat(0))), within)),
    // s's bits from expSteps, S_j's + m·2⁵² (mod 2⁶⁴), less half·2⁵²
    local.set(l.s, i64x2.sub(get(l.s), i64x2.shl(get(l.half), i32.const(52)))),
    local.set(l.y, f64x2.mul(f64x2.add(get(l.s), f64x2.mul(get(l.s), get(l.p))), i64x2.shl(i64x2.add(get(l.half), splatI64(1023)), i32.const(52)))),
    local.set(l.y, v128.bitselect(splat(Infinity), get(l.y), f64x2.gt(x, splat(710)))),
    local.set(l.y, v128.bitselect(splat(0), get(l.y), f64x2.lt(x, splat(-746)))),
    local.set(l.y, v128.bitselect(x, get(l.y), f64x2.ne(x, x))),
  ];
}

// parameters: a byte address and a count; then the locals of a pass
const [P, N, END, LAST] = [0, 1, 2, 3];

/** exp(p, n, d): exp of the n doubles at p, written d bytes on (over them where d = 0). */
function expMap(): Func {
  const D = 2;
  const [END, LAST] = [3, 4];
  const l = expLocals(5);
  const to = i32.add(get(P), get(D));
  return {
    name: "exp",
    params: [type.i32, type.i32, type.i32],
    locals: [type.i32, type.i32, ...EXP_LOCAL_TYPES],
    body: [
      ...loadConstants(l),
      local.set(END, i32.add(get(P), i32.mul(get(N), i32.const(8)))),
      local.set(LAST, i32.sub(get(END), i32.const(8))),
      forLoop(P, get(LAST), 16, [local.set(l.x, v128.load(get(P))), ...expSteps(l, true), v128.store(to, get(l.y))]),
      ifThen(i32.ltU(get(P), get(END)), [local.set(l.x, v128.load64Splat(get(P))), ...expSteps(l, true), v128.store64Lane(0)(to, get(l.y))]),
    ],
  };
}

/** scaledExp(p, n, m, c, d): c·exp(x − m) of the n doubles x at p (logsumexp's cotangent ȳ·exp(x − y)), written d bytes on. */
function scaledExp(): Func {
  const [M, C, D] = [2, 3, 4];
  const [END, LAST, MV, CV] = [5, 6, 7, 8];
  const l = expLocals(9);
  const to = i32.add(get(P), get(D));
  const steps = (x: Code): Code[] => [local.set(l.x, f64x2.sub(x, get(MV))), ...expSteps(l, true), local.set(l.y, f64x2.mul(get(CV), get(l.y)))];
  return {
    name: "scaledExp",
    params: [type.i32, type.i32, type.f64, type.f64, type.i32],
    locals: [type.i32, type.i32, type.v128, type.v128, ...EXP_LOCAL_TYPES],
    body: [
      ...loadConstants(l),
      local.set(END, i32.add(get(P), i32.mul(get(N), i32.const(8)))),
      local.set(LAST, i32.sub(get(END), i32.const(8))),
      local.set(MV, f64x2.splat(get(M))),
      local.set(CV, f64x2.splat(get(C))),
      forLoop(P, get(LAST), 16, [...steps(v128.load(get(P))), v128.store(to, get(l.y))]),
      ifThen(i32.ltU(get(P), get(END)), [...steps(v128.load64Splat(get(P))), v128.store64Lane(0)(to, get(l.y))]),
    ],
  };
}

/**
 * expSum(p, n, m): Σ exp(x[i] − m) over the n doubles at p into the result slot, in four
 * partial sums (element i into sum i mod 4, in order, from 0), added (s₀ + s₂) + (s₁ + s₃):
 * reduce.ts's order. Two vectors a step, each added into a vector of sums of its own: one
 * chain of additions would hold the loop to an addition's latency per element, and the two
 * exponentials of a step share the constants' registers. `expSumWithin` leaves out exp's
 * range check: for m = max x with every x − m ≥ −700 (no ∞), which logsumexp's max pass tells.
 */
function expSum(name: string, checked: boolean): Func {
  const M = 2;
  const [START, END, LAST, MV, A, B] = [3, 4, 5, 6, 7, 8];
  const l = expLocals(9);
  const l2 = expLocals(9 + EXP_LOCAL_TYPES.length, l);
  const exp = (ls: ExpLocals, x: Code): Code[] => [local.set(ls.x, f64x2.sub(x, get(MV))), ...expSteps(ls, checked)];
  const into = (acc: number, v: Code): Code => local.set(acc, f64x2.add(get(acc), v));
  // the last element of an odd n: lane 0 only (+0 in lane 1 changes no sum)
  const lane0 = v128.and(get(l.y), v128.const(-1n, 0n));
  const second = i32.and(i32.sub(get(P), get(START)), i32.const(16)); // its index is 2 mod 4
  return {
    name,
    params: [type.i32, type.i32, type.f64],
    locals: [type.i32, type.i32, type.i32, type.v128, type.v128, type.v128, ...EXP_LOCAL_TYPES, ...WORK_LOCAL_TYPES],
    body: [
      ...loadConstants(l),
      local.set(START, get(P)),
      local.set(END, i32.add(get(P), i32.mul(get(N), i32.const(8)))),
      local.set(LAST, i32.sub(get(END), i32.const(24))),
      local.set(MV, f64x2.splat(get(M))),
      forLoop(P, get(LAST), 32, [...exp(l, v128.load(get(P))), ...exp(l2, v128.load(get(P), 16)), into(A, get(l.y)), into(B, get(l2.y))]),
      ifThen(i32.ltU(get(P), i32.sub(get(END), i32.const(8))), [...exp(l, v128.load(get(P))), into(A, get(l.y)), local.set(P, i32.add(get(P), i32.const(16)))]),
      ifThen(i32.ltU(get(P), get(END)), [
        ...exp(l, v128.load64Splat(get(P))),
        ifThen(second, [into(B, lane0)]),
        ifThen(i32.eqz(second), [into(A, lane0)]),
      ]),
      local.set(A, f64x2.add(get(A), get(B))),
      f64.store(i32.const(RESULT_AT), f64.add(f64x2.extractLane(0)(get(A)), f64x2.extractLane(1)(get(A)))),
    ],
  };
}

/**
 * extremes(p, n): the greatest of the n doubles at p (n ≥ 1) into the first result slot,
 * and their least into the second, NaNs left out (−∞ and ∞ if all are NaN). Four vectors at a
 * time into four accumulators of each (one would make the loop a chain of dependent maxima).
 * Each lane keeps the first of its greatest elements (a later equal one does not replace
 * it), and equal maxima of other lanes are the same number, but for zeros: where the
 * greatest is a zero, the first zero is found by a scalar pass (0 and −0 are equal, but not
 * the same: logSoftmax's x − m tells them apart).
 */
function extremes(): Func {
  const [END, LAST, V, M, Q] = [2, 3, 4, 5, 6];
  const HI = [7, 8, 9, 10];
  const LO = [11, 12, 13, 14];
  const fold = (a: number, v: Code): Code[] => [
    local.set(V, v),
    local.set(HI[a], f64x2.pmax(get(HI[a]), get(V))),
    local.set(LO[a], f64x2.pmin(get(LO[a]), get(V))),
  ];
  const lanes = (op: (a: Code, b: Code) => Code, v: number): Code => op(f64x2.extractLane(0)(get(v)), f64x2.extractLane(1)(get(v)));
  return {
    name: "extremes",
    params: [type.i32, type.i32],
    locals: [type.i32, type.i32, type.v128, type.f64, type.i32, ...new Array<ValType>(8).fill(type.v128)],
    body: [
      local.set(END, i32.add(get(P), i32.mul(get(N), i32.const(8)))),
      local.set(Q, get(P)),
      ...HI.map((a) => local.set(a, splat(-Infinity))),
      ...LO.map((a) => local.set(a, splat(Infinity))),
      local.set(LAST, i32.sub(get(END), i32.const(56))),
      forLoop(P, get(LAST), 64, [0, 1, 2, 3].flatMap((a) => fold(a, v128.load(get(P), 16 * a)))),
      local.set(LAST, i32.sub(get(END), i32.const(8))),
      forLoop(P, get(LAST), 16, fold(0, v128.load(get(P)))),
      ifThen(i32.ltU(get(P), get(END)), fold(0, v128.load64Splat(get(P)))),
      local.set(HI[0], f64x2.pmax(f64x2.pmax(get(HI[0]), get(HI[1])), f64x2.pmax(get(HI[2]), get(HI[3])))),
      local.set(LO[0], f64x2.pmin(f64x2.pmin(get(LO[0]), get(LO[1])), f64x2.pmin(get(LO[2]), get(LO[3])))),
      f64.store(i32.const(RESULT_AT + 8), lanes(f64.min, LO[0])),
      local.set(M, lanes(f64.max, HI[0])),
      // the greatest is zero: the first element not below it (its sign) is the answer
      ifThen(f64.eq(get(M), f64.const(0)), [
        forLoop(Q, get(END), 8, [ifThen(f64.eq(f64.load(get(Q)), f64.const(0)), [local.set(M, f64.load(get(Q))), local.set(Q, get(END))])]),
      ]),
      f64.store(i32.const(RESULT_AT), get(M)),
    ],
  };
}

/**
 * columnMax(p, rows, cols, q): the greatest of each column of the rows × cols doubles at p
 * into the cols doubles at q, as reduce.ts's maxRow folds rows into them: from −∞, an element
 * taken where it is greater than the column's so far or NaN (the first of equal ones, and
 * a NaN for good, as `x > m || isNaN(x) ? x : m`). Two columns a step; an odd last one in lane 0.
 */
function columnMax(): Func {
  const [ROWS, COLS, Q] = [1, 2, 3];
  const [END, ROW_END, O, V, W] = [4, 5, 6, 7, 8];
  // W ← V where V > W or V is NaN
  const takes = v128.or(f64x2.gt(get(V), get(W)), f64x2.ne(get(V), get(V)));
  const take = (v: Code, w: Code): Code[] => [local.set(V, v), local.set(W, w), local.set(W, v128.bitselect(get(V), get(W), takes))];
  return {
    name: "columnMax",
    params: [type.i32, type.i32, type.i32, type.i32],
    locals: [type.i32, type.i32, type.i32, type.v128, type.v128],
    body: [
      local.set(O, get(Q)),
      local.set(ROW_END, i32.add(get(Q), i32.mul(get(COLS), i32.const(8)))),
      forLoop(O, get(ROW_END), 8, [f64.store(get(O), f64.const(-Infinity))]),
      local.set(END, i32.add(get(P), i32.mul(i32.mul(get(ROWS), get(COLS)), i32.const(8)))),
      forLoop(P, get(END), 0, [
        local.set(O, get(Q)),
        local.set(ROW_END, i32.add(get(P), i32.mul(get(COLS), i32.const(8)))),
        forLoop(P, i32.sub(get(ROW_END), i32.const(8)), 16, [
          ...take(v128.load(get(P)), v128.load(get(O))),
          v128.store(get(O), get(W)),
          local.set(O, i32.add(get(O), i32.const(16))),
        ]),
        ifThen(i32.ltU(get(P), get(ROW_END)), [
          ...take(v128.load64Splat(get(P)), v128.load64Splat(get(O))),
          v128.store64Lane(0)(get(O), get(W)),
          local.set(P, get(ROW_END)),
        ]),
      ]),
    ],
  };
}

/**
 * columnExpSums(p, rows, cols, q, s): s[j] = Σ_r exp(x[r][j] − q[j]) for the rows × cols
 * doubles x at p and the cols doubles q and s (s from zero, the rows added in order: reduce.ts's
 * expRow, each exponential exp.ts's). Two columns a step; an odd last one in lane 0.
 */
function columnExpSums(): Func {
  const [ROWS, COLS, Q, S] = [1, 2, 3, 4];
  const [END, ROW_END, O, T] = [5, 6, 7, 8];
  const l = expLocals(9);
  const exp = (x: Code, m: Code): Code[] => [local.set(l.x, f64x2.sub(x, m)), ...expSteps(l, true)];
  return {
    name: "columnExpSums",
    params: [type.i32, type.i32, type.i32, type.i32, type.i32],
    locals: [type.i32, type.i32, type.i32, type.i32, ...EXP_LOCAL_TYPES],
    body: [
      ...loadConstants(l),
      local.set(O, get(S)),
      local.set(ROW_END, i32.add(get(S), i32.mul(get(COLS), i32.const(8)))),
      forLoop(O, get(ROW_END), 8, [f64.store(get(O), f64.const(0))]),
      local.set(END, i32.add(get(P), i32.mul(i32.mul(get(ROWS), get(COLS)), i32.const(8)))),
      forLoop(P, get(END), 0, [
        local.set(O, get(Q)),
        local.set(T, get(S)),
        local.set(ROW_END, i32.add(get(P), i32.mul(get(COLS), i32.const(8)))),
        forLoop(P, i32.sub(get(ROW_END), i32.const(8)), 16, [
          ...exp(v128.load(get(P)), v128.load(get(O))),
          v128.store(get(T), f64x2.add(v128.load(get(T)), get(l.y))),
          local.set(O, i32.add(get(O), i32.const(16))),
          local.set(T, i32.add(get(T), i32.const(16))),
        ]),
        ifThen(i32.ltU(get(P), get(ROW_END)), [
          ...exp(v128.load64Splat(get(P)), v128.load64Splat(get(O))),
          v128.store64Lane(0)(get(T), f64x2.add(v128.load64Splat(get(T)), get(l.y))),
          local.set(P, get(ROW_END)),
        ]),
      ]),
    ],
  };
}

/** The module: the passes, and the table of S_j and T_j and exp's constants at the start of its memory. */
export function expModule(): Uint8Array {
  const table = (a: Float64Array | BigUint64Array) => new Uint8Array(a.buffer.slice(a.byteOffset, a.byteOffset + a.byteLength));
  const constants = BigUint64Array.from(CONSTANT_NAMES.flatMap((name) => [CONSTANT_BITS[name], CONSTANT_BITS[name]]));
  // S'_j = S_j's bits − j·2⁴³ (see expSteps' s), and T_j
  const pairs = BigUint64Array.from({ length: 2 * SCALE.length }, (_, i) =>
    i % 2 === 0 ? BigInt.asUintN(64, bitsOf(SCALE[i >> 1]) - (BigInt(i >> 1) << 43n)) : bitsOf(TAIL[i >> 1]),
  );
  return assemble([expMap(), scaledExp(), expSum("expSum", true), expSum("expSumWithin", false), extremes(), columnMax(), columnExpSums()], [
    { offset: TABLE_AT, bytes: table(pairs) },
    { offset: CONSTANTS_AT, bytes: table(constants) },
  ]);
}

/**
 * From this many elements the callers use these kernels: below, the copies in and out
 * and the call cost more than the second lane saves.
 */
export const EXP_SIMD_FROM = 256;

/** Operands of up to 32 MB (about 4 million elements): larger ones stay in JavaScript. */
const workspace = lazyWorkspace(expModule, 32 * 1024 * 1024);

type Pass = (p: number, n: number) => void;
type SumPass = (p: number, n: number, m: number) => void;

/**
 * The resident operand of the workspace's memory `buffer` (see `residentOperand`): it lies at
 * OPERAND, and the passes' copied operands start at `end`, past it.
 */
let resident: { readonly buffer: ArrayBufferLike; readonly end: number } | null = null;

/**
 * x copied into these kernels' memory, as a view of it that logsumexp's passes read in place:
 * an operand given again and again (GradBench's lse input, placed once by its `prepare`) then
 * costs no copy a call, which for a million elements is a third of the passes' time (the
 * copy reads and writes memory that no longer fits the caches). The view is an ordinary
 * Float64Array to every other reader and writer, and the passes see what it holds. Each call
 * takes a new instance's memory (lazyWorkspace's `fresh`, with room past the operand for
 * another as long), so that no later operand or pass overwrites an earlier view; the memory
 * of a view let go is the collector's. A plain copy when WebAssembly SIMD is unavailable, or
 * x is short (the passes' copy is cheap there) or too large.
 */
export function residentOperand(x: Float64Array): Float64Array {
  const s = x.length >= EXP_SIMD_FROM ? workspace() : null;
  // the copied operands 16-byte aligned past it
  const end = OPERAND + x.length + (x.length & 1);
  const heap = s?.fresh(end + x.length) ?? null;
  if (heap === null) return x.slice();
  heap.set(x, OPERAND);
  resident = { buffer: heap.buffer, end };
  return heap.subarray(OPERAND, OPERAND + x.length);
}

interface Room {
  readonly s: Workspace;
  readonly heap: Float64Array;
  /** Where the operand starts, in doubles. */
  readonly at: number;
}

/** The memory with room for an operand of n doubles, and where it goes: past the resident operand, if the memory holds one. */
function operandRoom(n: number): Room | null {
  const s = n === 0 ? null : workspace();
  if (s === null) return null;
  const at = resident?.end ?? OPERAND;
  const heap = s.heap(at + n);
  return heap === null ? null : { s, heap, at: resident?.buffer === heap.buffer ? at : OPERAND };
}

/** x's room: where it lies if it is a view of the memory (`residentOperand`), else operandRoom's, x copied there. */
function placed(x: Float64Array): Room | null {
  const s = x.length === 0 ? null : workspace();
  const heap = s?.heap(0) ?? null;
  if (s !== null && heap !== null && x.buffer === heap.buffer) return { s, heap, at: x.byteOffset / 8 };
  const room = operandRoom(x.length);
  room?.heap.set(x, room.at);
  return room;
}

/**
 * Room for a map's n results, and where it reads x (`from`): where x lies if it is a view of
 * the memory, else the room, x copied there (the pass then writes over it). Not x copied
 * from the memory into itself: `set` would first copy it to a new buffer.
 */
function mapRoom(x: Float64Array): (Room & { readonly from: number }) | null {
  const room = operandRoom(x.length);
  if (room === null) return null;
  if (x.buffer === room.heap.buffer) return { ...room, from: x.byteOffset / 8 };
  room.heap.set(x, room.at);
  return { ...room, from: room.at };
}

/**
 * out = the map `pass` (exp, or scaledExp with `extra` = [m, c]) of x elementwise (out may be
 * x); false (nothing written) when WebAssembly SIMD is unavailable or x too large.
 */
function runMap(out: Float64Array, x: Float64Array, pass: "exp" | "scaledExp", extra: readonly number[]): boolean {
  const room = mapRoom(x);
  if (room === null) return false;
  const { s, heap, at, from } = room;
  (s.exports[pass] as (p: number, n: number, ...rest: number[]) => void)(from * 8, x.length, ...extra, (at - from) * 8);
  out.set(heap.subarray(at, at + x.length));
  return true;
}

/** out = exp(x) elementwise (out may be x); false (nothing written) when WebAssembly SIMD is unavailable or x too large. */
export const simdExp = (out: Float64Array, x: Float64Array): boolean => runMap(out, x, "exp", []);

/**
 * out = c·exp(x − m) elementwise (out may be x), each step the IEEE operation of
 * `c * exp(x[i] - m)`; false (nothing written) when WebAssembly SIMD is unavailable or x too large.
 */
export const simdScaledExp = (out: Float64Array, x: Float64Array, m: number, c: number): boolean => runMap(out, x, "scaledExp", [m, c]);

/**
 * For each of `groups` runs of `len` elements of x (len ≥ 1): m[g] = the run's max (as
 * reduce.ts's), and sums[g] = Σ exp(x − m[g]) in order, with m[g] taken as 0 where it is
 * ±∞ or NaN (where x − m would be NaN: logsumexp's convention, reduce.ts). x is read where it
 * lies when it is a view of the kernels' memory (`residentOperand`), else copied there. False
 * (nothing written) when WebAssembly SIMD is unavailable or x too large.
 */
export function simdMaxAndExpSums(x: Float64Array, groups: number, len: number, m: Float64Array, sums: Float64Array): boolean {
  const room = len === 0 ? null : placed(x.subarray(0, groups * len));
  if (room === null) return false;
  const { s, heap, at: first } = room;
  const extremesPass = s.exports.extremes as Pass;
  const result = RESULT_AT / 8;
  for (let g = 0; g < groups; g++) {
    const at = (first + g * len) * 8;
    extremesPass(at, len);
    const mg = heap[result];
    // every x − m within exp's range (none ∞; a NaN, left out of the extremes, still makes the sum NaN): the pass without the check
    const within = Number.isFinite(mg) && heap[result + 1] - mg >= -700;
    (s.exports[within ? "expSumWithin" : "expSum"] as SumPass)(at, len, Number.isFinite(mg) ? mg : 0);
    const sum = heap[result];
    // the sum is NaN exactly where x holds a NaN (x − m is never NaN otherwise, m being 0 where it is ±∞), and then so is the max
    m[g] = Number.isNaN(sum) ? NaN : mg;
    sums[g] = sum;
  }
  return true;
}

/**
 * For each of `blocks` blocks of x, rows × cols (cols ≥ 2: the columns of logsumexp over
 * leading or middle axes, as GradBench gmm's over the components of [k, n]): m = each
 * column's max (as reduce.ts's maxRow folds rows), taken as 0 where it is ±∞ or NaN, and
 * sums = Σ exp(x − m) down the column, the rows added in order from zero (reduce.ts's
 * expRow, exp.ts's exponentials). False (nothing written) when WebAssembly SIMD is
 * unavailable or x too large.
 */
export function simdColumnMaxAndExpSums(x: Float64Array, blocks: number, rows: number, cols: number, m: Float64Array, sums: Float64Array): boolean {
  const n = blocks * rows * cols;
  // x, then the maxima and the sums, past a resident operand
  const room = n === 0 ? null : operandRoom(n + 2 * blocks * cols);
  if (room === null) return false;
  const { s, heap, at } = room;
  const [mAt, sAt] = [at + n, at + n + blocks * cols];
  heap.set(x.subarray(0, n), at);
  const maxPass = s.exports.columnMax as (p: number, rows: number, cols: number, q: number) => void;
  const sumPass = s.exports.columnExpSums as (p: number, rows: number, cols: number, q: number, s: number) => void;
  for (let b = 0; b < blocks; b++) maxPass((at + b * rows * cols) * 8, rows, cols, (mAt + b * cols) * 8);
  for (let j = mAt; j < sAt; j++) if (!Number.isFinite(heap[j])) heap[j] = 0;
  for (let b = 0; b < blocks; b++) sumPass((at + b * rows * cols) * 8, rows, cols, (mAt + b * cols) * 8, (sAt + b * cols) * 8);
  m.set(heap.subarray(mAt, sAt));
  sums.set(heap.subarray(sAt, sAt + blocks * cols));
  return true;
}
