import { grad } from "@wengert/core";
import { columnStats, keptBytes, columnBound } from "/work/wt/loaded/packages/core/dist/trace/columns.js";
import { chainW, X0 } from "./dist/workloads/w5-chain.js";
import { chainScan } from "./dist/workloads/w5-scan.js";
import { PerformanceObserver } from "node:perf_hooks";
const heap = process.argv[2] ?? "loaded";
const rounds = Number(process.argv[3] ?? 8);
function hold(bytes) { const held = []; for (let k = 0; k < bytes / 1e7; k++) { const a = new Array(100000); for (let i = 0; i < a.length; i++) a[i] = { i, k, s: `x${i}`, v: [i, k] }; held.push(a);} return held; }
const held = heap === "loaded" ? hold(1.5e9) : [];
globalThis.gc();
let events = [];
const KIND = {1:"s",2:"m",4:"MC",8:"inc",16:"w"};
new PerformanceObserver((l) => { for (const e of l.getEntries()) events.push(KIND[e.detail?.kind] ?? "?"); }).observe({ entryTypes: ["gc"] });
grad(chainW(1e6), X0);
const sizes = [100000, 200000, 500000, 1000000];
const cpu = sizes.map(() => []);
for (let round = -1; round < rounds; round++) {
  const order = sizes.map((_n, k) => (round % 2 !== 1 ? k : sizes.length - 1 - k));
  const line = [];
  for (const k of order) {
    const n = sizes[k], calls = Math.round(1e6 / n);
    events = [];
    const made0 = columnStats.madeBytes;
    const c = process.cpuUsage();
    for (let j = 0; j < calls; j++) grad(chainW(n), X0);
    const d = process.cpuUsage(c);
    for (let j = 0; j < calls; j++) grad(chainScan(n), X0);
    await new Promise(r => setImmediate(r));
    const t = (d.user + d.system) / 1000 / calls;
    if (round >= 0) cpu[k].push(t);
    const ev = {}; for (const e of events) ev[e] = (ev[e] ?? 0) + 1;
    line.push(`${n/1e5}:${t.toFixed(1)}ms new${((columnStats.madeBytes - made0) / 2**20).toFixed(0)}M ${Object.entries(ev).map(([a,b])=>b+a).join("")}`);
  }
  console.log(round, line.join(" | "), round >= 0 ? "ratio " + (cpu[1][cpu[1].length-1] / cpu[0][cpu[0].length-1]).toFixed(2) : "", "kept", (keptBytes()/2**20).toFixed(0), "bound", (columnBound()/2**20).toFixed(0));
}
const med = xs => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m-1] + s[m]) / 2; };
console.log(heap, "median ratio 2e5/1e5", med(cpu[1].map((t, r) => t / cpu[0][r])).toFixed(2), "1e6/5e5", med(cpu[3].map((t, r) => t / cpu[2][r])).toFixed(2), "per-step ns", sizes.map((n, k) => (med(cpu[k]) * 1e6 / n).toFixed(0)).join(" "));
void held.length;
