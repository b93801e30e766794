/**
 * @file The traces of a function kept and replayed where they hold: the cache behind
 * `jit` and `compileGrad`.
 *
 * A trace term holds on the region its recorded decisions select (the paper's trace is
 * valid where its predicates come out as they did). A call looks among the traces kept
 * for x's structure, most recently used first, for one whose replay at x holds (its
 * guards come out as recorded, and no tie or kink is met that tracing would report);
 * if none does, `f` is traced at x and that trace kept beside the others (at most
 * CACHE_SIZE, the least recently used dropped). What a trace is replayed to compute is
 * the user's: `f`'s outputs (jit.ts), or `f`'s value and gradient (compile.ts).
 */
import { allNumbers, flatten, REAL, type Shape } from "../structure.js";
import { CONST, FIRST_PRIMITIVE, KINKS } from "../trace/opcodes.js";
import type { TraceTerm } from "../trace/term.js";
import { concreteShape, isConcreteTensor, type ConcreteTensor } from "../trace/tensor.js";
import { tracing, type Guard } from "../trace/tracer.js";

/** How many calls traced `f`, how many replayed a kept trace, and how many of those ran compiled code. */
export interface JitStats {
  traces: number;
  replays: number;
  compiled: number;
}

/** x's numbers and tensors (ndarrays, Float64Arrays) with its structure, and a key to compare (dims included). */
export interface Leaves {
  /** null: an array of numbers. */
  readonly shape: Shape | null;
  readonly leaves: readonly (number | ConcreteTensor)[];
  readonly key: string;
}

/** A kept trace. */
export interface Entry {
  /** The structure of the x it was traced at (Leaves.key). */
  readonly key: string;
  /** Whether its last replay ran compiled code. */
  readonly compiled: boolean;
  /** The result at x (a value the caller owns), or null where the trace does not hold there. */
  run(flat: Leaves): unknown;
  /** Its tape's columns back to the pool, once dropped from the cache. */
  drop(): void;
}

/** What a use of the cache traces and replays. */
export interface Recorder {
  readonly caller: string;
  /** A call with traced values, or inside a trace: traced there (no kept trace has seen what f closes over). */
  inside(x: unknown): unknown;
  /** At the outermost level, where no kept trace holds: f traced at x, the result, and the entry to keep (or null). */
  record(x: unknown, flat: Leaves): [unknown, Entry | null];
}

/** Traces kept per function. */
export const CACHE_SIZE = 8;

/** A function of x that replays the recorder's kept traces where they hold, and traces where none does. */
export function cachedTraces(recorder: Recorder): ((x: unknown) => unknown) & { readonly stats: JitStats } {
  const entries: Entry[] = [];
  const stats: JitStats = { traces: 0, replays: 0, compiled: 0 };
  const call = (x: unknown): unknown => {
    const flat = tracing() ? null : leavesOf(x, recorder.caller);
    if (flat === null) return recorder.inside(x);
    for (let k = 0; k < entries.length; k++) {
      const e = entries[k];
      if (e.key !== flat.key) continue;
      const y = e.run(flat);
      if (y === null) continue;
      if (k > 0) entries.unshift(...entries.splice(k, 1));
      stats.replays++;
      if (e.compiled) stats.compiled++;
      return y;
    }
    stats.traces++;
    const [y, entry] = recorder.record(x, flat);
    if (entry !== null) {
      entries.unshift(entry);
      if (entries.length > CACHE_SIZE) entries.pop()!.drop();
    }
    return y;
  };
  return Object.assign(call, { stats });
}

const isLeaf = (v: unknown): v is number | ConcreteTensor => typeof v === "number" || isConcreteTensor(v);
const leafShape = (v: number | ConcreteTensor): Shape => (typeof v === "number" ? REAL : concreteShape(v));

/** x's leaves, or null if x holds anything else (traced values, or a mistake that tracing will name). */
export function leavesOf(x: unknown, caller: string): Leaves | null {
  // the common case, an array of numbers, without walking the structure (a call costs microseconds here)
  if (Array.isArray(x) && allNumbers(x)) return { shape: null, leaves: x, key: `[${x.length}]` };
  try {
    const flat = flatten(x, "x", isLeaf, `${caller}'s input`, undefined, leafShape);
    // the structure written out unambiguously (typeString, for messages, leaves record keys
    // unquoted: {"a: real, b": …} read as {a, b}, and replayed another x's trace)
    return { ...flat, key: JSON.stringify(flat.shape) };
  } catch {
    return null;
  }
}

/**
 * Whether a trace was recorded at a tie (a decision between two variables of equal
 * values, a kinked primitive of reals at its kink): a replay there traces again, for the
 * tie to be reported, so keeping it would fill the cache with copies of one trace.
 */
export function recordedAtTie(term: TraceTerm, guards: readonly Guard[]): boolean {
  const { op, a, x, val, length } = term.tape;
  for (const g of guards) if (g.distinct && val[g.a] === val[g.b]) return true;
  for (let i = 0; i < length; i++) if (op[i] >= FIRST_PRIMITIVE && x[i] === 0 && KINKS[op[i]] !== undefined && op[a[i]] !== CONST && KINKS[op[i]]!(val[a[i]])) return true;
  return false;
}
