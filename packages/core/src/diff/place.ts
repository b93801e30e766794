/**
 * @file Where a trace term's variables stand in the sink a transformation emits into.
 *
 * At the outermost level the sink extends the term's own tape, so every variable is
 * itself. Inside an enclosing trace the term is replayed there first (the paper's
 * `let x:T = V in C` in front of each derivative term): its inputs become the point,
 * its free variables the enclosing trace's values, its instructions new instructions.
 */
import { ARITY, CONST, FIRST_PRIMITIVE, INPUT, IS_TENSOR_OP } from "../trace/opcodes.js";
import type { TraceTerm } from "../trace/term.js";
import type { Tape } from "../trace/tape.js";
import { placedValue } from "../trace/scan-stash.js";
import { ownedCopy } from "../trace/host-tensor.js";
import type { Guard, Trace } from "../trace/tracer.js";
import { unrolled } from "./unroll.js";

/** How to replay a term in a sink that does not extend it. */
export interface Placement {
  /** The sink's variables for the term's inputs (the point V), by input index. */
  readonly inputs: readonly number[];
  /** The sink's variable for a value the term mentions free (an outer traced value). */
  free(value: unknown): number;
  /**
   * The decisions taken while tracing the term, and whether it read a traced value: the
   * term is only valid where they hold, so they become the enclosing trace's (compile.ts
   * replays a trace only under its guards, and never one that was read).
   */
  readonly guards: readonly Guard[];
  readonly opaque: boolean;
}

/** The result of a transformation: the term's outputs and the transformed values, as sink variables. */
export interface Emitted {
  readonly outputs: number[];
  readonly results: number[];
  /** Which results are more than the symbolic zero (a scan's sweeps chain them: diff/scan-reverse.ts). */
  readonly present?: boolean[];
  /** A tensor input's pieces, apart from its dense sum, when asked (differentiate's Split); -1 for none. */
  readonly pieceResults?: number[];
  /** The masks of the dense results and of the pieces (null: every element; differentiate's Split). */
  readonly resultMasks?: (Float64Array | null)[];
  readonly pieceMasks?: (Float64Array | null)[];
}

/** A transformation of a trace term emitted into a sink (reverse sweep, forward sweep…). */
export type Transform = (term: TraceTerm, sink: Trace, extras: readonly number[], placement: Placement | null) => Emitted;

/** `at[i]`: the sink variable standing for the term's variable i. */
export function place(term: TraceTerm, sink: Trace, placement: Placement | null): Int32Array {
  const tape = term.tape;
  const { op, a, b, x, val, frees, length: n } = tape;
  const at = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    if (placement === null) at[i] = i;
    else if (op[i] >= FIRST_PRIMITIVE) {
      at[i] = IS_TENSOR_OP[op[i]] ? placeOp(tape, i, sink, at) : sink.record(op[i], at[a[i]], at[b[i]]);
    } else if (op[i] === INPUT) at[i] = placement.inputs[a[i]];
    // a tensor literal is copied: a tape owns its literals' buffers and hands them back to
    // the pool when done, and this term may be placed more than once (a vjp's value and
    // each pullback inside an enclosing grad) or handed back on its own
    else if (op[i] === CONST) at[i] = x[i] === 0 ? sink.constant(val[i]) : sink.tape.tensorConstant(ownedCopy({ dims: tape.dims(i), data: tape.buf(i) }));
    else at[i] = placement.free(frees[a[i]]);
  }
  if (placement !== null) {
    if (sink.keepsGuards) for (const g of placement.guards) sink.guards.push({ ...g, a: at[g.a], b: at[g.b] });
    if (placement.opaque) sink.opaque = true;
  }
  return at;
}

/**
 * Tensor instruction i of `tape` recorded in the sink at its placed arguments: computed
 * there, or (a scan's run, the costly one) its value copied where the arguments hold the
 * numbers it ran at, as they do when the sink computes as it records (trace/scan-stash.ts).
 */
function placeOp(tape: Tape, i: number, sink: Trace, at: Int32Array): number {
  const args = tape.args(i).map((v) => at[v]);
  const known = sink.tape.deferring ? null : placedValue(tape, i, () => args.map((v) => sink.tape.value(v)));
  return known === null ? sink.recordOp(tape.op[i], args, tape.params(i)) : sink.recordComputed(tape.op[i], args, tape.params(i), tape.dims(i), known);
}

/**
 * Which variables depend on the term's inputs: only those carry derivatives (into `active`, if
 * given); inputs marked in `inactive` (by input index) are taken as constants.
 */
export function activity(term: TraceTerm, active = new Uint8Array(term.tape.length), inactive?: Uint8Array): Uint8Array {
  const tape = term.tape;
  const { op, a, b, x, length: n } = tape;
  for (let i = 0; i < n; i++) {
    if (op[i] < FIRST_PRIMITIVE) active[i] = op[i] === INPUT && inactive?.[a[i]] !== 1 ? 1 : 0;
    else if (x[i] === 0) active[i] = active[a[i]] | (ARITY[op[i]] === 2 ? active[b[i]] : 0);
    else for (const v of tape.args(i)) active[i] |= active[v];
  }
  return active;
}

/**
 * Which variables the outputs depend on, and those already marked in `live` (other roots
 * a caller needs). A nested rd leaves dead code behind (its replayed primal, results a
 * user rule computed but nobody needs); forward sweeps and replays skip it.
 */
export function liveness(term: TraceTerm, live = new Uint8Array(term.tape.length)): Uint8Array {
  const { op, a, b, x, length: n } = term.tape;
  for (const v of term.output.atoms) live[v] = 1;
  for (let i = n - 1; i >= 0; i--) {
    if (!live[i] || op[i] < FIRST_PRIMITIVE) continue;
    if (x[i] !== 0) {
      for (const v of term.tape.args(i)) live[v] = 1;
      continue;
    }
    live[a[i]] = 1;
    if (ARITY[op[i]] === 2) live[b[i]] = 1;
  }
  return live;
}

/** The identity transformation: the term placed in the sink, for its outputs alone. */
export const replay: Transform = (term, sink, _extras, placement) => {
  ({ term, placement } = unrolled(term, placement, sink));
  const at = place(term, sink, placement);
  return { outputs: term.output.atoms.map((v) => at[v]), results: [] };
};
