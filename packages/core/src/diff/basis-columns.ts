/**
 * @file Forward mode along every basis vector at once: the tangents of a term of reals
 * along e_0, e_1, … (a Jacobian's columns, a Hessian's when the term is grad's), each
 * column emitting only what depends on its input.
 *
 * The sweep along e_k (pushforward.ts) gives every variable a tangent; those that do not
 * depend on x_k are computed from the zero tangents of the other inputs alone, by the
 * same rules on the same values in every column: they are the tangents of the sweep
 * along the zero vector. So that sweep is emitted once, and column k emits the rules of
 * the variables x_k reaches alone, their other arguments' tangents taken from it. Every
 * tangent is then computed by the instructions the sweep along e_k computes it by, on the
 * same numbers: the same values, to the bit, NaN·0 and the sign of zero included (they
 * are not symbolic zeros, which would drop 0·c where c is NaN). For rosenbrock a column is
 * a few instructions: the Hessian costs O(n) instructions and one sweep, not n sweeps.
 */
import { ARITY, FIRST_PRIMITIVE, INPUT } from "../trace/opcodes.js";
import { activity, liveness, place, type Transform } from "./place.js";
import { tangentRule } from "./pushforward.js";
import { unrolled } from "./unroll.js";

/**
 * The tangents of a term of reals (no tensors) along each basis vector of its inputs, in
 * `results` column by column: output j of column k at k·m + j (m outputs). No extra input.
 */
export const basisColumns: Transform = (term, sink, _extras, placement) => {
  // no column rule for a scan instruction: its loops written out, whatever the sink
  ({ term, placement } = unrolled(term, placement, null));
  const { op, a, b, length: n } = term.tape;
  const at = place(term, sink, placement);
  const active = activity(term);
  const live = liveness(term);
  const rule = tangentRule(term, sink, at);
  const swept = (i: number): boolean => op[i] >= FIRST_PRIMITIVE && active[i] === 1 && live[i] === 1;

  // the sweep along 0: every tangent that a column's input does not reach
  const zero = new Int32Array(n).fill(-1);
  const nought = sink.constant(0);
  for (let i = 0; i < n; i++) {
    if (op[i] === INPUT) zero[i] = nought;
    else if (swept(i)) zero[i] = rule(i, zero);
  }

  // the swept instructions using each variable (an argument twice counts once)
  const count = new Int32Array(n + 1);
  const args = (i: number): number[] => (ARITY[op[i]] === 2 && b[i] !== a[i] ? [a[i], b[i]] : [a[i]]);
  for (let i = 0; i < n; i++) if (swept(i)) for (const u of args(i)) count[u + 1]++;
  for (let u = 0; u < n; u++) count[u + 1] += count[u];
  const users = new Int32Array(count[n]);
  const fill = count.slice(0, n);
  for (let i = 0; i < n; i++) if (swept(i)) for (const u of args(i)) users[fill[u]++] = i;

  const one = sink.constant(1);
  const outputs = term.output.atoms;
  const results: number[] = [];
  const dt = zero.slice();
  const reached = new Uint8Array(n);
  for (const input of term.params[0].atoms) {
    // what x_k reaches, in the order of the tape
    const reach = [input];
    reached[input] = 1;
    for (let q = 0; q < reach.length; q++) {
      const u = reach[q];
      for (let k = count[u]; k < count[u + 1]; k++) if (!reached[users[k]]) (reached[users[k]] = 1), reach.push(users[k]);
    }
    reach.sort((p, q) => p - q);
    dt[input] = one;
    for (const i of reach) if (i !== input) dt[i] = rule(i, dt);
    for (const v of outputs) results.push(dt[v] >= 0 ? dt[v] : nought);
    for (const i of reach) (dt[i] = zero[i]), (reached[i] = 0);
  }
  return { outputs: outputs.map((v) => at[v]), results };
};
