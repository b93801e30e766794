/**
 * @file A tape's deferred instructions evaluated (trace/tape.ts `defer`): f's tensor
 * operations while an outermost rd traces it, and that rd's derivative, appended without
 * values and then run by the interpreter with their chains of elementwise operations
 * compiled (jit/chains.ts): one pass over memory per chain, and no buffer for a value read
 * once inside it, where computing each instruction as it is appended made a pass and a
 * buffer for each. Each value is the number `compute` gives (a chain computes the same).
 * The plan is kept by the tape's structure (jit/chain-plans.ts): the next call's trace
 * finds it.
 */
import type { Buf } from "@wengert/ops";
import { compute, type Settle, type SettleEarly, type Tape } from "../trace/tape.js";
import { INPUT } from "../trace/opcodes.js";
import { fusable, fusedCode } from "../jit/chains.js";
import { cachedPlan } from "../jit/chain-plans.js";
import { Interpreter, liveVariables } from "./interpreter.js";

/**
 * Evaluate the deferred instructions of `tape` from `from` on: those `keep` needs, by the
 * planned interpreter, the values of `keep` given to the tape (the reals among them, and
 * the tensors still deferred; instructions from `from` on computed as they were appended,
 * reals, are computed again: the same numbers; inputs among them are read from the tape);
 * or, `keep` null (a value is read while f runs or the derivative is emitted: a decision,
 * a scan's reverse rule, a tie rule), all of them in order, each on its own by the
 * kernels, since any may be read next (a chain storing all its values costs more than the
 * kernels' passes).
 */
export const settleDeferred: Settle = (tape, from, keep) => {
  if (keep === null) {
    for (let i = from; i < tape.length; i++) {
      if (!tape.isDeferred(i)) continue;
      const args = tape.args(i);
      tape.settled(i, compute(tape.op[i], args.map((v) => tape.value(v)), args.map((v) => tape.dims(v)), tape.params(i), tape.dims(i)));
    }
    return;
  }
  const runner = new Interpreter(tape, keep, { from, plan: fusedCode.enabled ? cachedPlan : undefined });
  runner.run(inputsFrom(tape, from));
  for (const v of new Set(keep)) if (!tape.isTensor(v) || tape.isDeferred(v)) tape.settled(v, runner.take(v));
  runner.clear();
};

/**
 * Real v (from deferred tensors: f's loss) computed by the plan of what it needs, which
 * stays deferred; declined where that needs a deferred value the kernels compute (not a
 * chain's: it would be computed again with the derivative).
 */
export const settleEarly: SettleEarly = (tape, from, v) => {
  if (!fusedCode.enabled) return false;
  const live = liveVariables(tape, [v]);
  for (let i = from; i < v; i++) if (live[i] === 1 && tape.isDeferred(i) && fusable(tape, i) === null) return false;
  settleDeferred(tape, from, [v]);
  return true;
};

/** The values of the inputs appended from `from` on, by input index. */
function inputsFrom(tape: Tape, from: number): Buf[] {
  const inputs: Buf[] = [];
  for (let i = from; i < tape.length; i++) if (tape.op[i] === INPUT) inputs[tape.a[i]] = tape.value(i);
  return inputs;
}
