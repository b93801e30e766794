/**
 * @file `pnpm gradbench -- --gradbench PATH [--evals lse,gmm] [--tools manual,pytorch] …`
 * (args.ts lists the flags): GradBench's evals run against wengert-gradbench, and beside it
 * GradBench's tools the checkout can run, each eval through the relay (relay.ts); the
 * side-by-side table goes to results/gradbench.md (table.ts) and its summary to stdout.
 * Exits 1 unless every evaluation of wengert's was valid.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { parseRunArgs, type RunOptions } from "./args.js";
import { checkSetup, planEval } from "./checkout.js";
import { GradbenchSetupError, GradbenchUsageError } from "./errors.js";
import { runRelay } from "./relay.js";
import { allValid, gradbenchMarkdown, type EvalOutcome, type RunReport, type ToolOutcome } from "./table.js";
import { planTool, type ToolName } from "./tools.js";

const here = (relative: string) => fileURLToPath(new URL(relative, import.meta.url));
const repoRoot = here("../../../../../");
const wengertMain = here("../main.js");
const log = (line: string) => process.stderr.write(`${line}\n`);

/** The table (and, from a run, its JSON) to `out`, the summary to stdout. */
function publish(report: RunReport, out: string | undefined, json: boolean): void {
  const markdown = gradbenchMarkdown(report);
  if (out !== undefined) {
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, `${markdown}\n`);
    if (json) writeFileSync(jsonBeside(out), `${JSON.stringify(report, null, 1)}\n`);
    log(`wrote ${out}${json ? ` and ${jsonBeside(out)}` : ""}`);
  }
  const sections = markdown.indexOf("\n## ", markdown.indexOf("## Summary") + 1);
  process.stdout.write(`${sections < 0 ? markdown : markdown.slice(0, sections)}\n`);
}

const jsonBeside = (out: string) => `${out.replace(/\.md$/, "")}.json`;

async function main(): Promise<number> {
  const command = parseRunArgs(process.argv.slice(2), { cwd: process.env.INIT_CWD ?? process.cwd(), defaultOut: here("../../../results/gradbench.md") });
  if (command.kind === "render") {
    const report = JSON.parse(readFileSync(command.json, "utf8")) as RunReport;
    publish(report, command.out, false);
    return allValid(report, "wengert") ? 0 : 1;
  }
  const out = command.out;
  // the JSON after each eval too: a long run that breaks off keeps what it measured (--render it)
  const report = await run(command, (partial) => out !== undefined && writeFileSync(jsonBeside(out), `${JSON.stringify(partial, null, 1)}\n`));
  publish(report, out, true);
  return allValid(report, "wengert") ? 0 : 1;
}

/** Every eval asked for, against wengert and the other tools asked for. */
async function run(options: RunOptions, checkpoint: (partial: RunReport) => void): Promise<RunReport> {
  const setup = checkSetup(options, repoRoot);
  log(`pnpm gradbench: GradBench ${setup.commit.slice(0, 8)} at ${setup.gradbench}; relay ${setup.relay}; ${setup.python}`);
  const started = performance.now();
  const load0 = loadavg()[0];
  const date = new Date().toISOString();
  const evals: EvalOutcome[] = [];
  const report = (): RunReport => ({
    meta: {
      date,
      node: process.versions.node,
      cpu: cpus()[0]?.model.trim() ?? "unknown CPU",
      cpus: cpus().length,
      load: [load0, loadavg()[0]],
      seconds: (performance.now() - started) / 1000,
      commit: setup.commit,
      changed: setup.changed,
      minRuns: options.minRuns,
      minSeconds: options.minSeconds,
    },
    evals,
  });
  for (const name of options.evals) {
    const plan = planEval(setup, options, name);
    if (plan.kind === "not run") {
      log(`${name}: not run: ${plan.reason}`);
      evals.push({ eval: name, notes: [], notRun: plan.reason, tools: [] });
      continue;
    }
    for (const note of plan.notes) log(note);
    const tools: { tool: ToolName; outcome: ToolOutcome }[] = [];
    for (const tool of ["wengert", ...options.tools] as const) {
      const t = planTool(tool, setup, name, wengertMain);
      if (t.kind === "not run") {
        log(`${name}/${tool}: not run: ${t.reason}`);
        tools.push({ tool, outcome: t });
        continue;
      }
      log(`${name}/${tool}: ${plan.flags.length > 0 ? plan.flags.join(" ") : "default sizes"}`);
      const run = await runRelay(setup, { eval: name, flags: plan.flags, tool: t.command, label: `${name}/${tool}` });
      log(`${name}/${tool}: ${run.evaluations.length} evaluations in ${run.seconds.toFixed(0)} s`);
      tools.push({ tool, outcome: { kind: "ran", run } });
    }
    evals.push({ eval: name, flags: plan.flags, notes: plan.notes, tools });
    checkpoint(report());
  }
  return report();
}

try {
  process.exitCode = await main();
} catch (e) {
  if (e instanceof GradbenchUsageError || e instanceof GradbenchSetupError) {
    log(e.message);
    process.exitCode = 2;
  } else throw e;
}
