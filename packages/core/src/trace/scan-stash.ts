/**
 * @file What a traced run of a scan whose body is on tensors leaves for the work that
 * follows it at the same values: the carries its reverse sweep starts its blocks from,
 * and its value where its trace is placed in an enclosing one (diff/place.ts).
 *
 * grad's trace runs the loop forward (api/scan-loop.ts), and its reverse sweep ran it
 * forward again for the carries; a gradient jitted placed the trace in jit's and ran it
 * a third time there. At the same arguments a run computes the same numbers (the
 * interpreter's kernels and chains are deterministic), so the sweep takes the carries the
 * traced run kept, and the placement copies its value, when the arguments are the same
 * numbers, compared element by element (a placed term's are copies of them).
 *
 * A body of reals keeps its own (ScanParams.stash: flat columns, for compiled code).
 */
import { pooledCopy, release, type Buf } from "@wengert/ops";
import type { Body } from "./body.js";
import { scanCodes, type CarryStash, type ScanParams } from "./scan-ops.js";
import type { Tape } from "./tape.js";
import type { Trace } from "./tracer.js";

/** Whether two lists of values hold the same numbers (Object.is: −0 and NaN as themselves). */
function sameValues(a: readonly Buf[], b: readonly Buf[]): boolean {
  if (a.length !== b.length) return false;
  for (let k = 0; k < a.length; k++) {
    const u = a[k];
    const v = b[k];
    if (u === v) continue;
    if (typeof u === "number" || typeof v === "number") {
      if (!Object.is(u, v)) return false;
      continue;
    }
    if (u.length !== v.length) return false;
    for (let i = 0; i < u.length; i++) if (!Object.is(u[i], v[i])) return false;
  }
  return true;
}

/**
 * The carries the traced run kept, if the scan's arguments (the first values of `values`, a
 * scanGrad's) are the numbers it ran at: taken (the sweep's now), else handed back. Either
 * empties the stash, so that it is used once whoever holds it.
 */
export function takeCarries(p: ScanParams, values: readonly Buf[]): CarryStash | null {
  const stash = p.carries;
  p.carries = null;
  if (stash === null || stash.carries.length === 0) return null;
  const carries = stash.carries.splice(0);
  if (sameValues(values.slice(0, stash.values.length), stash.values)) return { ...stash, carries };
  giveBack(carries);
  return null;
}

/** The kept carries nobody took go back to the pool (the transformation of the trace is done). */
export function dropCarries(p: ScanParams): void {
  const stash = p.carries;
  p.carries = null;
  if (stash !== null) giveBack(stash.carries.splice(0));
}

function giveBack(carries: readonly Buf[][]): void {
  for (const c of carries) for (const b of c) if (typeof b !== "number") release(b);
}

/**
 * The value of `tape`'s instruction i, copied, where it is a scan whose body decides
 * nothing, placed where its arguments hold the same numbers (`values`, read only then):
 * what the placed instruction would compute. A body that decides may stop at a different
 * iteration there (a placed run checks its first iteration, the traced run took it as
 * traced), so it runs again.
 */
export function placedValue(tape: Tape, i: number, values: () => readonly Buf[]): Float64Array | null {
  if (tape.op[i] !== scanCodes().scan || tape.isDeferred(i)) return null;
  if ((tape.params(i) as ScanParams).body.decides(true)) return null;
  const args = tape.args(i);
  if (args.some((v) => tape.isDeferred(v))) return null;
  if (!sameValues(values(), args.map((v) => tape.value(v)))) return null;
  return pooledCopy(tape.buf(i));
}

/**
 * What a traced run of a body of tensors keeps for the reverse sweep of `target` (null
 * where none follows, or a carry is not computed per iteration): the carry coming into
 * every `every`-th iteration from `from`, by the run's `store`. Every carry (every = 1):
 * the buffers the run makes, handed over (`keeps`), the first copied (the trace's own);
 * else copies, the run handing its buffers back as it goes.
 */
export function keptCarries(body: Body, target: Trace, every: number, from: number): CarryKeeper | null {
  if (body.reals || target.keptCarries === null || !body.carryKind.every((kind) => kind === "internal")) return null;
  return new CarryKeeper(every, from);
}

export class CarryKeeper {
  private readonly carries: Buf[][] = [];
  readonly keeps: boolean;

  constructor(
    private readonly every: number,
    private readonly from: number,
  ) {
    this.keeps = every === 1;
  }

  readonly store = (i: number, carry: readonly Buf[]): void => {
    if ((i - this.from) % this.every !== 0) return;
    this.carries.push(this.keeps && i > this.from ? carry.slice() : carry.map(copied));
  };

  /** The run recorded as a scan up to `stop`, `carry` its last: the carries coming into its iterations, with its argument values. */
  stash(values: readonly Buf[], stop: number, carry: readonly Buf[]): CarryStash {
    const count = Math.ceil((stop - this.from) / this.every);
    // past the run's last iteration: the carry it stopped with (a decision failed there), which is the caller's
    for (const c of this.carries.splice(count)) this.giveBack(c, carry);
    return { values, carries: this.carries, every: this.every };
  }

  /** The run recorded nothing: what it kept goes back, but the carry it ends with. */
  release(carry: readonly Buf[]): void {
    for (const c of this.carries.splice(0)) this.giveBack(c, carry);
  }

  private giveBack(c: readonly Buf[], carry: readonly Buf[]): void {
    for (const b of c) if (typeof b !== "number" && !carry.includes(b)) release(b);
  }
}

const copied = (b: Buf): Buf => (typeof b === "number" ? b : pooledCopy(b));
