/**
 * @file `pnpm demo`: the paper's examples, two gradient-descent runs, a two-layer network trained on tensors,
 * and the programs of examples/*.wg.
 */
import { readdirSync, readFileSync } from "node:fs";
import { runProgram, showValue } from "../lang/index.js";
import ndarray from "ndarray";
import {
  add, derivativeOf, fd, grad, lt, eq, mul, rd, sin, square, sub, tanh, traceOf, valueAndGrad, primal, type Scalar,
  matmul, logSoftmax, mean as average, sum, type Tensor, type NdArray,
} from "../index.js";

const section = (title: string) => console.log(`\n== ${title} ${"=".repeat(Math.max(0, 66 - title.length))}`);
const show = (label: string, value: unknown) => console.log(`  ${label.padEnd(46)} ${JSON.stringify(value)}`);

section("Nested derivatives (Abadi & Plotkin, end of Sec. 3)");
// 1.rd_1(x:real. x × 1.rd_1(y:real. x + y))  ⇒ 1
show("1.rd_1(x. x * 1.rd_1(y. x + y))", rd((x: Scalar) => mul(x, rd((y: Scalar) => add(x, y), 1, 1) as Scalar), 1, 1));
// letrec f(x:real):real = 1.rd_1(y:real. x + y) in 1.rd_1(x:real. x + f(x))  ⇒ 1
const f = (x: Scalar) => rd((y: Scalar) => add(x, y), 1, 1) as Scalar;
show("letrec f(x) = 1.rd_1(y. x+y) in 1.rd_1(x. x+f(x))", rd((x: Scalar) => add(x, f(x)), 1, 1));
show("d/dx [x * (d/dy x*y)] at 3  (= 2x, no confusion)", grad((x: Scalar) => mul(x, grad((y: Scalar) => mul(x, y), 1) as Scalar), 3));

section("Control flow is decided on concrete values (Sec. 1)");
const relu = (x: Scalar) => (lt(x, 0) ? 0 : x);
show("relu'(-1)", grad(relu, -1));
show("relu'(2)", grad(relu, 2));
console.log("  relu'(0): the predicate is decided at a tie, so wengert says so:");
show("relu'(0)", grad(relu, 0));
show("(if x = 0 then 0 else x)' at 0, ties: 'ignore'", grad((x: Scalar) => (eq(x, 0) ? 0 : x), 0, { ties: "ignore" }));

section("Derivatives of any order, by nesting rd");
let d: (x: Scalar) => Scalar = sin;
for (let k = 1; k <= 4; k++) {
  const prev = d;
  d = (x: Scalar) => grad(prev, x) as Scalar;
  show(`sin^(${k})(0.5)`, d(0.5));
}
show("expected: cos, -sin, -cos, sin at 0.5", [Math.cos(0.5), -Math.sin(0.5), -Math.cos(0.5), Math.sin(0.5)]);
show("fd: J·v of (x,y) -> (xy, sin x) at (2,3), v=(1,0)", fd((p: [Scalar, Scalar]) => [mul(p[0], p[1]), sin(p[0])], [2, 3], [1, 0]));

section("The trace term and its derivative term (paper notation)");
const g = (p: [Scalar, Scalar]) => add(mul(p[0], p[1]), sin(p[0]));
console.log(String(traceOf(g, [2, 3])).replace(/^/gm, "  "));
console.log("  -- its derivative W.R_V(x. C):");
console.log(String(derivativeOf(g, [2, 3], 1)).replace(/^/gm, "  "));

section("Gradient descent: myTrainedModel of Sec. 2");
// myUntrainedModel((a, w)) = tanh(w·a); myLoss((b, p)) = (b − p)²; one data pair (a, b).
const [a, b, w0, rate, maxLoss] = [1.5, 0.6, -0.5, 0.5, 1e-6];
const untrained = (x: Scalar, w: Scalar) => tanh(mul(w, x));
const currentLoss = (w: Scalar) => square(sub(b, untrained(a, w)));
const gradLoss = (w: Scalar) => grad(currentLoss, w) as Scalar;
let w: Scalar = w0;
let steps = 0;
// let rec descend(w) = if currentLoss(w) < maxLoss then w else descend(w − rate·gradLoss(w))
while (!lt(currentLoss(w), maxLoss)) {
  if (steps % 10 === 0) show(`step ${steps}: w, loss`, [primal(w), primal(currentLoss(w))]);
  w = sub(w, mul(rate, gradLoss(w)));
  steps++;
}
show(`trained after ${steps} steps: w, loss`, [primal(w), primal(currentLoss(w))]);
show("myTrainedModel(1.5) (target 0.6)", untrained(1.5, w));

section("Gradient descent on a record of parameters");
const data = [[0, 1], [1, 3.1], [2, 4.9], [3, 7.2]];
type P = { w: Scalar; b: Scalar };
const loss = (p: P) => data.reduce<Scalar>((s, [x, y]) => add(s, square(sub(add(mul(p.w, x), p.b), y))), 0);
let p = { w: 0, b: 0 };
for (let i = 0; i <= 300; i++) {
  const [l, gp] = valueAndGrad(loss, p) as [number, { w: number; b: number }];
  if (i % 100 === 0) show(`step ${i}: loss, {w, b}`, [+l.toFixed(6), { w: +p.w.toFixed(4), b: +p.b.toFixed(4) }]);
  p = { w: p.w - 0.05 * gp.w, b: p.b - 0.05 * gp.b };
}
// the closed form, for comparison: w = Sxy / Sxx, b = ȳ − w x̄
const mean = (k: number) => data.reduce((s, r) => s + r[k], 0) / data.length;
const wls = data.reduce((s, [x, y]) => s + (x - mean(0)) * (y - mean(1)), 0) / data.reduce((s, [x]) => s + (x - mean(0)) ** 2, 0);
show("least squares in closed form: {w, b}", { w: +wls.toFixed(4), b: +(mean(1) - wls * mean(0)).toFixed(4) });

section("Tensors: a two-layer network trained on generated data");
// Two interleaved half-moons in the plane, labelled 0 and 1: not linearly separable.
let seed = 42;
const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
const n = 200;
const X: NdArray = ndarray(new Float64Array(n * 2), [n, 2]);
const labels = new Int32Array(n);
for (let i = 0; i < n; i++) {
  const c = i % 2;
  const t = Math.PI * random();
  X.set(i, 0, c === 0 ? Math.cos(t) : 1 - Math.cos(t) + 0.1 * (random() - 0.5));
  X.set(i, 1, c === 0 ? Math.sin(t) : 0.5 - Math.sin(t) + 0.1 * (random() - 0.5));
  labels[i] = c;
}
const init = (rows: number, cols: number, scale: number): NdArray =>
  ndarray(Float64Array.from({ length: rows * cols }, () => scale * (random() * 2 - 1)), [rows, cols]);
type Net = { W1: NdArray; b1: NdArray; W2: NdArray; b2: NdArray };
let net: Net = { W1: init(2, 16, 1), b1: init(1, 16, 0), W2: init(16, 2, 0.5), b2: init(1, 2, 0) };
// mean cross-entropy of softmax(tanh(X W1 + b1) W2 + b2) against the labels
const crossEntropy = (p: { [K in keyof Net]: Tensor }): Scalar => {
  const hidden = tanh(add(matmul(X, p.W1), p.b1));
  const logp = logSoftmax(add(matmul(hidden, p.W2), p.b2), 1);
  return mul(-1, average(sum(mul(logp, onehot), 1))); // −mean over examples of log p(label)
};
const onehot: NdArray = ndarray(new Float64Array(n * 2), [n, 2]);
for (let i = 0; i < n; i++) onehot.set(i, labels[i], 1);
const step = (p: Net, g: Net, rate: number): Net => {
  const move = (a: NdArray, d: NdArray) => ndarray(a.data.map((v, i) => v - rate * d.data[i]), a.shape);
  return { W1: move(p.W1, g.W1), b1: move(p.b1, g.b1), W2: move(p.W2, g.W2), b2: move(p.b2, g.b2) };
};
for (let i = 0; i <= 1500; i++) {
  const [l, gnet] = valueAndGrad(crossEntropy, net) as [number, Net];
  if (i % 300 === 0) show(`step ${i}: cross-entropy`, +l.toFixed(5));
  net = step(net, gnet, 0.5);
}
const scores = add(matmul(tanh(add(matmul(X, net.W1), net.b1)), net.W2), net.b2) as NdArray;
let correct = 0;
for (let i = 0; i < n; i++) if ((scores.get(i, 1) > scores.get(i, 0) ? 1 : 0) === labels[i]) correct++;
show("training accuracy", `${correct}/${n}`);

section("The paper's language: examples/*.wg");
const examples = new URL("../../../../examples/", import.meta.url);
for (const name of readdirSync(examples).filter((f) => f.endsWith(".wg")).sort()) {
  const source = readFileSync(new URL(name, examples), "utf8");
  const title = source.split("\n")[0].replace(/^#\s*/, "");
  console.log(`  ${name}: ${title}`);
  const { value, type } = runProgram(source, { file: `examples/${name}`, ties: "ignore" });
  console.log(`    ⇒ ${showValue(value)} : ${type}`);
}
console.log("  (run one with: npx --yes pnpm@10.34.8 wengert run examples/relu.wg --trace)");
