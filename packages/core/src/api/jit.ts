/**
 * @file `jit`: a function traced once and replayed, compiled, where its recorded
 * decisions hold.
 *
 * The trace term C of `f` at `x` holds for every point where `f` takes the same
 * decisions (the paper's trace is valid on the region its predicates select). A call
 * replays a cached C at the new point (no traced values, `f` not run), re-decides every
 * predicate C recorded (a guard), and only when all come out as before returns C's
 * outputs there; otherwise `f` is traced again and that trace cached beside the others.
 * A tie, or a kinked primitive at its kink, also means a new trace, so that it is
 * reported as tracing reports it. A trace of reals replayed twice is compiled to
 * JavaScript (jit/forward.ts); a trace with tensors is replayed by the interpreter
 * (eval/replay.ts), its chains of elementwise operations as compiled loops (jit/chains.ts),
 * the rest on the kernels tracing used. The same numbers either way.
 *
 * `f` may call any transformation: `grad`, `jvp`, `hvp`, `hessian`… inside a trace emit
 * their derivative terms into it (Fig. 4), so C holds them, and replaying C computes
 * them. So `compileGrad(f)` is `jit` of `x ↦ [f(x), ∇f(x)]` (compile.ts).
 *
 * Called with traced values (inside an `rd`, or another `jit`), a jitted function traces
 * `f` and places its term into the enclosing trace, guards included (diff/place.ts): the
 * enclosing transformation differentiates through it, so `grad(jit(f))` is `grad(f)`.
 * `jit(vmap(g))` is vmap's own: its traces kept between calls, its lanes run compiled
 * (vmap.ts, jit/lanes.ts).
 *
 * What no guard can see is not replayed: a trace in which `f` read a traced value
 * (`.value`, `primal`, `String(x)`), decided a mask on traced tensors (`gt(t, 0)`), or
 * whose derivative a rule built from such a mask (`max`), or asked for checkNaN, is
 * traced on every call. The contract, as for jax.jit: `f` is a function of `x` alone;
 * numbers and arrays it captures are read when it is traced and kept (pass what changes
 * between calls as part of `x`), and its side effects happen when it is traced, not on
 * replays.
 */
import { replay as placed } from "../diff/place.js";
import { runReals } from "../eval/evaluate.js";
import { guardsHold, termReplay, writeNumbers, type TermReplay } from "../eval/replay.js";
import { ArgumentError } from "../errors.js";
import { compileForward, type ForwardReplay, type Layout } from "../jit/forward.js";
import { compileScanTerm, type ScanTermRun } from "../jit/scan-term.js";
import { hasScans } from "../trace/scan-ops.js";
import { leafShapes, unflatten, type Shape } from "../structure.js";
import { size } from "@wengert/ops";
import { FIRST_PRIMITIVE, KINKS } from "../trace/opcodes.js";
import type { TraceTerm } from "../trace/term.js";
import { fromDense, toDense } from "../trace/host-tensor.js";
import type { Guard } from "../trace/tracer.js";
import { builder } from "./builder.js";
import { isVmapped, JIT_LANES, type JitLanes, type KeepsLanes } from "./vmap.js";
import { cachedTraces, leavesOf, recordedAtTie, type Entry, type JitStats, type Leaves } from "./traceCache.js";
import { tracing } from "../trace/tracer.js";
import { checkOptionKeys, type RdOptions } from "./options.js";
import { trace, userValue, type Fn } from "./tracing.js";
import { emitTransformed } from "./transform.js";
import type { Like, Mode, Output } from "./types.js";

export type { JitStats } from "./traceCache.js";

/**
 * A jitted `f` taking `P`: called with any `x` that `f` can take (numbers where `P` has
 * reals, tensors where it has tensors), it returns `f(x)` as the transformations do:
 * numbers and ndarrays outside any trace, traced values inside one (types.ts).
 */
export interface Jitted<P, Y> {
  <const X extends Like<P>>(x: X): Output<Y, Mode<X>>;
  /**
   * `f(x)`'s numbers written into `out`, depth-first (a Hessian's or a Jacobian's rows one
   * after another: row-major; a tensor's elements in its order), and `out` returned: no
   * fresh arrays per call. `out` holds exactly as many numbers as `f(x)` has. Outside any
   * trace only (its numbers are concrete). Compiled code writes into `out` as it computes,
   * so a call that throws (a new trace meeting a tie under `ties: "error"`) may leave part
   * of f(x) there.
   */
  into<const X extends Like<P>>(x: X, out: Float64Array): Float64Array;
  /** How many calls traced `f`, how many replayed a kept trace, and how many of those ran compiled code. */
  readonly stats: JitStats;
}

/** Replays by the interpreter before a trace of reals is compiled (compiling costs a few traces' time). */
const COMPILE_AFTER = 2;

/** `jit(vmap(f))`: vmap's function, its traces kept between calls and its lanes run compiled. */
export function jit<F extends KeepsLanes>(f: F, options?: RdOptions): JitLanes<F>;
/**
 * `f`, traced once and replayed (compiled, for reals) at later calls where the decisions
 * it took still hold; traced again where they do not.
 */
export function jit<P, Y>(f: (x: P) => Y, options?: RdOptions): Jitted<P, Y>;
export function jit(f: (x: never) => unknown, options: RdOptions = {}): unknown {
  checkOptionKeys("jit", options);
  // jit(vmap(g)): vmap's lanes, its traces kept between calls and run compiled
  if (isVmapped(f)) return f[JIT_LANES](options);
  const cached = cachedTraces({
    caller: "jit",
    inside: (x) => placeTrace("jit", f as Fn, x, options),
    record: (x, flat) => record("jit", f as Fn, x, flat, options),
  });
  const into = (x: unknown, out: Float64Array): Float64Array => {
    if (!(out instanceof Float64Array)) {
      throw new ArgumentError(
        `jit(f).into(x, out): out is ${describe(out)}; it must be a Float64Array holding as many numbers as f(x) has (a Hessian of n inputs: n·n).`,
      );
    }
    if (tracing()) {
      throw new ArgumentError(
        "jit(f).into(x, out) was called inside a trace (an rd, grad, jit…), where f(x)'s numbers are not known yet; " +
          "call the jitted function itself there, and into outside.",
      );
    }
    const y = cached(x, { kind: "into", out });
    return y === out ? out : copyInto(y, out);
  };
  return Object.assign(cached, { into });
}

/** A value for a message: its constructor's name, or its type. */
const describe = (v: unknown): string => {
  const name = v === null ? "null" : typeof v === "object" ? (v.constructor?.name ?? "object") : typeof v;
  return `${/^[aeiou]/i.test(name) ? "an" : "a"} ${name}`;
};

/** out's length checked against the count of f(x)'s numbers. */
function checkLength(out: Float64Array, count: number): void {
  if (out.length !== count) {
    throw new ArgumentError(
      `jit(f).into(x, out): out holds ${out.length} numbers, f(x) has ${count}; ` +
        `pass a Float64Array of length ${count} (f(x)'s numbers, depth-first: a matrix's rows one after another).`,
    );
  }
}

/** y's numbers (its leaves, tensors' elements in order) written into out, depth-first. */
function copyInto(y: unknown, out: Float64Array): Float64Array {
  const flat = leavesOf(y);
  if (flat === null) throw new ArgumentError("jit(f).into(x, out): f(x) holds something other than numbers and tensors; into writes numbers only.");
  const parts = flat.leaves.map((v) => (typeof v === "number" ? v : toDense(v, "jit(f).into's output").data));
  checkLength(out, parts.reduce<number>((k, p) => k + (typeof p === "number" ? 1 : p.length), 0));
  let k = 0;
  for (const p of parts) k = writeNumbers(out, k, p);
  return out;
}

/** Inside a trace: f traced, its term placed into the trace its values belong to (or evaluated, if none). */
export function placeTrace(caller: string, f: Fn, x: unknown, options: RdOptions): unknown {
  const traced = trace(caller, f, x, options);
  const out = traced.term.output.shape;
  const { outputs } = emitTransformed(traced, placed, {
    extra: { name: "*", shape: { kind: "tuple", items: [] }, leaves: [] },
    resultShape: out,
    keep: "neither",
  });
  return unflatten(out, outputs);
}

/** The outermost call that finds no kept trace holding: f traced at x, the trace kept if it can be replayed. */
function record(caller: string, f: Fn, x: unknown, flat: Leaves, options: RdOptions): [unknown, Entry | null] {
  // f on numbers reports no ties: only the rds inside it do (their traces, under their
  // options or these), so this trace's own decisions and kinks (a rule's sign(0) in grad's
  // derivative) are not reported; a replay meeting any tie traces again, for them to report
  const traced = trace(caller, f, x, options, "evaluate");
  const { term } = traced;
  const out = term.output.shape;
  const shapes = leafShapes(out);
  const y = unflatten(out, term.output.atoms.map((v, j) => userValue(term.tape, v, shapes[j])));
  const reportTies = traced.trace.settings.tiesInside !== "ignore";
  const replayable =
    !traced.trace.opaque &&
    !traced.trace.settings.checkNaN &&
    term.tape.frees.length === 0 &&
    !(reportTies && recordedAtTie(term, traced.trace.guards));
  if (!replayable) {
    term.tape.releaseBuffers();
    term.tape.recycle();
    return [y, null];
  }
  const guards = traced.trace.guards;
  if (term.tape.tensorCount > 0) {
    const replay = termReplay(term, guards, reportTies);
    // the trace's own buffers go back to the pool; its literals stay with the replay
    term.tape.releaseBuffers(false);
    // reals around scans: compiled once replayed (each scan a call to its body's compiled loop)
    if (hasScans(term.tape) && shapes.every((s) => s.kind === "real") && flat.leaves.every((v) => typeof v === "number")) {
      return [y, scanEntry(flat.key, out, replay, () => compileScanTerm(term, guards, reportTies))];
    }
    return [y, tensorEntry(flat.key, out, shapes, replay)];
  }
  return [y, realsEntry(flat.key, term, guards, reportTies)];
}

/** The lengths of the rows of a shape that is an array of arrays of reals (a matrix), else null. */
function rowLengths(shape: Shape): number[] | null {
  if (shape.kind !== "tuple" || shape.items.length === 0) return null;
  const rows: number[] = [];
  for (const row of shape.items) {
    if (row.kind !== "tuple" || !row.items.every((s) => s.kind === "real")) return null;
    rows.push(row.items.length);
  }
  return rows;
}

function tensorEntry(key: string, out: Shape, shapes: readonly Shape[], replay: TermReplay): Entry {
  const build = builder(out);
  const count = shapes.reduce((k, s) => k + (s.kind === "tensor" ? size(s.dims) : 1), 0);
  return {
    key,
    compiled: replay.compiled,
    run(flat, want) {
      const inputs = flat.leaves.map((v) => (typeof v === "number" ? v : toDense(v, "jit's input").data));
      if (want?.kind === "into") {
        // the numbers copied into the caller's array, the replay's buffers back to the pool: no fresh buffer per call
        checkLength(want.out, count);
        return replay.into(inputs, want.out) ? want.out : null;
      }
      const r = replay.run(inputs);
      if (r === null) return null;
      // the buffers are the caller's now: no copy
      return build(r.map((v, j) => {
        const s = shapes[j];
        return typeof v === "number" || s.kind !== "tensor" ? v : fromDense({ dims: s.dims, data: v }, s.container, false);
      }));
    },
    drop() {},
  };
}

/**
 * A trace of reals around scans: replayed instruction by instruction, then (after
 * COMPILE_AFTER replays) as one compiled function (jit/scan-term.ts), unless it cannot be
 * (a tensor among its inputs, a body of tensors).
 */
function scanEntry(key: string, out: Shape, replay: TermReplay, compile: () => ScanTermRun | null): Entry {
  const build = builder(out);
  let replays = 0;
  let compiled: ScanTermRun | null | undefined;
  let last = false;
  return {
    key,
    get compiled() {
      return last;
    },
    run(flat) {
      if (compiled === undefined && replays >= COMPILE_AFTER) compiled = compile();
      const inputs = flat.leaves as readonly number[];
      last = !!compiled;
      const r = compiled ? compiled(inputs) : replay.run(inputs);
      if (r === null) return null;
      replays++;
      return build(r);
    },
    drop() {},
  };
}

function realsEntry(key: string, term: TraceTerm, guards: readonly Guard[], reportTies: boolean): Entry {
  const tape = term.tape;
  const { op, length } = tape;
  const kinked: number[] = [];
  if (reportTies) for (let i = 0; i < length; i++) if (op[i] >= FIRST_PRIMITIVE && KINKS[op[i]] !== undefined) kinked.push(i);
  const outputs = term.output.atoms;
  const vals = new Float64Array(length);
  const kept = [...guards];
  const build = builder(term.output.shape);
  // rows of reals (a Hessian, a Jacobian): the compiled code makes the rows itself
  const rows = rowLengths(term.output.shape);
  let replays = 0;
  // compiled for the outputs as values, and for writing them into the caller's array (each made at its first use)
  let compiled: ForwardReplay | null | undefined;
  let compiledInto: ForwardReplay | null | undefined;
  let last = false;

  /** The replay by the interpreter: the tape's columns in one loop, then the guards and kinks. */
  const interpret = (inputs: readonly number[]): number[] | null => {
    runReals(tape, vals, inputs);
    // a tie is reported by tracing; a different outcome is another trace
    if (!guardsHold(vals, kept, reportTies)) return null;
    for (const i of kinked) if (KINKS[op[i]]!(vals[tape.a[i]])) return null;
    return outputs.map((v) => vals[v]);
  };
  return {
    key,
    get compiled() {
      return last;
    },
    run(flat, want) {
      const parts = flat.parts as readonly (number | number[])[];
      const dest = want?.kind === "into" ? want.out : undefined;
      if (dest !== undefined) checkLength(dest, outputs.length);
      let code = dest ? compiledInto : compiled;
      if (code === undefined && replays >= COMPILE_AFTER) {
        const layout: Layout = dest ? { kind: "into", rows } : rows ? { kind: "rows", rows } : { kind: "flat" };
        code = compileForward(term, kept, reportTies, outputs, parts, layout)?.replay ?? null;
        if (dest) compiledInto = code;
        else compiled = code;
      }
      last = !!code;
      if (code) {
        const out = code(parts, dest);
        if (out === null) return null;
        replays++;
        return dest || rows !== null ? out : build(out as number[]);
      }
      const out = interpret(flat.leaves as readonly number[]);
      if (out === null) return null;
      replays++;
      if (dest === undefined) return build(out);
      dest.set(out);
      return dest;
    },
    drop() {
      tape.recycle();
    },
  };
}
