/**
 * @file `pnpm bench [--quick] [--only W1,W5,GB] [--no-memory] [--no-write]`.
 *
 * Runs W1–W6 (shared/WORKLOADS.md) for the plain-JS primal, the hand-written
 * gradient, wengert and the peers (TF.js cpu and wasm, jax-js eager and jit) in this
 * one process; prints the table on stdout (progress goes to stderr) and writes
 * results/latest.{md,json,svg}. Then the GradBench evals (GB): wengert's derivative time
 * over its primal time per eval. --quick: for development, under two minutes.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, platform, release } from "node:os";
import { fileURLToPath } from "node:url";
import { getGc } from "./gc.js";
import { FULL, QUICK, errorText, runWorkload, type Peers } from "./harness.js";
import { memoryProbe } from "./memory.js";
import { loadJax, packageVersion } from "./peers/jax.js";
import { loadTf, useTfBackend } from "./peers/tfjs.js";
import { markdown } from "./report/markdown.js";
import { svg } from "./report/svg.js";
import type { BenchResults, GradBenchSection, MemoryResult, WorkloadResult } from "./results.js";
import { SAMPLE_INPUTS } from "./gradbench/inputs.js";
import { modules } from "./gradbench/modules/index.js";
import { ratiosForAll, ratioTable } from "./gradbench/report.js";
import { workloads } from "./workloads/index.js";

const args = process.argv.slice(2);
const quick = args.includes("--quick");
const onlyArg = args.find((a) => a.startsWith("--only"));
const only = onlyArg ? (onlyArg.includes("=") ? onlyArg.split("=")[1] : args[args.indexOf(onlyArg) + 1]).split(",") : undefined;
const settings = quick ? QUICK : FULL;
const t00 = performance.now();
const log = (line: string) => process.stderr.write((process.env.BENCH_DEBUG ? `[${((performance.now() - t00) / 1000).toFixed(1)}] ` : "") + line + "\n");

const start = performance.now();
const notes: string[] = [];

log(`wengert bench (${quick ? "quick" : "full"})`);
const gcKind: MemoryResult["gc"] = typeof (globalThis as { gc?: unknown }).gc === "function" ? "exposed" : "flag set at run time";
const gc = getGc();

let peers: Peers = { tfBackends: [] };
try {
  const t = await loadTf();
  peers = { ...peers, tf: t.tf, tfBackends: t.backends, useTfBackend: (name) => useTfBackend(t.tf, name) };
  log(`TF.js ${t.version}: ${t.backends.map((b) => (b.error ? `${b.name} failed (${b.error})` : b.name)).join(", ")}`);
} catch (e) {
  peers = { ...peers, tfError: `TF.js did not load: ${errorText(e)}` };
  log(peers.tfError!);
}
try {
  const j = await loadJax();
  peers = { ...peers, jax: j.jax };
  log(`jax-js ${j.version}: wasm`);
} catch (e) {
  peers = { ...peers, jaxError: `jax-js did not load: ${errorText(e)}` };
  log(peers.jaxError!);
}

const results: WorkloadResult[] = [];
for (const w of workloads()) {
  if (only && !only.some((o) => w.id === o || w.family === o)) continue;
  log(`${w.title}`);
  const t0 = performance.now();
  results.push(await runWorkload(w, peers, settings, log, gc));
  log(`  (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
}

let memory: MemoryResult | undefined;
if (!args.includes("--no-memory")) {
  log("memory probe");
  memory = memoryProbe({ gc, gcKind });
}

let gradbench: GradBenchSection | undefined;
if (!only || only.includes("GB")) {
  log("GradBench evals: derivative / primal");
  const rows = ratiosForAll(modules, SAMPLE_INPUTS, quick, quick ? { minRuns: 3, minSeconds: 0.1 } : { minRuns: 5, minSeconds: 1 }, (e) => log(`  ${e}`));
  gradbench = { table: ratioTable(rows), rows };
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
};

const md = markdown(out);
process.stdout.write(md);
if (!args.includes("--no-write")) {
  const dir = fileURLToPath(new URL("../results/", import.meta.url));
  mkdirSync(dir, { recursive: true });
  writeFileSync(dir + "latest.md", md);
  writeFileSync(dir + "latest.json", JSON.stringify(out, null, 2) + "\n");
  writeFileSync(dir + "latest.svg", svg(out));
  log(`wrote ${dir}latest.{md,json,svg}`);
}
log(`total ${((performance.now() - start) / 1000).toFixed(1)} s`);
// jax-js and TF.js may keep handles open.
process.exit(0);
