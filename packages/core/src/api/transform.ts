/**
 * @file Emitting a transformation of a traced term where it belongs: what rd, jvp and
 * vjp share.
 *
 * `emitTransformed` emits a transformation of C (the reverse sweep for `rd`, the forward
 * sweep for `jvp`) with its extra inputs (a seed, a tangent): at the outermost level into
 * a trace extending C, evaluated at once on C's buffer; inside an enclosing `rd` into
 * that enclosing trace (Fig. 4's `W.rd_V(x:T.N) ⇝ W.R_V(x:T.C)`), so the enclosing `rd`
 * differentiates it in turn. (Tracing f: tracing.ts; the options: options.ts.)
 */
import type { Emitted, Transform } from "../diff/place.js";
import { leafShapes, type Shape } from "../structure.js";
import { TraceTerm } from "../trace/term.js";
import { ownedCopy } from "../trace/host-tensor.js";
import { atomOf, Real, Tensor, type Operand } from "../trace/traced.js";
import { primalOf, wrap } from "../trace/record.js";
import { closeTrace, recorder, sinkFor, type Trace } from "../trace/tracer.js";
import { hostTyped } from "./host-typed.js";
import { readValuesOnly, settleDeferred } from "../eval/deferred.js";
import { userValue, type TracedFn } from "./tracing.js";
import type { Tape } from "../trace/tape.js";
import { SLAB_MAX, size } from "@wengert/ops";
import { FIRST_PRIMITIVE } from "../trace/opcodes.js";

/** The innermost live trace that a transformation of the term depends on, or null. */
function enclosing(traced: TracedFn, extras: readonly Operand[]): Trace | null {
  let target: Trace | null = null;
  for (const values of [traced.term.tape.frees, traced.point, extras]) {
    for (let k = 0; k < values.length; k++) {
      const v = values[k];
      // numbers first: x is often thousands of them
      if (typeof v === "number" || !(v instanceof Real || v instanceof Tensor) || v.trace.closed) continue;
      if (target === null || v.trace.level > target.level) target = v.trace;
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
 * What the caller of `emitTransformed` goes on reading, besides the results (which are
 * copies at the outermost level): the trace term C and the emitted term, C alone (a
 * Jacobian applies it once per column), or neither. What nobody reads is recycled.
 */
export type Keep = "both" | "trace" | "neither";

/** How emitTransformed emits: the extra inputs, the results' structure, and what is kept. */
export interface Emission {
  /** The transformation's extra inputs (a seed `W`, a tangent `v`): their name, structure and leaves. */
  readonly extra: { readonly name: string; readonly shape: Shape; readonly leaves: readonly Operand[] };
  /** The structure of the transformation's results. */
  readonly resultShape: Shape;
  /** Called at the outermost level with the trace term and the emitted term. */
  readonly inspect?: Inspect;
  /** Emit as at the outermost level even inside an enclosing trace (a term to hand back: derivativeOf, compileGrad). */
  readonly outermost?: boolean;
  /** What the caller goes on reading (default "both"). */
  readonly keep?: Keep;
  /**
   * The caller evaluates the emitted term itself, at other values of the extra inputs
   * (jacfwd's columns as lanes, api/columns.ts): its tensor values are not computed while
   * it is emitted (but those a rule reads), and `outputs` and `results` come back empty.
   * Only at the outermost level, with `keep` "both".
   */
  readonly unevaluated?: boolean;
}

const NONE: ReadonlySet<number> = new Set();

/**
 * The values among `vs` whose buffers the user can have as they are, not copied, when
 * the tape's buffers go back to the pool right after: tensors the tape owns, each given
 * once (a copy for the second of two equal results), and longer than the pool's slab
 * cells (SLAB_MAX: a cell kept would keep its whole 64 KiB slab alive) and each an
 * ArrayBuffer of its own (a view into another value's buffer, which goes to the pool,
 * would be overwritten). W2's gradient copied 9 600 doubles per call for nothing.
 */
function handedOver(tape: Tape, vs: readonly number[]): ReadonlySet<number> {
  if (!tape.ownsBuffers()) return NONE;
  const once = new Set<number>();
  const seen = new Set<number>();
  for (const v of vs) {
    if (seen.has(v)) once.delete(v);
    else if (tape.isTensor(v) && wholeBuffer(tape.buf(v))) once.add(v);
    seen.add(v);
  }
  return once;
}

const wholeBuffer = (b: Float64Array): boolean => b.length > SLAB_MAX && b.byteOffset === 0 && b.buffer.byteLength === 8 * b.length;

/** Elements computed by f's tensor instructions from which deferring its derivative pays (tests move it). */
export const deferring = { fromElements: 32768 };

/** The longest trace whose derivative is deferred. */
const DEFER_UP_TO = 4096;

/** Whether a derivative of the trace on `tape` is worth deferring (emitTransformed). */
function worthDeferring(tape: Tape): boolean {
  // a long trace's derivative would be many chains, each compiled afresh: planned for one call only
  if (4 * tape.tensorCount < tape.length || tape.length > DEFER_UP_TO) return false;
  let elements = 0;
  for (let v = 0; v < tape.length && elements < deferring.fromElements; v++) {
    if (tape.op[v] >= FIRST_PRIMITIVE && tape.isTensor(v)) elements += size(tape.dims(v));
  }
  return elements >= deferring.fromElements;
}

/** Emit `transform` of the traced term with the extra inputs and result structure of `emission`. */
export function emitTransformed(traced: TracedFn, transform: Transform, emission: Emission): Applied {
  const { extra, resultShape, inspect, outermost = false, keep = "both", unevaluated = false } = emission;
  const { term } = traced;
  const target = outermost ? null : enclosing(traced, extra.leaves);
  if (target === null) {
    // what nobody inspects is evaluated once emitted, its chains compiled (eval/deferred.ts),
    // where that pays: a tape mostly of tensors, large enough for the passes saved to
    // outweigh planning the chains (on W1 about 30 000 elements computed by f)
    const deferred = keep === "neither" && inspect === undefined && !traced.trace.settings.checkNaN && worthDeferring(term.tape);
    // f's values deferred while it was traced (api/tracing.ts) are computed with the
    // derivative, in the same loops, where it is deferred (C is not read again), or by the
    // caller's evaluation where the caller evaluates the emitted term (jacfwd's lanes: those
    // the tangents read, the others never); else now, before the sink copies C's instructions
    const throughSink = (deferred || unevaluated) && term.tape.deferring;
    if (!throughSink) term.tape.endDeferring();
    const sink = sinkFor(term.tape, traced.trace.caller, traced.trace.settings.checkNaN);
    const nx = term.params[0].atoms.length;
    const extras = extra.leaves.map((s, j) => {
      const p = primalOf(s, `${traced.trace.caller}'s ${extra.name === "W" ? "seed" : `tangent ${extra.name}`}`);
      return typeof p === "number" ? sink.tape.input(nx + j, p) : sink.tape.tensorInput(nx + j, ownedCopy(p));
    });
    if (throughSink) sink.tape.deferAs(term.tape, deferred ? undefined : readValuesOnly);
    else if (deferred) sink.tape.defer({ settle: settleDeferred });
    else if (unevaluated) sink.tape.defer({ settle: readValuesOnly });
    const d = transform(term, sink, extras, null);
    if (deferred) sink.tape.settle([...d.outputs, ...d.results]);
    else if (unevaluated) sink.tape.settle([]);
    handBackCarries(traced);
    closeTrace(sink);
    const emitted = new TraceTerm(sink.tape, [term.params[0], { name: extra.name, shape: extra.shape, atoms: extras }], {
      shape: resultShape,
      atoms: d.results,
    });
    if (unevaluated) return { outputs: [], results: [], term: emitted, opaque: sink.opaque };
    inspect?.(term, emitted);
    const outShapes = leafShapes(term.output.shape);
    const resultShapes = leafShapes(resultShape);
    const owned = keep === "neither" && inspect === undefined ? handedOver(sink.tape, [...d.outputs, ...d.results]) : NONE;
    const applied = {
      outputs: d.outputs.map((v, j) => userValue(sink.tape, v, outShapes[j], owned.has(v))),
      results: d.results.map((v, j) => userValue(sink.tape, v, resultShapes[j], owned.has(v))),
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
  term.tape.endDeferring();
  const t: Trace = target;
  // an inner call's checkNaN covers its derivative, emitted here
  const saved = t.nanCaller;
  if (traced.trace.settings.checkNaN && !t.settings.checkNaN) t.nanCaller = traced.trace.caller;
  let d: Emitted;
  try {
    d = transform(term, t, extra.leaves.map((s) => atomOf(t, s)), {
      inputs: traced.point.map((p) => atomOf(t, p)),
      free: (v) => atomOf(t, v as Operand),
      guards: traced.trace.guards,
      opaque: traced.trace.opaque,
    });
  } finally {
    t.nanCaller = saved;
    handBackCarries(traced);
  }
  // the term is placed in t now: when nobody keeps it, its computations' buffers go back to
  // the pool and its tape's columns serve the next trace (its inputs', free variables' and
  // literals' buffers stay: they are t's)
  if (keep === "neither") {
    term.tape.releaseComputed();
    term.tape.recycle();
  }
  // x and the extras untraced: the types promise numbers and tensors, traced only because f closes over t's values
  const caller = traced.trace.caller;
  const handBack = untraced(traced.point) && untraced(extra.leaves) ? (v: number) => hostTyped(wrap(t, v), caller) : (v: number) => wrap(t, v);
  return { outputs: d.outputs.map(handBack), results: d.results.map(handBack), term: null, opaque: t.opaque };
}

/** The carries the trace's scans kept for a sweep that did not take them go back to the pool (trace/scan-stash.ts). */
function handBackCarries(traced: TracedFn): void {
  const kept = traced.trace.keptCarries;
  if (kept === null) return;
  traced.trace.keptCarries = null;
  for (const handBack of kept) handBack();
}

/** No leaf is a traced value. */
function untraced(leaves: readonly Operand[]): boolean {
  for (let k = 0; k < leaves.length; k++) {
    const v = leaves[k];
    if (typeof v !== "number" && (v instanceof Real || v instanceof Tensor)) return false;
  }
  return true;
}
