/**
 * @file The bench's scan section (issue 21): W5 at N = 10⁶ and W6 with `scan` beside
 * the loop written out and the hand-written gradient, ratios in one run; GradBench's ode
 * at n = 10⁵, s = 100 (its module uses `scan`) against its primal; peak memory (RSS and
 * heap) of every row, each row in a process of its own; and the chain's time(2N)/time(N)
 * in a fresh process and in one holding a 1.5 GB live heap.
 */
import { spawnSync } from "node:child_process";
import { cpus, loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { grad } from "@wengert/core";
import { chain, chainDerivative, chainW, X0 } from "./workloads/w5-chain.js";
import { chainScan } from "./workloads/w5-scan.js";
import { odeGrad, odeLoss, odeW, THETA } from "./workloads/w6-ode.js";
import { odeScan } from "./workloads/w6-scan.js";
import { relativeError } from "./check.js";
import { MEMORY_ROWS, type LinearityProbe, type MemoryProbe } from "./scan-rows.js";
import { formatBytes, formatMs } from "./report/format.js";
import type { Section } from "./results.js";
import { interleaved, type Timed } from "./interleaved.js";

const probePath = fileURLToPath(new URL("./scan-probe.js", import.meta.url));

function probe<T>(args: readonly string[]): T {
  const child = spawnSync(process.execPath, ["--expose-gc", "--max-old-space-size=6144", probePath, ...args], {
    stdio: ["ignore", "pipe", "inherit"],
    maxBuffer: 1 << 24,
  });
  if (child.status !== 0) throw new Error(`scan probe ${args.join(" ")} failed (exit ${child.status ?? child.signal})`);
  return JSON.parse(child.stdout.toString("utf8")) as T;
}

const ratio = (a: number, b: number): string => `×${(a / b).toFixed(a / b < 10 ? 2 : 1)}`;

export function scanSection(quick: boolean, log: (line: string) => void): Section {
  // the machine's load as the timings start: on a shared machine it moves every row, a grad that traces every call most
  const load = `load average ${loadavg()[0].toFixed(1)} on ${cpus().length} cores at the start`;
  const theta = Array.from(THETA);
  // the gradients agree: scan with the loop written out, bit for bit; both with the hand-written one
  const w5 = { hand: chainDerivative(X0, 1e6), scan: grad(chainScan(1e6), X0) as number, loop: grad(chainW(1e6), X0) as number };
  const w6 = { hand: Array.from(odeGrad(theta)), scan: grad(odeScan(), theta) as number[], loop: grad(odeW(), theta) as number[] };
  const checks = [
    `W5 N=10⁶: scan ${Object.is(w5.scan, w5.loop) ? "equals" : "DIFFERS FROM"} the loop written out, bit for bit; ` +
      `relative error to hand-written ${relativeError([w5.scan], [w5.hand]).toExponential(1)}`,
    `W6: scan ${w6.scan.every((g, i) => Object.is(g, w6.loop[i])) ? "equals" : "DIFFERS FROM"} the loop written out, bit for bit; ` +
      `relative error to hand-written ${relativeError(w6.scan, w6.hand).toExponential(1)}`,
  ];
  log("scan: W5 N=10⁶ and W6, interleaved");
  const rounds = quick ? 3 : 7;
  const w5Times = interleaved(
    [
      { what: "primal (JS)", run: () => chain(X0, 1e6) },
      { what: "hand-written", run: () => chainDerivative(X0, 1e6) },
      { what: "grad, scan", run: () => grad(chainScan(1e6), X0) },
      { what: "grad, loop written out", run: () => grad(chainW(1e6), X0) },
    ],
    rounds,
    quick ? 50 : 150,
    quick ? 200 : 1000,
  );
  const w6Times = interleaved(
    [
      { what: "primal (JS)", run: () => odeLoss(theta) },
      { what: "hand-written", run: () => odeGrad(theta) },
      // a new closure each call: the body is traced every call (its compiled code is shared by structure)
      { what: "grad, scan (traced every call)", run: () => grad(odeScan(), theta) },
      { what: "grad, loop written out", run: () => grad(odeW(), theta) },
    ],
    rounds,
    quick ? 50 : 150,
    quick ? 200 : 1000,
  );
  log("scan: memory, one process per row");
  const memoryRows = quick ? ["w5-primal", "w5-scan", "w5-loop", "ode10k-primal", "ode10k-scan"] : Object.keys(MEMORY_ROWS);
  const memory = memoryRows.map((row) => {
    log(`  ${MEMORY_ROWS[row].what}`);
    return probe<MemoryProbe>(["memory", row]);
  });
  log("scan: time(2N)/time(N), fresh and with a 1.5 GB live heap");
  const sizes = quick ? "100000,200000" : "100000,200000,500000,1000000";
  const linearity = (quick ? ["fresh"] : ["fresh", "loaded"]).map((heap) => probe<LinearityProbe>(["linearity", heap, sizes, quick ? "7" : "15"]));
  return { markdown: markdown({ w5Times, w6Times, memory, linearity, checks, load }), data: { w5Times, w6Times, memory, linearity, checks, load } };
}

function markdown(d: { w5Times: Timed[]; w6Times: Timed[]; memory: MemoryProbe[]; linearity: LinearityProbe[]; checks: string[]; load: string }): string {
  const timeTable = (title: string, rows: Timed[]): string[] => {
    const hand = rows.find((r) => r.what === "hand-written")!.ms;
    const primal = rows.find((r) => r.what.startsWith("primal"))!.ms;
    return [
      `| ${title} | median | / hand-written | / primal |`,
      "|---|--:|--:|--:|",
      ...rows.map((r) => `| ${r.what} | ${formatMs(r.ms)} | ${ratio(r.ms, hand)} | ${ratio(r.ms, primal)} |`),
    ];
  };
  const byRow = new Map(d.memory.map((m) => [m.row, m]));
  const memoryLines = [
    "| row (a process each) | median | peak RSS above the process before its calls | V8 heap committed, growth | array buffers after |",
    "|---|--:|--:|--:|--:|",
    ...d.memory.map(
      (m) =>
        `| ${MEMORY_ROWS[m.row].what} | ${formatMs(m.ms)} | ${formatBytes(m.peakRss)} | ` +
        `${formatBytes(m.heapCommitted)} | ${formatBytes(m.arrayBuffers)} |`,
    ),
  ];
  const vs = (a: string, b: string, what: string): string | null => {
    const x = byRow.get(a);
    const y = byRow.get(b);
    return x && y ? `- ${what}: ${ratio(x.ms, y.ms)} of the primal's time, peak RSS ${formatBytes(x.peakRss - y.peakRss)} above the primal's.` : null;
  };
  const summaries = [
    vs("ode-scan", "ode-primal", "GradBench ode n=10⁵, s=100, gradient with scan"),
    vs("ode10k-scan", "ode10k-primal", "GradBench ode n=10⁴, gradient with scan"),
    vs("ode10k-loop", "ode10k-primal", "GradBench ode n=10⁴, gradient of the loop written out"),
    vs("w5-scan", "w5-primal", "W5 N=10⁶, grad with scan"),
    vs("w5-loop", "w5-primal", "W5 N=10⁶, grad of the loop written out"),
    vs("w5-hvp-scan", "w5-primal", "W5 N=10⁶, hvp with scan"),
    vs("w5-hvp-loop", "w5-primal", "W5 N=10⁶, hvp of the loop written out"),
  ].filter((s): s is string => s !== null);
  const lin = d.linearity.map((l) => {
    // time(2N)/time(N): the median of the rounds' own ratios, by CPU time (see scan-probe.ts)
    const step = (key: "loop" | "scan"): string => l.doublings.map((q) => `×${q[key].toFixed(2)} (${q.n / 2}→${q.n})`).join(", ");
    return (
      `| ${l.heap === "fresh" ? "fresh process" : `live heap ${formatBytes(l.liveHeap)}`} | ` +
      `${l.rows.map((r) => `${formatMs(r.loopMs)} / ${formatMs(r.scanMs)} (CPU ${formatMs(r.loopCpuMs)} / ${formatMs(r.scanCpuMs)})`).join(" | ")} | ` +
      `${step("loop")} | ${step("scan")} | ${l.fullGcs} |`
    );
  });
  const sizes = d.linearity[0]?.rows.map((r) => `N=${r.n}`) ?? [];
  return [
    `Long computations (\`scan\`, issue 21): ratios in one run (each row warmed up first, then timed in interleaved rounds; ${d.load}).`,
    "",
    ...timeTable("W5 deep chain, N=10⁶", d.w5Times),
    "",
    ...timeTable("W6 RK4 Lotka–Volterra, 1000 steps", d.w6Times),
    "",
    ...d.checks.map((c) => `- ${c}.`),
    "",
    "Peak memory per row (each row alone in a process; the process's RSS before the calls, modules loaded and inputs made, is subtracted):",
    "",
    ...memoryLines,
    "",
    ...summaries,
    "",
    `Grad of the chain written out / as a scan after a 10⁶-step gradient in the same process, ${d.linearity[0]?.rounds ?? 0} rounds ` +
      "(every size once a round, up and down in turn): median wall time per call (the process's CPU time, its GC threads included), " +
      "and time(2N)/time(N), the median of the rounds' own ratios of CPU time " +
      "(should be about 2; wall time on a shared machine also counts the other processes'), " +
      "and the full collections (mark-compacts) that began inside timed calls (seconds of CPU each beside the large heap, milliseconds in a fresh process):",
    "",
    `| process | ${sizes.join(" | ")} | 2N/N, written out | 2N/N, scan | full GCs timed |`,
    `|---|${sizes.map(() => "--:").join("|")}|---|---|--:|`,
    ...lin,
  ].join("\n");
}
