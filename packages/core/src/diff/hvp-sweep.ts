/**
 * @file The Hessian-vector product on numbers: the tangent of the reverse sweep.
 *
 * `hvp(f, x, v)` is `jvp` of `grad f`. Built symbolically, the inner `grad` contributes
 * its derivative term `1.R_x(x. C)` to the outer jvp's trace (Fig. 4's rule for `rd`,
 * Abadi & Plotkin, papers/000) and the outer forward sweep gives each of its
 * instructions a tangent. At the outermost `hvp` nothing inspects either term, so this
 * computes the same numbers without building them: a forward sweep gives C's variables
 * their tangents along v (tangents.ts), then differentiate.ts's reverse sweep runs with
 * the same reverse rules, in the same order, on dual numbers (dual.ts), so that every
 * cotangent carries its tangent; the tangents of the inputs' cotangents are H·v.
 *
 * It keeps differentiate.ts's bookkeeping, since that is what the symbolic path does:
 * a variable's first contribution is its cotangent and later ones are added (with the
 * tape's folding); absent cotangents and variables that do not depend on x are symbolic
 * zeros, on which no rule runs. For terms of reals (a user primitive's rule runs on the
 * duals through trace/lifted.ts); tests hold it equal, to the bit, to `jvp` of `grad`
 * built symbolically. `hessian` sweeps one
 * trace once per input, along the basis vectors (`hvpSweeper`). The built-in primitives'
 * rules run written out as code from the table (dual-rules.ts), their temporaries in
 * local variables instead of slots; a user primitive's, or every one where no code may
 * be made, through the dual emitter.
 */
import { CODE, CONST, FIRST_PRIMITIVE, scalarSpec } from "../trace/opcodes.js";
import type { TraceTerm } from "../trace/term.js";
import { binaryDual, DUAL, DualColumns, dualEmitter, held, LITERAL, PLAIN } from "./dual.js";
import { dualRules, type DualSweep } from "./dual-rules.js";
import { activity } from "./place.js";
import { tangentsOf } from "./tangents.js";

const ADD = CODE.add;

/**
 * `∇²f(x)·v` for the trace C of a real-valued `f` at `x`, given the tangents `v` of C's
 * inputs (by input index): the tangents of `1.R_x(x. C)` along v, by input.
 */
export function hvpSweep(term: TraceTerm, v: readonly number[]): number[] {
  const sweep = hvpSweeper(term);
  const hv = sweep(v);
  sweep.recycle();
  return hv;
}

/** `v ↦ ∇²f(x)·v` over one trace; `recycle` hands its columns back when no more directions will come. */
export interface HvpSweeper {
  (v: readonly number[]): number[];
  recycle(): void;
}

/**
 * `v ↦ ∇²f(x)·v` over one trace C, for several directions (hessian: one per input):
 * what does not depend on v (which variables are active, C's values, the columns) is
 * prepared once, and each call runs the forward sweep and the dual reverse sweep alone.
 */
export function hvpSweeper(term: TraceTerm): HvpSweeper {
  const { op, a, b, val, length: n } = term.tape;
  const active = activity(term);
  // slots [0, n): C's variables with their tangents; [n, 2n): their cotangents, where
  // `hasCt`; from 2n: the rules' temporaries. Nothing writes below n: the values stay.
  const d = new DualColumns(2 * n);
  d.val.set(val.subarray(0, n));
  const hasCt = new Uint8Array(n);
  const hasTangent = new Uint8Array(n);
  const e = dualEmitter(d);

  /**
   * Add the dual (v, t, k) to u's cotangent: the first contribution is its cotangent,
   * later ones are added as e.add would add them (folding included).
   */
  const accumulateDual = (u: number, v: number, t: number, k: number): void => {
    if (!active[u]) return;
    const s = n + u;
    if (hasCt[u]) {
      // folded as e.add folds: s + 0 is s, 0 + c is c, else the sum (now in held)
      const same = binaryDual(ADD, d.val[s], d.tan[s], d.kind[s], v, t, k);
      if (same === 0) return;
      if (same === -1) {
        d.val[s] = held.v;
        d.tan[s] = held.t;
        d.kind[s] = held.k;
        return;
      }
    }
    hasCt[u] = 1;
    d.val[s] = v;
    d.tan[s] = t;
    d.kind[s] = k;
  };
  /** A rule's contribution (a slot, or null for a symbolic zero) added to u's cotangent. */
  const accumulate = (u: number, c: number | null): void => {
    if (c !== null) accumulateDual(u, d.val[c], d.tan[c], d.kind[c]);
  };
  const rules: DualSweep = { op, a, b, n, d, active, hasCt, accumulate: accumulateDual };

  const sweep = (v: readonly number[]): number[] => {
    // C's tangents go straight into the slots of its variables
    const { has } = tangentsOf(term, v, d.tan, hasTangent);
    const kind = d.kind;
    for (let i = 0; i < n; i++) kind[i] = op[i] === CONST ? LITERAL : has[i] ? DUAL : PLAIN;
    hasCt.fill(0);
    // the seed of grad: the literal 1
    for (const u of term.output.atoms) accumulate(u, e.lit(1));
    d.reset();

    // the built-ins' rules written out (dual-rules.ts); the others through the dual emitter
    for (let i = dualRules(rules, n - 1); i >= 0; i = dualRules(rules, i - 1)) {
      const c = n + i;
      const spec = scalarSpec(op[i]);
      if (spec.arity === 1) {
        accumulate(a[i], spec.reverse(e, a[i], i, c));
      } else {
        if (active[a[i]]) accumulate(a[i], spec.reverse[0](e, a[i], b[i], i, c));
        if (active[b[i]]) accumulate(b[i], spec.reverse[1](e, a[i], b[i], i, c));
      }
      d.reset();
    }

    // an input without a cotangent has the literal 0, whose tangent is 0
    return term.params[0].atoms.map((u) => (hasCt[u] && d.kind[n + u] === DUAL ? d.tan[n + u] : 0));
  };
  return Object.assign(sweep, { recycle: () => d.recycle() });
}
