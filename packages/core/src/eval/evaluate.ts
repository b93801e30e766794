/**
 * @file Ordinary evaluation of trace terms on a Float64Array buffer (the paper's
 * Fig. 2, restricted to trace terms: every construct left is a primitive or `+`).
 *
 * One slot per variable; a single forward loop, no recursion, no allocation for reals.
 * Tensor variables keep their buffers in `bufs`, computed by the same kernels that
 * tracing used.
 */
import type { Buf } from "@wengert/ops";
import { CODE, CONST, FREE, INPUT, FIRST_PRIMITIVE, KERNELS } from "../trace/opcodes.js";
import { compute, type Tape } from "../trace/tape.js";
import type { Dense } from "../trace/host-tensor.js";
import { EvaluationError } from "../errors.js";

/**
 * Compute `vals[i]` for the instructions `from …` of `tape`. Inputs come from `inputs`
 * (by input index) or, when it is null, are taken as already in `vals`; literals and
 * free variables take the values the tape recorded. Tensor values go to `bufs`.
 */
export function run(
  tape: Tape,
  vals: Float64Array,
  from = 0,
  inputs: ArrayLike<number | Dense> | null = null,
  bufs: Float64Array[] = [],
): void {
  const { op, a, b, x, length } = tape;
  const value = (v: number): Buf => (x[v] !== 0 && tape.isTensor(v) ? (bufs[v] ?? tape.buf(v)) : vals[v]);
  for (let i = from; i < length; i++) {
    const code = op[i];
    if (code >= FIRST_PRIMITIVE) {
      if (x[i] === 0) {
        vals[i] = KERNELS[code](vals[a[i]], vals[b[i]]);
        continue;
      }
      const args = tape.args(i);
      const y = compute(code, args.map(value), args.map((v) => tape.dims(v)), tape.params(i), tape.dims(i));
      if (typeof y === "number") vals[i] = y;
      else bufs[i] = y;
    } else if (code === INPUT) {
      if (inputs !== null) {
        if (a[i] >= inputs.length) throw new EvaluationError(`evaluate: input #${a[i]} is missing (${inputs.length} given).`);
        const v = inputs[a[i]];
        if (typeof v === "number") vals[i] = v;
        else bufs[i] = v.data;
      }
    } else if (code === CONST || code === FREE) {
      vals[i] = tape.val[i];
    }
  }
}

const { add: ADD, sub: SUB, mul: MUL, div: DIV, square: SQUARE } = CODE;

/**
 * `run` for a tape of reals only, at new inputs: one tight loop, the commonest kernels
 * inline (a replay runs this on every call: compile.ts).
 */
export function runReals(tape: Tape, vals: Float64Array, inputs: ArrayLike<number>): void {
  const { op, a, b, val, length } = tape;
  for (let i = 0; i < length; i++) {
    const code = op[i];
    switch (code) {
      case ADD:
        vals[i] = vals[a[i]] + vals[b[i]];
        break;
      case SUB:
        vals[i] = vals[a[i]] - vals[b[i]];
        break;
      case MUL:
        vals[i] = vals[a[i]] * vals[b[i]];
        break;
      case DIV:
        vals[i] = vals[a[i]] / vals[b[i]];
        break;
      case SQUARE:
        vals[i] = vals[a[i]] * vals[a[i]];
        break;
      case INPUT:
        vals[i] = inputs[a[i]];
        break;
      case CONST:
      case FREE:
        vals[i] = val[i];
        break;
      default:
        vals[i] = KERNELS[code](vals[a[i]], vals[b[i]]);
    }
  }
}
