/**
 * @file Progress of a long run, one line per part on stderr: `[k/N]`, the part, and the
 * time elapsed since the run started (a full run takes minutes; the table on stdout
 * stays clean).
 */

/** `m:ss`, or `h:mm:ss` from an hour on. */
export function clock(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const [h, m, r] = [Math.floor(s / 3600), Math.floor(s / 60) % 60, s % 60];
  const mm = h > 0 ? String(m).padStart(2, "0") : String(m);
  return `${h > 0 ? `${h}:` : ""}${mm}:${String(r).padStart(2, "0")}`;
}

/** A part starting (`took` undefined) or done, `k` of `n` (from 1). */
export interface Step {
  readonly k: number;
  readonly n: number;
  readonly part: string;
  /** Seconds since the run started. */
  readonly elapsed: number;
  /** Seconds the part took, once it is done. */
  readonly took?: number;
}

/** `[3/10] W2 (1:05 elapsed)`, or `[3/10] W2 done in 35.4 s (1:40 elapsed)`. */
export function progressLine(p: Step): string {
  const width = String(p.n).length;
  const done = p.took === undefined ? "" : ` done in ${p.took.toFixed(1)} s`;
  return `[${String(p.k).padStart(width)}/${p.n}] ${p.part}${done} (${clock(p.elapsed)} elapsed)`;
}
