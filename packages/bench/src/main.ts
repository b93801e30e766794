/**
 * @file `pnpm bench [--quick] [--only W1,W5,GB,SCAN] [--no-memory] [--no-write] [--help]` (cli.ts).
 *
 * Runs W1–W6 (packages/bench/WORKLOADS.md), W4's dense Hessian and W7 (README.md) for the plain-JS primal, the hand-written gradient, wengert
 * and the peers (TF.js cpu and wasm, jax-js eager and jit), each workload in a process
 * of its own; prints the table on stdout (progress, `[k/N]` and the time elapsed, goes
 * to stderr) and writes results/latest.{md,json,svg}. Then the GradBench evals (GB):
 * wengert's derivative time over its primal time per eval. --quick: for development.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync, writeSync } from "node:fs";
import { cpus, platform, release } from "node:os";
import { fileURLToPath } from "node:url";
import { evalsOf, parseFlags, usage, type LastRun, type Names } from "./cli.js";
import { getGc } from "./gc.js";
import { FULL, QUICK, errorText, runWorkload, type Peers } from "./harness.js";
import { memoryProbe } from "./memory.js";
import { loadJax, packageVersion } from "./peers/jax.js";
import { loadTf, useTfBackend } from "./peers/tfjs.js";
import { progressLine } from "./progress.js";
import { markdown } from "./report/markdown.js";
import { svg } from "./report/svg.js";
import type { BenchResults, GradBenchSection, MemoryResult, Section, WorkloadResult } from "./results.js";
import { scanSection } from "./scan-bench.js";
import { floorSection } from "./tape-floor.js";
import { SAMPLE_INPUTS } from "./gradbench/inputs.js";
import { modules } from "./gradbench/modules/index.js";
import { ratiosForAll, ratioTable } from "./gradbench/report.js";
import { workloads } from "./workloads/index.js";

const args = process.argv.slice(2);
const resultsDir = fileURLToPath(new URL("../results/", import.meta.url));
const names: Names = { ids: workloads().map((w) => w.id), families: [...new Set(workloads().map((w) => w.family))], evals: Object.keys(modules) };
const parsed = parseFlags(args, names);
// before anything runs: --help, or a flag mistyped, must not start a run of minutes
if (parsed.kind === "help") {
  process.stdout.write(usage(names, lastFullRun()));
  process.exit(0);
}
if (parsed.kind === "error") {
  process.stderr.write(parsed.message + "\n");
  process.exit(2);
}
const { quick, only, part: partArg, memory: withMemory, write, ops } = parsed.flags;
const settings = quick ? QUICK : FULL;
// --ops: the cost of one tensor operation (op-cost.ts), and nothing else
if (ops) {
  (await import("./op-cost.js")).runOpCosts({ quick, write });
  process.exit(0);
}
const t00 = performance.now();
const log = (line: string) => process.stderr.write((process.env.BENCH_DEBUG ? `[${((performance.now() - t00) / 1000).toFixed(1)}] ` : "") + line + "\n");

/** What the full run of the committed results took (results/latest.json), if it was one. */
function lastFullRun(): LastRun | undefined {
  const file = resultsDir + "latest.json";
  if (!existsSync(file)) return undefined;
  const { meta } = JSON.parse(readFileSync(file, "utf8")) as BenchResults;
  return meta.mode === "full" ? { seconds: meta.seconds, date: meta.date } : undefined;
}

const start = performance.now();
const notes: string[] = [];

// Each workload, the memory probe and the GradBench evals run in a child process of
// their own (all candidates of a workload still in one process, interleaved): a heap
// grown by one workload's peers would otherwise slow the next workload's scavenges
// (W5's `grad` moved between ×18 and ×29 of hand-written with what ran before it).
const parts: string[] = workloads()
  .filter((w) => !only || only.some((o) => w.id === o || w.family === o))
  .map((w) => w.id);
if (withMemory) parts.push("memory");
if (!only || only.some((o) => o === "GB" || o.startsWith("GB:"))) parts.push("GB");
if (!only || only.includes("SCAN")) parts.push("SCAN");
if (!only || only.includes("FLOOR")) parts.push("FLOOR");

if (partArg !== undefined) {
  // Child: run one part, its result as JSON on stdout.
  writeSync(1, JSON.stringify(await runPart(partArg)));
  // jax-js and TF.js may keep handles open.
  process.exit(0);
}

log(`wengert bench (${quick ? "quick" : "full"}): ${parts.length} part${parts.length === 1 ? "" : "s"}`);

const results: WorkloadResult[] = [];
let memory: MemoryResult | undefined;
let gradbench: GradBenchSection | undefined;
let scanResults: Section | undefined;
let floor: Section | undefined;
for (const [i, part] of parts.entries()) {
  const t0 = performance.now();
  const step = { k: i + 1, n: parts.length, part };
  log(progressLine({ ...step, elapsed: (t0 - start) / 1000 }));
  const child = spawnSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), ...args, "--part", part], {
    stdio: ["ignore", "pipe", "inherit"],
    maxBuffer: 1 << 28,
  });
  if (child.status !== 0) throw new Error(`bench part ${part} failed (exit ${child.status ?? child.signal})`);
  const result = JSON.parse(child.stdout.toString("utf8")) as unknown;
  if (part === "memory") memory = result as MemoryResult;
  else if (part === "GB") gradbench = result as GradBenchSection;
  else if (part === "SCAN") scanResults = result as Section;
  else if (part === "FLOOR") floor = result as Section;
  else results.push(result as WorkloadResult);
  const now = performance.now();
  log(progressLine({ ...step, elapsed: (now - start) / 1000, took: (now - t0) / 1000 }));
}

async function runPart(part: string): Promise<WorkloadResult | MemoryResult | GradBenchSection | Section> {
  const gcKind: MemoryResult["gc"] = typeof (globalThis as { gc?: unknown }).gc === "function" ? "exposed" : "flag set at run time";
  const gc = getGc();
  if (part === "memory") {
    log("memory probe");
    return memoryProbe({ gc, gcKind });
  }
  if (part === "GB") {
    log("GradBench evals: derivative / primal");
    const chosen = evalsOf(only);
    const registry = chosen === undefined ? modules : Object.fromEntries(chosen.map((e) => [e, modules[e]]));
    // no collection between turns: one forced before each slowed ht's jacobian by ×1.3–1.5 (its heap grown again in the timed runs)
    const timing = quick ? { minRuns: 3, minSeconds: 0.1 } : { minRuns: 5, minSeconds: 1 };
    const rows = ratiosForAll(registry, SAMPLE_INPUTS, quick, timing, (e) => log(`  ${e}`));
    return { table: ratioTable(rows), rows };
  }
  if (part === "SCAN") return scanSection(quick, log);
  if (part === "FLOOR") return floorSection(quick, log);
  const w = workloads().find((w) => w.id === part);
  if (!w) throw new Error(`no workload ${part}`);
  log(`${w.title}`);
  return runWorkload(w, await loadPeers(), settings, log, gc);
}

/** TF.js and jax-js, or why not; the load line is logged by the first part only. */
async function loadPeers(): Promise<Peers> {
  const say = (line: string) => {
    if (parts.indexOf(partArg!) === 0) log(line);
  };
  let peers: Peers = { tfBackends: [] };
  try {
    const t = await loadTf();
    peers = { ...peers, tf: t.tf, tfBackends: t.backends, useTfBackend: (name) => useTfBackend(t.tf, name) };
    say(`TF.js ${t.version}: ${t.backends.map((b) => (b.error ? `${b.name} failed (${b.error})` : b.name)).join(", ")}`);
  } catch (e) {
    peers = { ...peers, tfError: `TF.js did not load: ${errorText(e)}` };
    say(peers.tfError!);
  }
  try {
    const j = await loadJax();
    peers = { ...peers, jax: j.jax };
    say(`jax-js ${j.version}: wasm`);
  } catch (e) {
    peers = { ...peers, jaxError: `jax-js did not load: ${errorText(e)}` };
    say(peers.jaxError!);
  }
  return peers;
}

notes.push(
  "TF.js runs in float32 (its only float type); jax-js at its default float32 (its float64 arrays get float32-accurate sin/cos/exp from its wasm kernels).",
  "TF.js: tfjs-core's Node build registers no gradients, so @tensorflow/tfjs is imported for its gradient registrations; no tfjs-node (native) backend.",
  "jax-js: Node 20 has no Float16Array, which jax-js tests for; a stand-in class is defined.",
  "Peers' times include reading the gradient back into a JS typed array (dataSync).",
);
if (quick) notes.push(`--quick: peers whose call would take more than ${settings.maxCall} s are skipped; the full run allows ${FULL.maxCall} s.`);

const out: BenchResults = {
  meta: {
    date: new Date().toISOString(),
    mode: quick ? "quick" : "full",
    node: process.versions.node,
    platform: `${platform()} ${release()}`,
    cpu: cpus()[0]?.model ?? "?",
    cpus: cpus().length,
    versions: {
      "@tensorflow/tfjs-core": packageVersion("@tensorflow/tfjs-core"),
      "@jax-js/jax": packageVersion("@jax-js/jax"),
      benchmark: packageVersion("benchmark"),
    },
    settings: { ...settings },
    seconds: (performance.now() - start) / 1000,
    notes,
  },
  workloads: results,
  ...(memory && { memory }),
  ...(gradbench && { gradbench }),
  ...(scanResults && { scan: scanResults }),
  ...(floor && { floor }),
};

const md = markdown(out);
process.stdout.write(md);
if (write) {
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(resultsDir + "latest.md", md);
  writeFileSync(resultsDir + "latest.json", JSON.stringify(out, null, 2) + "\n");
  writeFileSync(resultsDir + "latest.svg", svg(out));
  log(`wrote ${resultsDir}latest.{md,json,svg}`);
}
log(`total ${((performance.now() - start) / 1000).toFixed(1)} s`);
// jax-js and TF.js may keep handles open.
process.exit(0);
