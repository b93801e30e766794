/**
 * @file What vmap's evaluator (lanes.ts) decides about a term before it computes anything:
 * which variables vary with the lane and which are needed, which checks run per lane,
 * the fused chains (lane-fusion.ts), where outputs are written, which column each batched
 * real takes and when each batched tensor's buffer goes back to the pool.
 *
 * All of it is a function of the term's structure (each instruction's code, arguments,
 * dims, the parameters the chains read), of its guards' operands, of which inputs are
 * batched and of the options: not of any value. So a term of the same structure (jacfwd
 * traces f anew at every call, and emits the same tangent term) runs the plan made for an
 * earlier one (lane-plans.ts keeps them): only the values are computed again.
 */
import { size } from "@wengert/ops";
import { liveness } from "../diff/place.js";
import { CODE, CONST, FIRST_PRIMITIVE, INPUT, IS_TENSOR_OP, KINKS, tensorSpec } from "../trace/opcodes.js";
import { planFusion, type FusionPlan } from "./lane-fusion.js";
import { transposedPlaces, type Permuted } from "./lane-layout.js";
import type { TraceTerm } from "../trace/term.js";
import type { Guard } from "../trace/tracer.js";

/** The options a plan depends on (lanes.ts LaneOptions). */
export interface LanePlanOptions {
  readonly reportTies: boolean;
  readonly checkNaN: boolean;
  readonly elementMajor?: boolean;
}

/** A term's plan over lanes (see the file's comment); every array is indexed by variable. */
export interface LanePlan {
  /** 1 where the variable varies with the lane. */
  readonly batched: Uint8Array;
  /** 1 where it is needed (outputs, guards, checks, and what they read). */
  readonly live: Uint8Array;
  /** 1 where tracing checks it for ties on tensors (elementwise kinks, tensor primitives' tie rules). */
  readonly tieChecked: Uint8Array;
  /** 1 where a scalar primitive on a real is checked for a tie at its kink. */
  readonly kinked: Uint8Array;
  /** Positions (in the guards) of those whose operands do not vary, and of those whose do. */
  readonly fixed: Int32Array;
  readonly varying: Int32Array;
  /** The fused chains, null under checkNaN (which checks every instruction's values). */
  readonly fusion: FusionPlan | null;
  /** A chain whose lanes go straight to output j (-1: none). */
  readonly directTo: Int32Array;
  /** A chain whose lanes go to output j permuted, as that output (its transpose) lays them out (-1: none). */
  readonly transposedTo: Int32Array;
  /** An output transpose written by its chain: the output's position (-1: none). */
  readonly outputOf: Int32Array;
  /** For a chain with transposedTo, where its elements go. */
  readonly places: readonly (Permuted | undefined)[];
  /** The column of each batched real that is needed (-1 for the others), and how many columns. */
  readonly slotOf: Int32Array;
  readonly slots: number;
  /** Batched tensors computed one by one (not inside a chain). */
  readonly tensors: number;
  /** Values per lane: a tensor's size, 1 for a real. */
  readonly widthOf: Int32Array;
  /** Per instruction, the batched tensors it is the last to read. */
  readonly endsAt: readonly (readonly number[] | undefined)[];
  /** A scalar primitive recorded with dims, on reals: a column's loop. */
  readonly onReals: Uint8Array;
  /** A tensor primitive, or a scalar one on tensors. */
  readonly tensorOp: Uint8Array;
  /** Each output's values per lane. */
  readonly outWidths: readonly number[];
}

const TRANSPOSE = CODE.transpose;

/** The plan of `term` with `guards`, its inputs batched where `batchedInputs` says. */
export function planLanes(term: TraceTerm, guards: readonly Guard[], options: LanePlanOptions, batchedInputs: readonly boolean[]): LanePlan {
  const tape = term.tape;
  const { op, a, x, length: n } = tape;
  const isTensor = (v: number): boolean => tape.isTensor(v);

  const batched = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    if (op[i] === INPUT) batched[i] = +batchedInputs[a[i]];
    else if (op[i] >= FIRST_PRIMITIVE) for (const v of tape.args(i)) batched[i] |= batched[v];
  }
  const kinked = tabulate(
    new Uint8Array(n),
    (i) => +(options.reportTies && op[i] >= FIRST_PRIMITIVE && x[i] === 0 && KINKS[op[i]] !== undefined && op[a[i]] !== CONST),
  );
  const tieChecked = new Uint8Array(n);
  if (options.reportTies) {
    for (let i = 0; i < n; i++) {
      if (op[i] < FIRST_PRIMITIVE || x[i] === 0) continue;
      if (IS_TENSOR_OP[op[i]] ? tensorSpec(op[i]).tie !== undefined : KINKS[op[i]] !== undefined && op[a[i]] !== CONST) tieChecked[i] = 1;
    }
  }
  const live = new Uint8Array(n);
  for (const g of guards) live[g.a] = live[g.b] = 1;
  for (let i = 0; i < n; i++) if (kinked[i] || tieChecked[i]) live[i] = 1;
  liveness(term, live);
  const positions = (f: (g: Guard) => boolean): Int32Array => Int32Array.from(guards.flatMap((g, k) => (f(g) ? [k] : [])));
  const fixed = positions((g) => !batched[g.a] && !batched[g.b]);
  const varying = positions((g) => batched[g.a] === 1 || batched[g.b] === 1);

  const pinned = new Uint8Array(n);
  for (const v of term.output.atoms) pinned[v] = 1;
  for (const g of guards) pinned[g.a] = pinned[g.b] = 1;
  const checked = new Uint8Array(n);
  for (let i = 0; i < n; i++) if (tieChecked[i] || kinked[i]) checked[i] = 1;
  const fusion = options.checkNaN ? null : planFusion({ tape, batched, live, pinned, checked });
  const at = fusion?.at ?? null;
  // a chain that is an output writes its lanes into the output itself where no lane can
  // fail (no guard, tie or kink varies with the lane): every lane's output is then written
  const laneMayFail = varying.length > 0 || someIndex(n, (i) => batched[i] === 1 && live[i] === 1 && (tieChecked[i] === 1 || kinked[i] === 1));
  // (element-major, only a chain that nothing else reads: its lanes are not kept lane by lane)
  const directTo = new Int32Array(n).fill(-1);
  const reads = new Int32Array(n);
  if (options.elementMajor) {
    for (let i = 0; i < n; i++) if (live[i] && op[i] >= FIRST_PRIMITIVE) for (const v of tape.args(i)) reads[v]++;
    term.output.atoms.forEach((v, j) => term.output.atoms.indexOf(v) !== j && reads[v]++);
  }
  if (fusion !== null && !laneMayFail) term.output.atoms.forEach((v, j) => {
    if (fusion.chains.has(v) && directTo[v] < 0 && !reads[v]) directTo[v] = j;
  });
  // (element-major, an output that is a transpose of a chain read by it alone: the chain
  // writes the output, its elements permuted (lane-layout.ts), and the transpose is not run)
  const transposedTo = new Int32Array(n).fill(-1);
  const outputOf = new Int32Array(n).fill(-1);
  const places: (Permuted | undefined)[] = [];
  if (options.elementMajor && fusion !== null && !laneMayFail) term.output.atoms.forEach((v, j) => {
    if (op[v] !== TRANSPOSE || !batched[v] || reads[v]) return;
    const c = tape.args(v)[0];
    if (!fusion.chains.has(c) || reads[c] !== 1 || pinned[c] || transposedTo[c] >= 0) return;
    transposedTo[c] = j;
    outputOf[v] = j;
    places[c] = transposedPlaces(tape.dims(c), (tape.params(v) as { perm: readonly number[] }).perm);
  });

  // a real's column is reused once its last reader has run (the guards', read at the end
  // of a block, and the outputs' are kept)
  const slotOf = columnSlots(term, batched, live, varying.length === 0 ? [] : Array.from(varying, (k) => guards[k]), isTensor, at);
  const slots = slotOf.reduce((k, s) => Math.max(k, s + 1), 0);
  let tensors = 0;
  for (let i = 0; i < n; i++) if (batched[i] && live[i] && isTensor(i) && !fusion?.absorbed[i]) tensors++;
  const widthOf = tabulate(new Int32Array(n), (v) => (isTensor(v) ? size(tape.dims(v)) : 1));
  // scalar primitives recorded with dims (a real from a tensor operation's rules): on
  // reals, the same kernel as a column, not lane by lane
  const onReals = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const scalarOp = op[i] >= FIRST_PRIMITIVE && x[i] !== 0 && !IS_TENSOR_OP[op[i]];
    onReals[i] = +(scalarOp && !isTensor(i) && tape.args(i).every((v) => !isTensor(v)));
  }
  const tensorOp = tabulate(new Uint8Array(n), (i) => +(op[i] >= FIRST_PRIMITIVE && (isTensor(i) || (x[i] !== 0 && !onReals[i]))));
  return {
    batched, live, tieChecked, kinked, fixed, varying, fusion, directTo, transposedTo, outputOf, places, slotOf, slots, tensors, widthOf,
    endsAt: tensorsEndingAt(term, batched, live, at),
    onReals, tensorOp,
    outWidths: term.output.atoms.map((v) => widthOf[v]),
  };
}

/**
 * A column (by number) for each batched real that is needed, shared with reals whose last
 * reader ran before it is made (a linear scan in the tape's order): -1 for the others.
 */
function columnSlots(
  term: TraceTerm,
  batched: Uint8Array,
  live: Uint8Array,
  guards: readonly Guard[],
  isTensor: (v: number) => boolean,
  at: Int32Array | null,
): Int32Array {
  const tape = term.tape;
  const n = tape.length;
  const column = (v: number): boolean => batched[v] === 1 && live[v] === 1 && !isTensor(v);
  const lastUse = tabulate(new Int32Array(n), (i) => i);
  // an instruction inside a fused chain reads its operands where the chain runs (at its sink)
  const readAt = (i: number): number => (at === null ? i : at[i]);
  for (let i = 0; i < n; i++) if (live[i] && tape.op[i] >= FIRST_PRIMITIVE) for (const v of tape.args(i)) lastUse[v] = Math.max(lastUse[v], readAt(i));
  for (const g of guards) lastUse[g.a] = lastUse[g.b] = n;
  for (const v of term.output.atoms) lastUse[v] = n;
  const endsAt: number[][] = Array.from({ length: n + 1 }, () => []);
  for (let v = 0; v < n; v++) if (column(v)) endsAt[lastUse[v]].push(v);
  const slotOf = new Int32Array(n).fill(-1);
  const free: number[] = [];
  let slots = 0;
  for (let i = 0; i < n; i++) {
    // what was last read before i is free for i (not what i reads: a kink reads its argument after)
    if (i > 0) for (const v of endsAt[i - 1]) free.push(slotOf[v]);
    if (column(i)) slotOf[i] = free.pop() ?? slots++;
  }
  return slotOf;
}

/**
 * For each instruction, the batched tensors (computed, not inputs or outputs) that it is
 * the last to read: their lanes' buffers may go back to the pool once it has run.
 */
function tensorsEndingAt(term: TraceTerm, batched: Uint8Array, live: Uint8Array, at: Int32Array | null): (number[] | undefined)[] {
  const tape = term.tape;
  const n = tape.length;
  const lastUse = new Int32Array(n).fill(-1);
  const readAt = (i: number): number => (at === null ? i : at[i]);
  for (let i = 0; i < n; i++) {
    if (batched[i] && live[i] && tape.op[i] >= FIRST_PRIMITIVE) for (const v of tape.args(i)) lastUse[v] = Math.max(lastUse[v], readAt(i));
  }
  for (const v of term.output.atoms) lastUse[v] = -1;
  const endsAt: (number[] | undefined)[] = new Array<number[] | undefined>(n);
  for (let v = 0; v < n; v++) {
    if (lastUse[v] < 0 || !batched[v] || tape.op[v] < FIRST_PRIMITIVE || !tape.isTensor(v)) continue;
    (endsAt[lastUse[v]] ??= []).push(v);
  }
  return endsAt;
}

/**
 * `a` with a[i] = f(i): per instruction of a long tape, a loop (TypedArray.from with a
 * mapping function took 0.7 ms per call over ht's Jacobian's tape).
 */
export function tabulate<A extends Uint8Array | Int32Array>(a: A, f: (i: number) => number): A {
  for (let i = 0; i < a.length; i++) a[i] = f(i);
  return a;
}

/** Whether f holds at some i < n (without an array of the indices). */
export function someIndex(n: number, f: (i: number) => boolean): boolean {
  for (let i = 0; i < n; i++) if (f(i)) return true;
  return false;
}
