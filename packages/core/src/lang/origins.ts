/**
 * @file Where each `let` of an rd's trace and derivative terms came from in the program.
 *
 * Symbolic evaluation (Figs. 4–5) appends to the trace, in order, what each operation of
 * the program emits: a primitive its instruction (and the literals it needs), a nested
 * `rd` its derivative term (Fig. 4's `W.rd_V(x:T.N) ⇝ W.R_V(x:T.C)`). So marking the
 * trace's length after each operation attributes every instruction to one operation.
 * The derivative term extends the trace; what it adds is the reverse rules (Fig. 6's
 * `op_r`) of the trace's instructions, which the differentiator names as it emits them.
 */
import { listeningToRules } from "../diff/differentiate.js";
import type { Tape } from "../trace/tape.js";
import type { Trace } from "../trace/tracer.js";
import type { Term } from "./syntax.js";

/** Where each instruction of an `rd`'s trace and derivative terms came from (`onRd`; the playground's links). */
export interface TermOrigins {
  /**
   * By instruction index (vK), the operation that emitted it into the trace term: a
   * primitive (`add` or `op`), a nested `rd`, `grad` or `fd` whose derivative term it
   * is part of, or the `call` that entered a loop run as a scan (its scan instruction).
   * Inputs are not in it.
   */
  readonly trace: ReadonlyMap<number, Term>;
  /**
   * By instruction index, for the derivative term's instructions past the trace's: the
   * trace instruction whose reverse rule emitted them (its cotangent's accumulation
   * included). The seed's inputs are not in it.
   */
  readonly rules: ReadonlyMap<number, number>;
}

/** The origins of one outermost rd's terms, recorded as the program runs. */
export class OriginRecorder {
  private readonly trace = new Map<number, Term>();
  private readonly rules = new Map<number, number>();
  private marked: number;

  /** `tape`: the rd's trace, opened (its inputs on it). */
  constructor(private readonly tape: Tape) {
    this.marked = tape.length;
  }

  /** What was appended to the trace since the last mark came from `operation`. */
  mark(operation: Term): void {
    const n = this.tape.length;
    for (let k = this.marked; k < n; k++) this.trace.set(k, operation);
    this.marked = n;
  }

  /** Run the rd's differentiation, recording which rule emitted each instruction. */
  differentiating<T>(run: () => T): T {
    let sink: Trace | null = null;
    let rule = -1;
    let from = 0;
    return listeningToRules((s, i) => {
      // only the outermost differentiation's own sink (a user rule may differentiate inside)
      if (sink === null) [sink, from] = [s, s.tape.length];
      if (s !== sink) return;
      const n = s.tape.length;
      for (let k = from; k < n; k++) this.rules.set(k, rule);
      [rule, from] = [i, n];
    }, run);
  }

  origins(): TermOrigins {
    return { trace: this.trace, rules: this.rules };
  }
}
