/**
 * @file Efficient symbolic differentiation: `W.R_V(x:T. C)` by one reverse sweep.
 *
 * Computes the same term as the literal Fig. 6 rules (reference.ts) but in linear
 * time and size. Fig. 6's `let` rule, `W.R_V(x.E) + (let ȳ = W.R_y(y.E) in ȳ.R_V(x.D))`,
 * differentiates the body E twice; here each variable instead gets one cotangent,
 * accumulated with `+` (the paper's commutative monoid) over its uses, so every
 * instruction's reverse rule (the paper's `op_r`) is emitted once. Absent cotangents are
 * symbolic zeros: nothing is emitted for them, nor for variables that do not depend on
 * `x` (constants and free variables of C).
 *
 * The derivative term is emitted into a sink: a fresh tape that extends C (outermost
 * `rd`: C's variables and values are reused as they are), or the tape of an enclosing
 * trace (nested `rd`: C is replayed there first, so the outer differentiation sees and
 * differentiates the whole derivative computation).
 */
import { CODE, CONST, FIRST_PRIMITIVE, INPUT, primitiveOf } from "../trace/opcodes.js";
import { emitterFor } from "../trace/tracer.js";
import type { TraceTerm } from "../trace/term.js";

const ADD = CODE.add;

export interface Sink {
  apply(code: number, a: number, b?: number): number;
  constant(c: number): number;
}

/** Where C's free variables stand in the sink, when the sink does not extend C. */
export interface Placement {
  /** The sink's variables for C's inputs (the point V), by input index. */
  readonly inputs: readonly number[];
  /** The sink's variable for a value C mentions free (an outer traced value). */
  free(value: unknown): number;
}

export interface Derivative {
  /** The cotangent of each input of C, as sink variables, by input index. */
  readonly cotangents: number[];
  /** C's outputs as sink variables. */
  readonly outputs: number[];
}

/**
 * Emit `W.R_V(x. C)` into `sink`. `seeds` are the sink's variables for the leaves of
 * W (in the order of C's outputs). With `placement` null, `sink` must be a tape that
 * extends C's (same variable numbering).
 */
export function differentiate(term: TraceTerm, sink: Sink, seeds: readonly number[], placement: Placement | null): Derivative {
  const C = term.tape;
  const n = C.length;
  const { op, a, b } = C;
  const e = emitterFor(sink);

  // Where each variable of C is in the sink: itself, or replayed there (`let x = V in C`).
  const at = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    if (placement === null) at[i] = i;
    else if (op[i] >= FIRST_PRIMITIVE) at[i] = sink.apply(op[i], at[a[i]], at[b[i]]);
    else if (op[i] === INPUT) at[i] = placement.inputs[a[i]];
    else if (op[i] === CONST) at[i] = sink.constant(C.val[i]);
    else at[i] = placement.free(C.frees[a[i]]);
  }

  // Which variables depend on x: only those can carry a non-zero cotangent.
  const active = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    if (op[i] >= FIRST_PRIMITIVE) active[i] = active[a[i]] | (primitiveOf(op[i]).spec.arity === 2 ? active[b[i]] : 0);
    else active[i] = op[i] === INPUT ? 1 : 0;
  }

  // ct[i]: the sink variable holding v_i's cotangent so far; -1 is the symbolic zero.
  const ct = new Int32Array(n).fill(-1);
  const accumulate = (v: number, c: number | null): void => {
    if (c === null || !active[v]) return;
    ct[v] = ct[v] < 0 ? c : sink.apply(ADD, ct[v], c);
  };
  term.output.atoms.forEach((v, j) => accumulate(v, seeds[j]));

  for (let i = n - 1; i >= 0; i--) {
    const c = ct[i];
    if (c < 0 || op[i] < FIRST_PRIMITIVE) continue;
    const spec = primitiveOf(op[i]).spec;
    if (spec.arity === 1) {
      accumulate(a[i], spec.reverse(e, at[a[i]], at[i], c));
    } else {
      if (active[a[i]]) accumulate(a[i], spec.reverse[0](e, at[a[i]], at[b[i]], at[i], c));
      if (active[b[i]]) accumulate(b[i], spec.reverse[1](e, at[a[i]], at[b[i]], at[i], c));
    }
  }

  const cotangents: number[] = [];
  for (let i = 0; i < n; i++) if (op[i] === INPUT) cotangents[a[i]] = ct[i] < 0 ? sink.constant(0) : ct[i];
  return { cotangents, outputs: term.output.atoms.map((v) => at[v]) };
}
