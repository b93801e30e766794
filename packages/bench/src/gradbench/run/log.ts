/**
 * @file The relay's log (driver.py `-o FILE`) read back into evaluations: for each
 * `evaluate` message, the tool's answer (success, its per-run `evaluate` timings) and the
 * eval's verdict on it (the `analysis` message that follows: valid, or the mismatches).
 *
 * Each line of the log is `{ "elapsed": {...}, "message": M }` (what the eval sent) or
 * `{ "elapsed": {...}, "response": R }` (what the tool answered), in order.
 */

/** One `evaluate` of an eval, as the tool answered it and the eval judged it. */
export interface Evaluation {
  readonly id: number;
  readonly function: string;
  /** The eval's description of the workload (its sizes), "" without one. */
  readonly description: string;
  readonly success: boolean;
  /** The tool's error, when it did not succeed. */
  readonly error?: string;
  /** The eval's verdict; undefined when it gave none (the tool failed, or the eval stopped). */
  readonly valid?: boolean;
  /** Why the eval judged the output invalid. */
  readonly mismatch?: string;
  /** The tool's timed runs (its `evaluate` timings), their mean and median in nanoseconds (undefined without runs). */
  readonly runs: number;
  readonly meanNs?: number;
  readonly medianNs?: number;
}

export interface RelayLog {
  /** The tool's answer to `define`: undefined if the eval never asked. */
  readonly defined?: boolean;
  readonly defineError?: string;
  readonly evaluations: readonly Evaluation[];
}

type Json = Record<string, unknown>;

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** The runs, mean and median of nanosecond timings. */
export function timingStats(ns: readonly number[]): { runs: number; meanNs?: number; medianNs?: number } {
  if (ns.length === 0) return { runs: 0 };
  return { runs: ns.length, meanNs: ns.reduce((a, b) => a + b, 0) / ns.length, medianNs: median(ns) };
}
const text = (v: unknown): string => (typeof v === "string" ? v : v === undefined ? "" : JSON.stringify(v));

/** The log's lines (blank ones skipped) as evaluations, in the order the eval sent them. */
export async function parseRelayLog(lines: AsyncIterable<string> | Iterable<string>): Promise<RelayLog> {
  const asked = new Map<number, Json>();
  const evaluations = new Map<number, Evaluation>();
  let defined: boolean | undefined;
  let defineError: string | undefined;
  for await (const line of lines) {
    if (line.trim() === "") continue;
    const entry = JSON.parse(line) as { message?: Json; response?: Json };
    if (entry.message !== undefined) {
      const m = entry.message;
      const id = Number(m.id);
      if (m.kind === "analysis") {
        const of = Number(m.of);
        const e = evaluations.get(of);
        if (e !== undefined) evaluations.set(of, { ...e, valid: m.valid === true, ...(m.valid === true ? {} : { mismatch: text(m.error) }) });
      } else {
        // only what the answer is read with: an evaluate's input (lse's: 10⁶ numbers) is not kept
        asked.set(id, { kind: m.kind, function: m.function, description: m.description });
      }
    } else if (entry.response !== undefined) {
      const r = entry.response;
      const id = Number(r.id);
      const m = asked.get(id);
      asked.delete(id);
      if (m?.kind === "define") {
        defined = r.success === true;
        if (!defined) defineError = text(r.error);
      } else if (m?.kind === "evaluate") {
        const timings = Array.isArray(r.timings) ? (r.timings as Json[]) : [];
        evaluations.set(id, {
          id,
          function: text(m.function),
          description: text(m.description),
          success: r.success === true,
          ...(r.success === true ? {} : { error: text(r.error) }),
          ...timingStats(timings.filter((t) => t.name === "evaluate" && typeof t.nanoseconds === "number").map((t) => t.nanoseconds as number)),
        });
      }
    }
  }
  return { defined, defineError, evaluations: [...evaluations.values()] };
}
