/**
 * @file A trace term evaluated again and again at new inputs, holding only the buffers
 * still to be read: a loop body per iteration, or its derivative term (api/scan.ts).
 *
 * The plan is made once: which instructions the kept variables need (the rest is
 * skipped), and after which instruction each computed buffer is read for the last time,
 * where it goes back to the pool. Values are computed by `compute` and the kernels,
 * as tracing computed them: the same numbers.
 */
import { release, type Buf, type Dims } from "@wengert/ops";
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

/** A term evaluated at new inputs: what a scan needs of it (the interpreter, or jit/scan-fused.ts's compiled code). */
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

export class Interpreter implements TermRunner {
  private readonly live: Uint8Array;
  private readonly kept: Uint8Array;
  private readonly dying: Int32Array[];
  private readonly args: (readonly number[])[];
  private readonly dims: Dims[];
  private readonly tensor: Uint8Array;
  readonly vals: Float64Array;
  private readonly bufs: (Float64Array | null)[];
  /** Instructions that compute (the rest are inputs, literals). */
  private readonly order: Int32Array;

  constructor(
    private readonly tape: Tape,
    /** The variables read after a run (outputs, what checks read). */
    keep: Iterable<number>,
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
    const live = (this.live = liveVariables(tape, keep));
    const lastUse = Int32Array.from({ length: n }, (_, i) => i);
    for (let i = 0; i < n; i++) {
      if (!live[i] || op[i] < FIRST_PRIMITIVE) continue;
      if (tape.x[i] !== 0) for (const v of this.args[i]) lastUse[v] = i;
    }
    const dying: number[][] = Array.from({ length: n }, () => []);
    for (let v = 0; v < n; v++) if (live[v] && this.tensor[v] && op[v] >= FIRST_PRIMITIVE && !kept[v]) dying[lastUse[v]].push(v);
    this.dying = dying.map((d) => Int32Array.from(d));
    this.vals = new Float64Array(n);
    this.bufs = new Array<Float64Array | null>(n).fill(null);
    const order: number[] = [];
    for (let i = 0; i < n; i++) {
      if (!live[i]) continue;
      if (op[i] === CONST || op[i] === FREE) {
        if (this.tensor[i]) this.bufs[i] = tape.buf(i);
        else this.vals[i] = tape.val[i];
      } else order.push(i);
    }
    this.order = Int32Array.from(order);
  }

  /** Evaluate at `inputs` (by input index: numbers, or buffers the caller keeps). */
  run(inputs: ArrayLike<Buf>): void {
    const { op, a, b, x } = this.tape;
    const { vals, bufs, tensor, order } = this;
    for (let j = 0; j < order.length; j++) {
      const i = order[j];
      const code = op[i];
      if (code === INPUT) {
        const v = inputs[a[i]];
        if (v === undefined) throw new EvaluationError(`evaluate: input #${a[i]} is missing (${inputs.length} given).`);
        if (typeof v === "number") vals[i] = v;
        else bufs[i] = v;
        continue;
      }
      if (x[i] === 0) {
        vals[i] = ARITY[code] === 1 ? KERNELS[code](vals[a[i]], 0) : binaryKernel(code, vals[a[i]], vals[b[i]]);
        continue;
      }
      const as = this.args[i];
      const y = compute(code, as.map((v) => (tensor[v] ? bufs[v]! : vals[v])), as.map((v) => this.dims[v]), this.tape.params(i), this.dims[i]);
      if (typeof y === "number") vals[i] = y;
      else bufs[i] = y;
      for (const v of this.dying[i]) {
        release(bufs[v]!);
        bufs[v] = null;
      }
    }
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

  /** Hand back the kept buffers nobody took (after the results of a run have been read). */
  clear(): void {
    const op = this.tape.op;
    for (const i of this.order) {
      if (this.tensor[i] && this.bufs[i] !== null) {
        if (op[i] >= FIRST_PRIMITIVE) release(this.bufs[i]!);
        this.bufs[i] = null;
      }
    }
  }
}
