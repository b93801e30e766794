/**
 * @file A trace term evaluated again and again at new inputs, holding only the buffers
 * still to be read: a loop body per iteration, its derivative term (api/scan.ts), a
 * jitted trace of tensors (eval/replay.ts).
 *
 * The plan is made once: which instructions the kept variables need (the rest is
 * skipped), in which steps they are computed (each instruction by `compute` and the
 * kernels, as tracing computed them; or, planned by jit/chains.ts, chains of them by
 * compiled loops that compute the same numbers), and after which step each computed
 * buffer is read for the last time, where it goes back to the pool.
 */
import { alloc, release, type Buf, type Dims } from "@wengert/ops";
import type { Step } from "../jit/chain-code.js";
import { ARITY, CONST, FIRST_PRIMITIVE, FREE, INPUT, KERNELS } from "../trace/opcodes.js";
import { binaryKernel, compute, type Tape } from "../trace/tape.js";
import { EvaluationError } from "../errors.js";

/** The variables the kept ones need (themselves included): 1 at each, 0 elsewhere. */
export function liveVariables(tape: Tape, keep: Iterable<number>): Uint8Array {
  const { op, a, b, length: n } = tape;
  const live = new Uint8Array(n);
  for (const v of keep) live[v] = 1;
  for (let i = n - 1; i >= 0; i--) {
    if (!live[i] || op[i] < FIRST_PRIMITIVE) continue;
    if (tape.x[i] !== 0) for (const v of tape.args(i)) live[v] = 1;
    else {
      live[a[i]] = 1;
      if (ARITY[op[i]] === 2) live[b[i]] = 1;
    }
  }
  return live;
}

/** A term evaluated at new inputs: what a scan needs of it (the interpreter, its chains compiled or not: jit/scan-fused.ts). */
export interface TermRunner {
  /** Evaluate at `inputs` (by input index: numbers, or buffers the caller keeps). */
  run(inputs: ArrayLike<Buf>): void;
  /** Variable v's value after a run (the runner's). */
  value(v: number): Buf;
  /** Variable v's value for the caller to keep. */
  take(v: number): Buf;
  /** After the results of a run have been read. */
  clear(): void;
}

/** How an interpreter is planned: which instructions it needs, their steps, what it checks. */
export interface InterpreterOptions {
  /** The instructions needed (default: what the kept variables need). */
  readonly live?: Uint8Array;
  /**
   * The instructions before `from` are computed already: their values are the tape's, read
   * as literals' are (a tape's deferred instructions, eval/deferred.ts). Default 0.
   */
  readonly from?: number;
  /**
   * Instructions from `from` on whose values are the tape's too (computed as they were
   * appended, or earlier: eval/deferred.ts), read as those before `from` are. Default none.
   */
  readonly given?: (i: number) => boolean;
  /** Steps for the live instructions (jit/chains.ts); default: each instruction by the kernels. */
  readonly plan?: (tape: Tape, o: { live: Uint8Array; kept: Uint8Array; interpret?: Uint8Array }) => Step[];
  /**
   * Instructions after which `test` is asked whether the run goes on (a replay's guards and
   * ties): each runs by the kernels, so its value is there when asked.
   */
  readonly check?: { readonly at: Uint8Array; readonly test: (i: number) => boolean };
}

export class Interpreter implements TermRunner {
  private readonly live: Uint8Array;
  private readonly kept: Uint8Array;
  /** Per step, the buffers read there for the last time. */
  private readonly dying: Int32Array[];
  private readonly args: (readonly number[])[];
  private readonly dims: Dims[];
  private readonly tensor: Uint8Array;
  readonly vals: Float64Array;
  private readonly bufs: (Float64Array | null)[];
  /** Instructions that compute (the rest are literals), alone or in chains. */
  private readonly steps: Step[];
  private readonly check: InterpreterOptions["check"];
  /** How many of its steps are compiled chains. */
  readonly chains: number;
  /** The first instruction it computes (those before are the tape's). */
  private readonly from: number;
  /** 1 at the instructions from `from` on whose values are the tape's (options.given). */
  private readonly given: Uint8Array | null;
  /** The tensors a run may leave set (its inputs and computed values, live): what `clear` looks at, not the whole tape. */
  private readonly settable: Int32Array;

  constructor(
    private readonly tape: Tape,
    /** The variables read after a run (outputs, what checks read). */
    keep: Iterable<number>,
    options: InterpreterOptions = {},
  ) {
    const { op, length: n } = tape;
    this.args = [];
    this.dims = [];
    for (let i = 0; i < n; i++) {
      this.args.push(op[i] >= FIRST_PRIMITIVE && tape.x[i] !== 0 ? tape.args(i) : []);
      this.dims.push(tape.dims(i));
    }
    this.tensor = Uint8Array.from({ length: n }, (_, i) => +tape.isTensor(i));
    const kept = (this.kept = new Uint8Array(n));
    for (const v of keep) kept[v] = 1;
    const live = (this.live = options.live ?? liveVariables(tape, keep));
    const from = (this.from = options.from ?? 0);
    this.check = options.check;
    this.vals = new Float64Array(n);
    this.bufs = new Array<Float64Array | null>(n).fill(null);
    const order: number[] = [];
    const given = (this.given = options.given === undefined ? null : new Uint8Array(n));
    for (let i = 0; i < n; i++) {
      if (!live[i]) continue;
      if (given !== null && i >= from && options.given!(i)) given[i] = 1;
      if (op[i] === CONST || op[i] === FREE || i < from || given?.[i] === 1) {
        if (this.tensor[i]) this.bufs[i] = tape.buf(i);
        else this.vals[i] = tape.val[i];
      } else order.push(i);
    }
    const settable: number[] = [];
    for (let i = from; i < n; i++) if (live[i] && this.tensor[i] && op[i] !== CONST && op[i] !== FREE && given?.[i] !== 1) settable.push(i);
    this.settable = Int32Array.from(settable);
    const computed = from === 0 && given === null ? live : live.map((l, i) => (i < from || given?.[i] === 1 ? 0 : l));
    this.steps = options.plan?.(tape, { live: computed, kept, interpret: options.check?.at }) ?? order;
    this.chains = this.steps.filter((step) => typeof step !== "number").length;
    // each computed buffer goes back to the pool after the last step that reads it (or its own, if none)
    const lastStep = new Int32Array(n).fill(-1);
    const buffered = new Uint8Array(n);
    this.steps.forEach((step, s) => {
      if (typeof step === "number") {
        if (op[step] >= FIRST_PRIMITIVE && this.tensor[step]) buffered[step] = 1;
        lastStep[step] = s;
        for (const v of this.args[step]) lastStep[v] = s;
        return;
      }
      for (const [v] of step.made) {
        buffered[v] = 1;
        lastStep[v] = Math.max(lastStep[v], s);
      }
      for (const v of step.reads) lastStep[v] = s;
    });
    const dying: number[][] = this.steps.map(() => []);
    for (let v = 0; v < n; v++) if (buffered[v] && !kept[v]) dying[lastStep[v]].push(v);
    this.dying = dying.map((d) => Int32Array.from(d));
  }

  /**
   * Evaluate at `inputs` (by input index: numbers, or buffers the caller keeps); false
   * when a check fails (the run stops there: `clear` hands its buffers back).
   */
  run(inputs: ArrayLike<Buf>): boolean {
    const { vals, bufs, steps, check } = this;
    for (let s = 0; s < steps.length; s++) {
      const step = steps[s];
      if (typeof step === "number") {
        this.instruction(step, inputs);
        if (check !== undefined && check.at[step] === 1 && !check.test(step)) return false;
      } else {
        const made = step.made;
        for (let k = 0; k < made.length; k++) bufs[made[k][0]] = alloc(made[k][1], true);
        step.run(bufs, vals, KERNELS);
      }
      const dying = this.dying[s];
      for (let k = 0; k < dying.length; k++) {
        release(bufs[dying[k]]!);
        bufs[dying[k]] = null;
      }
    }
    return true;
  }

  /** Instruction i by the kernels (or an input's value). */
  private instruction(i: number, inputs: ArrayLike<Buf>): void {
    const { op, a, b, x } = this.tape;
    const { vals, bufs, tensor } = this;
    const code = op[i];
    if (code === INPUT) {
      const v = inputs[a[i]];
      if (v === undefined) throw new EvaluationError(`evaluate: input #${a[i]} is missing (${inputs.length} given).`);
      if (typeof v === "number") vals[i] = v;
      else bufs[i] = v;
      return;
    }
    if (x[i] === 0) {
      vals[i] = ARITY[code] === 1 ? KERNELS[code](vals[a[i]], 0) : binaryKernel(code, vals[a[i]], vals[b[i]]);
      return;
    }
    const as = this.args[i];
    const y = compute(code, as.map((v) => (tensor[v] ? bufs[v]! : vals[v])), as.map((v) => this.dims[v]), this.tape.params(i), this.dims[i]);
    if (typeof y === "number") vals[i] = y;
    else bufs[i] = y;
  }

  /** Variable v's value after a run: a number, or a buffer (still the interpreter's). */
  value(v: number): Buf {
    return this.tensor[v] ? this.bufs[v]! : this.vals[v];
  }

  /**
   * Variable v's value for the caller to keep: a computed buffer is handed over (and not
   * released by `clear`), an input's or a literal's is copied.
   */
  take(v: number): Buf {
    if (!this.tensor[v]) return this.vals[v];
    const buf = this.bufs[v]!;
    const op = this.tape.op[v];
    if (op >= FIRST_PRIMITIVE) {
      this.bufs[v] = null;
      return buf;
    }
    return buf.slice();
  }

  /** Hand back the kept buffers nobody took (after the results of a run have been read, or a check failed). */
  clear(): void {
    const { op } = this.tape;
    const { bufs, settable } = this;
    for (let k = 0; k < settable.length; k++) {
      const i = settable[k];
      if (bufs[i] === null) continue;
      if (op[i] >= FIRST_PRIMITIVE) release(bufs[i]!);
      bufs[i] = null;
    }
  }
}
