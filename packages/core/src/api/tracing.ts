/**
 * @file Tracing a user's function: symbolic evaluation of `f` at `x` gives the trace term
 * C of `x:T. C` (Figs. 4–5), with x's and f(x)'s structure; and the leaves of values
 * shaped like them (seeds, tangents) in and out.
 */
import { OutputTypeError, SeedMismatchError, WengertError } from "../errors.js";
import { flatten, flattenLike, isRealVector, typeString, unflatten, type Shape } from "../structure.js";
import type { Tape } from "../trace/tape.js";
import { TraceTerm } from "../trace/term.js";
import { fromDense, ownedCopy } from "../trace/host-tensor.js";
import { atomOf, isOperand, leafShape, live, Real, Tensor, type Operand } from "../trace/traced.js";
import { primalOf } from "../trace/record.js";
import { closeTrace, openTrace, type Trace } from "../trace/tracer.js";
import { settingsOf, type RdOptions } from "./options.js";
import { chainsOnly, settleDeferred, settleEarly } from "../eval/deferred.js";
import { size } from "@wengert/ops";

export type Fn = (x: never) => unknown;

/** A user's function traced at a point: its trace, the term, and the point's leaves. */
export interface TracedFn {
  readonly trace: Trace;
  readonly term: TraceTerm;
  /** The leaves of `x` as given (numbers, tensors, or traced values of enclosing traces). */
  readonly point: Operand[];
}

/**
 * What a term is traced for: to be transformed (rd and the others), to be replayed at
 * other points and transformed (compileGrad: its decisions kept as guards), or to be
 * evaluated only, here and replayed at other points (jit, vmap: guards kept, and a
 * derivative emitted into it may keep a scan's sweep as one instruction; f's own ties
 * are left to the replays to report); or to be transformed once by an outermost rd that
 * only reads its results (grad, valueAndGrad: "gradient"), which computes f's deferred
 * tensor values with its derivative (api/transform.ts); or to be transformed by an
 * outermost jacfwd ("columns"), whose lanes evaluate the tangent term (api/columns.ts)
 * and compute f's deferred tensor values where the tangents read them: f(x) is not
 * returned, so the rest (f's outputs, often the largest part) is never computed.
 */
export type TraceUse = "transform" | "replay" | "evaluate" | "gradient" | "columns";

/** Symbolic evaluation of `f` at `x`: the trace term `C` of `x:T. C`, for `use`. */
export function trace(caller: string, f: Fn, x: unknown, options: RdOptions = {}, use: TraceUse = "transform"): TracedFn {
  if (typeof f !== "function") throw new WengertError(`${caller}: f is ${typeof f}; expected the function to differentiate.`);
  const opened = openTraceAt(caller, x, options, use);
  let y: unknown;
  try {
    y = f(opened.input as never);
  } catch (e) {
    abandonTrace(opened, e);
  }
  return closeTraceWith(opened, y, use === "gradient" || use === "columns");
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
export function openTraceAt(caller: string, x: unknown, options: RdOptions = {}, use: TraceUse = "transform"): OpenedTrace {
  const settings = settingsOf(caller, options, { replayable: use === "replay" || use === "evaluate", silent: use === "evaluate" });
  const { shape, leaves } = flatten(x, "x", isOperand, `${caller}'s input`, undefined, leafShape);
  const t = openTrace(settings, caller);
  t.evaluatedOnly = use === "evaluate";
  if (use === "gradient") t.keptCarries = [];
  // one pass over the leaves: x is often thousands of numbers
  const inputs = new Array<Real | Tensor>(leaves.length);
  const atoms = new Array<number>(leaves.length);
  if (isRealVector(shape)) {
    // x an array of numbers (flatten's shortcut): its traced reals are the array f gets,
    // made with nothing to check
    const tape = t.tape;
    for (let k = 0; k < leaves.length; k++) inputs[k] = new Real(t, (atoms[k] = tape.input(k, leaves[k] as number)));
    return { caller, trace: t, input: inputs, shape, leaves, atoms };
  }
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
  if (use === "gradient" && t.level === 0 && !settings.checkNaN && tensorElements(t.tape, atoms) >= lazyValues.fromElements) {
    t.tape.defer({ settle: settleDeferred, upTo: lazyValues.upTo, early: settleEarly, after: chainsOnly });
  } else if (use === "columns" && t.level === 0 && !settings.checkNaN && lazyValues.columns) {
    // no plan to make (the lanes compute each value the tangents read by its kernel, as
    // tracing would): deferring costs nothing, however small or long the trace, and
    // goes on past matrix products, whose values the lanes read like any other
    t.tape.defer({ settle: settleDeferred });
  }
  return { caller, trace: t, input: unflatten(shape, inputs), shape, leaves, atoms };
}

/**
 * The elements of x's tensors from which an outermost grad's trace defers f's tensor
 * values (trace/tape.ts `defer`): computed when read, or when f returns, with their chains
 * of elementwise operations compiled (eval/deferred.ts). Below it, planning costs more than
 * the passes it saves; and past `upTo` instructions deferred, f's values are computed as
 * it goes on (a long trace's plan costs more than it saves). `columns`: an outermost
 * jacfwd's trace defers them too (TraceUse "columns"). Tests move them.
 */
export const lazyValues = { fromElements: 4096, upTo: 4096, columns: true };

/** The elements of the tensors among `atoms`. */
function tensorElements(tape: Tape, atoms: readonly number[]): number {
  let n = 0;
  for (const v of atoms) if (tape.isTensor(v)) n += size(tape.dims(v));
  return n;
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

/**
 * The second half of `trace`: the body returned y; close the trace, the term is `x. C` with
 * output y, its values computed; f's deferred tensor values are left so where `deferred`
 * (the term goes to an rd that computes them with its derivative: "gradient").
 */
export function closeTraceWith(opened: OpenedTrace, y: unknown, deferred = false): TracedFn {
  const { caller, trace: t, shape, leaves, atoms } = opened;
  let term: TraceTerm;
  try {
    const out = flatten(y, "f(x)", isOperand, "the output of f", (m) => new OutputTypeError(`${caller}: ${m}`), leafShape);
    const outAtoms = out.leaves.map((leaf) => atomOf(t, leaf));
    term = new TraceTerm(t.tape, [{ name: "x", shape, atoms }], { shape: out.shape, atoms: outAtoms });
    // f's deferred values computed: the term is read and extended from here on
    if (!deferred) t.tape.endDeferring();
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


/**
 * Variable v of a finished tape as the user gets it, by the leaf's structure: a copy of a
 * tensor's buffer, or the buffer itself where `owned` (the tape handed it over).
 */
export function userValue(tape: Tape, v: number, shape: Shape, owned = false): unknown {
  if (shape.kind !== "tensor") return tape.val[v];
  const dims = tape.dims(v);
  return owned ? fromDense({ dims, data: tape.handOver(v) }, shape.container, false) : fromDense({ dims, data: tape.buf(v) }, shape.container);
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

