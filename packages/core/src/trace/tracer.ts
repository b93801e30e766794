/**
 * @file The trace being recorded, its settings and guards, and the stack of open traces.
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
 * inner trace term of the paper's nested examples (end of Sec. 3). Traced values:
 * traced.ts; recording a primitive on them: record.ts.
 *
 * The stack lives with the Trace: opening one makes a Trace, and a Trace that throws at
 * a tie marks every open trace unreplayable (`tie`).
 */
import { broadcastDims, showDims, type Buf, type Dims, type PredicateName, type UnaryOp } from "@wengert/ops";
import { NaNError, TieError, TraceLengthError, WengertError } from "../errors.js";
import { shapeError } from "./callsite.js";
import { ARITY, CONST, KINKS, primitiveOf, tensorSpec } from "./opcodes.js";
import { Tape } from "./tape.js";

/** What a predicate decided at a tie, or a primitive at its kink, does while tracing (RdOptions.ties; docs/ties.md). */
export type TieMode = "warn" | "error" | "ignore";
export const TIE_MODES: readonly TieMode[] = ["warn", "error", "ignore"];

/** What an rd call asked of its trace (RdOptions, checked). */
export interface TraceSettings {
  /** How ties met while tracing f into this trace are reported (`tie`). */
  readonly ties: TieMode;
  /**
   * The mode of a transformation called inside f that sets no `ties` of its own: the one
   * its caller chose (options.ties, or inherited the same way), even where this trace's own
   * ties are silenced because something else reports them (jit, vmap, a scan's body).
   */
  readonly tiesInside: TieMode;
  /** Throw at the first primitive whose result is NaN or infinite. */
  readonly checkNaN: boolean;
  /** Throw when the trace grows beyond this many instructions. */
  readonly maxLength: number;
  /**
   * The trace will be replayed at other points (compileGrad), so its decisions are kept
   * as guards; so are those of every trace opened inside it, whose terms may be placed
   * in it with their guards (diff/place.ts). Other traces keep none: on a loop that
   * decides at every step, a guard per decision is a large share of `grad`'s time.
   */
  readonly replayable: boolean;
}

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

/** One open (or finished) trace: the tape being recorded and what `rd` asked for. */
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
   * decide), kept up to date when `closed` or `checked` change: those paths run once per
   * traced operation, where every further read is a measurable share of tracing.
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
   * While a scan's body is traced (trace/trace-body.ts): the body's trace, which records what
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
  /**
   * Its term is only evaluated (here, and replayed at other points: jit, vmap), never
   * transformed, so a derivative emitted into it may keep a scan's sweep as one
   * instruction (diff/unroll.ts `keepsScans`), which no transformation could take apart.
   */
  evaluatedOnly = false;
  /**
   * Where a reverse sweep of this trace follows its tracing (grad's): the scans whose traced
   * runs kept their carries for it, by what hands back those no sweep took
   * (trace/scan-stash.ts; api/transform.ts calls them once the derivative is computed).
   * Null elsewhere: nothing is kept.
   */
  keptCarries: (() => void)[] | null = null;
  // both maps made on first use: most traces need neither, and a trace is made per call
  /** The variables standing for values of enclosing traces (traced.ts atomOf). */
  freeVariables: Map<object, number> | null = null;
  /** settings.maxLength, read on every checked instruction. */
  private readonly maxLength: number;
  /** The literals standing for tensors the user holds (traced.ts atomOf). */
  constants: Map<object, number> | null = null;

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

  constant(c: number): number {
    return this.tape.constant(c);
  }

  /** Record a primitive; kinked primitives evaluated at their kink are reported. */
  record(code: number, a: number, b = 0): number {
    const tape = this.tape;
    if (tape.x[a] !== 0 || (ARITY[code] === 2 && tape.x[b] !== 0)) return this.applyElementwise(code, a, b);
    return this.applyScalar(code, a, b);
  }

  /** `record` on variables known to be reals (what almost every traced operation is). */
  applyScalar(code: number, a: number, b = 0): number {
    return this.checked || KINKS[code] !== undefined ? this.recordChecked(code, a, b) : this.tape.append(code, a, b);
  }

  /** `applyScalar` with its checks: kinks, NaN, the trace's length. */
  private recordChecked(code: number, a: number, b: number): number {
    const tape = this.tape;
    const kink = KINKS[code];
    if (kink !== undefined && tape.op[a] !== CONST && kink(tape.val[a])) {
      const spec = primitiveOf(code).spec as UnaryOp;
      this.tie(`${primitiveOf(code).name}(${tape.val[a]}) was evaluated at its kink; wengert uses ${spec.kink!.convention}`);
    }
    const v = tape.append(code, a, b);
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
      if (at >= 0) {
        const { name, spec } = primitiveOf(code);
        const convention = (spec as UnaryOp).kink!.convention;
        this.tie(`${name} was evaluated at its kink (element ${at} of a tensor ${showDims(tape.dims(a))} is ${tape.buf(a)[at]}); wengert uses ${convention}`);
      }
    }
    const v = tape.applyElementwise(code, a, b, dims);
    this.checkResult(code, unary ? [a] : [a, b], v);
    return v;
  }

  /** Record a tensor primitive with its static parameters; shapes are checked here. */
  recordOp(code: number, args: readonly number[], params: unknown): number {
    const tape = this.tape;
    const spec = tensorSpec(code);
    const argDims = new Array<Dims>(args.length);
    for (let i = 0; i < args.length; i++) argDims[i] = tape.dims(args[i]);
    const dims = spec.shape(argDims, params);
    if (typeof dims === "string") throw shapeError(primitiveOf(code).name, dims, argDims);
    return this.recorded(code, args, params, tape.appendOp(code, args, params, dims));
  }

  /**
   * Record a tensor primitive whose value `y` is known already (a placed scan's, its traced
   * run's: trace/scan-stash.ts), checked as `recordOp` checks what it computes.
   */
  recordComputed(code: number, args: readonly number[], params: unknown, dims: Dims, y: Buf): number {
    return this.recorded(code, args, params, this.tape.appendComputed(code, args, params, dims, y));
  }

  /** Tensor instruction v, just appended: its ties reported, its result checked. */
  private recorded(code: number, args: readonly number[], params: unknown, v: number): number {
    const tape = this.tape;
    const spec = tensorSpec(code);
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
        const where = `${this.context ? `in ${this.context}` : "in the forward pass (f itself)"}${siteNote()}`;
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
    const where = `${this.context ? `in ${this.context}` : "in the forward pass (f itself)"}${siteNote()}`;
    throw new NaNError(
      `${this.nanCaller ?? this.caller}: checkNaN: ${p.name}(${args.join(", ")}) = ${this.tape.val[v]} ${where}; ` +
        `its inputs: ${args.map(() => "real").join(", ")}.`,
    );
  }

  tie(what: string): void {
    if (this.settings.ties === "ignore") return;
    what += siteNote();
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

/** Where in a batch the traces now taken are (vmap's lane), for ties and NaNs reported meanwhile; "" elsewhere. */
let site = "";

const siteNote = (): string => (site === "" ? "" : ` (${site})`);

/** `run()` with the traces it takes reporting their ties and NaNs as met at `where` ("in lane 7 of vmap"). */
export function reportingAt<T>(where: string, run: () => T): T {
  const saved = site;
  site = where;
  try {
    return run();
  } finally {
    site = saved;
  }
}

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

/** The ties mode a transformation opened now takes when it sets none: the innermost open trace's tiesInside. */
export function inheritedTies(): TieMode {
  return stack.length > 0 ? stack[stack.length - 1].settings.tiesInside : "warn";
}

/** The open traces, outermost first (a scan's body looks for checks they ask). */
export function openTraces(): readonly Trace[] {
  return stack;
}

/** The trace that records an operation whose innermost trace is t: t, or the scan body capturing it. */
export function recorder<T extends Trace | null>(t: T): T | Trace {
  return t === null || t.capturedBy === null ? t : t.capturedBy;
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
  return new Trace(stack.length, { ties: "ignore", tiesInside: inheritedTies(), checkNaN, maxLength: Infinity, replayable: false }, caller, tape.extend());
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
