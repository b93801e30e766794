/**
 * @file The Wengert tape: a trace term in A-normal form, stored as columns.
 *
 * Instruction K defines variable vK: `vK = op(vA, vB)`. Columns are typed arrays (no
 * object per instruction) because traces reach millions of instructions. Constants
 * are instructions too (`vK = 2.5`), so every atom is a variable index and evaluation
 * never branches on the kind of an atom. The value column holds each variable's value,
 * computed as each instruction is appended (tapes are built by tracing, or by emitting
 * a derivative into a trace); the evaluator recomputes them at other inputs.
 *
 * Tensors: an instruction whose value is a tensor, or that is a tensor primitive (with
 * static parameters, any number of arguments), has an `Extra` record, found through the
 * `x` column (index + 1; 0 for a plain scalar instruction, the fast common case).
 *
 * A tape may defer its tensor values (`defer`): f's tensor operations while an outermost rd
 * traces it (api/tracing.ts), and that rd's derivative, which nobody reads while it is
 * emitted (api/transform.ts), are appended without computing, then evaluated together by an
 * evaluator that runs their chains of elementwise operations as compiled loops
 * (eval/deferred.ts). Reading a deferred value evaluates everything deferred so far first;
 * a real computed from deferred values (a sum: the loss) is computed at once, by the chains
 * it needs where it can (they stay deferred), else after everything deferred; a real of
 * values computed already leaves what is deferred as it is. Every decision is taken on the
 * value computing each instruction at once would have given.
 */
import { alloc, kernels, release, sameDims, size, type Buf, type Dims } from "@wengert/ops";
import { ARITY, CODE, CONST, FIRST_PRIMITIVE, FREE, INPUT, IS_TENSOR_OP, KERNELS, tensorSpec } from "./opcodes.js";
import type { Dense } from "./host-tensor.js";
import { expect as expectColumns, giveColumn, keptCount, keptLengths, takeColumn, type Column } from "./columns.js";

/** What a tensor instruction carries beside the columns. */
export interface Extra {
  readonly dims: Dims;
  /** The value when `dims` is not `[]` (scalar results stay in the value column). */
  readonly buf: Float64Array | null;
  /** Its arguments (for tensor primitives of any arity; `a`, `b` hold the first two). */
  readonly args: readonly number[];
  /** The primitive's static parameters (axes, permutation, indices…). */
  readonly params: unknown;
}

const SCALAR: Dims = [];

/** The buffer of a tensor instruction whose value is deferred: not yet computed. */
const DEFERRED = new Float64Array(0);

/**
 * Evaluates a tape's deferred instructions from `from` on (those before it are computed,
 * and so are some after it: appended with their values, as reals are), and
 * gives each value that `keep` names to `settled`: those `keep` needs, planned with their
 * chains compiled; or, `keep` null (a value is read, and any may be read next), all of
 * them in order, each on its own.
 */
export type Settle = (tape: Tape, from: number, keep: readonly number[] | null) => void;

/**
 * Computes real v (just appended, from deferred tensors) and gives it to `settled`, its
 * deferred arguments left deferred; or declines (false) where that would compute more
 * than chains of elementwise operations (a matrix product would be computed again later).
 */
export type SettleEarly = (tape: Tape, from: number, v: number) => boolean;

/**
 * How a tape defers: its settler, past how many instructions deferring ends, how a real
 * from deferred values is computed, and which instructions it goes on deferring after
 * (`after` false: everything deferred is computed, and deferring ends).
 */
export interface Deferral {
  readonly settle: Settle;
  readonly upTo?: number;
  readonly early?: SettleEarly;
  readonly after?: (tape: Tape, v: number) => boolean;
}

/** The most reals computed from deferred values while they stay deferred (each plans the tape again). */
const MAX_EARLY_REALS = 16;

const ADD = CODE.add;
const MUL = CODE.mul;
const SUB = CODE.sub;
const DIV = CODE.div;
const POW = CODE.pow;

const INITIAL_CAPACITY = 64;
/** How many recent literals `constant` checks before its map. */
const RECENT = 4;
/** A recycled tape's columns: empty (nothing can be written to them), shared. */
const NO_OPS = new Uint16Array(0);
const NO_INDICES = new Int32Array(0);
const NO_VALUES = new Float64Array(0);

/** The capacity the last tape recycled needed (`fit`): a training loop's next trace is as long. */
let lastRecycled = INITIAL_CAPACITY;

/**
 * Past this capacity a tape takes the longest set of columns the pool keeps (`longestKept`),
 * not a set of its own length: one long trace's columns serve every long trace after it.
 * Each length growing a set of its own, by doubling, overflowed the pool where lengths
 * alternate (the bench's 2N/N table; a scan between them, whose trace is short, made the next
 * one grow again from the start), and the columns made again, tens of MiB off the heap per
 * call, set off full collections: seconds each with a 2 GB live heap. Below it a tape keeps
 * columns of its own length: a repeated grad's sweep is made for its columns only up to
 * 2¹⁸ entries (diff/sweep-specialised.ts), and a short nested tape takes no long columns.
 */
const SHARED_FROM = 1 << 18;

/** Whether the pool keeps a whole set of columns of this length (op; a, b, x; val). */
const setKept = (c: number): boolean =>
  keptCount(Uint16Array, c) >= 1 && keptCount(Int32Array, c) >= 3 && keptCount(Float64Array, c) >= 1;

/** The longest whole set of columns kept, at least `capacity` long; 0 if none. */
function longestKept(capacity: number): number {
  let longest = 0;
  for (const c of keptLengths(Uint16Array)) if (c >= capacity && c > longest && setKept(c)) longest = c;
  return longest;
}

/** The capacity a tape of `length` instructions grows to from the initial one, by doubling. */
function fit(length: number): number {
  let c = INITIAL_CAPACITY;
  while (c < length) c *= 2;
  return c;
}

export class Tape {
  op: Uint16Array;
  a: Int32Array;
  b: Int32Array;
  val: Float64Array;
  /** Index + 1 into `extras`, or 0 for a plain scalar instruction. */
  x: Int32Array;
  readonly extras: Extra[] = [];
  length = 0;
  /** The values that `free` instructions stand for (traced values of outer traces). */
  readonly frees: unknown[] = [];
  /** One variable per distinct literal (keyed by value; -0 kept apart from 0). */
  // made on first use (a short trace may have no literal, or only recent ones)
  private consts: Map<number, number> | null = null;
  private negZero = -1;

  constructor(capacity = INITIAL_CAPACITY) {
    this.op = takeColumn(Uint16Array, capacity);
    this.a = takeColumn(Int32Array, capacity);
    this.b = takeColumn(Int32Array, capacity);
    this.val = takeColumn(Float64Array, capacity);
    this.x = takeColumn(Int32Array, capacity);
  }

  /**
   * A tape for an outermost trace: as long as the last one recycled needed, when the pool
   * still holds such columns (past SHARED_FROM, the longest it holds), so that a repeated
   * grad does not grow its tape by doubling (a copy of every column per doubling), and
   * starts small otherwise.
   */
  static reusing(): Tape {
    const c = lastRecycled;
    const kept = c <= INITIAL_CAPACITY ? 0 : c > SHARED_FROM ? longestKept(c) : setKept(c) ? c : 0;
    return new Tape(kept > 0 ? kept : INITIAL_CAPACITY);
  }

  /** A copy to append to: same variables, same values. */
  extend(): Tape {
    const t = new Tape(this.length * 2 + INITIAL_CAPACITY);
    t.op.set(this.op.subarray(0, this.length));
    t.a.set(this.a.subarray(0, this.length));
    t.b.set(this.b.subarray(0, this.length));
    t.val.set(this.val.subarray(0, this.length));
    t.x.set(this.x.subarray(0, this.length));
    for (const e of this.extras) t.extras.push(e);
    t.length = this.length;
    for (const v of this.frees) t.frees.push(v);
    if (this.consts !== null) t.consts = new Map(this.consts);
    for (let i = 0; i < RECENT; i++) {
      t.recentValues[i] = this.recentValues[i];
      t.recentVariables[i] = this.recentVariables[i];
    }
    t.slot = this.slot;
    t.negZero = this.negZero;
    return t;
  }

  input(index: number, value: number): number {
    return this.push(INPUT, index, 0, value);
  }

  /** The dims of variable v (`[]` for a real). */
  dims(v: number): Dims {
    const x = this.x[v];
    return x === 0 ? SCALAR : this.extras[x - 1].dims;
  }

  isTensor(v: number): boolean {
    const x = this.x[v];
    return x !== 0 && this.extras[x - 1].buf !== null;
  }

  /** The value of v as kernels take it: a number for a real, else its buffer. */
  value(v: number): Buf {
    const x = this.x[v];
    if (x === 0) return this.val[v];
    const buf = this.extras[x - 1].buf;
    if (buf === DEFERRED) {
      this.settle(null);
      return this.value(v);
    }
    return buf ?? this.val[v];
  }

  /** The evaluator of deferred instructions, while values are deferred; and where they start. */
  private settler: Settle | null = null;
  private deferredFrom = 0;
  /** Past how many deferred instructions deferring ends, how a real from deferred values is computed, and which instructions it goes on after (Deferral). */
  private deferUpTo = Infinity;
  private early: SettleEarly | null = null;
  private after: ((tape: Tape, v: number) => boolean) | null = null;
  /** Reals computed from deferred values so far (appendOp). */
  private earlyReals = 0;

  /**
   * From now on, tensor instructions are appended without their values, until `settle`
   * evaluates them; past `upTo` of them, they are evaluated and deferring ends (a long
   * trace's plan would cost more than it saves).
   */
  defer({ settle, upTo = Infinity, early, after }: Deferral): void {
    this.settler = settle;
    this.deferredFrom = this.length;
    this.deferUpTo = upTo;
    this.early = early ?? null;
    this.after = after ?? null;
  }

  /**
   * Evaluate the deferred instructions: all of them (`keep` null: deferring goes on), or
   * those that `keep` needs, the values of `keep` kept (deferring ends; the others are
   * never computed and must not be read).
   */
  settle(keep: readonly number[] | null): void {
    const settler = this.settler;
    if (settler === null) return;
    if (keep !== null) this.settler = null;
    if (this.deferredFrom < this.length) settler(this, this.deferredFrom, keep);
    this.deferredFrom = this.length;
  }

  /**
   * Carry the deferral of `from`, whose copy this is (`extend`), on here: its deferred
   * values are computed with what is appended here (an outermost grad's forward pass and
   * derivative in one plan), by `settle` if given (else `from`'s settler). The values
   * computed here are this copy's: `from`, read after, computes its own by its settler.
   */
  deferAs(from: Tape, settle: Settle | null = from.settler): void {
    this.settler = settle;
    this.deferredFrom = from.deferredFrom;
    this.deferUpTo = Infinity;
    this.early = from.early;
    this.after = null;
  }

  /** Whether values are deferred from here on. */
  get deferring(): boolean {
    return this.settler !== null;
  }

  /** Evaluate the deferred instructions, and append every later one with its value. */
  endDeferring(): void {
    this.settle(null);
    this.settler = null;
  }

  /** Deferred variable v's value, computed (by the settler): a buffer, or a number for a real. */
  settled(v: number, y: Buf): void {
    if (typeof y === "number") {
      this.val[v] = y;
      return;
    }
    const x = this.x[v] - 1;
    this.extras[x] = { ...this.extras[x], buf: y };
  }

  /** Whether v's value is deferred (to be computed by the settler). */
  isDeferred(v: number): boolean {
    return this.x[v] !== 0 && this.extras[this.x[v] - 1].buf === DEFERRED;
  }

  /** The buffer of a tensor variable (a one-element copy for a real). */
  buf(v: number): Float64Array {
    const b = this.value(v);
    return typeof b === "number" ? Float64Array.of(b) : b;
  }

  /** The arguments of instruction v. */
  args(v: number): readonly number[] {
    const x = this.x[v];
    if (x !== 0) return this.extras[x - 1].args;
    return ARITY[this.op[v]] === 2 ? [this.a[v], this.b[v]] : [this.a[v]];
  }

  params(v: number): unknown {
    const x = this.x[v];
    return x === 0 ? undefined : this.extras[x - 1].params;
  }

  /**
   * Hand every tensor buffer back to the pool, or all but the literals' (`literals`
   * false: a replay of the tape goes on reading those, eval/replay.ts), from instruction
   * `from` on (those before it may be a kept tape's, which this one extends). Only for a
   * tape nobody will read otherwise, whose buffers nobody else holds (no free variables
   * aliasing an outer trace's). The buffers `handOver` gave away stay out of the pool.
   */
  releaseBuffers(literals = true, from = 0): void {
    if (!this.ownsBuffers()) return;
    this.released = true;
    for (let i = from; i < this.length; i++) {
      const buf = this.x[i] === 0 ? null : this.extras[this.x[i] - 1].buf;
      if (buf !== null && buf !== DEFERRED && (literals || this.op[i] !== CONST) && !this.handedOver.includes(buf)) release(buf);
    }
  }

  /** Whether every tensor buffer here is this tape's alone (none aliases an outer trace's free variable) and not yet released. */
  ownsBuffers(): boolean {
    return this.frees.length === 0 && !this.released;
  }

  /**
   * Tensor variable v's buffer, given to the caller for good: `releaseBuffers` will not
   * hand it to the pool. Only for a tape that owns its buffers, v read nowhere else.
   */
  handOver(v: number): Float64Array {
    const buf = this.buf(v);
    this.handedOver.push(buf);
    return buf;
  }

  /** Buffers `handOver` gave away (a few results: a list is cheaper to search than a set to make). */
  private readonly handedOver: Float64Array[] = [];

  private released = false;

  /**
   * Hand the buffers of the tape's own computations back to the pool, not those of its
   * inputs, free variables or literals (an enclosing trace holds those): for a term
   * placed in an enclosing trace and not read again. place (diff/place.ts) replays its
   * instructions there, each computing a buffer of its own, so these are dead; a nested
   * grad (kmeans' dir: jvp of grad) otherwise left its primal's buffers to the collector
   * and allocated them afresh at every call. A buffer is released once, however many
   * instructions name it.
   */
  releaseComputed(): void {
    if (this.released) return;
    this.released = true;
    const held = new Set<Float64Array>();
    for (let i = 0; i < this.length; i++) {
      const buf = this.x[i] === 0 ? null : this.extras[this.x[i] - 1].buf;
      if (buf !== null && this.op[i] < FIRST_PRIMITIVE) held.add(buf);
    }
    for (let i = 0; i < this.length; i++) {
      const buf = this.x[i] === 0 ? null : this.extras[this.x[i] - 1].buf;
      if (buf === null || buf === DEFERRED || this.op[i] < FIRST_PRIMITIVE || held.has(buf)) continue;
      held.add(buf);
      release(buf);
    }
  }

  /**
   * Hand the columns back for other tapes (columns.ts), once nothing will read this tape
   * again: an outermost grad's, after its results are read. The tape is empty after.
   */
  recycle(): void {
    // what it needed, not what it was given: a short trace after a long one goes back to
    // columns of its own length (see SHARED_FROM); a tape that recorded nothing tells nothing
    if (this.length > 0) lastRecycled = fit(this.length);
    // the columns (22 bytes an entry) and a sweep's buffers (ct, has, active: 10 bytes an entry)
    expectColumns(32 * this.op.length);
    // given back in the reverse of the order the constructor takes them (the pool is last in,
    // first out): the next tape as long gets each column in the same role (a as a, not x),
    // which the sweep made for a set of columns needs (diff/sweep-specialised.ts)
    for (const c of [this.x, this.val, this.b, this.a, this.op]) giveColumn(c);
    this.op = NO_OPS;
    this.a = this.b = this.x = NO_INDICES;
    this.val = NO_VALUES;
    this.length = 0;
    this.readyUpTo = 0;
  }

  /** Number of instructions with an Extra: 0 for a tape of reals only. */
  get tensorCount(): number {
    return this.extras.length;
  }

  tensorInput(index: number, d: Dense): number {
    return this.pushExtra(INPUT, index, 0, { dims: d.dims, buf: d.data, args: [], params: undefined });
  }

  tensorConstant(d: Dense): number {
    if (d.dims.length === 0) return this.constant(d.data[0]);
    return this.pushExtra(CONST, 0, 0, { dims: d.dims, buf: d.data, args: [], params: undefined });
  }

  freeTensor(value: unknown, current: Dense): number {
    this.frees.push(value);
    return this.pushExtra(FREE, this.frees.length - 1, 0, { dims: current.dims, buf: current.data, args: [], params: undefined });
  }

  /** Append a scalar primitive applied elementwise (dims: the broadcast result's, checked by the caller). */
  applyElementwise(code: number, a: number, b: number, dims: Dims): number {
    const args = ARITY[code] === 1 ? [a] : [a, b];
    if (args.length === 2 && dims.length > 0) {
      if (code === ADD && this.isConstant(b, -0) && sameDims(this.dims(a), dims)) return a;
      if (code === ADD && this.isConstant(a, -0) && sameDims(this.dims(b), dims)) return b;
      if (code === MUL && this.isConstant(b, 1) && sameDims(this.dims(a), dims)) return a;
      if (code === MUL && this.isConstant(a, 1) && sameDims(this.dims(b), dims)) return b;
    }
    // x⁰ = 1 also for a 0-d x (a constant of dims [] is the real 1)
    if (args.length === 2 && isLiteralPower(code, this.val[b], this.isConstant(b))) return this.tensorConstant({ dims, data: alloc(size(dims), true).fill(1) });
    if (this.defers(dims) && !(this.op[a] === CONST && (args.length === 1 || this.op[b] === CONST))) {
      return this.pushDeferred(code, args, undefined, dims);
    }
    // otherwise appended as any primitive on tensors is, its value as compute gives it
    // (without compute's arrays of arguments: this runs once per tensor operation)
    const y =
      args.length === 1
        ? elementwise(code, this.value(a), SCALAR, 0, SCALAR, dims)
        : elementwise(code, this.value(a), this.dims(a), this.value(b), this.dims(b), dims);
    if (this.op[a] === CONST && (args.length === 1 || this.op[b] === CONST)) {
      return typeof y === "number" ? this.constant(y) : this.tensorConstant({ dims, data: y });
    }
    return this.appendComputed(code, args, undefined, dims, y);
  }

  /** Append a tensor primitive, or a scalar one elementwise (dims: its output's, checked by the caller). */
  appendOp(code: number, args: readonly number[], params: unknown, dims: Dims): number {
    const early = this.early;
    if (this.settler !== null && early !== null && dims.length === 0 && this.earlyReals < MAX_EARLY_REALS && args.some((v) => this.isDeferred(v))) {
      // a real from deferred tensors (a sum of all elements: the loss) is computed at once,
      // before anything reads it, by the chain of what it needs (a sum is a chain's sink), its
      // values in registers; they stay deferred, computed again (the same numbers) where the
      // derivative reads them, in its loops: nothing stored in between. Where that would
      // compute a kernel's value twice, everything deferred is computed now, and the real after.
      this.earlyReals++;
      const k = this.pushExtra(code, args[0] ?? 0, args[1] ?? 0, { dims, buf: null, args, params });
      if (!early(this, this.deferredFrom, k)) {
        this.settle(null);
        this.val[k] = compute(code, args.map((v) => this.value(v)), args.map((v) => this.dims(v)), params, dims) as number;
      }
      return k;
    }
    if (this.defers(dims) && args.some((v) => this.op[v] !== CONST)) return this.pushDeferred(code, args, params, dims);
    // plain loops: this runs once per tensor operation recorded
    const n = args.length;
    const values = new Array<Buf>(n);
    const argDims = new Array<Dims>(n);
    let constant = true;
    for (let i = 0; i < n; i++) {
      const v = args[i];
      values[i] = this.value(v);
      argDims[i] = this.dims(v);
      if (this.op[v] !== CONST) constant = false;
    }
    const y = compute(code, values, argDims, params, dims);
    if (constant) return typeof y === "number" ? this.constant(y) : this.tensorConstant({ dims, data: y });
    return this.appendComputed(code, args, params, dims, y);
  }

  /**
   * Whether an instruction of dims `dims` is appended without its value: while deferring, a
   * tensor. A real is computed at once (its value goes in the value column, which is read
   * directly); what it reads of the deferred values, `value` computes first. The rest stays
   * deferred: log Σ eˣ⁻ᵃ's log reads the sum only, and x − a, which the derivative never
   * reads (exp's rule reads eˣ⁻ᵃ), is never computed.
   */
  private defers(dims: Dims): boolean {
    return this.settler !== null && dims.length > 0;
  }

  /** Append a tensor instruction without its value (deferring ends past `deferUpTo` instructions). */
  private pushDeferred(code: number, args: readonly number[], params: unknown, dims: Dims): number {
    const k = this.pushExtra(code, args[0] ?? 0, args[1] ?? 0, { dims, buf: DEFERRED, args, params });
    if (k - this.deferredFrom >= this.deferUpTo || (this.after !== null && !this.after(this, k))) this.endDeferring();
    return k;
  }

  /** Append a tensor primitive whose value `y` is already computed (a scan's loop, run while its decisions were checked). */
  appendComputed(code: number, args: readonly number[], params: unknown, dims: Dims, y: Buf): number {
    // what it read of the deferred values, `value` computed; the others stay deferred (the
    // settlers compute the deferred instructions among those from `deferredFrom` only)
    const extra: Extra = { dims, buf: typeof y === "number" ? null : y, args, params };
    return this.pushExtra(code, args[0] ?? 0, args[1] ?? 0, extra, typeof y === "number" ? y : 0);
  }

  constant(c: number): number {
    // loops use a few literals over and over: four recent ones are checked before the map
    // (0 stays out of them, as 0 === -0)
    const values = this.recentValues;
    if (c !== 0) for (let i = 0; i < RECENT; i++) if (values[i] === c) return this.recentVariables[i];
    if (Object.is(c, -0)) return this.negZero >= 0 ? this.negZero : (this.negZero = this.push(CONST, 0, 0, c));
    this.consts ??= new Map();
    let k = this.consts.get(c);
    if (k === undefined) {
      k = this.push(CONST, 0, 0, c);
      this.consts.set(c, k);
    }
    if (c !== 0 && c === c) {
      values[this.slot] = c;
      this.recentVariables[this.slot] = k;
      this.slot = (this.slot + 1) % RECENT;
    }
    return k;
  }

  /** Recently used literals (NaN: empty), and their variables at the same places. */
  // plain arrays: a typed array (a store off the heap) costs far more to make, and a tape
  // is made per trace; two of them, so that the variables are small integers (in one
  // array with the values they were doubles, boxed when `constant` returns one uninlined)
  private readonly recentValues: number[] = [NaN, NaN, NaN, NaN];
  private readonly recentVariables: number[] = [0, 0, 0, 0];
  private slot = 0;

  free(value: unknown, current: number): number {
    this.frees.push(value);
    return this.push(FREE, this.frees.length - 1, 0, current);
  }

  /** A real literal (c itself, if given: −0 is not 0); tensor literals are not. */
  isConstant(v: number, c?: number): boolean {
    return this.op[v] === CONST && this.x[v] === 0 && (c === undefined || Object.is(this.val[v], c));
  }

  /**
   * Append `op(a, b)` (b ignored for unary ops). Folds only what is exact: operations
   * on literals are computed now, and `x + 0`, `x * 1` are `x`.
   */
  append(code: number, a: number, b = 0): number {
    const op = this.op;
    const val = this.val;
    // no literal among the arguments (almost every instruction of a trace): nothing to fold
    // (a unary op's b is 0, whichever variable that is: a literal there only costs the longer way)
    if (op[a] !== CONST && op[b] !== CONST) return this.push(code, a, b, binaryKernel(code, val[a], val[b]));
    return this.applyToLiterals(code, a, b);
  }

  /** `append(code, a)` for a unary primitive whose value `y` at `a` the caller computed with its kernel. */
  appendUnary(code: number, a: number, y: number): number {
    return this.op[a] !== CONST ? this.push(code, a, 0, y) : this.constant(y);
  }

  /** `append(code, a, b)` for a binary primitive whose value `y` the caller computed with its kernel. */
  appendBinary(code: number, a: number, b: number, y: number): number {
    return this.op[a] !== CONST && this.op[b] !== CONST ? this.push(code, a, b, y) : this.applyToLiterals(code, a, b);
  }

  /**
   * Append `code(a, b)` with value `y` as it is, where the caller knows nothing folds (a
   * literal that is no identity of the primitive beside a variable: record.ts literalCase).
   */
  appendUnfolded(code: number, a: number, b: number, y: number): number {
    return this.push(code, a, b, y);
  }

  /**
   * `append(code, a, constant(c))`, or with c first: what a primitive on a traced real and
   * a number records, without `append`'s second look at which argument is a literal.
   */
  appendWithLiteral(code: number, a: number, c: number, first: boolean): number {
    if (this.op[a] === CONST) return first ? this.append(code, this.constant(c), a) : this.append(code, a, this.constant(c));
    const va = this.val[a];
    // only x⁰, x + (−0) and x · 1 fold (isLiteralPower, identityArgument): other primitives need not ask
    if (code === ADD || code === MUL || code === POW) {
      if (!first && isLiteralPower(code, c, true)) return this.constant(1);
      const same = first ? identityArgument(code, c, va, true, false) : identityArgument(code, va, c, false, true);
      if (same >= 0) return a;
    }
    const k = this.constant(c);
    return first ? this.push(code, k, a, binaryKernel(code, c, va)) : this.push(code, a, k, binaryKernel(code, va, c));
  }

  /** `append` where an argument is a literal: folded if exact. */
  private applyToLiterals(code: number, a: number, b: number): number {
    const op = this.op;
    const val = this.val;
    if (ARITY[code] === 1) {
      const y = KERNELS[code](val[a], 0);
      return op[a] === CONST ? this.constant(y) : this.push(code, a, 0, y);
    }
    const va = val[a];
    const vb = val[b];
    const ca = op[a] === CONST && this.x[a] === 0;
    const cb = op[b] === CONST && this.x[b] === 0;
    const y = binaryKernel(code, va, vb);
    if ((ca && cb) || isLiteralPower(code, vb, cb)) return this.constant(y);
    const same = identityArgument(code, va, vb, ca, cb);
    return same === 0 ? a : same === 1 ? b : this.push(code, a, b, y);
  }

  /** Number of primitive instructions (what the work of evaluating the tape is). */
  countPrimitives(from = 0): number {
    let n = 0;
    for (let i = from; i < this.length; i++) if (this.op[i] >= FIRST_PRIMITIVE) n++;
    return n;
  }

  private pushExtra(op: number, a: number, b: number, extra: Extra, v = 0): number {
    const k = this.push(op, a, b, v);
    this.extras.push(extra);
    this.x[k] = this.extras.length;
    return k;
  }

  private push(op: number, a: number, b: number, v: number): number {
    if (this.length >= this.readyUpTo) this.makeRoom();
    const k = this.length++;
    this.op[k] = op;
    this.a[k] = a;
    this.b[k] = b;
    this.val[k] = v;
    // x[k] is 0 already (makeRoom)
    return k;
  }

  /**
   * Up to here the columns have room and x is zeroed (recycled columns are not): push's
   * one check, and that of the primitives' common case, which writes a scalar instruction
   * below it into op, a, b and val directly (record.ts `appended`). x is zeroed ahead in
   * runs (makeRoom) rather than written 0 by every scalar instruction, almost every one of a
   * trace; and in runs as long as what was written, not at once, since a short trace may
   * have been given a long tape's columns (reusing).
   */
  get ready(): number {
    return this.readyUpTo;
  }
  private readyUpTo = 0;

  private makeRoom(): void {
    if (this.length === this.op.length) this.reserve(this.length * 2);
    const end = Math.min(this.op.length, this.length + Math.max(this.length, INITIAL_CAPACITY));
    this.x.fill(0, this.length, end);
    this.readyUpTo = end;
  }

  private reserve(wanted: number): void {
    if (wanted <= this.op.length) return;
    const capacity = wanted > SHARED_FROM ? Math.max(wanted, longestKept(wanted)) : wanted;
    const grow = <T extends Column>(old: T, make: { new (n: number): T; readonly name: string }): T => {
      const next = takeColumn(make, capacity);
      next.set(old.subarray(0, this.length) as never);
      giveColumn(old);
      return next;
    };
    this.op = grow(this.op, Uint16Array);
    this.a = grow(this.a, Int32Array);
    this.b = grow(this.b, Int32Array);
    this.val = grow(this.val, Float64Array);
    this.x = grow(this.x, Int32Array);
  }
}

/**
 * The value of a primitive applied to tensors (a tensor primitive, or a scalar one
 * elementwise with broadcasting) from its arguments' values and dims: a buffer, or a
 * number for a result of dims []. Tracing computes every such instruction with this
 * function, and so do evaluation and replay (eval/), so they compute the same numbers.
 */
export function compute(code: number, values: readonly Buf[], dims: readonly Dims[], params: unknown, out: Dims): Buf {
  if (IS_TENSOR_OP[code]) {
    const y = tensorSpec(code).forward(values, dims, params, out);
    // a result of dims [] is a real, for every tensor primitive here in one place (a buffer
    // of one read as a real was 0: the gradient of sum(a) for a real a, through reshape
    // and broadcastTo to dims [])
    if (out.length === 0 && typeof y !== "number") {
      const v = y[0];
      release(y);
      return v;
    }
    return y;
  }
  return ARITY[code] === 1 ? elementwise(code, values[0], dims[0], 0, SCALAR, out) : elementwise(code, values[0], dims[0], values[1], dims[1], out);
}

/** `compute` of a scalar primitive applied elementwise (b, db ignored for a unary one). */
function elementwise(code: number, a: Buf, da: Dims, b: Buf, db: Dims, out: Dims): Buf {
  const kernel = KERNELS[code];
  // dims []: reals, or 0-d tensors' one element (their buffers added as strings before)
  if (out.length === 0) return kernel(elementOf(a), ARITY[code] === 1 ? 0 : elementOf(b));
  if (ARITY[code] === 1) return typeof a === "number" ? kernel(a, 0) : kernels.map(a, kernel as (x: number) => number);
  return kernels.zip(a, da, b, db, out, kernel);
}

const elementOf = (v: Buf): number => (typeof v === "number" ? v : v[0]);

/** A binary primitive on numbers, the four arithmetic kernels inline: a call through the table per instruction is dear. */
export function binaryKernel(code: number, va: number, vb: number): number {
  return code === ADD ? va + vb : code === MUL ? va * vb : code === SUB ? va - vb : code === DIV ? va / vb : KERNELS[code](va, vb);
}

/**
 * Whether `op(x, b)` is the literal 1 whatever x is: x⁰ (Math.pow(x, ±0) is 1 even for
 * NaN). Folded, so that its derivative is none: b · x^(b − 1), pow's rule, is 0 · x⁻¹
 * at b = 0, NaN at x = 0 (d/dx x⁰, and every derivative of xⁿ past the n-th, there).
 * dual.ts folds by the same rule.
 */
export function isLiteralPower(code: number, vb: number, cb: boolean): boolean {
  return code === POW && cb && vb === 0;
}

/**
 * The tape's exact folding of `x + (−0)` and `x · 1` (ca, cb: whether each argument is a
 * literal): 0 if `op(a, b)` is `a` itself, 1 if it is `b`, −1 if it is a new value.
 * Not `x + 0`: at x = −0 it is +0, and a trace holds at other points than its own
 * (a −0 there turned atan2(x + 0, −1) from π into −π). dual.ts folds by the same rule,
 * so that its numbers are the built term's.
 */
export function identityArgument(code: number, va: number, vb: number, ca: boolean, cb: boolean): -1 | 0 | 1 {
  if (code === ADD) {
    if (cb && Object.is(vb, -0)) return 0;
    if (ca && Object.is(va, -0)) return 1;
  } else if (code === MUL) {
    if (cb && vb === 1) return 0;
    if (ca && va === 1) return 1;
  }
  return -1;
}
