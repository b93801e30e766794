import { grad } from "@wengert/core";
import { columnStats, keptBytes, columnBound } from "/work/wt/loaded/packages/core/dist/trace/columns.js";
import { chainW, X0 } from "./dist/workloads/w5-chain.js";
import { chainScan } from "./dist/workloads/w5-scan.js";
const heap = process.argv[2] ?? "loaded";
function hold(bytes) { const held = []; for (let k = 0; k < bytes / 1e7; k++) { const a = new Array(100000); for (let i = 0; i < a.length; i++) a[i] = { i, k, s: `x${i}`, v: [i, k] }; held.push(a);} return held; }
const held = heap === "loaded" ? hold(1.5e9) : [];
globalThis.gc();
const seq = process.argv.slice(3).map(s => [s[0], Number(s.slice(1))]);
for (const [kind, n] of seq) {
  const made0 = columnStats.madeBytes;
  const c = process.cpuUsage();
  grad(kind === "s" ? chainScan(n) : chainW(n), X0);
  const d = process.cpuUsage(c);
  console.log(kind, n, ((d.user + d.system) / 1000).toFixed(1), "ms new", ((columnStats.madeBytes - made0) / 2**20).toFixed(1), "M kept", (keptBytes()/2**20).toFixed(0), "bound", (columnBound()/2**20).toFixed(0));
}
void held.length;
