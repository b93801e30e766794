import { grad } from "@wengert/core";
import { chainW, X0 } from "/work/wt/loaded/packages/bench/dist/workloads/w5-chain.js";
import { PerformanceObserver } from "node:perf_hooks";
const heap = process.argv[2] ?? "loaded";
function hold(bytes) { const held = []; for (let k = 0; k < bytes / 1e7; k++) { const a = new Array(100000); for (let i = 0; i < a.length; i++) a[i] = { i, k, s: `x${i}`, v: [i, k] }; held.push(a);} return held; }
const held = heap === "loaded" ? hold(1.5e9) : [];
globalThis.gc();
let events = [];
const KIND = {1:"scav",2:"minorMS",4:"markCompact",8:"incremental",16:"weakcb"};
new PerformanceObserver((l) => { for (const e of l.getEntries()) events.push([KIND[e.detail?.kind ?? e.kind] ?? e.detail?.kind, e.duration]); }).observe({ entryTypes: ["gc"] });
grad(chainW(1e6), X0);
const sizes = [100000, 200000, 500000, 1000000];
for (let round = 0; round < 4; round++) {
  for (const n of sizes) {
    const calls = Math.round(1e6 / n);
    events = [];
    const c = process.cpuUsage(); const t = performance.now();
    for (let j = 0; j < calls; j++) grad(chainW(n), X0);
    const d = process.cpuUsage(c); const w = performance.now() - t;
    await new Promise(r => setImmediate(r));
    const byKind = {}; for (const [k, ms] of events) { byKind[k] ??= [0, 0]; byKind[k][0]++; byKind[k][1] += ms; }
    console.log(round, n, "cpu/call", ((d.user + d.system) / 1000 / calls).toFixed(1), "wall/call", (w / calls).toFixed(1), JSON.stringify(Object.fromEntries(Object.entries(byKind).map(([k, [c, ms]]) => [k, `${c}x ${ms.toFixed(0)}ms`]))));
  }
}
void held.length;
