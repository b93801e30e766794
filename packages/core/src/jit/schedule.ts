/**
 * @file The order in which forward code computes a trace's values: each value read once
 * is computed right before the statement that reads it (sunk), the others where the
 * trace has them.
 *
 * A derivative term places its values in the order the sweeps made them (Fig. 6 of
 * Abadi & Plotkin, papers/000: the primal's instructions, then the reverse sweep's,
 * last first): jit of an HVP computes rosenbrock's t_i = x_{i+1} − x_i² for every i, and
 * the reverse sweep (i falling) reads each one far later. Written in that order, the
 * code is several loops, each storing an array the next one loads; sunk to its one
 * reader, each such value is computed inside the loop that reads it, in a local
 * (registers.ts), and the loops fuse. Only the order changes, never an operation: the
 * same numbers, to the bit.
 *
 * A value read by more than one statement stays where it is (sinking it to its first
 * reader in the new order is not always before the others), as do those `pinned` (a
 * guard's arguments: a guard is checked once the later of them is computed, by index).
 */

/** What the schedule is made from: per instruction, whether it has code, what it reads, and whether it stays. */
export interface ScheduleInput {
  /** Whether instruction i has a statement (a computed value, a kink check, a guard). */
  readonly emitted: Uint8Array;
  /** The instructions statement i reads, at 2i and 2i + 1, or −1: instructions without a statement are not counted. */
  readonly reads: Int32Array;
  /** Instructions that stay in place (guards' arguments; values read after the code need not be). */
  readonly pinned: Uint8Array;
}

/**
 * The instructions with a statement, in the order their code runs: each one read by
 * exactly one statement (and not pinned) right before that statement (after whatever is
 * sunk to it in turn), the others in index order. A topological order: a value is
 * computed before every statement reading it. Iterative (an explicit stack), linear time.
 */
export function sinkSingleUses({ emitted, reads, pinned }: ScheduleInput): Int32Array {
  const n = emitted.length;
  // per instruction: how many statements read it (capped at 2), and the last that does
  const readers = new Uint8Array(n);
  const reader = new Int32Array(n).fill(-1);
  for (let i = 0; i < n; i++) {
    if (!emitted[i]) continue;
    for (let k = 0; k < 2; k++) {
      const y = reads[2 * i + k];
      if (y < 0 || (k === 1 && y === reads[2 * i]) || !emitted[y]) continue;
      if (readers[y] < 2) readers[y]++;
      reader[y] = i;
    }
  }
  // the instructions sunk to each reader, in index order: a linked list (head, after)
  const head = new Int32Array(n).fill(-1);
  const tail = new Int32Array(n).fill(-1);
  const after = new Int32Array(n).fill(-1);
  const sunk = new Uint8Array(n);
  for (let y = 0; y < n; y++) {
    if (!emitted[y] || readers[y] !== 1 || pinned[y]) continue;
    sunk[y] = 1;
    const r = reader[y];
    if (head[r] < 0) head[r] = y;
    else after[tail[r]] = y;
    tail[r] = y;
  }
  // in index order, each instruction not sunk, after what is sunk to it (depth first)
  const order = new Int32Array(n);
  let k = 0;
  const stack = new Int32Array(n);
  const next = new Int32Array(n); // per instruction on the stack: its next sunk one still to emit
  for (let i = 0; i < n; i++) {
    if (!emitted[i] || sunk[i]) continue;
    let top = 0;
    stack[top++] = i;
    next[i] = head[i];
    while (top > 0) {
      const x = stack[top - 1];
      const y = next[x];
      if (y >= 0) {
        next[x] = after[y];
        stack[top++] = y;
        next[y] = head[y];
      } else {
        top--;
        order[k++] = x;
      }
    }
  }
  return order.subarray(0, k);
}
