/**
 * @file Elementwise kernels: `map` (a unary kernel over a buffer) and `zip` (a binary
 * one, with NumPy broadcasting), each element computed by the scalar kernel itself.
 *
 * Every loop is a small function of its own, one per operation: V8 optimises a short
 * loop with one operation well, while one function holding the loops of all operations
 * behind `f === …` tests is optimised as a whole, each loop less well, and a call
 * through `f` per element (a megamorphic call V8 cannot inline) costs more still. So the kernels scalar.ts takes from here (ARITH, UNARY_ARITH) and from `Math`
 * are recognised by identity and get their own loop: same function, same numbers.
 * Large buffers of arithmetic go to the SIMD kernels of simd-elementwise.ts instead, and
 * of exp to simd-exp.ts's (exp.ts's function on two lanes, the same numbers).
 */
import { alloc } from "./pool.js";
import { isVector, MIN_ROW, rowStart, SIMD_FROM, simdArith, type Arith, type Layout } from "./simd-elementwise.js";
import { EXP_SIMD_FROM, simdExp } from "./simd-exp.js";
import { size, type Dims } from "./dims.js";
import { odometerRows } from "./odometer.js";
import { tanh as TANH } from "../tanh.js";
import { exp as EXP } from "../exp.js";

const ADD = (a: number, b: number) => a + b;
const SUB = (a: number, b: number) => a - b;
const MUL = (a: number, b: number) => a * b;
const DIV = (a: number, b: number) => a / b;
const NEG = (x: number) => -x;
const SQUARE = (x: number) => x * x;
/** σ(x), stable for either sign (exp of a non-positive number only). */
// eˣ/(1 + eˣ) below 0 with eˣ computed once (it is the same number twice)
const SIGMOID = (x: number): number => {
  if (x >= 0) return 1 / (1 + EXP(-x));
  const e = EXP(x);
  return e / (1 + e);
};

/** The binary kernels `zip` recognizes (scalar.ts's table uses these very functions). */
export const ARITH = { add: ADD, sub: SUB, mul: MUL, div: DIV };
/** The unary ones `map` recognizes besides Math's (scalar.ts uses these too). */
export const UNARY_ARITH = { neg: NEG, square: SQUARE, sigmoid: SIGMOID, tanh: TANH };

/** out[i] = f(x[i]) for i < n, one loop per recognised f. */
type MapLoop = (out: Float64Array, x: Float64Array, n: number) => void;

function tanhLoop(out: Float64Array, x: Float64Array, n: number): void {
  for (let i = 0; i < n; i++) out[i] = TANH(x[i]);
}
function expLoop(out: Float64Array, x: Float64Array, n: number): void {
  for (let i = 0; i < n; i++) out[i] = EXP(x[i]);
}
function logLoop(out: Float64Array, x: Float64Array, n: number): void {
  for (let i = 0; i < n; i++) out[i] = Math.log(x[i]);
}
function squareLoop(out: Float64Array, x: Float64Array, n: number): void {
  for (let i = 0; i < n; i++) out[i] = x[i] * x[i];
}
function negLoop(out: Float64Array, x: Float64Array, n: number): void {
  for (let i = 0; i < n; i++) out[i] = -x[i];
}
function sinLoop(out: Float64Array, x: Float64Array, n: number): void {
  for (let i = 0; i < n; i++) out[i] = Math.sin(x[i]);
}
function cosLoop(out: Float64Array, x: Float64Array, n: number): void {
  for (let i = 0; i < n; i++) out[i] = Math.cos(x[i]);
}
function sqrtLoop(out: Float64Array, x: Float64Array, n: number): void {
  for (let i = 0; i < n; i++) out[i] = Math.sqrt(x[i]);
}
function sigmoidLoop(out: Float64Array, x: Float64Array, n: number): void {
  for (let i = 0; i < n; i++) out[i] = SIGMOID(x[i]);
}
function callLoop(out: Float64Array, x: Float64Array, n: number, f: (x: number) => number): void {
  for (let i = 0; i < n; i++) out[i] = f(x[i]);
}

const MAP_LOOPS = new Map<(x: number) => number, MapLoop>([
  [TANH, tanhLoop],
  [EXP, expLoop],
  [Math.log, logLoop],
  [SQUARE, squareLoop],
  [NEG, negLoop],
  [Math.sin, sinLoop],
  [Math.cos, cosLoop],
  [Math.sqrt, sqrtLoop],
  [SIGMOID, sigmoidLoop],
]);

/** `f` applied to every element. */
export function map(x: Float64Array, f: (x: number) => number): Float64Array {
  const out = alloc(x.length, true);
  if (f === SQUARE && x.length >= SIMD_FROM && simdArith("mul", out, x, "whole", x, "whole", 1, x.length)) return out;
  if (f === EXP && x.length >= EXP_SIMD_FROM && simdExp(out, x)) return out;
  const loop = MAP_LOOPS.get(f);
  if (loop !== undefined) loop(out, x, x.length);
  else callLoop(out, x, x.length, f);
  return out;
}

/**
 * r[ro + i] = f(a[ao + i·as], b[bo + i·bs]) for i < len: strides 1 walk an argument, 0
 * repeat one element.
 */
type Run = (len: number, r: Float64Array, ro: number, a: Float64Array, ao: number, as: number, b: Float64Array, bo: number, bs: number) => void;

function addRun(len: number, r: Float64Array, ro: number, a: Float64Array, ao: number, as: number, b: Float64Array, bo: number, bs: number): void {
  for (let i = 0; i < len; i++) r[ro + i] = a[ao + i * as] + b[bo + i * bs];
}
function subRun(len: number, r: Float64Array, ro: number, a: Float64Array, ao: number, as: number, b: Float64Array, bo: number, bs: number): void {
  for (let i = 0; i < len; i++) r[ro + i] = a[ao + i * as] - b[bo + i * bs];
}
function mulRun(len: number, r: Float64Array, ro: number, a: Float64Array, ao: number, as: number, b: Float64Array, bo: number, bs: number): void {
  for (let i = 0; i < len; i++) r[ro + i] = a[ao + i * as] * b[bo + i * bs];
}
function divRun(len: number, r: Float64Array, ro: number, a: Float64Array, ao: number, as: number, b: Float64Array, bo: number, bs: number): void {
  for (let i = 0; i < len; i++) r[ro + i] = a[ao + i * as] / b[bo + i * bs];
}
/** Any other kernel, called per element. */
const callRun =
  (f: (a: number, b: number) => number): Run =>
  (len, r, ro, a, ao, as, b, bo, bs) => {
    for (let i = 0; i < len; i++) r[ro + i] = f(a[ao + i * as], b[bo + i * bs]);
  };

/**
 * The arithmetic's loops for the small cases (below the SIMD kernels' size) that make most
 * operations of small-tensor code: both arguments whole, or one of them a single number.
 * r[i] = a[i] ∘ b[i] ("whole"), a[i] ∘ s ("right": s the right argument), s ∘ b[i] ("left").
 * Written without offsets and strides: the strided run, on such small buffers, cost about
 * twice as long per element.
 */
interface SmallLoops {
  readonly whole: (n: number, r: Float64Array, a: Float64Array, b: Float64Array) => void;
  readonly right: (n: number, r: Float64Array, a: Float64Array, s: number) => void;
  readonly left: (n: number, r: Float64Array, s: number, b: Float64Array) => void;
}

const SMALL = new Map<(a: number, b: number) => number, SmallLoops>([
  [
    ADD,
    {
      whole: (n, r, a, b) => { for (let i = 0; i < n; i++) r[i] = a[i] + b[i]; },
      right: (n, r, a, s) => { for (let i = 0; i < n; i++) r[i] = a[i] + s; },
      left: (n, r, s, b) => { for (let i = 0; i < n; i++) r[i] = s + b[i]; },
    },
  ],
  [
    SUB,
    {
      whole: (n, r, a, b) => { for (let i = 0; i < n; i++) r[i] = a[i] - b[i]; },
      right: (n, r, a, s) => { for (let i = 0; i < n; i++) r[i] = a[i] - s; },
      left: (n, r, s, b) => { for (let i = 0; i < n; i++) r[i] = s - b[i]; },
    },
  ],
  [
    MUL,
    {
      whole: (n, r, a, b) => { for (let i = 0; i < n; i++) r[i] = a[i] * b[i]; },
      right: (n, r, a, s) => { for (let i = 0; i < n; i++) r[i] = a[i] * s; },
      left: (n, r, s, b) => { for (let i = 0; i < n; i++) r[i] = s * b[i]; },
    },
  ],
  [
    DIV,
    {
      whole: (n, r, a, b) => { for (let i = 0; i < n; i++) r[i] = a[i] / b[i]; },
      right: (n, r, a, s) => { for (let i = 0; i < n; i++) r[i] = a[i] / s; },
      left: (n, r, s, b) => { for (let i = 0; i < n; i++) r[i] = s / b[i]; },
    },
  ],
]);

/**
 * `f(a, b)` into r (n elements) by SMALL's loops when f is arithmetic and each argument is
 * whole or one element; false otherwise.
 */
function small(r: Float64Array, n: number, a: number | Float64Array, b: number | Float64Array, f: (a: number, b: number) => number): boolean {
  const loops = SMALL.get(f);
  if (loops === undefined) return false;
  // (a buffer of one element and a number are both one element; at n = 1 either is "whole")
  const an = typeof a === "number" ? 1 : a.length;
  const bn = typeof b === "number" ? 1 : b.length;
  if (typeof a !== "number" && an === n) {
    if (typeof b !== "number" && bn === n) loops.whole(n, r, a, b);
    else if (bn === 1) loops.right(n, r, a, typeof b === "number" ? b : b[0]);
    else return false;
  } else if (typeof b !== "number" && bn === n && an === 1) loops.left(n, r, typeof a === "number" ? a : a[0], b);
  else return false;
  return true;
}

const RUNS = new Map<(a: number, b: number) => number, Run>([
  [ADD, addRun],
  [SUB, subRun],
  [MUL, mulRun],
  [DIV, divRun],
]);
const SIMD_OPS = new Map<(a: number, b: number) => number, Arith>([
  [ADD, "add"],
  [SUB, "sub"],
  [MUL, "mul"],
  [DIV, "div"],
]);

/** `f(a, b)` elementwise with broadcasting; scalars are numbers. */
export function zip(
  a: number | Float64Array,
  ad: Dims,
  b: number | Float64Array,
  bd: Dims,
  out: Dims,
  f: (a: number, b: number) => number,
): Float64Array {
  const r = alloc(size(out), true);
  const n = r.length;
  if (n < SIMD_FROM && small(r, n, a, b, f)) return r;
  const A = typeof a === "number" ? Float64Array.of(a) : a;
  const B = typeof b === "number" ? Float64Array.of(b) : b;
  // the common small case first (most operations of lstm, ht, ba): each argument whole or
  // one element, below the SIMD kernels' size: one run, what the general path below runs
  if (n < SIMD_FROM && (A.length === n || A.length === 1) && (B.length === n || B.length === 1)) {
    (RUNS.get(f) ?? callRun(f))(n, r, 0, A, 0, A.length === n ? 1 : 0, B, 0, B.length === n ? 1 : 0);
    return r;
  }
  // each argument whole (stride 1) or one element repeated (stride 0), in one run;
  // else the two common broadcasts: a bias row ([m] against [n, m]) and a column ([n, 1]
  // against [n, m]), one run per row of the result
  const la = A.length === n ? "whole" : A.length === 1 ? "scalar" : layout(ad, out);
  const lb = B.length === n ? "whole" : B.length === 1 ? "scalar" : layout(bd, out);
  if (la === null || lb === null || (la !== "whole" && lb !== "whole")) {
    // any other broadcast: a run per row of the result, each argument at its stride along it
    const run = RUNS.get(f) ?? callRun(f);
    const m = out.length === 0 ? 1 : out[out.length - 1];
    odometerRows(out, [ad, bd], (o, offs, along) => run(m, r, o, A, offs[0], along[0], B, offs[1], along[1]));
    return r;
  }
  if (n === 0) return r;
  // the length of a run: a repeated row's, a row of the result against a column, or all of it
  const m = la === "row" ? A.length : lb === "row" ? B.length : la === "column" || lb === "column" ? out[out.length - 1] : n;
  const rows = n / m;
  const op = SIMD_OPS.get(f);
  if (op !== undefined && n >= SIMD_FROM && m >= MIN_ROW && simdArith(op, r, A, la, B, lb, rows, m)) return r;
  const run = RUNS.get(f) ?? callRun(f);
  const [as, bs] = [isVector(la) ? 1 : 0, isVector(lb) ? 1 : 0];
  for (let i = 0; i < rows; i++) run(m, r, i * m, A, rowStart(la, 0, i, m), as, B, rowStart(lb, 0, i, m), bs);
  return r;
}

/** How an operand of dims d (not the whole result, not one element) is read: see Layout. */
function layout(d: Dims, out: Dims): Layout | null {
  const p = pattern(d, out);
  return p === "other" ? null : p;
}

/**
 * How an argument of dims `d` repeats in a result of dims `out`: as a whole along
 * leading axes ("row": its dims are a suffix of out's), or each element along the last
 * axis ("column": out's dims with the last one 1); else "other".
 */
export function pattern(d: Dims, out: Dims): "row" | "column" | "other" {
  const off = out.length - d.length;
  let suffix = true;
  for (let i = 0; i < d.length; i++) if (d[i] !== out[i + off] && !(d[i] === 1 && i < firstNonOne(d))) suffix = false;
  if (suffix) return "row";
  if (off === 0 && d[d.length - 1] === 1) {
    for (let i = 0; i < d.length - 1; i++) if (d[i] !== out[i]) return "other";
    return "column";
  }
  return "other";
}

/** The first axis of d whose size is not 1 (leading 1s broadcast like missing axes). */
function firstNonOne(d: Dims): number {
  let i = 0;
  while (i < d.length && d[i] === 1) i++;
  return i;
}
