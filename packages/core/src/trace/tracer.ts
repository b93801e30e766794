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
import { predicates, type Emitter, type PredicateName, type UnaryOp } from "@wengert/ops";
import { ClosedTraceError, NaNError, TieError, TraceLengthError, TracedOperatorError, WengertError } from "../errors.js";
import { describe } from "../structure.js";
import { CONST, FIRST_PRIMITIVE, KINKS, PRIMITIVES, primitiveOf } from "./opcodes.js";
import { Tape } from "./tape.js";

export type TieMode = "warn" | "error" | "ignore";
export const TIE_MODES: readonly TieMode[] = ["warn", "error", "ignore"];

/** A real number being traced: its trace and its variable there. */
export class Real {
  constructor(
    readonly trace: Trace,
    readonly atom: number,
  ) {}

  /** The concrete value (what conditionals in user code decide on). */
  get value(): number {
    return this.trace.tape.val[this.atom];
  }

  /** JavaScript operators would compute with the value and silently lose the derivative. */
  [Symbol.toPrimitive](hint: string): string {
    if (hint === "string") return String(this.value);
    throw new TracedOperatorError(
      `A traced real (value ${this.value}) was used with a JavaScript operator such as +, *, < or Math.sin. ` +
        `That would compute with its value and silently lose the derivative. Use wengert's functions ` +
        `instead (add, mul, lt, sin, …), which work on numbers and traced reals alike; use primal(x) to read the value on purpose.`,
    );
  }

  toString(): string {
    return `Real(${this.value})`;
  }

  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return this.toString();
  }
}

export type Scalar = number | Real;

export function isScalar(v: unknown): v is Scalar {
  return typeof v === "number" || v instanceof Real;
}

/** One open (or finished) trace: the tape being recorded and what `rd` asked for. */
/** What an rd call asked of its trace (RdOptions, checked). */
export interface TraceSettings {
  readonly ties: TieMode;
  /** Throw at the first primitive whose result is NaN or infinite. */
  readonly checkNaN: boolean;
  /** Throw when the trace grows beyond this many instructions. */
  readonly maxLength: number;
}

export const DEFAULT_SETTINGS: TraceSettings = { ties: "warn", checkNaN: false, maxLength: Infinity };

export class Trace {
  closed = false;
  /** While a reverse or tangent rule is being emitted: which one, for checkNaN's message. */
  context = "";
  /** An inner rd with checkNaN emitting its derivative here: its name (it asks for checks). */
  nanCaller: string | null = null;
  /** > 0 while a user rule computes results of which only some are needed (checked after). */
  quiet = 0;
  /** Ties met while tracing (descriptions), for `ties: "warn"`. */
  readonly ties: string[] = [];
  private readonly lifted = new Map<Real, number>();

  constructor(
    readonly level: number,
    readonly settings: TraceSettings,
    /** The API call that opened it, for messages ("rd", "grad"…). */
    readonly caller: string,
    readonly tape: Tape = new Tape(),
  ) {}

  /** The variable standing for `x` in this trace: a literal, a variable, or a free one. */
  atomOf(x: Scalar): number {
    if (typeof x === "number") return this.tape.constant(x);
    if (x.trace === this) return x.atom;
    let v = this.lifted.get(x);
    if (v === undefined) {
      v = this.tape.free(x, x.value);
      this.lifted.set(x, v);
    }
    return v;
  }

  constant(c: number): number {
    return this.tape.constant(c);
  }

  /** Record a primitive; kinked primitives evaluated at their kink are reported. */
  apply(code: number, a: number, b = 0): number {
    const tape = this.tape;
    const kink = KINKS[code];
    if (kink !== undefined && tape.op[a] !== CONST && kink(tape.val[a])) {
      const spec = primitiveOf(code).spec as UnaryOp;
      this.tie(`${primitiveOf(code).name}(${tape.val[a]}) was evaluated at its kink; wengert uses ${spec.atKink}`);
    }
    const v = tape.apply(code, a, b);
    if ((this.settings.checkNaN || this.nanCaller !== null) && this.quiet === 0 && !Number.isFinite(tape.val[v])) this.reportNaN(code, a, b, v);
    if (tape.length > this.settings.maxLength) {
      throw new TraceLengthError(
        `${this.caller}: the trace reached ${this.tape.length} instructions, over options.maxTraceLength = ${this.settings.maxLength}; ` +
          `f may not terminate (a loop whose condition never changes?). Raise the limit if the trace is meant to be this long.`,
      );
    }
    return v;
  }

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
  const t = new Trace(stack.length, settings, caller);
  stack.push(t);
  return t;
}

/**
 * A trace that is not on the stack, to emit a derivative term into at the outermost
 * level: it extends `tape` (the finished trace term C, whose variables and values it
 * reuses) and evaluates what is emitted at once. Rules of user primitives, written with
 * the public functions, run on its traced reals. Close it when done.
 */
export function sinkFor(tape: Tape, caller: string, checkNaN: boolean): Trace {
  return new Trace(stack.length, { ties: "ignore", checkNaN, maxLength: Infinity }, caller, tape.extend());
}

export function closeTrace(t: Trace): void {
  if (t.closed) return;
  if (!stack.includes(t)) {
    t.closed = true;
    return;
  }
  if (stack[stack.length - 1] !== t) {
    throw new WengertError(`${t.caller}: traces closed out of order; was f asynchronous? rd needs f to return its result synchronously.`);
  }
  stack.pop();
  t.closed = true;
}

export function live(r: Real, where: string): Trace {
  if (r.trace.closed) {
    throw new ClosedTraceError(
      `${where}: a traced value (v${r.atom}, value ${r.value}) was used after the ${r.trace.caller} call that traced it returned. ` +
        `Traced values live only while their ${r.trace.caller} runs: return what you need from f instead of keeping it outside.`,
    );
  }
  return r.trace;
}

function checkArg(x: unknown, name: string, position: number): asserts x is Scalar {
  if (!isScalar(x)) throw new WengertError(`${name}: argument ${position} is ${describe(x)}; expected a number or a traced real.`);
}

/** The innermost live trace among the traced arguments, or null if none is traced. */
function innermost(name: string, a: Scalar, b: Scalar): Trace | null {
  const ta = typeof a === "number" ? null : live(a, name);
  const tb = typeof b === "number" ? null : live(b, name);
  if (ta === null) return tb;
  if (tb === null) return ta;
  return ta.level >= tb.level ? ta : tb;
}

/** Apply the primitive `name` to scalars: a number if none is traced, else a traced real. */
export function applyUnary(code: number, x: unknown): Scalar {
  const p = primitiveOf(code);
  checkArg(x, p.name, 1);
  if (typeof x === "number") return (p.spec.forward as (x: number) => number)(x);
  const t = live(x, p.name);
  return new Real(t, t.apply(code, x.atom));
}

export function applyBinary(code: number, a: unknown, b: unknown): Scalar {
  const p = primitiveOf(code);
  checkArg(a, p.name, 1);
  checkArg(b, p.name, 2);
  const t = innermost(p.name, a, b);
  if (t === null) return (p.spec.forward as (a: number, b: number) => number)(a as number, b as number);
  return new Real(t, t.apply(code, t.atomOf(a), t.atomOf(b)));
}

/** Decide a predicate on concrete values, reporting a tie (equal arguments) to the trace. */
export function decide(name: PredicateName, a: unknown, b: unknown): boolean {
  checkArg(a, name, 1);
  checkArg(b, name, 2);
  const t = innermost(name, a, b);
  const va = typeof a === "number" ? a : a.value;
  const vb = typeof b === "number" ? b : b.value;
  if (t !== null && va === vb && a !== b) {
    t.tie(`${name}(${va}, ${vb}) was decided at a tie (both sides equal), taking the branch where ${va} ${predicates[name].symbol} ${vb} is ${predicates[name].test(va, vb)}`);
  }
  return predicates[name].test(va, vb);
}

/** The concrete value of a scalar (drops the derivative: use on purpose). */
export function primal(x: Scalar): number {
  checkArg(x, "primal", 1);
  return typeof x === "number" ? x : x.value;
}

/**
 * Primitives as methods emitting into a sink (a trace, or a tape being built): the
 * emitter that reverse rules run against when derivatives are built symbolically.
 */
export function emitterFor(sink: Trace): Emitter<number> {
  const e: Record<string, unknown> = { lit: (c: number) => sink.constant(c) };
  PRIMITIVES.forEach((p, i) => {
    const code = FIRST_PRIMITIVE + i;
    e[p.name] = p.spec.arity === 1 ? (x: number) => sink.apply(code, x) : (a: number, b: number) => sink.apply(code, a, b);
  });
  // user primitives' rules are written with the public functions: they need the trace
  Object.defineProperty(e, "sink", { value: sink });
  return e as Emitter<number>;
}
