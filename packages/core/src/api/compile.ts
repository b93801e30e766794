/**
 * @file `compileGrad`: the gradient of a function called again and again (training
 * loops), by replaying its trace instead of tracing it anew.
 *
 * It is `jit` (api/jit.ts) specialised to `x ↦ [f(x), ∇f(x)]`, on jit's cache of
 * traces (traceCache.ts): the trace term C of `f` at `x` holds for every point where `f`
 * takes the same decisions, so a later call replays a kept C at the new point (one loop
 * over the tape's columns, no traced values), re-decides every predicate C recorded (a
 * guard), and only when all come out as before uses C: the gradient is then the numeric
 * reverse sweep over the replayed values. A guard that comes out otherwise, or a tie, or
 * a kinked primitive at its kink, means C does not hold there: `f` is traced again (and
 * that trace kept beside the others). A trace replayed twice is compiled to JavaScript
 * (jit/gradient.ts: the replay and the sweep as loops over typed arrays, the same
 * numbers) and runs as that from then on. `jit(x => valueAndGrad(f, x))` computes the
 * same numbers from the same trace extended by its derivative (compiled forward only,
 * jit/forward.ts); the reverse sweep compiled as a sweep writes the gradient in place,
 * a copy of every component fewer than the extended trace's outputs.
 *
 * With tensors, what is cached is the trace of `f` extended by its derivative, as the
 * outermost rd emits it (Fig. 4: the derivative is itself a trace term), and a replay
 * runs both on the new inputs (eval/replay.ts): no tracing, no differentiation, each
 * buffer back in the pool after its last use. The same guards, the same numbers.
 *
 * What no guard can see is not replayed: a trace in which `f` read a traced value
 * (`.value`, `primal`, `String(x)`), decided a mask on traced values (`gt(t, 0)` on a
 * tensor), or asked for checkNaN,
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
import { guardsHold, termReplay, type TermReplay } from "../eval/replay.js";
import { OutputTypeError } from "../errors.js";
import { leafShapes, REAL, typeString, unflatten, type Shape } from "../structure.js";
import { FIRST_PRIMITIVE, KINKS } from "../trace/opcodes.js";
import { TraceTerm } from "../trace/term.js";
import { fromDense, toDense } from "../trace/host-tensor.js";
import type { Scalar } from "../trace/traced.js";
import type { Guard } from "../trace/tracer.js";
import { compileReplay, type Replay } from "../jit/gradient.js";
import { scanReplay } from "../jit/scan-replay.js";
import { rdWithValue, realSeed } from "./rd.js";
import { checkOptionKeys, type RdOptions } from "./options.js";
import { cachedTraces, recordedAtTie, type Entry, type JitStats, type Leaves, type Want } from "./traceCache.js";
import { trace, type Fn, type TracedFn } from "./tracing.js";
import { emitTransformed } from "./transform.js";
import type { Cotangent, Like, Mode, RealIn } from "./types.js";

/** The seed of a gradient: 1 for f's real output. */
const SEED = { name: "W", shape: REAL, leaves: [1] };

/** What a call of the compiled gradient reads of `[f(x), ∇f(x)]` (Entry.run): its value is not computed. */
const GRADIENT: Want = { kind: "gradient" };

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
  /** How many calls traced `f`, how many replayed a kept trace, and how many of those ran compiled code (for tensors: chains of elementwise operations). */
  readonly stats: JitStats;
}

/** The gradient of a real-valued `f`, replaying its trace on later calls where it holds. */
export function compileGrad<P>(f: (x: P) => Scalar, options: RdOptions = {}): CompiledGrad<P> {
  checkOptionKeys("compileGrad", options);
  const cached = cachedTraces({
    caller: "compileGrad",
    // traced values, or inside an rd (f may close over its traced values): grad's, emitted where it belongs
    inside: (x) => rdWithValue("compileGrad", f as Fn, x, realSeed("compileGrad"), options),
    record: (x, flat) => record(f as Fn, x, flat, options),
  });
  // the types are CompiledGrad's: here x is any value, and the gradient a value shaped like it
  const valueAndGrad = (x: unknown): [unknown, unknown] => cached(x) as [unknown, unknown];
  // the gradient alone: a replay need not compute f's value (a trace records it anyway)
  const compiled = ((x: unknown) => (cached(x, GRADIENT) as [unknown, unknown])[1]) as CompiledGrad<P>;
  Object.assign(compiled, { valueAndGrad, stats: cached.stats });
  return compiled;
}

/** f traced at x: `[f(x), ∇f(x)]`, and the trace to keep (or null where no guard could tell where it holds). */
function record(f: Fn, x: unknown, flat: Leaves, options: RdOptions): [unknown, Entry | null] {
  const traced = trace("compileGrad", f, x, options, "replay");
  const { term } = traced;
  if (term.output.shape.kind !== "real") {
    throw new OutputTypeError(`compileGrad: f returned ${typeString(term.output.shape)} at x; compileGrad needs f to return a real.`);
  }
  const reportTies = traced.trace.settings.ties !== "ignore";
  const replayable = !traced.trace.opaque && !traced.trace.settings.checkNaN && !(reportTies && recordedAtTie(term, traced.trace.guards));
  // x's structure: the same for every x of the same key
  const xs = flat.vector ? null : term.params[0].shape;
  if (term.tape.tensorCount > 0) {
    const [value, g, replay] = traceTensors(traced, replayable, reportTies);
    return [[value, g], replay === null ? null : tensorEntry(flat.key, xs, replay)];
  }
  const entry = replayable ? realsEntry(term, flat.key, xs, traced.trace.guards, reportTies) : null;
  // with checkNaN (never replayed), the sweep checks each rule's result as grad's does
  const g = reverseSweep(term, [1], traced.trace.settings.checkNaN ? { caller: "compileGrad" } : null);
  return [[term.tape.val[term.output.atoms[0]], shaped(xs, g)], entry];
}

/** The gradient, shaped like x (`xs`; null for an array of numbers: the array of its components as it is). */
const shaped = (xs: Shape | null, g: unknown[]): unknown => (xs === null ? g : unflatten(xs, g));

/** A trace of reals, replayed by the interpreter and then by compiled code, with the numeric sweep. */
function realsEntry(term: TraceTerm, key: string, xs: Shape | null, guards: readonly Guard[], reportTies: boolean): Entry {
  const tape = term.tape;
  const { op, length } = tape;
  const kinked: number[] = [];
  for (let i = 0; i < length; i++) if (op[i] >= FIRST_PRIMITIVE && KINKS[op[i]] !== undefined) kinked.push(i);
  const kept = [...guards];
  const vals = new Float64Array(length);
  const scratch: Scratch = newScratch(term);
  let replays = 0;
  // compiled with the value, and for the gradient alone (each made at its first use)
  let compiled: Replay | null | undefined;
  let gradientOnly: Replay | null | undefined;
  let last = false;

  /** The replay by the interpreter: the tape's columns in one loop, then the numeric sweep. */
  const interpret = (inputs: readonly number[]): [number, number[]] | null => {
    runReals(tape, vals, inputs);
    // a tie is reported by tracing; a different outcome is another trace
    if (!guardsHold(vals, kept, reportTies)) return null;
    if (reportTies) for (const i of kinked) if (KINKS[tape.op[i]]!(vals[tape.a[i]])) return null;
    return [vals[term.output.atoms[0]], reverseSweep(term, [1], null, vals, scratch)];
  };
  return {
    key,
    get compiled() {
      return last;
    },
    run(flat, want) {
      const inputs = flat.leaves as number[];
      const value = want?.kind !== "gradient";
      let code = value ? compiled : gradientOnly;
      if (code === undefined && replays >= COMPILE_AFTER) {
        code = compileReplay(term, kept, reportTies, { value })?.replay ?? null;
        if (value) compiled = code;
        else gradientOnly = code;
      }
      last = !!code;
      const r = code ? code(inputs) : interpret(inputs);
      if (r === null) return null;
      replays++;
      return [r[0], shaped(xs, r[1])];
    },
    drop() {
      tape.recycle();
    },
  };
}

/**
 * The first call on tensors: f's trace differentiated as the outermost rd does it, into
 * a trace extending it; that extended trace is kept to replay when nothing it holds was
 * decided on values. Returns f(x), the gradient, and the replay (or null).
 */
function traceTensors(traced: TracedFn, replayable: boolean, reportTies: boolean): [number, unknown, TermReplay | null] {
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
  // f's value, then the cotangents of x's leaves; the seed is the last input, 1
  const both = new TraceTerm(tape, program.params, { shape: REAL, atoms: [term.output.atoms[0], ...program.output.atoms] });
  // reals around scans: compiled once replayed (each scan its body's loop, each sweep its kernel)
  const replay = scanReplay(both, traced.trace.guards, reportTies, termReplay(both, traced.trace.guards, reportTies, term.tape.length), term.tape.length);
  // the trace's own buffers go back to the pool; its literals stay with the replay
  tape.releaseBuffers(false);
  return [value, g, replay];
}

/** The kept trace of a function of tensors, extended by its derivative. */
function tensorEntry(key: string, xs: Shape | null, replay: TermReplay): Entry {
  const shapes = xs === null ? [] : leafShapes(xs);
  return {
    key,
    get compiled() {
      return replay.compiled;
    },
    run(flat) {
      const inputs = flat.leaves.map((v) => (typeof v === "number" ? v : toDense(v, "compileGrad's input").data));
      inputs.push(1);
      const r = replay.run(inputs);
      if (r === null) return null;
      // x may be an array of numbers (f's tensors being literals): its cotangents are numbers
      const g = r.slice(1).map((v, j) => {
        const s = shapes[j];
        // the buffer is the caller's now: no copy
        return typeof v === "number" || s.kind !== "tensor" ? v : fromDense({ dims: s.dims, data: v }, s.container, false);
      });
      return [r[0], shaped(xs, g)];
    },
    drop() {},
  };
}
