/**
 * @file The results as a Markdown table (results/latest.md; also printed on stdout).
 *
 * One row per workload (and per peer form where a workload has two, W3's per-element
 * peers); cells of candidates that were not timed say why, with long error texts in
 * numbered notes under the table.
 */
import { COLUMN_TITLES, PEER_COLUMNS, type BenchResults, type CandidateResult, type Retention, type WorkloadResult } from "../results.js";
import { formatBytes, formatMs, formatRatio } from "./format.js";

/** Escape what would break a table cell. */
export const cell = (s: string): string => s.replace(/\\/g, "\\\\").replace(/\|/g, "\\|").replace(/\r?\n/g, " ");

class Notes {
  readonly list: string[] = [];
  ref(text: string): string {
    let i = this.list.indexOf(text);
    if (i < 0) i = this.list.push(text) - 1;
    return `[${i + 1}]`;
  }
}

/** A candidate's cell: its median (and ratio), or its status with a short reason. */
function statusCell(c: CandidateResult | undefined, notes: Notes, ratio?: number): string {
  if (c === undefined) return "—";
  switch (c.status) {
    case "ok":
      return ratio === undefined ? formatMs(c.medianMs!) : `${formatMs(c.medianMs!)} (${formatRatio(ratio)})`;
    case "unsupported":
      return c.note ?? "unsupported";
    case "skipped": {
      const note = c.note ?? "";
      const perCall = /^too slow: > (\S+ \S+) per call/.exec(note);
      const short = perCall ? `too slow: > ${perCall[1]} per call` : note.startsWith("too slow: first call") ? "too slow to trace/compile" : "too slow";
      return `skipped (${short}) ${notes.ref(note)}`;
    }
    case "wrong answer":
      return `wrong answer ${notes.ref(c.note ?? "")}`;
    case "failed":
      return `failed ${notes.ref(c.note ?? "")}`;
  }
}

const find = (w: WorkloadResult, id: string) => w.candidates.find((c) => c.id === id);

export function rows(results: BenchResults, notes: Notes): string[][] {
  const out: string[][] = [];
  for (const w of results.workloads) {
    for (const v of w.variants) {
      const suffix = v.label ? `/${v.label}` : "";
      const primal = find(w, "primal");
      const hand = find(w, "hand");
      const weng = find(w, "wengert");
      const compiled = find(w, "wengert-compiled");
      const main = v.label === "";
      // to the primal and the hand-written one: the ratio the harness took (in paired rounds, a median of per-round ratios)
      const ratio = (a: CandidateResult | undefined, b: CandidateResult | undefined) =>
        a?.status === "ok" && b?.status === "ok"
          ? formatRatio((b === primal ? a.ratioToPrimal : b === hand ? a.ratioToHand : undefined) ?? a.medianMs! / b.medianMs!)
          : "—";
      const row = [
        main ? w.title : `${w.title}, peers ${v.label}`,
        main ? statusCell(primal, notes) : "″",
        main ? statusCell(hand, notes) : "″",
        main ? ratio(hand, primal) : "″",
        main ? statusCell(weng, notes) : "″",
        main ? ratio(weng, primal) : "″",
        main ? ratio(weng, hand) : "″",
        main ? (compiled ? statusCell(compiled, notes) : "—") : "″",
        main ? ratio(compiled, hand) : "″",
        ...PEER_COLUMNS.map((col) => {
          const c = find(w, col + suffix);
          return statusCell(c, notes, c?.ratioToHand);
        }),
      ];
      out.push(row.map(cell));
    }
  }
  return out;
}

export const HEADER = [
  "workload",
  "primal (JS)",
  "hand-written gradient",
  "hand / primal",
  "wengert",
  "wengert / primal",
  "wengert / hand",
  "wengert compiled (compileGrad, jit)",
  "compiled / hand",
  ...PEER_COLUMNS.map((c) => `${COLUMN_TITLES[c]} (× hand)`),
];

/** A Markdown table, padded so that it also reads well as plain text. */
export function table(header: readonly string[], body: readonly (readonly string[])[]): string {
  const width = header.map((h, i) => Math.max(h.length, ...body.map((r) => r[i].length)));
  const line = (r: readonly string[]) => `| ${r.map((c, i) => c.padEnd(width[i])).join(" | ")} |`;
  return [line(header), `|${width.map((n) => "-".repeat(n + 2)).join("|")}|`, ...body.map(line)].join("\n");
}

/** Which rows were timed in paired rounds (harness.ts, paired.ts), and how. */
function pairedNote(results: BenchResults): string | undefined {
  const rows = results.workloads.filter((w) => w.paired);
  if (rows.length === 0) return undefined;
  const { rounds, blockMs, maxMs, rowMs } = rows[0].paired!;
  const titles = (short: boolean) => rows.filter((w) => (w.paired!.short ?? true) === short).map((w) => w.title);
  const long = titles(false);
  return (
    `Rows whose hand-written call takes under ${formatMs(rowMs)} (${titles(true).join("; ")}): ` +
    "after benchmark.js, every candidate of the row taking under " +
    `${formatMs(maxMs)} a call was timed again in ${rounds} rounds, each a block of about ${blockMs} ms of calls per candidate ` +
    "(the order rotating); a block's time the smaller of its wall-clock time and its CPU time (process.cpuUsage), " +
    "which leaves out the other processes' time on the cores and V8's helper threads' respectively. " +
    "Their times are the medians of those blocks' times per call; their ratios the medians over rounds of the ratio of two blocks of one round. " +
    "Candidates slower than that keep benchmark.js's median, and their ratios are to benchmark.js's hand-written median." +
    (long.length === 0
      ? ""
      : ` In the other rows (${long.join("; ")}), the candidates taking under ${formatMs(maxMs)} were timed again in the same way, ` +
        "among themselves: their times are those rounds' medians, their ratios to the hand-written call those times over benchmark.js's hand-written median.")
  );
}

/** time(2N)/time(N) for W5, per candidate (should be about 2). */
function linearity(results: BenchResults): string | undefined {
  const w5 = results.workloads.filter((w) => w.family === "W5").sort((a, b) => a.size - b.size);
  if (w5.length < 2) return undefined;
  const [a, b] = [w5[0], w5[w5.length - 1]];
  const cols = ["primal", "hand", "wengert", "wengert-compiled", ...PEER_COLUMNS];
  const cells = cols.map((id) => {
    const x = find(a, id);
    const y = find(b, id);
    return x?.status === "ok" && y?.status === "ok" ? (y.medianMs! / x.medianMs!).toFixed(2) : "—";
  });
  return [
    `W5 linearity, time(${b.sizeName}=${b.size}) / time(${a.sizeName}=${a.size}) (should be about ${(b.size / a.size).toFixed(0)}):`,
    "",
    table(cols.map((c) => COLUMN_TITLES[c as keyof typeof COLUMN_TITLES]), [cells]),
  ].join("\n");
}

function memorySection(results: BenchResults): string | undefined {
  const m = results.memory;
  if (!m) return undefined;
  const t = m.trace;
  const pooled = t.pooledBytes
    ? `; besides, ${formatBytes(t.pooledBytes)} of outgrown tape columns kept in the pool of buffers for the next call (bounded at 64 MiB)`
    : "";
  const calls = (r: Retention) => {
    const heap = r.heap
      .slice(1)
      .map((h) => formatBytes(h.bytes))
      .join(", ");
    const verdict = r.flat ? "flat, nothing retained after rd returns" : "NOT flat";
    return (
      `- ${r.calls} calls of ${r.fn}: heap after gc, relative to the start, every ${r.heap[1]?.calls ?? r.calls} calls: ${heap}. ` +
      `Growth ${formatBytes(r.growthBytes)} in all ` +
      `(${r.bytesPerCall.toFixed(2)} B per call; one trace is about ${formatBytes(r.traceBytesEstimate)}): **${verdict}**.`
    );
  };
  return [
    "Memory (wengert):",
    "",
    `- Trace of W5 with N=${t.steps}: ${t.instructions} instructions (${t.primitives} primitives), ` +
      `${formatBytes(t.bytes)} of heap and array buffers: ` +
      `**${t.bytesPerInstruction.toFixed(1)} bytes per recorded instruction** (traced in ${formatMs(t.ms)})${pooled}.`,
    calls(m.retention),
    ...(m.tensorRetention ? [calls(m.tensorRetention)] : []),
  ].join("\n");
}

export function markdown(results: BenchResults): string {
  const notes = new Notes();
  const body = rows(results, notes);
  const m = results.meta;
  const parts = [
    `# wengert benchmarks (${m.mode})`,
    "",
    `${m.date}; Node ${m.node} on ${m.platform}, ${m.cpus} × ${m.cpu}; ${Object.entries(m.versions)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ")}. Run took ${m.seconds.toFixed(0)} s.`,
    "",
    "Medians of benchmark.js samples; " +
      "each workload in a process of its own, its candidates in that one process, interleaved after warm-up. " +
      "Every gradient was checked against the hand-written one before timing " +
      "(float64: relative error ≤ 1e-9; float32 peers: ≤ 1e-3 unless noted). Ratios of peers are to the hand-written gradient.",
    "",
    table(HEADER, body),
  ];
  if (notes.list.length) parts.push("", ...notes.list.map((n, i) => `${i + 1}. ${cell(n)}`));
  const paired = pairedNote(results);
  if (paired) parts.push("", paired);
  const byReason = new Map<string, string[]>();
  for (const w of results.workloads) {
    if (!w.float32Tolerance) continue;
    const key = `float32 tolerance ${w.float32Tolerance.tol}: ${w.float32Tolerance.reason}`;
    byReason.set(key, [...(byReason.get(key) ?? []), w.title]);
  }
  const tol = [...byReason].map(([reason, titles]) => `- ${titles.join(", ")}: ${reason}.`);
  const forms = results.workloads.flatMap((w) => w.variants.filter((v) => v.note).map((v) => `- ${w.title}, peers${v.label ? ` ${v.label}` : ""}: ${v.note}.`));
  if (tol.length || forms.length) parts.push("", ...tol, ...forms);
  const lin = linearity(results);
  if (lin) parts.push("", lin);
  const mem = memorySection(results);
  if (mem) parts.push("", mem);
  if (results.gradbench) {
    parts.push("", "GradBench evals (wengert as a GradBench tool; derivative time over primal time, ADBench's headline metric):", "", results.gradbench.table);
  }
  if (results.scan) parts.push("", results.scan.markdown);
  if (results.floor) parts.push("", results.floor.markdown);
  if (m.notes.length) parts.push("", "Notes:", "", ...m.notes.map((n) => `- ${n}`));
  return parts.join("\n") + "\n";
}
