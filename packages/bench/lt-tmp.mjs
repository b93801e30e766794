import { modules } from "./dist/gradbench/modules/index.js";
import * as inp from "./dist/gradbench/inputs.js";
import { prepareLstm } from "./dist/gradbench/modules/lstm.js";
import { tanh as TANH } from "../ops/dist/tanh.js";
const SIG = (x) => (x >= 0 ? 1 / (1 + Math.exp(-x)) : Math.exp(x) / (1 + Math.exp(x)));
const [l, c] = process.argv.slice(2).map(Number);
const s = prepareLstm(inp.lstmInput(l, c, 14));
function unitPlain(s, p, j) {
  const { l, c } = s;
  const hidden = s.hidden.map((h) => h[j]); const cell = s.cell.map((h) => h[j]);
  const out = new Array(c - 1);
  for (let t = 0; t < c - 1; t++) {
    let x = s.sequence[t][j] * p[8 * l];
    for (let i = 0; i < l; i++) {
      const o = 8 * i;
      const forget = SIG(x * p[o] + p[o + 4]);
      const ingate = SIG(hidden[i] * p[o + 1] + p[o + 5]);
      const outgate = SIG(x * p[o + 2] + p[o + 6]);
      const change = TANH(hidden[i] * p[o + 3] + p[o + 7]);
      cell[i] = cell[i] * forget + ingate * change;
      hidden[i] = outgate * TANH(cell[i]);
      x = hidden[i];
    }
    out[t] = x * p[8 * l + 1] + p[8 * l + 2];
  }
  return out;
}
const p = new Float64Array(8 * l + 3).fill(0.1);
const f = modules.lstm.objective; const q = f.prepare(inp.lstmInput(l, c, 14));
const runs = { lib: () => f.run(q), plain: () => { for (let j = 0; j < 14; j++) unitPlain(s, p, j); } };
for (let rep = 0; rep < 2; rep++) for (const [k, g] of Object.entries(runs)) { for (let i = 0; i < 5; i++) g();
const c0 = process.cpuUsage(); for (let i = 0; i < 40; i++) g(); const c1 = process.cpuUsage(c0); console.log(k, ((c1.user + c1.system) / 40).toFixed(0), "µs"); }
