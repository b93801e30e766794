/**
 * @file Tracing: traced reals, the stack of open traces, and recording primitives.
 *
 * This is the paper's symbolic evaluation (Figs. 4–5) with TypeScript as the host
 * language: a traced real carries its concrete value, so the user's `if`, loops,
 * recursion and calls are decided on concrete values and leave nothing behind, while
 * every primitive applied to a traced real is evaluated at once and recorded.
 *
 * Nesting: each `rd` opens a trace one level deeper. A primitive is recorded in the
 * innermost trace among its arguments' traces; a value of an outer trace used there is
 * a free variable of the inner trace term (a `free` instruction), constant for the
 * inner derivative, exactly as the outer differentiation variable is free in the
 * inner trace term of the paper's nested examples (end of Sec. 3).
 */
import ndarray from "ndarray";
import { alloc, BINARY_NAMES, broadcastDims, kernels, predicates, showDims, size, UNARY_NAMES, type Dims, type Emitter, type PredicateName, type TensorEmitter, type UnaryOp } from "@wengert/ops";
import { ClosedTraceError, NaNError, ShapeError, TieError, TraceLengthError, TracedOperatorError, WengertError } from "../errors.js";
import { describe } from "../structure.js";
import { atCallSite } from "./callsite.js";
import { ARITY, CODE, CONST, FIRST_PRIMITIVE, IS_TENSOR_OP, KERNELS, KINKS, PRIMITIVES, primitiveOf, tensorSpec } from "./opcodes.js";
import { compute, Tape } from "./tape.js";
import { isConcreteTensor, ownedCopy, Tensor, toDense, type ConcreteTensor, type Dense } from "./tensor.js";

export type TieMode = "warn" | "error" | "ignore";
export const TIE_MODES: readonly TieMode[] = ["warn", "error", "ignore"];

/** A real number being traced: its trace and its variable there. */
export class Real {
  // `declare`d and assigned in the constructor: one is made per traced operation, and class
  // field definitions would cost a define per field
  declare readonly trace: Trace;
  declare readonly atom: number;

  constructor(trace: Trace, atom: number) {
    (this as { trace: Trace }).trace = trace;
    (this as { atom: number }).atom = atom;
  }

  /**
   * The concrete value (what conditionals in user code decide on). Reading it is a
   * decision wengert cannot see, so a trace that read it is never replayed (compile.ts).
   */
  get value(): number {
    // after its rd returned, a trace's tape may have been recycled (columns.ts): the value is gone
    if (this.atom >= this.trace.tape.length) live(this, "value");
    this.trace.opaque = true;
    return this.trace.tape.val[this.atom];
  }

  /** JavaScript operators would compute with the value and silently lose the derivative. */
  [Symbol.toPrimitive](hint: string): string {
    if (hint === "string") return String(this.value);
    throw new TracedOperatorError(
      `A traced real (value ${shown(this)}) was used with a JavaScript operator such as +, *, < or Math.sin. ` +
        `That would compute with its value and silently lose the derivative. Use wengert's functions ` +
        `instead (add, mul, lt, sin, …), which work on numbers and traced reals alike; use primal(x) to read the value on purpose.`,
    );
  }

  toString(): string {
    return `Real(${shown(this)})`;
  }

  /**
   * JSON.stringify writes its value, read as String(x) reads it (so a trace that did is
   * never replayed); it walked the whole tape before: 9 MB for 10⁵ steps.
   */
  toJSON(): number {
    return this.value;
  }

  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return this.toString();
  }
}

export type Scalar = number | Real;

/** A traced real's value for messages ("?" once its tape has been recycled). */
const shown = (r: Real): string => (r.atom < r.trace.tape.length ? String(valueOf(r)) : "?");

/** A traced real's value, read by wengert itself (not a decision of the user's). */
export function valueOf(r: Real): number {
  return r.trace.tape.val[r.atom];
}

export function isScalar(v: unknown): v is Scalar {
  return typeof v === "number" || v instanceof Real;
}

/** Anything a primitive takes: reals and tensors, traced or not. */
export type Operand = Scalar | Tensor | ConcreteTensor;

export function isOperand(v: unknown): v is Operand {
  return typeof v === "number" || v instanceof Real || v instanceof Tensor || isConcreteTensor(v);
}

/** A traced value of either kind. */
export type Traced = Real | Tensor;

/** One open (or finished) trace: the tape being recorded and what `rd` asked for. */
/** What an rd call asked of its trace (RdOptions, checked). */
export interface TraceSettings {
  readonly ties: TieMode;
  /** Throw at the first primitive whose result is NaN or infinite. */
  readonly checkNaN: boolean;
  /** Throw when the trace grows beyond this many instructions. */
  readonly maxLength: number;
  /**
   * The trace will be replayed at other points (compileGrad), so its decisions are kept
   * as guards; so are those of every trace opened inside it, whose terms may be placed
   * in it with their guards (diff/place.ts). Other traces keep none: a guard per
   * decision was a fifth of the time of `grad` on a loop that decides at every step.
   */
  readonly replayable: boolean;
}

export const DEFAULT_SETTINGS: TraceSettings = { ties: "warn", checkNaN: false, maxLength: Infinity, replayable: false };

/** A decision taken while tracing: `pred(v_a, v_b)` came out `outcome`. */
export interface Guard {
  readonly pred: PredicateName;
  readonly a: number;
  readonly b: number;
  readonly outcome: boolean;
  /**
   * Whether the two sides were different variables where it was decided: then equal
   * values are a tie. Kept as decided, since placing the guard in an enclosing trace
   * may make a and b one variable there (an inner grad taken at an outer value).
   */
  readonly distinct: boolean;
}

export class Trace {
  /** Set once its transformation has returned: its traced values are dead (live()). */
  get closed(): boolean {
    return this.isClosed;
  }
  set closed(c: boolean) {
    this.isClosed = c;
    this.refresh();
  }
  private isClosed = false;
  /** While a reverse or tangent rule is being emitted: which one, for checkNaN's message. */
  context = "";
  /** An inner rd with checkNaN emitting its derivative here: its name (it asks for checks). */
  get nanCaller(): string | null {
    return this.nanCallerName;
  }
  set nanCaller(name: string | null) {
    this.nanCallerName = name;
    this.refresh();
  }
  private nanCallerName: string | null = null;
  /**
   * Whether every instruction is checked as it is recorded (checkNaN, maxLength); set
   * with `nanCaller`.
   */
  private checked = false;
  /**
   * Open and unchecked: a primitive on its reals is appended to the tape and nothing
   * else (kinks aside). The one field the common paths read (applyUnary, applyBinary,
   * decide): W1's trace took 8–13% longer with `closed`, `checked` and the kink table
   * read per instruction.
   */
  get fast(): boolean {
    return this.unchecked;
  }
  private unchecked = false;

  private refresh(): void {
    this.checked = this.settings.checkNaN || this.nanCallerName !== null || this.maxLength < Infinity;
    this.unchecked = !this.isClosed && !this.checked && this.capturedBy === null;
  }
  /**
   * While a scan's body is traced (api/scan.ts): the body's trace, which records what
   * would be recorded here, so that every operation of the body is in its term (an
   * operation on outer values alone included, as in the loop written out). Not fast then.
   */
  get capturedBy(): Trace | null {
    return this.captor;
  }
  set capturedBy(t: Trace | null) {
    this.captor = t;
    this.refresh();
  }
  private captor: Trace | null = null;
  /** > 0 while a user rule computes results of which only some are needed (checked after). */
  quiet = 0;
  /** Ties met while tracing (descriptions), for `ties: "warn"`. */
  readonly ties: string[] = [];
  /** The predicates decided while tracing, on which variables, with which outcome (if it keeps guards). */
  readonly guards: Guard[] = [];
  /** Whether decisions are kept as guards: settings.replayable, or the enclosing trace's (see openTrace). */
  keepsGuards = false;
  /** Set when f read a traced value (`.value`, primal, String): a decision no guard records. */
  opaque = false;
  // both maps made on first use: most traces need neither, and a trace is made per call
  private lifted: Map<Traced, number> | null = null;
  /** settings.maxLength, read on every checked instruction. */
  private readonly maxLength: number;
  private constants: Map<object, number> | null = null;

  constructor(
    readonly level: number,
    readonly settings: TraceSettings,
    /** The API call that opened it, for messages ("rd", "grad"…). */
    readonly caller: string,
    readonly tape: Tape = new Tape(),
  ) {
    this.maxLength = settings.maxLength;
    this.nanCaller = null; // sets `checked`
  }

  /** The variable standing for `x` in this trace: a literal, a variable, or a free one. */
  atomOf(x: Operand): number {
    if (typeof x === "number") return this.tape.constant(x);
    if (x instanceof Real || x instanceof Tensor) {
      if (x.trace === this) return x.atom;
      this.lifted ??= new Map();
      let v = this.lifted.get(x);
      if (v === undefined) {
        // a value of an enclosing trace, free here; one of a trace that has returned is dead
        // (its value may be gone with its tape: NaN, silently, as f's output)
        live(x, this.caller);
        const from = x.trace.tape;
        v = x instanceof Real ? this.tape.free(x, valueOf(x)) : this.tape.freeTensor(x, { dims: from.dims(x.atom), data: from.buf(x.atom) });
        this.lifted.set(x, v);
      }
      return v;
    }
    // a tensor the user holds (data, a closure's constant): a literal, copied once per trace
    this.constants ??= new Map();
    let v = this.constants.get(x);
    if (v === undefined) {
      const d = toDense(x, "a tensor argument");
      v = this.tape.tensorConstant(ownedCopy(d));
      this.constants.set(x, v);
    }
    return v;
  }

  constant(c: number): number {
    return this.tape.constant(c);
  }

  /** Record a primitive; kinked primitives evaluated at their kink are reported. */
  apply(code: number, a: number, b = 0): number {
    const tape = this.tape;
    if (tape.x[a] !== 0 || (ARITY[code] === 2 && tape.x[b] !== 0)) return this.applyElementwise(code, a, b);
    return this.applyScalar(code, a, b);
  }

  /** `apply` on variables known to be reals (what almost every traced operation is). */
  applyScalar(code: number, a: number, b = 0): number {
    return this.checked || KINKS[code] !== undefined ? this.applyChecked(code, a, b) : this.tape.apply(code, a, b);
  }

  /** `applyScalar` with its checks: kinks, NaN, the trace's length. */
  private applyChecked(code: number, a: number, b: number): number {
    const tape = this.tape;
    const kink = KINKS[code];
    if (kink !== undefined && tape.op[a] !== CONST && kink(tape.val[a])) {
      const spec = primitiveOf(code).spec as UnaryOp;
      this.tie(`${primitiveOf(code).name}(${tape.val[a]}) was evaluated at its kink; wengert uses ${spec.atKink}`);
    }
    const v = tape.apply(code, a, b);
    if (this.checksNaN() && !Number.isFinite(tape.val[v])) this.reportNaN(code, a, b, v);
    if (tape.length > this.maxLength) this.checkLength();
    return v;
  }

  /** A scalar primitive on tensors, elementwise with broadcasting. */
  private applyElementwise(code: number, a: number, b: number): number {
    const tape = this.tape;
    const unary = ARITY[code] === 1;
    let dims = tape.dims(a);
    if (!unary) {
      const d = broadcastDims(dims, tape.dims(b));
      if (typeof d === "string") throw shapeError(primitiveOf(code).name, d);
      dims = d;
    }
    const kink = KINKS[code];
    if (kink !== undefined && tape.op[a] !== CONST) {
      const at = tape.buf(a).findIndex((t) => kink(t));
      if (at >= 0) this.tie(`${primitiveOf(code).name} was evaluated at its kink (element ${at} of a tensor ${showDims(tape.dims(a))} is ${tape.buf(a)[at]}); wengert uses ${(primitiveOf(code).spec as UnaryOp).atKink}`);
    }
    const v = tape.applyElementwise(code, a, b, dims);
    this.checkResult(code, unary ? [a] : [a, b], v);
    return v;
  }

  /** Record a tensor primitive with its static parameters; shapes are checked here. */
  applyOp(code: number, args: readonly number[], params: unknown): number {
    const tape = this.tape;
    const spec = tensorSpec(code);
    const dims = spec.shape(args.map((v) => tape.dims(v)), params);
    if (typeof dims === "string") throw shapeError(primitiveOf(code).name, dims, args.map((v) => tape.dims(v)));
    const v = tape.applyOp(code, args, params, dims);
    if (spec.tie !== undefined && tape.op[v] !== CONST) {
      const tie = spec.tie(args.map((u) => tape.value(u)), args.map((u) => tape.dims(u)), params, tape.value(v));
      if (tie !== null) this.tie(tie);
    }
    this.checkResult(code, args, v);
    return v;
  }

  private checkResult(code: number, args: readonly number[], v: number): void {
    if (this.checksNaN()) {
      const y = this.tape.value(v);
      const bad = typeof y === "number" ? (Number.isFinite(y) ? -1 : 0) : y.findIndex((t) => !Number.isFinite(t));
      if (bad >= 0) {
        const where = this.context ? `in ${this.context}` : "in the forward pass (f itself)";
        const show = (u: number): string => (this.tape.dims(u).length === 0 ? String(this.tape.val[u]) : `tensor ${showDims(this.tape.dims(u))}`);
        throw new NaNError(
          `${this.nanCaller ?? this.caller}: checkNaN: ${primitiveOf(code).name}(${args.map(show).join(", ")}) ` +
            `has ${typeof y === "number" ? y : `${y[bad]} at element ${bad}`} ${where}.`,
        );
      }
    }
    this.checkLength();
  }

  private checkLength(): void {
    const tape = this.tape;
    if (tape.length > this.settings.maxLength) {
      throw new TraceLengthError(
        `${this.caller}: the trace reached ${this.tape.length} instructions, over options.maxTraceLength = ${this.settings.maxLength}; ` +
          `f may not terminate (a loop whose condition never changes?). Raise the limit if the trace is meant to be this long.`,
      );
    }
  }

  /** Whether a result that is NaN or infinite is reported: checkNaN here, or asked by an inner rd emitting here (nanCaller). */
  checksNaN(): boolean {
    return (this.settings.checkNaN || this.nanCaller !== null) && this.quiet === 0;
  }

  private reportNaN(code: number, a: number, b: number, v: number): never {
    const p = primitiveOf(code);
    const args = (p.spec.arity === 1 ? [a] : [a, b]).map((x) => this.tape.val[x]);
    const where = this.context ? `in ${this.context}` : "in the forward pass (f itself)";
    throw new NaNError(
      `${this.nanCaller ?? this.caller}: checkNaN: ${p.name}(${args.join(", ")}) = ${this.tape.val[v]} ${where}; ` +
        `its inputs: ${args.map(() => "real").join(", ")}.`,
    );
  }

  tie(what: string): void {
    if (this.settings.ties === "ignore") return;
    if (this.settings.ties === "error") {
      // f may catch it and go on: the decision that threw is recorded by no guard, so
      // neither this trace nor any enclosing one may be replayed (compileGrad)
      this.opaque = true;
      for (const open of stack) open.opaque = true;
      throw new TieError(
        `${this.caller}: ${what}. The derivative is not defined there (the program is not differentiable at this point). ` +
          `Set ties to "warn" or "ignore" (option ties, CLI --ties) to accept wengert's convention at ties.`,
      );
    }
    this.ties.push(what);
  }
}

const stack: Trace[] = [];

export function openTrace(settings: TraceSettings, caller: string): Trace {
  const t = new Trace(stack.length, settings, caller, stack.length === 0 ? Tape.reusing() : new Tape());
  t.keepsGuards = settings.replayable || (stack.length > 0 && stack[stack.length - 1].keepsGuards);
  stack.push(t);
  return t;
}

/**
 * Let `body`, the innermost open trace, record what is done to the values of every trace
 * opened before it (see `capturedBy`), until the function returned is called.
 */
export function captureOuter(body: Trace): () => void {
  const outer = stack.slice(0, stack.indexOf(body));
  const before = outer.map((t) => t.capturedBy);
  for (const t of outer) t.capturedBy = body;
  return () => outer.forEach((t, k) => (t.capturedBy = before[k]));
}

/** The open traces, outermost first (a scan's body looks for checks they ask). */
export function openTraces(): readonly Trace[] {
  return stack;
}

/** Whether some trace is open: an rd (or another transformation) is running f. */
export function tracing(): boolean {
  return stack.length > 0;
}

/**
 * A trace that is not on the stack, to emit a derivative term into at the outermost
 * level: it extends `tape` (the finished trace term C, whose variables and values it
 * reuses) and evaluates what is emitted at once. Rules of user primitives, written with
 * the public functions, run on its traced reals. Close it when done.
 */
export function sinkFor(tape: Tape, caller: string, checkNaN: boolean): Trace {
  return new Trace(stack.length, { ties: "ignore", checkNaN, maxLength: Infinity, replayable: false }, caller, tape.extend());
}

/**
 * Close t, the innermost open trace. `abandoned`: f threw, and traces it opened inside t
 * may have been left open by the error (one that stopped their own rd before it could
 * close them, such as a stack overflow): they are closed with t, and the error goes on.
 */
export function closeTrace(t: Trace, abandoned = false): void {
  if (t.closed) return;
  if (!stack.includes(t)) {
    t.closed = true;
    return;
  }
  if (stack[stack.length - 1] !== t && !abandoned) {
    throw new WengertError(`${t.caller}: traces closed out of order; was f asynchronous? rd needs f to return its result synchronously.`);
  }
  while (stack.length > 0) {
    const top = stack.pop()!;
    top.closed = true;
    if (top === t) return;
  }
}

/** A ShapeError naming the primitive, the shapes, and the user's call. */
export function shapeError(name: string, message: string, dims?: readonly Dims[]): ShapeError {
  const shapes = dims === undefined ? "" : ` (argument shapes ${dims.map(showDims).join(", ")})`;
  return new ShapeError(`${name}: ${message}${shapes}${atCallSite()}.`);
}

export function live(r: Real | Tensor, where: string): Trace {
  if (r.trace.closed) {
    // a tensor keeps its dims; a real's value goes when its tape is recycled (columns.ts)
    const what = r instanceof Tensor ? `dims ${showDims(r.dims)}` : r.atom >= r.trace.tape.length ? "its value gone with its trace" : `value ${valueOf(r)}`;
    throw new ClosedTraceError(
      `${where}: a traced value (v${r.atom}, ${what}) was used after the ${r.trace.caller} call that traced it returned. ` +
        `Traced values live only while their ${r.trace.caller} runs: return what you need from f instead of keeping it outside.`,
    );
  }
  return r.trace;
}

function checkArg(x: unknown, name: string, position: number): asserts x is Scalar {
  if (!isScalar(x)) throw new WengertError(`${name}: argument ${position} is ${describe(x)}; expected a number or a traced real.`);
}

/** The innermost live trace among the traced arguments, or null if none is traced. */
function innermost(code: number | PredicateName, a: Scalar, b: Scalar): Trace | null {
  const ta = typeof a === "number" ? null : a.trace.closed ? live(a, nameOf(code)) : a.trace;
  const tb = typeof b === "number" ? null : b.trace.closed ? live(b, nameOf(code)) : b.trace;
  if (ta === null) return recorder(tb);
  if (tb === null) return recorder(ta);
  return recorder(ta.level >= tb.level ? ta : tb);
}

/** The trace that records an operation whose innermost trace is t: t, or the scan body capturing it. */
export function recorder<T extends Trace | null>(t: T): T | Trace {
  return t === null || t.capturedBy === null ? t : t.capturedBy;
}

const nameOf = (code: number | PredicateName): string => (typeof code === "number" ? primitiveOf(code).name : code);

/** Apply the primitive `name` to scalars: a number if none is traced, else a traced real. */
export function applyUnary(code: number, x: Scalar): Scalar;
export function applyUnary(code: number, x: unknown): Operand;
export function applyUnary(code: number, x: unknown): Operand {
  // the common case first: a real of an open trace without checks
  if (x instanceof Real && x.trace.fast && KINKS[code] === undefined) return new Real(x.trace, x.trace.tape.apply(code, x.atom));
  const p = primitiveOf(code);
  if (typeof x === "number") return (p.spec.forward as (x: number) => number)(x);
  if (x instanceof Real) {
    const t = recorder(live(x, p.name));
    return new Real(t, t.apply(code, t.atomOf(x)));
  }
  return applyGeneric(code, [x], undefined);
}

export function applyBinary(code: number, a: Scalar, b: Scalar): Scalar;
export function applyBinary(code: number, a: unknown, b: unknown): Operand;
export function applyBinary(code: number, a: unknown, b: unknown): Operand {
  // the common cases first: reals of one open trace without checks (binary
  // primitives have no kinks), or one of them and a number
  if (a instanceof Real) {
    const t = a.trace;
    if (t.fast) {
      if (b instanceof Real && b.trace === t) return new Real(t, t.tape.apply(code, a.atom, b.atom));
      if (typeof b === "number") return new Real(t, t.tape.applyLiteral(code, a.atom, b, false));
    }
  } else if (typeof a === "number" && b instanceof Real && b.trace.fast) {
    const t = b.trace;
    return new Real(t, t.tape.applyLiteral(code, b.atom, a, true));
  }
  if ((a instanceof Real || typeof a === "number") && (b instanceof Real || typeof b === "number")) {
    const t = innermost(code, a, b);
    if (t === null) return KERNELS[code](a as number, b as number);
    return new Real(t, t.apply(code, t.atomOf(a), t.atomOf(b)));
  }
  return applyGeneric(code, [a, b], undefined);
}

/** A traced value of trace t for its variable v: a traced tensor, or a traced real. */
export function wrap(t: Trace, v: number): Real | Tensor {
  return t.tape.isTensor(v) ? new Tensor(t, v) : new Real(t, v);
}

/** A value computed outside any trace, as the user gets it: a number or an ndarray. */
function concrete(y: number | Float64Array, dims: Dims): Operand {
  return typeof y === "number" ? y : (ndarray(y, [...dims]) as ConcreteTensor);
}

/** The concrete value of an operand: a number, or a tensor's dense data (read, not copied). */
export function primalOf(v: Operand, where: string): number | Dense {
  if (typeof v === "number") return v;
  if (v instanceof Real) return valueOf(v);
  if (v instanceof Tensor) return { dims: v.dims, data: v.trace.tape.buf(v.atom) };
  return toDense(v, where);
}

/** The concrete value of an operand as dense data (a real as dims []), for kernels. */
function denseOf(v: Operand, where: string): Dense {
  const p = primalOf(v, where);
  return typeof p === "number" ? { dims: [], data: Float64Array.of(p) } : p;
}

/**
 * Apply any primitive (elementwise or tensor) to operands: recorded in the innermost
 * trace among them, or computed at once when none is traced.
 */
export function applyGeneric(code: number, args: readonly unknown[], params: unknown): Operand {
  const name = primitiveOf(code).name;
  args.forEach((a, i) => {
    if (!isOperand(a)) throw new WengertError(`${name}: argument ${i + 1} is ${describe(a)}; expected a number, a tensor (ndarray or Float64Array) or a traced value${atCallSite()}.`);
  });
  const t = innermostOf(name, args as Operand[]);
  if (t !== null) {
    const atoms = (args as Operand[]).map((a) => t.atomOf(a));
    const v = IS_TENSOR_OP[code] ? t.applyOp(code, atoms, params) : t.apply(code, atoms[0], atoms[1] ?? 0);
    return wrap(t, v);
  }
  const ds = (args as Operand[]).map((a, i) => denseOf(a, `${name}'s argument ${i + 1}`));
  const value = (d: Dense): number | Float64Array => (d.dims.length === 0 ? d.data[0] : d.data);
  if (IS_TENSOR_OP[code]) {
    const spec = tensorSpec(code);
    const dims = spec.shape(ds.map((d) => d.dims), params);
    if (typeof dims === "string") throw shapeError(name, dims, ds.map((d) => d.dims));
    return concrete(compute(code, ds.map(value), ds.map((d) => d.dims), params, dims), dims);
  }
  const kernel = KERNELS[code];
  // the kernel itself, as compute (tape.ts) passes it: map knows Math.tanh, exp… and runs a loop of its own
  if (ds.length === 1) return concrete(kernels.map(ds[0].data, kernel as (x: number) => number), ds[0].dims);
  const dims = broadcastDims(ds[0].dims, ds[1].dims);
  if (typeof dims === "string") throw shapeError(name, dims);
  return concrete(kernels.zip(value(ds[0]), ds[0].dims, value(ds[1]), ds[1].dims, dims, kernel), dims);
}

function innermostOf(name: string, args: readonly Operand[]): Trace | null {
  let best: Trace | null = null;
  for (const a of args) {
    if (a instanceof Real || a instanceof Tensor) {
      const t = live(a, name);
      if (best === null || t.level > best.level) best = t;
    }
  }
  return recorder(best);
}

/**
 * Decide a predicate on concrete values, reporting a tie (equal arguments) to the trace.
 * `test` is the predicate's (callers that decide often look it up once).
 */
export function decide(name: PredicateName, a: unknown, b: unknown, test = predicates[name].test): boolean {
  // the common case first: a real of an open trace that keeps no guards, against a number, not a tie
  if (a instanceof Real && typeof b === "number" && a.trace.fast && !a.trace.keepsGuards) {
    const va = a.trace.tape.val[a.atom];
    if (va !== b) return test(va, b);
  }
  checkArg(a, name, 1);
  checkArg(b, name, 2);
  const t = innermost(name, a, b);
  const va = typeof a === "number" ? a : valueOf(a);
  const vb = typeof b === "number" ? b : valueOf(b);
  const outcome = test(va, vb);
  const distinct = !oneVariable(a, b);
  if (t !== null && va === vb && distinct) {
    t.tie(`${name}(${va}, ${vb}) was decided at a tie (both sides equal), taking the branch where ${va} ${predicates[name].symbol} ${vb} is ${outcome}`);
  }
  // the decision, for replaying the trace at another point (compile.ts): it must come out the same
  if (t !== null && t.keepsGuards) t.guards.push({ pred: name, a: t.atomOf(a), b: t.atomOf(b), outcome, distinct });
  return outcome;
}

/**
 * Whether a and b are one variable (x against x, or x · 1, which the tape folds to x):
 * equal at every point, so equal values there are no tie.
 */
function oneVariable(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  const traced = (a instanceof Real && b instanceof Real) || (a instanceof Tensor && b instanceof Tensor);
  return traced && a.trace === b.trace && a.atom === b.atom;
}

/**
 * A 0/1 mask `pred(a, b)` elementwise (broadcasting) from concrete values: a decision,
 * no derivative. A tie (equal elements) is reported to the innermost trace involved.
 * The mask enters the trace as a literal, which no guard checks: a trace whose values
 * decided a mask is never replayed (opaque, as when a value is read).
 */
export function decideTensor(name: PredicateName, a: unknown, b: unknown): ConcreteTensor {
  for (const [v, i] of [[a, 1], [b, 2]] as const) {
    if (!isOperand(v)) throw new WengertError(`${name}: argument ${i} is ${describe(v)}; expected a number, a tensor or a traced value${atCallSite()}.`);
  }
  const t = innermostOf(name, [a as Operand, b as Operand]);
  if (t !== null) t.opaque = true;
  const da = denseOf(a as Operand, name);
  const db = denseOf(b as Operand, name);
  const dims = broadcastDims(da.dims, db.dims);
  if (typeof dims === "string") throw shapeError(name, dims);
  const test = predicates[name].test;
  const va = da.dims.length === 0 ? da.data[0] : da.data;
  const vb = db.dims.length === 0 ? db.data[0] : db.data;
  if (t !== null && !oneVariable(a, b)) {
    const ties = kernels.zip(va, da.dims, vb, db.dims, dims, (x, y) => (x === y ? 1 : 0));
    const at = ties.indexOf(1);
    if (at >= 0) t.tie(`${name} was decided at a tie (element ${at} of the mask ${showDims(dims)}: both sides ${va instanceof Float64Array ? va[at % va.length] : va})`);
  }
  return ndarray(kernels.zip(va, da.dims, vb, db.dims, dims, (x, y) => (test(x, y) ? 1 : 0)), [...dims]) as ConcreteTensor;
}

/** The concrete value of a scalar (drops the derivative: use on purpose). */
export function primal(x: Scalar): number {
  checkArg(x, "primal", 1);
  return typeof x === "number" ? x : x.value;
}

/**
 * Primitives as methods emitting into a sink (a trace, or a tape being built): the
 * emitter that reverse rules run against when derivatives are built symbolically.
 * User primitives' rules are written with the public functions: they find the trace
 * as the emitter's `sink`.
 */
export function emitterFor(sink: Trace): TensorEmitter<number> {
  const e = Object.create(emitterMethods()) as { sink: Trace };
  e.sink = sink;
  return e as unknown as TensorEmitter<number>;
}

/** The emitter's methods, shared by every emitter (each reads its sink from `this`), made once. */
let methods: object | null = null;

function emitterMethods(): object {
  if (methods !== null) return methods;
  type This = { readonly sink: Trace };
  const m: Record<string, unknown> = {
    lit(this: This, c: number) {
      return this.sink.constant(c);
    },
  };
  // the built-in scalar primitives: the rules are written with them (a user primitive's rules with the public functions)
  for (const name of UNARY_NAMES) {
    const code = CODE[name];
    m[name] = function (this: This, x: number) {
      return this.sink.apply(code, x);
    };
  }
  for (const name of BINARY_NAMES) {
    const code = CODE[name];
    m[name] = function (this: This, a: number, b: number) {
      return this.sink.apply(code, a, b);
    };
  }
  const op = (sink: Trace, name: keyof typeof CODE, args: readonly number[], params?: unknown): number => sink.applyOp(CODE[name], args, params);
  const reduce = (name: "sum" | "max" | "min" | "logsumexp") =>
    function (this: This, x: number, axes: readonly number[], keepdims: boolean) {
      return op(this.sink, name, [x], { axes, keepdims });
    };
  type Tensorial = Omit<TensorEmitter<number>, keyof Emitter<number>>;
  const tensor: { [K in keyof Tensorial]: (this: This, ...args: Parameters<Tensorial[K]>) => ReturnType<Tensorial[K]> } = {
    dims(x) {
      return this.sink.tape.dims(x);
    },
    zeros(dims) {
      return this.sink.tape.tensorConstant({ dims, data: alloc(size(dims)) });
    },
    sum: reduce("sum"),
    max: reduce("max"),
    min: reduce("min"),
    logsumexp: reduce("logsumexp"),
    logSoftmax(x, axes) {
      return op(this.sink, "logSoftmax", [x], { axes });
    },
    reshape(x, dims) {
      return op(this.sink, "reshape", [x], { dims });
    },
    broadcastTo(x, dims) {
      return op(this.sink, "broadcastTo", [x], { dims });
    },
    transpose(x, perm) {
      return op(this.sink, "transpose", [x], { perm });
    },
    matmul(a, b) {
      return op(this.sink, "matmul", [a, b]);
    },
    slice(x, starts, ends) {
      return op(this.sink, "slice", [x], { starts, ends });
    },
    index(x, at) {
      return op(this.sink, "index", [x], { at });
    },
    embed(dims, pieces, starts) {
      return op(this.sink, "embed", pieces, { dims, starts });
    },
    pack(xs) {
      return op(this.sink, "pack", xs);
    },
    gather(x, indices, axis) {
      return op(this.sink, "gather", [x], { indices, axis });
    },
    scatterAdd(t, indices, values, axis) {
      return op(this.sink, "scatterAdd", [t, values], { indices, axis });
    },
    concat(xs, axis) {
      return op(this.sink, "concat", xs, { axis });
    },
    where(m, a, b) {
      return op(this.sink, "where", [m, a, b]);
    },
    // a mask decided on the values a rule sees, emitted as a literal (see decideTensor)
    decide(pred, a, b) {
      const sink = this.sink;
      const tape = sink.tape;
      if (tape.op[a] !== CONST || tape.op[b] !== CONST) sink.opaque = true;
      const dims = broadcastDims(tape.dims(a), tape.dims(b));
      if (typeof dims === "string") throw shapeError(pred, dims);
      const test = predicates[pred].test;
      return tape.tensorConstant({ dims, data: kernels.zip(tape.value(a), tape.dims(a), tape.value(b), tape.dims(b), dims, (x, y) => (test(x, y) ? 1 : 0)) });
    },
    conv2d(x, w, p) {
      return op(this.sink, "conv2d", [x, w], p);
    },
    conv2dInput(g, w, p) {
      return op(this.sink, "conv2dInput", [g, w], p);
    },
    conv2dFilter(x, g, p) {
      return op(this.sink, "conv2dFilter", [x, g], p);
    },
  };
  Object.assign(m, tensor);
  methods = m;
  return m;
}
