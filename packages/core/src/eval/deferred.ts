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
import { compute, type Settle, type SettleEarly, type Tape } from "../trace/tape.js";
import { CODE, FIRST_PRIMITIVE } from "../trace/opcodes.js";
import { fusable, fusedCode } from "../jit/chains.js";
import { cachedPlan } from "../jit/chain-plans.js";
import { Interpreter } from "./interpreter.js";

/**
 * Evaluate the deferred instructions of `tape` from `from` on: those `keep` needs, by the
 * planned interpreter, the values of `keep` given to the tape (the reals among them, and
 * the tensors still deferred; every value computed already, as appended or earlier, is
 * read from the tape); or, `keep` null (a value is read while f runs or the derivative is
 * emitted: a decision, a scan's reverse rule, a tie rule), all of them in order, each on
 * its own by the kernels, since any may be read next (a chain storing all its values costs
 * more than the kernels' passes).
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
  evaluate(tape, from, keep, -1);
};

/**
 * The settler of a term that its caller evaluates (an emission marked unevaluated, a scan's
 * block derivative): a value a rule reads while the term is emitted is computed (with
 * everything deferred before it), the others never.
 */
export const readValuesOnly: Settle = (tape, from, keep) => {
  if (keep === null) settleDeferred(tape, from, null);
};

/**
 * Operations a chain computes again in registers, where the derivative reads their values,
 * for less than storing them costs; the values of the others (exp, log, tanh…) are stored
 * when a real computed early needs them.
 */
const CHEAP = new Set<number>([
  CODE.neg, CODE.add, CODE.sub, CODE.mul, CODE.div, CODE.square, CODE.slice, CODE.reshape, CODE.broadcastTo, CODE.where, CODE.concat, CODE.embed,
]);

/**
 * Real v (from deferred tensors: f's loss) computed by the plan of what it needs, the
 * values of dear operations among them stored (CHEAP), the others left deferred; declined
 * where that needs a deferred value the kernels compute (not a chain's: it would be
 * computed again with the derivative).
 */
export const settleEarly: SettleEarly = (tape, from, v) => {
  if (!fusedCode.enabled) return false;
  const keep = [v];
  const live = liveDeferred(tape, from, keep, v);
  for (let i = from; i < v; i++) {
    if (live[i] !== 1 || !tape.isDeferred(i)) continue;
    if (fusable(tape, i) === null) return false;
    if (!CHEAP.has(tape.op[i])) keep.push(i);
  }
  // the values kept besides v are live for v already: its liveness serves the plan as it is
  evaluate(tape, from, keep, v, live);
  return true;
};

/**
 * Whether f's values go on being deferred after instruction v: while they are chains of
 * elementwise operations (and slices…, jit/chains.ts); a matrix product or another kernel's
 * operation ends it (what is deferred is computed then, as appended after), since its
 * values would be computed by kernels anyway and the loss early could not be a chain's.
 */
export const chainsOnly = (tape: Tape, v: number): boolean => fusedCode.enabled && fusable(tape, v) !== null;

/**
 * Evaluate what `keep` needs of the deferred instructions from `from` on (v: a real to
 * compute that is not deferred, or -1; `live`: liveDeferred's for them), and settle `keep`.
 */
function evaluate(tape: Tape, from: number, keep: readonly number[], v: number, live = liveDeferred(tape, from, keep, v)): void {
  const given = (i: number): boolean => i !== v && !tape.isDeferred(i);
  const runner = new Interpreter(tape, keep, { from, given, live, plan: fusedCode.enabled ? cachedPlan : undefined });
  runner.run([]);
  for (const u of new Set(keep)) if (!tape.isTensor(u) || tape.isDeferred(u)) tape.settled(u, runner.take(u));
  runner.clear();
}

/**
 * The variables `keep` needs, through the deferred instructions from `from` on (and v, a
 * real to compute): a value computed already is read, not what it was computed from.
 */
function liveDeferred(tape: Tape, from: number, keep: readonly number[], v: number): Uint8Array {
  const live = new Uint8Array(tape.length);
  for (const u of keep) live[u] = 1;
  for (let i = tape.length - 1; i >= from; i--) {
    if (live[i] !== 1 || tape.op[i] < FIRST_PRIMITIVE || (i !== v && !tape.isDeferred(i))) continue;
    for (const u of tape.args(i)) live[u] = 1;
  }
  return live;
}
