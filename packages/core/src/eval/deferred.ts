/**
 * @file A tape's deferred instructions evaluated (trace/tape.ts `defer`): an outermost
 * rd's derivative, emitted without values and then run by the interpreter with its chains
 * of elementwise operations compiled (jit/chains.ts): one pass over memory per chain and
 * no buffer for a value read once inside it, where emitting computed each instruction on
 * its own. Each value is the number `compute` gives (a chain computes the same).
 */
import { compute, type Settle } from "../trace/tape.js";
import { fusedCode, planChains } from "../jit/chains.js";
import { Interpreter } from "./interpreter.js";

/**
 * Evaluate the deferred instructions of `tape` from `from` on: those `keep` needs, by the
 * planned interpreter, the values of `keep` given to the tape; or, `keep` null (a value
 * is read while the derivative is emitted: a scan's reverse rule, a tie rule), all of
 * them in order, each on its own, since any may be read next.
 */
export const settleDeferred: Settle = (tape, from, keep) => {
  if (keep === null) {
    for (let i = from; i < tape.length; i++) {
      if (!tape.isDeferred(i)) continue;
      const args = tape.args(i);
      tape.settled(i, compute(tape.op[i], args.map((v) => tape.value(v)), args.map((v) => tape.dims(v)), tape.params(i), tape.dims(i)) as Float64Array);
    }
    return;
  }
  const runner = new Interpreter(tape, keep, { from, plan: fusedCode.enabled ? planChains : undefined });
  runner.run([]);
  for (const v of new Set(keep)) if (tape.isDeferred(v)) tape.settled(v, runner.take(v) as Float64Array);
  runner.clear();
};
