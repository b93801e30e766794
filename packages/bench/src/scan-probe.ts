/**
 * @file One measurement of the scan section (scan-bench.ts) in a process of its own, its
 * result as JSON on stdout: `node scan-probe.js memory <row>` (peak memory of a row's
 * calls, against the process before them) or `node scan-probe.js linearity <fresh|loaded>`
 * (the chain's gradient at growing N, in a fresh process or one holding a large heap).
 */
import { readFileSync, writeFileSync, writeSync } from "node:fs";
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

function linearity(heap: "fresh" | "loaded", sizes: readonly number[], calls: number): LinearityProbe {
  const held = heap === "loaded" ? hold(1.5e9) : [];
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const liveHeap = process.memoryUsage().heapUsed;
  // the sequence: a 10⁶-step gradient first, in the same process
  grad(chainW(1e6), X0);
  // the sizes round-robin, `calls` rounds: a machine whose load drifts slows every size alike
  const loop: number[][] = sizes.map(() => []);
  const scanned: number[][] = sizes.map(() => []);
  const time = (f: () => unknown): number => {
    const t = performance.now();
    f();
    return performance.now() - t;
  };
  for (let round = 0; round < calls; round++) {
    sizes.forEach((n, k) => {
      loop[k].push(time(() => grad(chainW(n), X0)));
      scanned[k].push(time(() => grad(chainScan(n), X0)));
    });
  }
  const rows = sizes.map((n, k) => ({ n, loopMs: median(loop[k]), scanMs: median(scanned[k]) }));
  void held.length;
  return { heap, liveHeap, rows };
}

const [kind, arg, sizes, calls] = process.argv.slice(2);
const result =
  kind === "memory" ? memory(arg) : linearity(arg as "fresh" | "loaded", (sizes ?? "100000,200000,500000,1000000").split(",").map(Number), Number(calls ?? 5));
writeSync(1, JSON.stringify(result));
