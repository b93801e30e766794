/**
 * @file Paired rounds for the rows whose calls take microseconds.
 *
 * benchmark.js's medians of a microsecond-scale call moved 40–70 % between runs on a
 * loaded machine (W4's hand-written HVP: 5.1–8.5 µs; wall-clock time counts whatever
 * else the two cores ran meanwhile), and a ratio of two medians taken seconds apart
 * carries both errors. Here every candidate is timed in blocks of calls, one block per
 * candidate per round, the order rotating; a ratio is the median over rounds of the
 * ratio of two blocks of the same round, which moved together. A block's time is the
 * smaller of its wall-clock time and its CPU time (process.cpuUsage): the wall clock
 * counts the time other processes had the core, CPU time counts V8's helper threads
 * (concurrent GC, background compilers: an uncached hessian's CPU time is 4× its wall
 * time), and each is at least the main thread's time.
 */
import { median } from "./interleaved.js";

/** A candidate to time: its call, and set-up to run before each block (a TF.js backend). */
export interface PairedRow {
  readonly run: () => unknown;
  readonly enter?: () => Promise<void>;
  /** Its time per call as first measured (ms): each block makes about `blockMs` of calls of it. */
  readonly estimateMs: number;
}

/** Time per call of each row, per round (ms): perRound[row][round]. */
export interface PairedTimes {
  readonly perRound: readonly (readonly number[])[];
}

/** Where timed results go so that no call is dead code. */
export let pairedSink: unknown;

/** CPU time used by this process so far (ms). */
const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/**
 * `rounds` rounds, each a block of calls of every row (at least one call, about
 * `blockMs` of them), the order rotating by one each round. No full GC between blocks:
 * V8 flushes the code of functions that several collections found unused, and a block
 * then timed its compilation again (W4's jit(hvp) at 80 µs a call, not 10).
 */
export async function pairedRounds(rows: readonly PairedRow[], rounds: number, blockMs: number): Promise<PairedTimes> {
  const calls = rows.map((r) => Math.max(1, Math.round(blockMs / Math.max(r.estimateMs, 1e-6))));
  const perRound: number[][] = rows.map(() => []);
  for (let round = 0; round < rounds; round++) {
    for (let j = 0; j < rows.length; j++) {
      const k = (j + round) % rows.length;
      const { run, enter } = rows[k];
      await enter?.();
      const n = calls[k];
      const [c, w] = [cpuMs(), performance.now()];
      for (let i = 0; i < n; i++) pairedSink = run();
      const [wall, cpu] = [performance.now() - w, cpuMs() - c];
      perRound[k].push(Math.min(wall, cpu) / n);
    }
  }
  return { perRound };
}

/** The median over rounds of row a's time per call over row b's, each round's blocks paired. */
export function pairedRatio(times: PairedTimes, a: number, b: number): number {
  const x = times.perRound[a];
  const y = times.perRound[b];
  return median(x.map((t, r) => t / y[r]));
}
