/**
 * @file One measurement of the scan section (scan-bench.ts) in a process of its own, its
 * result as JSON on stdout: `node scan-probe.js memory <row>` (peak memory of a row's
 * calls, against the process before them) or `node scan-probe.js linearity <fresh|loaded>`
 * (the chain's gradient at growing N, in a fresh process or one holding a large heap).
 */
import { readFileSync, writeFileSync, writeSync } from "node:fs";
import { constants, PerformanceObserver, type PerformanceEntry } from "node:perf_hooks";
import { getHeapStatistics } from "node:v8";
import { grad } from "@wengert/core";
import { chainW, X0 } from "./workloads/w5-chain.js";
import { chainScan } from "./workloads/w5-scan.js";
import { MEMORY_ROWS, type LinearityProbe, type MemoryProbe } from "./scan-rows.js";

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/**
 * The process's peak RSS since the last `resetPeak` (Linux: VmHWM, which a write of 5 to
 * clear_refs resets; the kernel's maxRSS counts from before exec, where a spawned process
 * starts as a copy of its parent). Elsewhere, maxRSS.
 */
function peakRss(): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync("/proc/self/status", "utf8"));
    if (m) return Number(m[1]) * 1024;
  } catch {
    // not Linux
  }
  return process.resourceUsage().maxRSS * 1024;
}

function resetPeak(): void {
  try {
    writeFileSync("/proc/self/clear_refs", "5");
  } catch {
    // not Linux: maxRSS, from the process's start
  }
}

function memory(row: string): MemoryProbe {
  const r = MEMORY_ROWS[row];
  if (r === undefined) throw new Error(`no memory row ${row}`);
  const f = r.call();
  (globalThis as { gc?: () => void }).gc?.();
  resetPeak();
  const rss0 = process.memoryUsage().rss;
  const heap0 = getHeapStatistics().total_heap_size;
  const times: number[] = [];
  let heapMax = heap0;
  for (let i = 0; i < r.calls; i++) {
    const t = performance.now();
    f();
    times.push(performance.now() - t);
    heapMax = Math.max(heapMax, getHeapStatistics().total_heap_size);
  }
  return {
    row,
    ms: median(times),
    calls: r.calls,
    peakRss: peakRss() - rss0,
    heapCommitted: heapMax - heap0,
    arrayBuffers: process.memoryUsage().arrayBuffers,
  };
}

/** About `bytes` of small live objects in old space (what a large application holds). */
function hold(bytes: number): unknown[] {
  const held: unknown[] = [];
  // 100 000 objects of about 100 bytes (object, string, array) per block
  for (let k = 0; k < bytes / 1e7; k++) {
    const a = new Array<unknown>(100_000);
    for (let i = 0; i < a.length; i++) a[i] = { i, k, s: `x${i}`, v: [i, k] };
    held.push(a);
  }
  return held;
}

/** The start times of the full collections (mark-compacts) from now on, as perf_hooks reports them (after the event loop turns). */
function fullCollections(): { readonly starts: number[]; readonly stop: () => void } {
  const starts: number[] = [];
  const major = (e: PerformanceEntry): boolean =>
    (e as { readonly detail?: { readonly kind?: number } | null }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR;
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) if (major(e)) starts.push(e.startTime);
  });
  observer.observe({ entryTypes: ["gc"] });
  return { starts, stop: () => observer.disconnect() };
}

async function linearity(heap: "fresh" | "loaded", sizes: readonly number[], rounds: number): Promise<LinearityProbe> {
  const held = heap === "loaded" ? hold(1.5e9) : [];
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const liveHeap = process.memoryUsage().heapUsed;
  // the sequence: a 10⁶-step gradient first, in the same process
  grad(chainW(1e6), X0);
  // full collections inside the timed calls: each costs seconds of CPU beside a large heap,
  // and one set off by a size's calls (columns made off the heap) lands in whichever is timed
  const full = fullCollections();
  const timed: [number, number][] = [];
  // per size and round: wall and CPU time (the process's, its GC threads included: on a machine
  // shared with other processes wall time also counts theirs, CPU time only this one's work)
  const wall = { loop: sizes.map((): number[] => []), scan: sizes.map((): number[] => []) };
  const cpu = { loop: sizes.map((): number[] => []), scan: sizes.map((): number[] => []) };
  // each measurement as many calls as make the largest size's steps, the time per call their mean: a
  // young-generation collection comes every 10⁵ steps or so and costs tens of ms beside a large live
  // heap, so a single call at N = 10⁵ takes none or one, and its time swings by ×3 (see the markdown)
  const largest = Math.max(...sizes);
  const time = (f: () => unknown, k: number, kind: "loop" | "scan", counted: boolean): void => {
    const calls = Math.max(1, Math.round(largest / sizes[k]));
    const c = process.cpuUsage();
    const t = performance.now();
    for (let j = 0; j < calls; j++) f();
    if (!counted) return;
    const end = performance.now();
    timed.push([t, end]);
    wall[kind][k].push((end - t) / calls);
    const d = process.cpuUsage(c);
    cpu[kind][k].push((d.user + d.system) / 1000 / calls);
  };
  // one round first, not counted: the first call after the 10⁶-step one runs 2–3 times slower (V8
  // optimizes the tracing loop again for the new call), which would make its size look superlinear
  for (let round = -1; round < rounds; round++) {
    // sizes up in even rounds, down in odd ones: a drift within a round favours no size
    const order = sizes.map((_n, k) => (round % 2 !== 1 ? k : sizes.length - 1 - k));
    for (const k of order) {
      time(() => grad(chainW(sizes[k]), X0), k, "loop", round >= 0);
      time(() => grad(chainScan(sizes[k]), X0), k, "scan", round >= 0);
    }
  }
  const rows = sizes.map((n, k) => ({
    n,
    loopMs: median(wall.loop[k]),
    scanMs: median(wall.scan[k]),
    loopCpuMs: median(cpu.loop[k]),
    scanCpuMs: median(cpu.scan[k]),
  }));
  const paired = (kind: "loop" | "scan", k: number, h: number): number => median(cpu[kind][k].map((t, r) => t / cpu[kind][h][r]));
  const doublings = sizes.flatMap((n, k) => {
    const h = sizes.indexOf(n / 2);
    return h < 0 ? [] : [{ n, loop: paired("loop", k, h), scan: paired("scan", k, h) }];
  });
  // perf_hooks reports collections once the event loop turns
  await new Promise((resolve) => setTimeout(resolve, 100));
  full.stop();
  const fullGcs = full.starts.filter((s) => timed.some(([t0, t1]) => s >= t0 && s <= t1)).length;
  void held.length;
  return { heap, liveHeap, rounds, rows, doublings, fullGcs };
}

const [kind, arg, sizes, calls] = process.argv.slice(2);
const linearitySizes = (sizes ?? "100000,200000,500000,1000000").split(",").map(Number);
const result = kind === "memory" ? memory(arg) : await linearity(arg as "fresh" | "loaded", linearitySizes, Number(calls ?? 5));
writeSync(1, JSON.stringify(result));
