/**
 * @file From a user's function to a transformed trace term: what rd, jvp and vjp share.
 *
 * `trace` is symbolic evaluation of `f` at `x` (the trace term C of `x:T. C`).
 * `apply` emits a transformation of C (the reverse sweep for `rd`, the forward sweep for
 * `jvp`) with its extra inputs (a seed, a tangent) where it belongs: at the outermost
 * level into a trace extending C, evaluated at once on C's buffer; inside an enclosing
 * `rd` into that enclosing trace (Fig. 4's `W.rd_V(x:T.N) ⇝ W.R_V(x:T.C)`), so the
 * enclosing `rd` differentiates it in turn.
 */
import type { Emitted, Transform } from "../diff/place.js";
import { OutputTypeError, SeedMismatchError, WengertError } from "../errors.js";
import { describe, flatten, flattenLike, leafShapes, REAL, showValue, typeString, unflatten, type Shape } from "../structure.js";
import type { Tape } from "../trace/tape.js";
import { TraceTerm } from "../trace/term.js";
import { concreteShape, fromDense, ownedCopy, Tensor, toDense, type ConcreteTensor, type Dense, type NdArray } from "../trace/tensor.js";
import { closeTrace, isOperand, live, openTrace, primalOf, Real, recorder, sinkFor, TIE_MODES, wrap, type Operand, type Scalar, type Trace, type TieMode, type TraceSettings } from "../trace/tracer.js";

export interface RdOptions {
  /**
   * What to do when a predicate is decided at a tie or a kinked primitive is evaluated
   * at its kink while tracing (where the derivative is not defined): warn once per
   * call (default), throw a TieError, or say nothing.
   */
  readonly ties?: TieMode;
  /**
   * Throw a NaNError naming the first primitive whose result is NaN or infinite, in
   * f or in the derivative computation (default false).
   */
  readonly checkNaN?: boolean;
  /** Throw a TraceLengthError when the trace of f grows beyond this many instructions. */
  readonly maxTraceLength?: number;
}

/** A value as `f` receives it: numbers become scalars that may be traced, tensors traced tensors. */
export type Traced<X> = X extends number
  ? Scalar
  : X extends Scalar
    ? Scalar
    : X extends Float64Array | NdArray | Tensor
      ? Tensor
      : X extends readonly unknown[]
      ? { -readonly [K in keyof X]: Traced<X[K]> }
      : X extends object
        ? { -readonly [K in keyof X]: Traced<X[K]> }
        : never;

/**
 * A value shaped like `X` as rd returns it: at the outermost level numbers and tensors
 * in the containers of `x`; inside an enclosing rd, traced values of its trace.
 */
export type Cotangent<X> = X extends number
  ? Scalar
  : X extends Scalar
    ? Scalar
    : X extends Float64Array | NdArray | Tensor
      ? X | Tensor
      : X extends readonly unknown[]
        ? { -readonly [K in keyof X]: Cotangent<X[K]> }
        : X extends object
          ? { -readonly [K in keyof X]: Cotangent<X[K]> }
          : never;

export type Fn = (x: never) => unknown;

export interface TracedFn {
  readonly trace: Trace;
  readonly term: TraceTerm;
  /** The leaves of `x` as given (numbers, tensors, or traced values of enclosing traces). */
  readonly point: Operand[];
}

/** The options of rd and every transformation (RdOptions). */
export const RD_OPTIONS = ["ties", "checkNaN", "maxTraceLength"];

/**
 * That options is an object of the keys `known` only: a misspelt or mistyped option would
 * silently leave a check off (chekNaN, checkNaN: "yes").
 */
export function checkOptionKeys(caller: string, options: unknown, known: readonly string[] = RD_OPTIONS): void {
  if (typeof options !== "object" || options === null) throw new WengertError(`${caller}: options is ${describe(options)}; expected an object such as { checkNaN: true }.`);
  for (const k in options) {
    if (!known.includes(k)) throw new WengertError(`${caller}: options.${k} is not an option; the options are ${known.slice(0, -1).join(", ")} and ${known.at(-1)}.`);
  }
}

function checkOptions(caller: string, options: RdOptions, replayable: boolean): TraceSettings {
  checkOptionKeys(caller, options);
  const ties = options.ties ?? "warn";
  if (!TIE_MODES.includes(ties)) {
    throw new WengertError(`${caller}: options.ties is ${JSON.stringify(ties)}; expected one of ${TIE_MODES.map((m) => `"${m}"`).join(", ")}.`);
  }
  if (options.checkNaN !== undefined && typeof options.checkNaN !== "boolean") throw new WengertError(`${caller}: options.checkNaN is ${showValue(options.checkNaN)}; expected true or false.`);
  const maxLength = options.maxTraceLength ?? Infinity;
  if (typeof maxLength !== "number" || !(maxLength > 0)) throw new WengertError(`${caller}: options.maxTraceLength is ${showValue(maxLength)}; expected a positive number.`);
  // every settings object has the same fields in the same order: the tracer reads them per instruction
  return { ties, checkNaN: options.checkNaN === true, maxLength, replayable };
}

/**
 * Symbolic evaluation of `f` at `x`: the trace term `C` of `x:T. C`. `replayable`: the
 * term will be replayed at other points, so its decisions are kept as guards.
 */
export function trace(caller: string, f: Fn, x: unknown, options: RdOptions = {}, replayable = false): TracedFn {
  if (typeof f !== "function") throw new WengertError(`${caller}: f is ${typeof f}; expected the function to differentiate.`);
  const opened = openTraceAt(caller, x, options, replayable);
  let y: unknown;
  try {
    y = f(opened.input as never);
  } catch (e) {
    abandonTrace(opened, e);
  }
  return closeTraceWith(opened, y);
}

/** A trace opened at a point, whose body has yet to run (trace, or the term language's trampoline). */
export interface OpenedTrace {
  readonly caller: string;
  readonly trace: Trace;
  /** x with traced values for its leaves: what the body is applied to. */
  readonly input: unknown;
  readonly shape: Shape;
  readonly leaves: Operand[];
  readonly atoms: number[];
}

/** The first half of `trace`: open a trace and make x's traced values. */
export function openTraceAt(caller: string, x: unknown, options: RdOptions = {}, replayable = false): OpenedTrace {
  const settings = checkOptions(caller, options, replayable);
  const { shape, leaves } = flatten(x, "x", isOperand, `${caller}'s input`, undefined, leafShape);
  const t = openTrace(settings, caller);
  // one pass over the leaves: x is often thousands of numbers
  const inputs = new Array<Real | Tensor>(leaves.length);
  const atoms = new Array<number>(leaves.length);
  try {
    for (let k = 0; k < leaves.length; k++) {
      const leaf = leaves[k];
      if (typeof leaf !== "number" && (leaf instanceof Real || leaf instanceof Tensor)) live(leaf, caller);
      const p = typeof leaf === "number" ? leaf : primalOf(leaf, `${caller}'s input`);
      if (typeof p === "number") inputs[k] = new Real(t, (atoms[k] = t.tape.input(k, p)));
      else inputs[k] = new Tensor(t, (atoms[k] = t.tape.tensorInput(k, ownedCopy(p))));
    }
  } catch (e) {
    closeTrace(t, true);
    throw e;
  }
  return { caller, trace: t, input: unflatten(shape, inputs), shape, leaves, atoms };
}

/**
 * The body threw: close the trace, and the traces the body opened inside it and left open
 * (a stack overflow deep in nested rds stops them before they close), and go on with the
 * error, which is what the user sees (not "closed out of order").
 */
export function abandonTrace(opened: OpenedTrace, error: unknown): never {
  closeTrace(opened.trace, true);
  throw error;
}

/** The second half of `trace`: the body returned y; close the trace, the term is `x. C` with output y. */
export function closeTraceWith(opened: OpenedTrace, y: unknown): TracedFn {
  const { caller, trace: t, shape, leaves, atoms } = opened;
  let term: TraceTerm;
  try {
    const out = flatten(y, "f(x)", isOperand, "the output of f", (m) => new OutputTypeError(`${caller}: ${m}`), leafShape);
    const outAtoms = out.leaves.map((leaf) => t.atomOf(leaf));
    term = new TraceTerm(t.tape, [{ name: "x", shape, atoms }], { shape: out.shape, atoms: outAtoms });
  } catch (e) {
    abandonTrace(opened, e);
  }
  closeTrace(t);
  if (t.ties.length > 0 && t.settings.ties === "warn") {
    const more = t.ties.length > 1 ? ` (and ${t.ties.length - 1} more)` : "";
    console.warn(
      `wengert: ${caller}: ${t.ties[0]}${more}. The derivative is not defined there; the result uses wengert's convention. ` +
        `Set ties to "error" to stop instead, or "ignore" to silence this (option ties, CLI --ties).`,
    );
  }
  return { trace: t, term, point: leaves };
}

/** The structure of a leaf: a real, or a tensor with its dims and container. */
export function leafShape(v: Operand): Shape {
  if (typeof v === "number" || v instanceof Real) return REAL;
  if (v instanceof Tensor) return { kind: "tensor", dims: v.dims, container: "ndarray" };
  return concreteShape(v);
}


/** Variable v of a finished tape as the user gets it, by the leaf's structure. */
export function userValue(tape: Tape, v: number, shape: Shape): unknown {
  if (shape.kind !== "tensor") return tape.val[v];
  return fromDense({ dims: tape.dims(v), data: tape.buf(v) }, shape.container);
}

/** The leaves of a value that must have the structure `shape` (a seed, a tangent). */
export function leavesLike(caller: string, name: string, shape: Shape, value: unknown, of: string): Operand[] {
  const leaves = flattenLike(
    shape,
    value,
    name,
    isOperand,
    (path, expected, actual) =>
      new SeedMismatchError(
        `${caller}: ${path} has type ${actual}, expected ${typeString(expected)}` +
          (path === name ? "" : ` (${of} has type ${typeString(shape)})`) +
          `. Pass a ${name} shaped like ${of}.`,
      ),
    leafShape,
  );
  for (const s of leaves) if (s instanceof Real || s instanceof Tensor) live(s, caller);
  return leaves;
}

/** The innermost live trace that a transformation of the term depends on, or null. */
function enclosing(traced: TracedFn, extras: readonly Operand[]): Trace | null {
  let target: Trace | null = null;
  for (const values of [traced.term.tape.frees, traced.point, extras]) {
    for (let k = 0; k < values.length; k++) {
      const v = values[k];
      // numbers first: x is often thousands of them
      if (typeof v !== "number" && (v instanceof Real || v instanceof Tensor) && !v.trace.closed && (target === null || v.trace.level > target.level)) target = v.trace;
    }
  }
  // inside a scan's body, what the body's trace records (api/scan.ts)
  return recorder(target);
}

/** True when nothing the transformation depends on is traced by an enclosing rd. */
export function isOutermost(traced: TracedFn, extras: readonly Operand[]): boolean {
  return enclosing(traced, extras) === null;
}

/** Called at an outermost transformation with the trace term and the transformed term. */
export type Inspect = (trace: TraceTerm, transformed: TraceTerm) => void;

export interface Applied {
  /** f(x)'s leaves: numbers and tensors, or traced values of the enclosing trace. */
  readonly outputs: unknown[];
  /** The transformation's results (cotangents of x, tangents of f(x)…), likewise. */
  readonly results: unknown[];
  /** At the outermost level, the emitted term with parameters `x` and the extra input. */
  readonly term: TraceTerm | null;
  /** Whether a rule decided on values (a mask emitted as a literal): the emitted term holds at this point only. */
  readonly opaque: boolean;
}

/**
 * What the caller of `apply` goes on reading, besides the results (which are copies at
 * the outermost level): the trace term C and the emitted term, C alone (a Jacobian
 * applies it once per column), or neither. What nobody reads is recycled.
 */
export type Keep = "both" | "trace" | "neither";

/**
 * Emit `transform` of the traced term with extra inputs `extras` (named `name`, shaped
 * `extraShape`), whose results have the structure `resultShape`.
 */
export function apply(
  traced: TracedFn,
  transform: Transform,
  extra: { readonly name: string; readonly shape: Shape; readonly leaves: readonly Operand[] },
  resultShape: Shape,
  inspect?: Inspect,
  outermost = false,
  keep: Keep = "both",
): Applied {
  const { term } = traced;
  const target = outermost ? null : enclosing(traced, extra.leaves);
  if (target === null) {
    const sink = sinkFor(term.tape, traced.trace.caller, traced.trace.settings.checkNaN);
    const nx = term.params[0].atoms.length;
    const extras = extra.leaves.map((s, j) => {
      const p = primalOf(s, extra.name);
      return typeof p === "number" ? sink.tape.input(nx + j, p) : sink.tape.tensorInput(nx + j, ownedCopy(p));
    });
    const d = transform(term, sink, extras, null);
    closeTrace(sink);
    const emitted = new TraceTerm(sink.tape, [term.params[0], { name: extra.name, shape: extra.shape, atoms: extras }], {
      shape: resultShape,
      atoms: d.results,
    });
    inspect?.(term, emitted);
    const outShapes = leafShapes(term.output.shape);
    const resultShapes = leafShapes(resultShape);
    const applied = {
      outputs: d.outputs.map((v, j) => userValue(sink.tape, v, outShapes[j])),
      results: d.results.map((v, j) => userValue(sink.tape, v, resultShapes[j])),
      term: keep === "both" ? emitted : null,
      opaque: sink.opaque,
    };
    // the user's values are copies: the buffers and columns of what nobody keeps can be
    // reused, the derivative's alone if C is kept (C's columns last, so that the next trace
    // starts as long as C)
    if (keep !== "both" && inspect === undefined) {
      sink.tape.releaseBuffers(true, keep === "trace" ? term.tape.length : 0);
      sink.tape.recycle();
      if (keep === "neither") term.tape.recycle();
    }
    return applied;
  }
  const t: Trace = target;
  // an inner call's checkNaN covers its derivative, emitted here
  const saved = t.nanCaller;
  if (traced.trace.settings.checkNaN && !t.settings.checkNaN) t.nanCaller = traced.trace.caller;
  let d: Emitted;
  try {
    d = transform(term, t, extra.leaves.map((s) => t.atomOf(s)), {
      inputs: traced.point.map((p) => t.atomOf(p)),
      free: (v) => t.atomOf(v as Operand),
      guards: traced.trace.guards,
      opaque: traced.trace.opaque,
    });
  } finally {
    t.nanCaller = saved;
  }
  // the term is placed in t now: when nobody keeps it, its tape's columns serve the next
  // trace (its tensor buffers stay: t may hold its literals' as its own)
  if (keep === "neither") term.tape.recycle();
  return { outputs: d.outputs.map((v) => wrap(t, v)), results: d.results.map((v) => wrap(t, v)), term: null, opaque: t.opaque };
}
