/**
 * @file The runner of a loop body's term (eval/scan-forward.ts, eval/scan-reverse-run.ts):
 * the interpreter, its chains of elementwise operations on tensors compiled into loops
 * (jit/chains.ts) unless compiled code is off.
 *
 * On vectors of a few thousand elements the interpreter's fixed cost per instruction is
 * most of a step (GradBench's ode: about 25 operations per Runge–Kutta step); a body's
 * chains run as one pass over the vectors each, and its reductions, products and
 * broadcasts by the kernels between them.
 */
import { Interpreter, type TermRunner } from "../eval/interpreter.js";
import type { Tape } from "../trace/tape.js";
import { fusedCode, planChains } from "./chains.js";

/** The runner of `tape` for the variables `keep`. */
export function termRunner(tape: Tape, keep: Iterable<number>): TermRunner {
  return new Interpreter(tape, keep, fusedCode.enabled ? { plan: planChains } : {});
}
