/**
 * @file The Wengert tape: a trace term in A-normal form, stored as columns.
 *
 * Instruction K defines variable vK: `vK = op(vA, vB)`. Columns are typed arrays (no
 * object per instruction) because traces reach millions of instructions. Constants
 * are instructions too (`vK = 2.5`), so every atom is a variable index and evaluation
 * never branches on the kind of an atom. The value column holds each variable's value,
 * computed as each instruction is appended (tapes are built by tracing, or by emitting
 * a derivative into a trace); the evaluator recomputes them at other inputs.
 */
import { ARITY, CODE, CONST, FIRST_PRIMITIVE, FREE, INPUT, KERNELS } from "./opcodes.js";

const ADD = CODE.add;
const MUL = CODE.mul;

const INITIAL_CAPACITY = 64;

export class Tape {
  op = new Uint16Array(INITIAL_CAPACITY);
  a = new Int32Array(INITIAL_CAPACITY);
  b = new Int32Array(INITIAL_CAPACITY);
  val = new Float64Array(INITIAL_CAPACITY);
  length = 0;
  /** The values that `free` instructions stand for (traced values of outer traces). */
  readonly frees: unknown[] = [];
  /** One variable per distinct literal (keyed by value; -0 kept apart from 0). */
  private readonly consts = new Map<number, number>();
  private negZero = -1;

  /** A copy to append to: same variables, same values. */
  extend(): Tape {
    const t = new Tape();
    t.reserve(this.length * 2 + INITIAL_CAPACITY);
    t.op.set(this.op.subarray(0, this.length));
    t.a.set(this.a.subarray(0, this.length));
    t.b.set(this.b.subarray(0, this.length));
    t.val.set(this.val.subarray(0, this.length));
    t.length = this.length;
    t.frees.push(...this.frees);
    for (const [c, v] of this.consts) t.consts.set(c, v);
    t.negZero = this.negZero;
    return t;
  }

  input(index: number, value: number): number {
    return this.push(INPUT, index, 0, value);
  }

  constant(c: number): number {
    if (Object.is(c, -0)) return this.negZero >= 0 ? this.negZero : (this.negZero = this.push(CONST, 0, 0, c));
    const v = this.consts.get(c);
    if (v !== undefined) return v;
    const k = this.push(CONST, 0, 0, c);
    this.consts.set(c, k);
    return k;
  }

  free(value: unknown, current: number): number {
    this.frees.push(value);
    return this.push(FREE, this.frees.length - 1, 0, current);
  }

  isConstant(v: number, c?: number): boolean {
    return this.op[v] === CONST && (c === undefined || this.val[v] === c);
  }

  /**
   * Append `op(a, b)` (b ignored for unary ops). Folds only what is exact: operations
   * on literals are computed now, and `x + 0`, `x * 1` are `x`.
   */
  apply(code: number, a: number, b = 0): number {
    const kernel = KERNELS[code];
    const op = this.op;
    if (ARITY[code] === 1) {
      if (op[a] === CONST) return this.constant(kernel(this.val[a], 0));
      return this.push(code, a, 0, kernel(this.val[a], 0));
    }
    if (op[a] === CONST && op[b] === CONST) return this.constant(kernel(this.val[a], this.val[b]));
    if (code === ADD) {
      if (this.isConstant(b, 0)) return a;
      if (this.isConstant(a, 0)) return b;
    } else if (code === MUL) {
      if (this.isConstant(b, 1)) return a;
      if (this.isConstant(a, 1)) return b;
    }
    return this.push(code, a, b, kernel(this.val[a], this.val[b]));
  }

  /** Number of primitive instructions (what the work of evaluating the tape is). */
  countPrimitives(from = 0): number {
    let n = 0;
    for (let i = from; i < this.length; i++) if (this.op[i] >= FIRST_PRIMITIVE) n++;
    return n;
  }

  private push(op: number, a: number, b: number, v: number): number {
    if (this.length === this.op.length) this.reserve(this.length * 2);
    const k = this.length++;
    this.op[k] = op;
    this.a[k] = a;
    this.b[k] = b;
    this.val[k] = v;
    return k;
  }

  private reserve(capacity: number): void {
    if (capacity <= this.op.length) return;
    const grow = <T extends Uint16Array | Int32Array | Float64Array>(old: T, make: (n: number) => T): T => {
      const next = make(capacity);
      next.set(old.subarray(0, this.length) as never);
      return next;
    };
    this.op = grow(this.op, (n) => new Uint16Array(n));
    this.a = grow(this.a, (n) => new Int32Array(n));
    this.b = grow(this.b, (n) => new Int32Array(n));
    this.val = grow(this.val, (n) => new Float64Array(n));
  }
}

