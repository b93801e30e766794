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
 * What no guard can see is not replayed: a trace in which `f` read a traced value
 * (`.value`, `primal`, `String(x)`), used tensors, user primitives, values of an
 * enclosing trace, or asked for checkNaN is traced every time. The contract, as for
 * jax.jit: `f` is a function of `x` alone; numbers and arrays it captures are read at
 * the first trace and kept (pass what changes between calls as part of `x`), and its
 * side effects happen when it is traced, not on replays.
 */
import { predicates } from "@wengert/ops";
import { newScratch, reverseSweep, type Scratch } from "../diff/sweep.js";
import { runReals } from "../eval/evaluate.js";
import { OutputTypeError } from "../errors.js";
import { flatten, typeString, unflatten, type Shape } from "../structure.js";
import { FIRST_PRIMITIVE, KINKS } from "../trace/opcodes.js";
import type { TraceTerm } from "../trace/term.js";
import type { Guard, Scalar } from "../trace/tracer.js";
import { compileReplay, type Replay } from "../jit/gradient.js";
import { usesUserOps } from "./forward.js";
import { rdWithValue } from "./rd.js";
import { trace, type Cotangent, type Fn, type RdOptions, type Traced } from "./transform.js";

interface Cached {
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

/** Replays by the interpreter before the trace is compiled (compiling costs a few traces' time). */
const COMPILE_AFTER = 2;

export interface CompiledGrad<X> {
  (x: X): Cotangent<X>;
  /** `[f(x), ∇f(x)]`. */
  valueAndGrad(x: X): [number, Cotangent<X>];
  /** How many calls traced `f`, how many replayed a cached trace, and how many of those ran compiled code. */
  readonly stats: { traces: number; replays: number; compiled: number };
}

const isNumber = (v: unknown): v is number => typeof v === "number";

/** The gradient of a real-valued `f`, replaying its trace on later calls where it holds. */
export function compileGrad<const X>(f: (x: Traced<X>) => Scalar, options: RdOptions = {}): CompiledGrad<X> {
  let cached: Cached | null = null;
  const stats = { traces: 0, replays: 0, compiled: 0 };

  const valueAndGrad = (x: X): [number, Cotangent<X>] => {
    const flat = numbers(x);
    // traced values or tensors: the general path differentiates them (or says what is wrong)
    if (flat === null) return rdWithValue("compileGrad", f as Fn, x, () => 1, options) as [number, Cotangent<X>];
    const key = flat.key;
    if (cached !== null && cached.key === key) {
      const replayed = replay(cached, flat.leaves);
      if (replayed !== null) {
        stats.replays++;
        if (cached.compiled) stats.compiled++;
        return [replayed[0], shaped(flat, replayed[1]) as Cotangent<X>];
      }
    }
    stats.traces++;
    const traced = trace("compileGrad", f as Fn, x, options, true);
    const { term } = traced;
    if (term.output.shape.kind !== "real") {
      throw new OutputTypeError(`compileGrad: f returned ${typeString(term.output.shape)} at x; compileGrad needs f to return a real.`);
    }
    const replayable =
      !traced.trace.opaque && !traced.trace.settings.checkNaN && term.tape.tensorCount === 0 && term.tape.frees.length === 0 && !usesUserOps(term);
    cached = replayable ? cache(term, key, traced.trace.guards, traced.trace.settings.ties !== "ignore") : null;
    const g = reverseSweep(term, [1], null);
    return [term.tape.val[term.output.atoms[0]], shaped(flat, g) as Cotangent<X>];
  };

  const compiled = ((x: X) => valueAndGrad(x)[1]) as CompiledGrad<X>;
  Object.assign(compiled, { valueAndGrad, stats });
  return compiled;
}

/** x's numbers and structure (null: an array of numbers), with a key to compare; null if x holds anything else. */
interface Numbers {
  readonly shape: Shape | null;
  readonly leaves: readonly number[];
  readonly key: string;
}

/** The gradient, shaped like x (for an array of numbers, the array of its components as it is). */
const shaped = (flat: Numbers, g: number[]): unknown => (flat.shape === null ? g : unflatten(flat.shape, g));

function numbers(x: unknown): Numbers | null {
  // the common case, an array of numbers, without walking the structure (a call costs microseconds here)
  if (Array.isArray(x) && allNumbers(x)) return { shape: null, leaves: x, key: `[${x.length}]` };
  try {
    const flat = flatten(x, "x", isNumber, "compileGrad's input");
    return { ...flat, key: typeString(flat.shape) };
  } catch {
    return null;
  }
}

/** Whether every element is a number (a loop: `every` with a callback costs a few times more). */
function allNumbers(x: readonly unknown[]): x is number[] {
  for (let i = 0; i < x.length; i++) if (typeof x[i] !== "number") return false;
  return true;
}

function cache(term: TraceTerm, key: string, guards: readonly Guard[], reportTies: boolean): Cached {
  const { op, length } = term.tape;
  const kinked: number[] = [];
  for (let i = 0; i < length; i++) if (op[i] >= FIRST_PRIMITIVE && KINKS[op[i]] !== undefined) kinked.push(i);
  return { term, key, guards: [...guards], kinked: Int32Array.from(kinked), vals: new Float64Array(length), scratch: newScratch(term), reportTies, replays: 0, compiled: undefined };
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
  for (const g of c.guards) {
    const va = vals[g.a];
    const vb = vals[g.b];
    // a tie is reported by tracing; a different outcome is another trace
    if (c.reportTies && va === vb && g.a !== g.b) return null;
    if (predicates[g.pred].test(va, vb) !== g.outcome) return null;
  }
  if (c.reportTies) for (const i of c.kinked) if (KINKS[tape.op[i]]!(vals[tape.a[i]])) return null;
  const out = vals[term.output.atoms[0]];
  return [out, reverseSweep(term, [1], null, vals, c.scratch)];
}
