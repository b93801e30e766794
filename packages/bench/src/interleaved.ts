/**
 * @file Rows timed against each other in one process: interleaved rounds, the median per
 * row (the scan section and the tape floor use it).
 */

export interface Row {
  readonly what: string;
  readonly run: () => unknown;
}

export interface Timed {
  readonly what: string;
  readonly ms: number;
}

export const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/**
 * Median time per call, rows interleaved: each round times every row for about `sample` ms,
 * the order rotating. Each row runs for `warm` ms first (three calls at least): a grad that
 * traces every call runs much of wengert's code once per call, which V8 optimizes over
 * hundreds of calls (seconds, on a loaded machine), and the rounds time the calls after.
 */
export function interleaved(rows: readonly Row[], rounds: number, sample: number, warm: number): Timed[] {
  for (const r of rows) {
    const t = performance.now();
    for (let i = 0; i < 3 || performance.now() - t < warm; i++) r.run();
  }
  const samples: number[][] = rows.map(() => []);
  for (let round = 0; round < rounds; round++) {
    for (let j = 0; j < rows.length; j++) {
      const k = (j + round) % rows.length;
      let calls = 0;
      const t = performance.now();
      while (performance.now() - t < sample || calls === 0) {
        rows[k].run();
        calls++;
      }
      samples[k].push((performance.now() - t) / calls);
    }
  }
  return rows.map((r, k) => ({ what: r.what, ms: median(samples[k]) }));
}
