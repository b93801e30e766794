import { kernels, release, binaryOps } from "@wengert/ops";
const MUL = binaryOps.mul.forward, ADD = binaryOps.add.forward;
const n = +process.argv[2];
const a = new Float64Array(n).fill(1.0001), b = new Float64Array(n).fill(0.9999);
const R = 2e7 / n;
const cases = {
  zipww: () => { const r = kernels.zip(a, [n], b, [n], [n], MUL); release(r); },
  zipws: () => { const r = kernels.zip(a, [n], 0.5, [], [n], MUL); release(r); },
  zipsw: () => { const r = kernels.zip(0.5, [], a, [n], [n], ADD); release(r); },
};
for (let rep = 0; rep < 2; rep++) for (const [k, f] of Object.entries(cases)) {
  for (let i = 0; i < R / 10; i++) f();
  const c0 = process.cpuUsage(); for (let i = 0; i < R; i++) f(); const c = process.cpuUsage(c0);
  console.log(k, n, ((c.user + c.system) * 1000 / R).toFixed(0), "ns/call");
}
