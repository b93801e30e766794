import { grad, add, mul, sin, scan } from "@wengert/core";
import * as cols from "/work/wt/loaded/packages/core/dist/trace/columns.js";
const chain = (n) => (x) => { let y = x; for (let i = 0; i < n; i++) y = add(mul(0.9, y), mul(0.1, sin(y))); return y; };
const scanned = (n) => (x) => scan((y) => [add(mul(0.9, y), mul(0.1, sin(y)))], x, n)[0];
const lengths = [50000, 100000, 250000, 500000];
const round = (order, log) => { for (const n of order) { let m = cols.columnStats.madeBytes; grad(chain(n), 0.3); const a = cols.columnStats.madeBytes - m; m = cols.columnStats.madeBytes; grad(scanned(n), 0.3); const b = cols.columnStats.madeBytes - m; if (log) console.log(n, a, b, cols.keptBytes() >> 20, cols.columnBound() >> 20); } };
grad(chain(600000), 0.3);
round(lengths); round([...lengths].reverse());
for (let r = 0; r < 2; r++) { round(lengths, true); round([...lengths].reverse(), true); }
