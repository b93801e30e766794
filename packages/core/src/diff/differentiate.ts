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
 * The derivative term is emitted into a sink (place.ts): a trace extending C at the
 * outermost `rd`, where C's values are reused as they are, or the enclosing trace of a
 * nested `rd`, so that the outer differentiation differentiates the whole derivative
 * computation.
 */
import { CODE, FIRST_PRIMITIVE, INPUT, primitiveOf } from "../trace/opcodes.js";
import { emitterFor, type Trace } from "../trace/tracer.js";
import type { TraceTerm } from "../trace/term.js";
import { activity, place, type Emitted, type Placement } from "./place.js";

const ADD = CODE.add;

/**
 * Emit `W.R_V(x. C)` into `sink`. `seeds` are the sink's variables for the leaves of W
 * (in the order of C's outputs); the results are the cotangents of C's inputs.
 */
export function differentiate(term: TraceTerm, sink: Trace, seeds: readonly number[], placement: Placement | null): Emitted {
  const { op, a, b, length: n } = term.tape;
  const e = emitterFor(sink);
  const at = place(term, sink, placement);
  const active = activity(term);

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
    if (sink.settings.checkNaN) sink.context = `the reverse rule of ${primitiveOf(op[i]).name} (for v${i})`;
    if (spec.arity === 1) {
      accumulate(a[i], spec.reverse(e, at[a[i]], at[i], c));
    } else {
      if (active[a[i]]) accumulate(a[i], spec.reverse[0](e, at[a[i]], at[b[i]], at[i], c));
      if (active[b[i]]) accumulate(b[i], spec.reverse[1](e, at[a[i]], at[b[i]], at[i], c));
    }
  }

  sink.context = "";
  const results: number[] = [];
  for (let i = 0; i < n; i++) if (op[i] === INPUT) results[a[i]] = ct[i] < 0 ? sink.constant(0) : ct[i];
  return { outputs: term.output.atoms.map((v) => at[v]), results };
}
