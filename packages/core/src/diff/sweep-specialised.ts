/**
 * @file The outermost reverse sweep made for one set of columns, which it holds as constants.
 *
 * The written-out sweep (sweep.ts `inlined`) takes the tape's columns and the sweep's
 * buffers as parameters. V8's optimising compiler then loads each typed array's data
 * pointer and length again at the accesses of a loop that also stores into typed arrays;
 * in a function whose closure holds the arrays as constants (the one closure of its code)
 * they are constants of the machine code. On W3's trace (26 746 instructions) the same
 * sweep took 125 µs from parameters and 76 µs from constants (CPU time, one process).
 *
 * A repeated `grad` traces into the same pooled columns call after call (Tape.reusing,
 * trace/columns.ts), and sweeps with the same pooled buffers: after `REPEATS` sweeps on one
 * set of columns, a sweep of its own is made for them, from its own source (a second
 * closure of one code would lose the constants: V8 then compiles for any closure). Its
 * cases are sweep.ts's, the same operations in the same order: the same numbers.
 */

/** What a sweep reads and writes: the term's columns, the values, the cotangents and which variables have one. */
export interface SweepColumns {
  readonly op: Uint16Array;
  readonly a: Int32Array;
  readonly b: Int32Array;
  readonly val: Float64Array;
  readonly ct: Float64Array;
  readonly has: Uint8Array;
}

/** A sweep made for one set of columns: from instruction `from` down; the first instruction it has no case for, or -1. */
export type ColumnSweep = (from: number) => number;

/** Sweeps on the same columns before one is made for them (making one compiles a function). */
const REPEATS = 3;
/** Sweeps kept (each keeps its columns alive): a grad, and another alternating with it. */
const KEPT = 2;
/** Longer columns get none: a kept sweep would hold megabytes that the column pool may have let go. */
const MAX_LENGTH = 1 << 18;

/** Counters for tests: sweeps made, and sweeps run by one. */
export const specialisedStats = { made: 0, runs: 0 };

interface Entry extends SweepColumns {
  readonly sweep: ColumnSweep;
}

const kept: Entry[] = [];
/** The columns seen last without a sweep of their own, and how many times in a row. */
let last: SweepColumns | null = null;
let seen = 0;

const sameColumns = (x: SweepColumns, y: SweepColumns): boolean =>
  x.op === y.op && x.a === y.a && x.b === y.b && x.val === y.val && x.ct === y.ct && x.has === y.has;

/**
 * The sweep made for these columns, or null while they have not come back `REPEATS` times
 * (then `make` is called once for them, with a number that makes its source its own).
 */
export function sweepFor(columns: SweepColumns, make: (columns: SweepColumns, id: number) => ColumnSweep): ColumnSweep | null {
  for (let k = 0; k < kept.length; k++) {
    if (sameColumns(kept[k], columns)) {
      specialisedStats.runs++;
      return kept[k].sweep;
    }
  }
  if (columns.op.length > MAX_LENGTH || columns.ct.length > MAX_LENGTH) return null;
  if (last !== null && sameColumns(last, columns)) seen++;
  else {
    last = { op: columns.op, a: columns.a, b: columns.b, val: columns.val, ct: columns.ct, has: columns.has };
    seen = 1;
  }
  if (seen < REPEATS) return null;
  const sweep = make(last, specialisedStats.made++);
  if (kept.length === KEPT) kept.shift();
  kept.push({ ...last, sweep });
  last = null;
  seen = 0;
  specialisedStats.runs++;
  return sweep;
}
