/**
 * @file `compileGrad`: the gradient of a function called again and again (training
 * loops), by replaying its trace instead of tracing it anew.
 *
 * The trace term C of `f` at `x` holds for every point where `f` takes the same
 * decisions (the paper's trace is valid on the region its predicates select). So a
 * later call first replays C at the new point (one loop over the tape's columns, no
 * traced values), re-decides every predicate C recorded (a guard), and only when all
 * come out as before uses C: the gradient is then the numeric reverse sweep over the
 * replayed values. A guard that comes out otherwise, or a tie, or a kinked primitive at
 * its kink, means C does not hold there: `f` is traced again (and that trace cached).
 * A trace replayed twice is compiled to JavaScript (jit/gradient.ts: the replay and the
 * sweep as loops over typed arrays, the same numbers) and runs as that from then on.
 *
 * With tensors, what is cached is the trace of `f` extended by its derivative, as the
 * outermost rd emits it (Fig. 4: the derivative is itself a trace term), and a replay
 * runs both on the new inputs (eval/replay.ts): no tracing, no differentiation, each
 * buffer back in the pool after its last use. The same guards, the same numbers.
 *
 * What no guard can see is not replayed: a trace in which `f` read a traced value
 * (`.value`, `primal`, `String(x)`), decided a mask on traced values (`gt(t, 0)` on a
 * tensor), used values of an enclosing trace, or asked for checkNaN,
 * or whose derivative a rule built from a mask of values (max, min), is traced every
 * time. The contract, as for jax.jit: `f` is a function of `x` alone; numbers and arrays
 * it captures are read at the first trace and kept (pass what changes between calls as
 * part of `x`), and its side effects happen when it is traced, not on replays. Inside an
 * enclosing rd, a call is grad's: f is traced, and where it closes over the enclosing
 * trace's values its gradient is emitted into that trace (Sec. 3's free variables of an
 * inner trace term), so the outer derivative goes through them.
 */
import { differentiate } from "../diff/differentiate.js";
import { newScratch, reverseSweep, type Scratch } from "../diff/sweep.js";
import { runReals } from "../eval/evaluate.js";
import { guardsHold, tensorReplay, type TensorReplay } from "../eval/replay.js";
import { OutputTypeError } from "../errors.js";
import { allNumbers, flatten, leafShapes, REAL, typeString, unflatten, type Shape } from "../structure.js";
import { FIRST_PRIMITIVE, KINKS } from "../trace/opcodes.js";
import type { TraceTerm } from "../trace/term.js";
import { concreteShape, fromDense, isConcreteTensor, toDense, type ConcreteTensor } from "../trace/host-tensor.js";
import type { Scalar } from "../trace/traced.js";
import { tracing, type Guard } from "../trace/tracer.js";
import { compileReplay, type Replay } from "../jit/gradient.js";
import { rdWithValue } from "./rd.js";
import type { RdOptions } from "./options.js";
import { trace, type Fn, type TracedFn } from "./tracing.js";
import { emitTransformed } from "./transform.js";
import type { Cotangent, Like, Mode, RealIn } from "./types.js";

interface Cached {
  readonly kind: "reals";
  readonly term: TraceTerm;
  readonly key: string;
  readonly guards: readonly Guard[];
  /** Instructions of kinked primitives (abs, sign): replaying one at its kink is a tie. */
  readonly kinked: Int32Array;
  readonly vals: Float64Array;
  readonly scratch: Scratch;
  /** With ties: "ignore" a tie met on replay needs no report, so no new trace. */
  readonly reportTies: boolean;
  /** Replays so far, and the compiled replay once there have been enough (null: too large). */
  replays: number;
  compiled: Replay | null | undefined;
}

/** A trace of a function of tensors, with its derivative, to replay (eval/replay.ts). */
interface CachedTensors {
  readonly kind: "tensors";
  readonly key: string;
  readonly replay: TensorReplay;
}

/** The seed of a gradient: 1 for f's real output. */
const SEED = { name: "W", shape: REAL, leaves: [1] };

/** Replays by the interpreter before the trace is compiled (compiling costs a few traces' time). */
const COMPILE_AFTER = 2;

/**
 * `x ↦ ∇f(x)` for `f` taking `P`: called with any `x` that `f` can take (numbers where
 * `P` has reals, tensors where it has tensors), it returns the gradient shaped like that
 * `x`, as `grad(f, x)` would.
 */
export interface CompiledGrad<P> {
  <const X extends Like<P>>(x: X): Cotangent<X>;
  /** `[f(x), ∇f(x)]`. */
  valueAndGrad<const X extends Like<P>>(x: X): [RealIn<Mode<X>>, Cotangent<X>];
  /** How many calls traced `f`, how many replayed a cached trace, and how many of those ran compiled code (reals only). */
  readonly stats: { traces: number; replays: number; compiled: number };
}

/** The gradient of a real-valued `f`, replaying its trace on later calls where it holds. */
export function compileGrad<P>(f: (x: P) => Scalar, options: RdOptions = {}): CompiledGrad<P> {
  let cached: Cached | CachedTensors | null = null;
  const stats = { traces: 0, replays: 0, compiled: 0 };

  // the types are CompiledGrad's: here x is any value, and the gradient a value shaped like it
  const valueAndGrad = (x: unknown): [unknown, unknown] => {
    const flat = leavesOf(x);
    // traced values: the general path differentiates them (or says what is wrong)
    if (flat === null) return rdWithValue("compileGrad", f as Fn, x, () => 1, options);
    const key = flat.key;
    // inside an enclosing rd, f may close over its traced values, which no cached trace
    // has seen: a call traces f, and its gradient is emitted there if it depends on them
    if (cached !== null && cached.key === key && !tracing()) {
      const replayed = cached.kind === "reals" ? replayReals(cached, flat) : replayTensors(cached, flat);
      if (replayed !== null) {
        stats.replays++;
        if (cached.kind === "reals" && cached.compiled) stats.compiled++;
        return replayed;
      }
    }
    stats.traces++;
    const traced = trace("compileGrad", f as Fn, x, options, true);
    const { term } = traced;
    if (term.output.shape.kind !== "real") {
      throw new OutputTypeError(`compileGrad: f returned ${typeString(term.output.shape)} at x; compileGrad needs f to return a real.`);
    }
    // f closed over values of an enclosing trace: its gradient depends on them, so it is emitted there, as grad's is
    if (term.tape.frees.length > 0) {
      const { outputs, results } = emitTransformed(traced, differentiate, { extra: SEED, resultShape: term.params[0].shape });
      return [outputs[0] as number, unflatten(term.params[0].shape, results)];
    }
    const replayable = !traced.trace.opaque && !traced.trace.settings.checkNaN;
    const reportTies = traced.trace.settings.ties !== "ignore";
    if (term.tape.tensorCount > 0) {
      const [value, g, replay] = traceTensors(traced, replayable, reportTies);
      cached = replay === null ? null : { kind: "tensors", key, replay };
      return [value, g];
    }
    cached = replayable ? cache(term, key, traced.trace.guards, reportTies) : null;
    // with checkNaN (never replayed), the sweep checks each rule's result as grad's does
    const g = reverseSweep(term, [1], traced.trace.settings.checkNaN ? { caller: "compileGrad" } : null);
    return [term.tape.val[term.output.atoms[0]], shaped(flat, g)];
  };

  const compiled = ((x: unknown) => valueAndGrad(x)[1]) as CompiledGrad<P>;
  Object.assign(compiled, { valueAndGrad, stats });
  return compiled;
}

/** x's leaves and structure (null: an array of numbers), with a key to compare (dims included). */
interface Leaves {
  readonly shape: Shape | null;
  readonly leaves: readonly (number | ConcreteTensor)[];
  readonly key: string;
}

/** The gradient, shaped like x (for an array of numbers, the array of its components as it is). */
const shaped = (flat: Leaves, g: unknown[]): unknown => (flat.shape === null ? g : unflatten(flat.shape, g));

const isLeaf = (v: unknown): v is number | ConcreteTensor => typeof v === "number" || isConcreteTensor(v);
const leafShape = (v: number | ConcreteTensor): Shape => (typeof v === "number" ? REAL : concreteShape(v));

/** x's numbers and tensors (ndarrays, Float64Arrays) with its structure; null if x holds anything else (traced values). */
function leavesOf(x: unknown): Leaves | null {
  // the common case, an array of numbers, without walking the structure (a call costs microseconds here)
  if (Array.isArray(x) && allNumbers(x)) return { shape: null, leaves: x, key: `[${x.length}]` };
  try {
    const flat = flatten(x, "x", isLeaf, "compileGrad's input", undefined, leafShape);
    // the structure written out unambiguously (typeString, for messages, leaves record keys
    // unquoted: {"a: real, b": …} read as {a: real, b: real}, and replayed another x's trace)
    return { ...flat, key: JSON.stringify(flat.shape) };
  } catch {
    return null;
  }
}

function cache(term: TraceTerm, key: string, guards: readonly Guard[], reportTies: boolean): Cached {
  const { op, length } = term.tape;
  const kinked: number[] = [];
  for (let i = 0; i < length; i++) if (op[i] >= FIRST_PRIMITIVE && KINKS[op[i]] !== undefined) kinked.push(i);
  return { kind: "reals", term, key, guards: [...guards], kinked: Int32Array.from(kinked), vals: new Float64Array(length), scratch: newScratch(term), reportTies, replays: 0, compiled: undefined };
}

/** `[f(x), ∇f(x)]` from the cached trace at new inputs, or null where it does not hold. */
function replay(c: Cached, inputs: readonly number[]): [number, number[]] | null {
  if (c.compiled === undefined && c.replays >= COMPILE_AFTER) c.compiled = compileReplay(c.term, c.guards, c.reportTies)?.replay ?? null;
  if (c.compiled) return c.compiled(inputs);
  const r = interpret(c, inputs);
  if (r !== null) c.replays++;
  return r;
}

/** The replay by the interpreter: the tape's columns in one loop, then the numeric sweep. */
function interpret(c: Cached, inputs: readonly number[]): [number, number[]] | null {
  const { term, vals } = c;
  const tape = term.tape;
  runReals(tape, vals, inputs);
  // a tie is reported by tracing; a different outcome is another trace
  if (!guardsHold(vals, c.guards, c.reportTies)) return null;
  if (c.reportTies) for (const i of c.kinked) if (KINKS[tape.op[i]]!(vals[tape.a[i]])) return null;
  const out = vals[term.output.atoms[0]];
  return [out, reverseSweep(term, [1], null, vals, c.scratch)];
}

/**
 * The first call on tensors: f's trace differentiated as the outermost rd does it, into
 * a trace extending it; that extended trace is kept to replay when nothing it holds was
 * decided on values. Returns f(x), the gradient, and the replay (or null).
 */
function traceTensors(traced: TracedFn, replayable: boolean, reportTies: boolean): [number, unknown, TensorReplay | null] {
  const { term } = traced;
  const applied = emitTransformed(traced, differentiate, {
    extra: SEED,
    resultShape: term.params[0].shape,
    outermost: true,
    keep: replayable ? "both" : "neither",
  });
  const value = applied.outputs[0] as number;
  const g = unflatten(term.params[0].shape, applied.results);
  const program = applied.term;
  if (program === null) return [value, g, null];
  const tape = program.tape;
  if (applied.opaque) {
    tape.releaseBuffers();
    return [value, g, null];
  }
  const replay = tensorReplay(program, term.tape.length, term.output.atoms[0], traced.trace.guards, reportTies);
  // the trace's own buffers go back to the pool; its literals stay with the replay
  tape.releaseBuffers(false);
  return [value, g, replay];
}

/** `[f(x), ∇f(x)]` by the cached trace of reals, or null where it does not hold. */
function replayReals(c: Cached, flat: Leaves): [number, unknown] | null {
  const r = replay(c, flat.leaves as number[]);
  return r === null ? null : [r[0], shaped(flat, r[1])];
}

/** `[f(x), ∇f(x)]` by the cached tensor program, or null where it does not hold. */
function replayTensors(c: CachedTensors, flat: Leaves): [number, unknown] | null {
  const inputs = flat.leaves.map((v) => (typeof v === "number" ? v : toDense(v, "compileGrad's input").data));
  const r = c.replay.run(inputs);
  if (r === null) return null;
  // x may be an array of numbers (f's tensors being literals): its cotangents are numbers
  const shapes = flat.shape === null ? [] : leafShapes(flat.shape);
  const g = r.results.map((v, j) => {
    const s = shapes[j];
    // the buffer is the caller's now: no copy
    return typeof v === "number" || s.kind !== "tensor" ? v : fromDense({ dims: s.dims, data: v }, s.container, false);
  });
  return [r.value, shaped(flat, g)];
}
