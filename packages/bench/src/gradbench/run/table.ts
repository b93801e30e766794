/**
 * @file The report of `pnpm gradbench` as Markdown (results/gradbench.md): a summary (per
 * eval and function: how many evaluations each tool got valid, and wengert's time over each
 * other tool's), then per eval every workload side by side: each tool's mean and median
 * time over its runs and the eval's verdict.
 */
import { formatMs, formatRatio } from "../../report/format.js";
import type { Evaluation } from "./log.js";
import type { RelayRun } from "./relay.js";
import { pytorchEnvWords, type ToolName } from "./tools.js";

export type ToolOutcome = { readonly kind: "ran"; readonly run: RelayRun } | { readonly kind: "not run"; readonly reason: string };

export interface EvalOutcome {
  readonly eval: string;
  /** The run.py flags used (undefined when the eval did not run). */
  readonly flags?: readonly string[];
  readonly notes: readonly string[];
  /** Why the eval did not run at all (then `tools` is empty). */
  readonly notRun?: string;
  /** wengert first, then the other tools asked for. */
  readonly tools: readonly { readonly tool: ToolName; readonly outcome: ToolOutcome }[];
}

export interface RunMeta {
  /** ISO date of the start. */
  readonly date: string;
  readonly node: string;
  readonly cpu: string;
  readonly cpus: number;
  /** 1-minute load averages at the start and at the end. */
  readonly load: readonly [number, number];
  readonly seconds: number;
  /** The GradBench checkout's commit, and its tracked files that differ from it. */
  readonly commit: string;
  readonly changed: readonly string[];
  readonly minRuns?: number;
  readonly minSeconds?: number;
}

export interface RunReport {
  readonly meta: RunMeta;
  readonly evals: readonly EvalOutcome[];
}

const cell = (s: string): string => s.replaceAll("|", "\\|").replaceAll("\n", " ");
const firstLine = (s: string | undefined): string => {
  const line = (s ?? "").split("\n").find((l) => l.trim() !== "") ?? "";
  return line.length > 120 ? `${line.slice(0, 117)}…` : line;
};

/** The eval's verdict on one evaluation, as a table cell. */
export function verdict(e: Evaluation | undefined): string {
  if (e === undefined) return "not reached";
  if (!e.success) return `failed: ${cell(firstLine(e.error))}`;
  if (e.valid === undefined) return "not checked";
  return e.valid ? "valid" : `INVALID: ${cell(firstLine(e.mismatch?.split("\n").slice(1).join("\n") || e.mismatch))}`;
}

const medianMs = (e: Evaluation | undefined): number | undefined => (e?.medianNs === undefined ? undefined : e.medianNs / 1e6);
const time = (ns: number | undefined): string => (ns === undefined ? "—" : formatMs(ns / 1e6));

/** A row key: workload, function, and which occurrence of the pair (hello repeats its evaluations). */
interface Row { readonly description: string; readonly function: string; readonly occurrence: number }
const keyOf = (r: Row) => `${r.description}\u0000${r.function}\u0000${r.occurrence}`;

/** Each tool's evaluations by row key, and the rows in order of first appearance. */
function rowsOf(outcome: EvalOutcome): { rows: Row[]; byTool: Map<ToolName, Map<string, Evaluation>> } {
  const rows: Row[] = [];
  const seen = new Set<string>();
  const byTool = new Map<ToolName, Map<string, Evaluation>>();
  for (const { tool, outcome: o } of outcome.tools) {
    if (o.kind !== "ran") continue;
    const mine = new Map<string, Evaluation>();
    const counts = new Map<string, number>();
    for (const e of o.run.evaluations) {
      const pair = `${e.description}\u0000${e.function}`;
      const occurrence = counts.get(pair) ?? 0;
      counts.set(pair, occurrence + 1);
      const row = { description: e.description, function: e.function, occurrence };
      mine.set(keyOf(row), e);
      if (!seen.has(keyOf(row))) {
        seen.add(keyOf(row));
        rows.push(row);
      }
    }
    byTool.set(tool, mine);
  }
  return { rows, byTool };
}

const geomean = (xs: readonly number[]): number => Math.exp(xs.reduce((a, x) => a + Math.log(x), 0) / xs.length);

/** One line per eval and function: valid counts per tool, wengert's median time over each other tool's. */
function summary(report: RunReport, others: readonly ToolName[]): string[] {
  const head = ["eval", "function", "workloads", "wengert", ...others, ...others.map((t) => `wengert / ${t}: geometric mean, worst, largest workload`)];
  const lines = [`| ${head.join(" | ")} |`, `|${head.map((_, i) => (i < 3 ? "---" : "--:")).join("|")}|`];
  for (const outcome of report.evals) {
    if (outcome.notRun !== undefined) {
      lines.push(`| ${outcome.eval} | — | not run: ${cell(outcome.notRun)} |${" |".repeat(head.length - 3)}`);
      continue;
    }
    const { rows, byTool } = rowsOf(outcome);
    const functions = [...new Set(rows.map((r) => r.function))];
    const ran = (t: ToolName) => outcome.tools.find((x) => x.tool === t)?.outcome;
    for (const fn of functions) {
      const mine = rows.filter((r) => r.function === fn);
      const validity = (t: ToolName) => {
        const o = ran(t);
        if (o === undefined) return "—";
        if (o.kind === "not run") return "not run";
        const es = mine.map((r) => byTool.get(t)?.get(keyOf(r)));
        return `${es.filter((e) => e?.valid === true).length}/${mine.length} valid`;
      };
      const ratios = others.map((t) => {
        const rs = mine
          .map((r) => [medianMs(byTool.get("wengert")?.get(keyOf(r))), medianMs(byTool.get(t)?.get(keyOf(r)))] as const)
          .filter((p): p is readonly [number, number] => p[0] !== undefined && p[1] !== undefined && p[1] > 0)
          .map(([w, o]) => w / o);
        return rs.length === 0 ? "—" : `${formatRatio(geomean(rs))}, ${formatRatio(Math.max(...rs))}, ${formatRatio(rs[rs.length - 1])}`;
      });
      lines.push(`| ${[outcome.eval, fn, String(mine.length), validity("wengert"), ...others.map(validity), ...ratios].join(" | ")} |`);
    }
  }
  return lines;
}

/** One eval's section: how it ran, then each workload with every tool's times and verdict. */
function section(outcome: EvalOutcome): string[] {
  const lines = [`## ${outcome.eval}`, ""];
  if (outcome.notRun !== undefined) return [...lines, `Not run: ${outcome.notRun}.`, ""];
  lines.push(`run.py flags: ${outcome.flags !== undefined && outcome.flags.length > 0 ? `\`${outcome.flags.join(" ")}\`` : "its defaults"}.`);
  for (const note of outcome.notes) lines.push(`${note}.`);
  const ran: ToolName[] = [];
  for (const { tool, outcome: o } of outcome.tools) {
    if (o.kind === "not run") lines.push(`${tool}: not run (${o.reason}).`);
    else {
      ran.push(tool);
      const run = o.run;
      if (run.defined === false) lines.push(`${tool}: the module was not defined (${cell(firstLine(run.defineError))}).`);
      if (run.exitCode !== 0 && run.exitCode !== 1) {
        const lastWords = run.stderrTail.length > 0 ? `; last words: ${cell(firstLine(run.stderrTail[run.stderrTail.length - 1]))}` : "";
        lines.push(`${tool}: the relay exited with ${run.exitCode}${lastWords}.`);
      }
    }
  }
  const { rows, byTool } = rowsOf(outcome);
  if (rows.length === 0) return [...lines, "", "No evaluations.", ""];
  const others = ran.filter((t) => t !== "wengert");
  const ratioColumns = ran.includes("wengert") ? others.map((t) => `wengert / ${t}`) : [];
  const head = ["workload", "function", ...ran.flatMap((t) => [`${t} mean`, `${t} median`, `${t}`]), ...ratioColumns];
  lines.push("", `| ${head.join(" | ")} |`, `|${head.map((_, i) => (i < 2 || (i - 2) % 3 === 2 ? "---" : "--:")).join("|")}|`);
  for (const r of rows) {
    const cells = [r.description === "" ? "—" : cell(r.description), r.function];
    for (const t of ran) {
      const e = byTool.get(t)?.get(keyOf(r));
      cells.push(time(e?.meanNs), time(e?.medianNs), verdict(e));
    }
    if (ran.includes("wengert")) {
      const w = medianMs(byTool.get("wengert")?.get(keyOf(r)));
      for (const t of others) {
        const o = medianMs(byTool.get(t)?.get(keyOf(r)));
        cells.push(w === undefined || o === undefined || o === 0 ? "—" : formatRatio(w / o));
      }
    }
    lines.push(`| ${cells.join(" | ")} |`);
  }
  return [...lines, ""];
}

/** Every tool that appears in the report besides wengert, in the order asked. */
function otherTools(report: RunReport): ToolName[] {
  const out: ToolName[] = [];
  for (const e of report.evals) for (const { tool } of e.tools) if (tool !== "wengert" && !out.includes(tool)) out.push(tool);
  return out;
}

/** The whole report. */
export function gradbenchMarkdown(report: RunReport): string {
  const { meta } = report;
  const repeat = meta.minRuns === undefined && meta.minSeconds === undefined
    ? "each evaluation repeated as the evals ask by default (at least 1 run and 1 s)"
    : `each evaluation repeated for at least ${meta.minRuns ?? 1} run(s) and ${meta.minSeconds ?? 1} s`;
  const shown = meta.changed.slice(0, 5).map((l) => `\`${l.trim()}\``).join(", ");
  const changed =
    meta.changed.length === 0
      ? ""
      : ` (${meta.changed.length} tracked file(s) of the checkout differ from it: ${shown}${meta.changed.length > 5 ? ", …" : ""})`;
  const others = otherTools(report);
  const torchRan = report.evals.some((e) => e.tools.some((t) => t.tool === "pytorch" && t.outcome.kind === "ran"));
  const threads = torchRan
    ? ` PyTorch ran with one thread (\`${pytorchEnvWords()}\` in its environment), as wengert and the C++ tool run.`
    : "";
  return [
    "# GradBench: wengert beside GradBench's tools",
    "",
    `Written by \`pnpm gradbench\` on ${meta.date}, in ${Math.round(meta.seconds)} s: ` +
      `GradBench at ${meta.commit.slice(0, 8)}${changed}, Node ${meta.node}, ${meta.cpus} × ${meta.cpu}. ` +
      `Times are each tool's own \`evaluate\` timings (the function alone), mean and median over its runs, ${repeat}; ` +
      `a verdict is the eval's own check of the output (GradBench's manual tool's answer, within its tolerance). ` +
      `The machine is shared: other jobs ran on the same cores ` +
      `(1-minute load average ${meta.load[0].toFixed(1)} at the start, ${meta.load[1].toFixed(1)} at the end), ` +
      `so single times may be off by tens of percent.${threads}`,
    "",
    "## Summary",
    "",
    ...summary(report, others),
    "",
    ...report.evals.flatMap(section),
  ].join("\n");
}

/** Whether every evaluation of `tool` that ran was valid (and at least one ran). */
export function allValid(report: RunReport, tool: ToolName): boolean {
  let any = false;
  for (const e of report.evals) {
    for (const t of e.tools) {
      if (t.tool !== tool || t.outcome.kind !== "ran") continue;
      const run = t.outcome.run;
      if (run.defined === false || run.evaluations.length === 0) return false;
      for (const ev of run.evaluations) {
        any = true;
        if (ev.valid !== true) return false;
      }
    }
  }
  return any;
}
