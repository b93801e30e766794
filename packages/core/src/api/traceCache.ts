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
import { mayMakeCode } from "../jit/javascript.js";
import { allNumbers } from "../structure.js";
import { CONST, FIRST_PRIMITIVE, KINKS } from "../trace/opcodes.js";
import type { TraceTerm } from "../trace/term.js";
import { isConcreteTensor, type ConcreteTensor } from "../trace/host-tensor.js";
import { tracing, type Guard } from "../trace/tracer.js";

/** How many calls traced `f`, how many replayed a kept trace, and how many of those ran compiled code. */
export interface JitStats {
  traces: number;
  replays: number;
  compiled: number;
}

/** x's numbers and tensors (ndarrays, Float64Arrays), and a key to compare structures by (dims included). */
export interface Leaves {
  /** The leaves, depth-first (made on first use from `parts`). */
  readonly leaves: readonly (number | ConcreteTensor)[];
  /**
   * The leaves in runs: a number, a tensor, or an array of numbers (its elements, in
   * order). Compiled code reads x's arrays of numbers from here without a copy of them
   * all into one array ([x, v] is its own parts).
   */
  readonly parts: readonly (number | readonly number[] | ConcreteTensor)[];
  readonly key: string;
  /** Whether x is an array of numbers. */
  readonly vector: boolean;
}

/** Leaves of parts, their flat list made when first read (a class: a call makes one, and an object literal with a getter costs more to make). */
class LeavesIn implements Leaves {
  private flat: (number | ConcreteTensor)[] | null = null;

  constructor(
    readonly parts: Leaves["parts"],
    readonly key: string,
    readonly vector: boolean,
  ) {}

  get leaves(): readonly (number | ConcreteTensor)[] {
    return (this.flat ??= ([] as (number | ConcreteTensor)[]).concat(...(this.parts as (number | ConcreteTensor)[])));
  }
}

const leavesIn = (parts: Leaves["parts"], key: string, vector: boolean): Leaves => new LeavesIn(parts, key, vector);

/** A kept trace. */
export interface Entry {
  /** The structure of the x it was traced at (Leaves.key). */
  readonly key: string;
  /** Whether its last replay ran compiled code. */
  readonly compiled: boolean;
  /**
   * The result at x (a value the caller owns), or null where the trace does not hold
   * there. `want`: what of it the caller reads, and how, where not all of it as a value.
   */
  run(flat: Leaves, want?: Want): unknown;
  /** Its tape's columns back to the pool, once dropped from the cache. */
  drop(): void;
}

/**
 * What a caller reads of a replay's result, where not the whole of it as a value: the
 * gradient alone (compileGrad's call: f's value need not be computed), or its numbers
 * written into the caller's array, depth-first (`jit(f).into`: no fresh arrays). An entry
 * that cannot do the latter returns the value, and the caller copies its numbers.
 */
export type Want = { readonly kind: "gradient" } | { readonly kind: "into"; readonly out: Float64Array };

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
export function cachedTraces(recorder: Recorder): ((x: unknown, want?: Want) => unknown) & { readonly stats: JitStats } {
  const entries: Entry[] = [];
  const stats: JitStats = { traces: 0, replays: 0, compiled: 0 };
  // x's leaves read by code written for the structure x had at the last call, if it has it
  let vectors: VectorsOf | null = null;
  const call = (x: unknown, want?: Want): unknown => {
    const flat = tracing() ? null : (vectors?.(x) ?? leavesOf(x));
    if (flat === null) return recorder.inside(x);
    if (vectors === null && !flat.vector && flat.parts.length > 0 && flat.parts.every(Array.isArray)) vectors = vectorsOf(flat.parts.length);
    for (let k = 0; k < entries.length; k++) {
      const e = entries[k];
      if (e.key !== flat.key) continue;
      const y = e.run(flat, want);
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

/**
 * x's leaves and the key of its structure, or null if x holds anything else (traced
 * values, or a mistake that tracing will name). One walk, writing the key as it goes: a
 * replay runs in microseconds, so the leaves are not flattened first and a key then built
 * from their Shape. Recursive in the nesting of the user's data only.
 */
export function leavesOf(x: unknown): Leaves | null {
  // the common case, an array of numbers, without walking the structure
  if (Array.isArray(x) && allNumbers(x)) return { leaves: x, parts: [x], key: vectorKey(x.length), vector: true };
  if (Array.isArray(x)) {
    // arrays of numbers in an array ([x, v]): x is its own parts (pushing leaves one by one cost 20 ns each)
    const vectors = vectorsKey(x);
    if (vectors !== null) return leavesIn(x as (number | number[])[], vectors, false);
    // tensors and numbers in an array ([x, T, s]): the last such key, where their dims are the last ones
    const tensors = tensorsKey(x);
    if (tensors !== null) {
      const leaves = x.slice() as (number | ConcreteTensor)[];
      return { leaves, parts: leaves, key: tensors, vector: false };
    }
  }
  const leaves: (number | ConcreteTensor)[] = [];
  const key = keyWalk(x, leaves);
  return key === null ? null : { leaves, parts: leaves, key, vector: false };
}

/** The key of an array of n numbers: the last one made, if n is its length (kept traces' keys then compare by reference). */
const vectorKey = (() => {
  let length = -1;
  let key = "";
  return (n: number): string => (n === length ? key : ((length = n), (key = `[${n}]`)));
})();

/** `leavesOf` for an x of one structure: an array of k arrays of numbers (null for any other x). */
type VectorsOf = (x: unknown) => Leaves | null;

/**
 * leavesOf for an array of k arrays of numbers (as [x, v] is), written for k: a loop per
 * array. One loop over all of them (allNumbers) would read arrays of doubles and of small
 * integers at one place, whose element kinds V8 then handles generically (the copy of the
 * inputs into compiled code is written so too: jit/forward.ts copyIn). Null where code may
 * not be made.
 */
function vectorsOf(k: number): VectorsOf | null {
  if (!mayMakeCode()) return null;
  // the lengths and key of the last x: the same lengths give the same string (compared to
  // the kept traces' keys by reference, where a key built anew is compared character by character)
  const lines: string[] = [`if (!Array.isArray(x) || x.length !== ${k}) return null;`, "let same = true;"];
  for (let i = 0; i < k; i++) {
    lines.push(
      `const p${i} = x[${i}];`,
      `if (!Array.isArray(p${i})) return null;`,
      `for (let j = 0; j < p${i}.length; j++) if (typeof p${i}[j] !== "number") return null;`,
      `if (p${i}.length !== last[${i}]) { last[${i}] = p${i}.length; same = false; }`,
    );
  }
  lines.push(
    `if (!same) { let key = "("; for (let i = 0; i < ${k}; i++) key += last[i] > 0 ? "(" + last[i] + ") " : "() "; memo.key = key + ")"; }`,
    "return leavesIn(x, memo.key, false);",
  );
  const read = new Function("x", "leavesIn", "last", "memo", lines.join("\n")) as (
    x: unknown,
    leaves: typeof leavesIn,
    last: Int32Array,
    memo: { key: string },
  ) => Leaves | null;
  const last = new Int32Array(k).fill(-1);
  const memo = { key: "" };
  return (x) => read(x, leavesIn, last, memo);
}

/** keyWalk's key of x, an array of numbers and arrays of numbers; null if it is not one. */
function vectorsKey(x: readonly unknown[]): string | null {
  let key = "(";
  let run = 0;
  for (let i = 0; i < x.length; i++) {
    const e = x[i];
    if (typeof e === "number") run++;
    else if (Array.isArray(e) && allNumbers(e)) {
      key += `${run > 0 ? `${run} ` : ""}(${e.length > 0 ? e.length : ""}) `;
      run = 0;
    } else return null;
  }
  return `${key}${run > 0 ? run : ""})`;
}

/** The items of the last array of tensors and numbers keyed (a number −1, a Float64Array its length, an ndarray its shape), and its key. */
const lastTensors: { items: (number | readonly number[])[]; key: string } = { items: [], key: "()" };

/**
 * keyWalk's key of x, an array of numbers and tensors (null for any other x): the last
 * one made where the items are alike (kept traces' keys then compare by reference, and
 * no string is built: a jitted call on small tensors runs in microseconds).
 */
function tensorsKey(x: readonly unknown[]): string | null {
  const last = lastTensors.items;
  let same = last.length === x.length;
  for (let i = 0; i < x.length; i++) {
    const e = x[i];
    if (typeof e === "number") same &&= last[i] === -1;
    else if (e instanceof Float64Array) same &&= last[i] === e.length;
    else if (isConcreteTensor(e)) same &&= Array.isArray(last[i]) && sameDims(last[i] as readonly number[], (e as { shape: readonly number[] }).shape);
    else return null;
  }
  if (same) return lastTensors.key;
  const key = keyWalk(x, []);
  if (key === null) return null;
  lastTensors.items = x.map((e) => (typeof e === "number" ? -1 : e instanceof Float64Array ? e.length : [...(e as { shape: number[] }).shape]));
  lastTensors.key = key;
  return key;
}

/** Whether dims a and b are equal. */
function sameDims(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * The key of v's structure, its leaves pushed on `leaves` (depth-first, as flatten
 * takes them): a run of n numbers in an array is `n`, a tensor its container and dims,
 * a record's keys JSON strings (typeString, for messages, leaves them unquoted:
 * {"a: real, b": …} read as {a, b}, and replayed another x's trace).
 */
function keyWalk(v: unknown, leaves: (number | ConcreteTensor)[]): string | null {
  if (typeof v === "number") {
    leaves.push(v);
    return "1";
  }
  if (Array.isArray(v)) {
    let key = "(";
    let run = 0;
    for (let i = 0; i < v.length; i++) {
      const e = v[i];
      if (typeof e === "number") {
        leaves.push(e);
        run++;
        continue;
      }
      const k = keyWalk(e, leaves);
      if (k === null) return null;
      key += `${run > 0 ? `${run} ` : ""}${k} `;
      run = 0;
    }
    return `${key}${run > 0 ? run : ""})`;
  }
  if (isConcreteTensor(v)) {
    leaves.push(v);
    return v instanceof Float64Array ? `f[${v.length}]` : `n[${v.shape.join(",")}]`;
  }
  if (typeof v !== "object" || v === null) return null;
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return null;
  let key = "{";
  for (const name of Object.keys(v)) {
    const k = keyWalk((v as Record<string, unknown>)[name], leaves);
    if (k === null) return null;
    key += `${JSON.stringify(name)}:${k} `;
  }
  return `${key}}`;
}

/**
 * Whether a trace was recorded at a tie (a decision between two variables of equal
 * values, a kinked primitive of reals at its kink): a replay there traces again, for the
 * tie to be reported, so keeping it would fill the cache with copies of one trace.
 */
export function recordedAtTie(term: TraceTerm, guards: readonly Guard[]): boolean {
  const { op, a, x, val, length } = term.tape;
  for (const g of guards) if (g.distinct && val[g.a] === val[g.b]) return true;
  for (let i = 0; i < length; i++) {
    const kinked = op[i] >= FIRST_PRIMITIVE && x[i] === 0 && KINKS[op[i]] !== undefined;
    if (kinked && op[a[i]] !== CONST && KINKS[op[i]]!(val[a[i]])) return true;
  }
  return false;
}
