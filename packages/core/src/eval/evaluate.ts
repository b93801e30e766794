/**
 * @file Ordinary evaluation of trace terms on a Float64Array buffer (the paper's
 * Fig. 2, restricted to trace terms: every construct left is a primitive or `+`).
 *
 * One slot per variable; a single forward loop, no recursion, no allocation.
 */
import { CONST, FREE, INPUT, FIRST_PRIMITIVE, KERNELS } from "../trace/opcodes.js";
import type { Tape } from "../trace/tape.js";
import { EvaluationError } from "../errors.js";

/**
 * Compute `vals[i]` for the instructions `from …` of `tape`. Inputs come from `inputs`
 * (by input index) or, when it is null, are taken as already in `vals`; literals and
 * free variables take the values the tape recorded.
 */
export function run(tape: Tape, vals: Float64Array, from = 0, inputs: ArrayLike<number> | null = null): void {
  const { op, a, b, length } = tape;
  for (let i = from; i < length; i++) {
    const code = op[i];
    if (code >= FIRST_PRIMITIVE) {
      vals[i] = KERNELS[code](vals[a[i]], vals[b[i]]);
    } else if (code === INPUT) {
      if (inputs !== null) {
        if (a[i] >= inputs.length) throw new EvaluationError(`evaluate: input #${a[i]} is missing (${inputs.length} given).`);
        vals[i] = inputs[a[i]];
      }
    } else if (code === CONST || code === FREE) {
      vals[i] = tape.val[i];
    }
  }
}
