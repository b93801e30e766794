/**
 * @file A user's program against the installed @wengert/core (consumer.test.ts): each
 * kind of derivative, used as a user writes it, its numbers checked against closed forms
 * or hand-written gradients. It throws on the first wrong number; consumer.test.ts
 * typechecks it with tsc --strict and runs it as an ES module and through require.
 */
import ndarray from "ndarray";
import {
  add, compileGrad, grad, hessian, jacobian, jvp, matmul, mean, mul, rd, runProgram, sin, square, sub, tanh, taylor, vjp,
  ShapeError, type NdArray, type Scalar, type Tensor,
} from "@wengert/core";

function near(what: string, got: number, want: number): void {
  if (!(Math.abs(got - want) <= 1e-12 * Math.max(1, Math.abs(want)))) throw new Error(`${what}: got ${got}, expected ${want}`);
}

function nearAll(what: string, got: readonly number[], want: readonly number[]): void {
  if (got.length !== want.length) throw new Error(`${what}: got ${got.length} numbers, expected ${want.length}`);
  got.forEach((g, i) => near(`${what}[${i}]`, g, want[i]));
}

// grad of a function of a number
const f = (x: Scalar) => mul(x, sin(x));
near("grad", grad(f, 2) as number, Math.sin(2) + 2 * Math.cos(2)); // cast until the types branch lands
near("grad of grad", grad((x) => grad(f, x), 2) as number, 2 * Math.cos(2) - 2 * Math.sin(2)); // cast until the types branch lands

// the paper's nested example (end of Sec. 3): 1.rd_1(x. x × 1.rd_1(y. x + y)) = 1
near("nested rd", rd((x) => mul(x, rd((y) => add(x, y), 1, 1)), 1, 1) as number, 1); // cast until the types branch lands

// forward mode, pullbacks, Jacobians and Hessians of g(a, b) = (a b, sin a)
const g = (p: [Scalar, Scalar]) => [mul(p[0], p[1]), sin(p[0])];
const [y, dy] = jvp(g, [2, 3], [1, 0]) as [number[], number[]]; // cast until the types branch lands
nearAll("jvp value", y, [6, Math.sin(2)]);
nearAll("jvp tangent", dy, [3, Math.cos(2)]);
const [value, pullback] = vjp(g, [2, 3]);
nearAll("vjp value", value as number[], [6, Math.sin(2)]); // cast until the types branch lands
nearAll("vjp pullback", pullback([1, 0]) as number[], [3, 2]); // cast until the types branch lands
const J = jacobian(g, [2, 3]) as number[][]; // cast until the types branch lands
nearAll("jacobian row 0", J[0], [3, 2]);
nearAll("jacobian row 1", J[1], [Math.cos(2), 0]);
const H = hessian((p) => mul(square(p[0]), sin(p[1])), [2, 3]) as number[][]; // cast until the types branch lands
nearAll("hessian row 0", H[0], [2 * Math.sin(3), 4 * Math.cos(3)]);
nearAll("hessian row 1", H[1], [4 * Math.cos(3), -4 * Math.sin(3)]);

// Taylor mode: sin and its first three derivatives at 0.5
const series = taylor((x) => sin(x), 0.5, 1, 3) as number[]; // cast until the types branch lands
nearAll("taylor", series, [Math.sin(0.5), Math.cos(0.5), -Math.sin(0.5), -Math.cos(0.5)]);

// gradient descent on (x − 3)²: x ← 0.8 x + 0.6, so x_k = 3 − 3 · 0.8^k
let x = 0;
for (let k = 0; k < 50; k++) x -= 0.1 * (grad((x) => square(sub(x, 3)), x) as number); // cast until the types branch lands
near("gradient descent", x, 3 - 3 * 0.8 ** 50);

// tensors: the gradient of a two-layer network's squared error, against backpropagation by hand
const [n, d, h, k] = [4, 3, 5, 2];
const fill = (rows: number, cols: number, at: (i: number, j: number) => number): NdArray =>
  ndarray(Float64Array.from({ length: rows * cols }, (_, e) => at(Math.floor(e / cols), e % cols)), [rows, cols]);
const X = fill(n, d, (i, j) => Math.sin(i + 2 * j));
const Y = fill(n, k, (i, j) => Math.cos(3 * i - j));
const params = { W1: fill(d, h, (i, j) => 0.3 * Math.cos(i * h + j)), W2: fill(h, k, (i, j) => 0.2 * Math.sin(i - j)) };
const loss = (p: { W1: Tensor; W2: Tensor }) => mean(square(sub(matmul(tanh(matmul(X, p.W1)), p.W2), Y)));
const grads = grad(loss, params) as { W1: NdArray; W2: NdArray }; // cast until the types branch lands
const byHand = mlpGradient(X, Y, params.W1, params.W2);
nearAll("dloss/dW1", Array.from(grads.W1.data), byHand.W1);
nearAll("dloss/dW2", Array.from(grads.W2.data), byHand.W2);

// compileGrad: a gradient for repeated calls (replayed, then compiled JavaScript)
const rosenbrock = (x: Scalar[]) => {
  let s: Scalar = 0;
  for (let i = 0; i + 1 < x.length; i++) s = add(s, add(mul(100, square(sub(x[i + 1], square(x[i])))), square(sub(1, x[i]))));
  return s;
};
const gradRosenbrock = compileGrad(rosenbrock);
for (const at of [[1.5, 2, -1, 0.5], [0.5, -0.25, 2, 1], [-1, 1, 1, 3], [2, 0, 0, 2]]) {
  nearAll(`compileGrad at ${at}`, gradRosenbrock(at) as number[], rosenbrockGradient(at)); // cast until the types branch lands
}
if (gradRosenbrock.stats.compiled === 0) throw new Error(`compileGrad never ran compiled code: ${JSON.stringify(gradRosenbrock.stats)}`);

// the paper's language
const run = runProgram("1.rd_1(x: real. x * 1.rd_1(y: real. x + y))");
if (typeof run.value !== "number" || run.type !== "real") throw new Error(`runProgram: got ${String(run.value)} : ${run.type}`);
near("runProgram", run.value, 1);

// an error names the line of the user's call (consumer.test.ts reads the marker below)
try {
  matmul(X, Y); // the ShapeError's line
  throw new Error("matmul of 4×3 by 4×2 did not throw");
} catch (e) {
  if (!(e instanceof ShapeError)) throw e;
  console.log(`ShapeError: ${e.message}`);
}
console.log("consumer program: all checks passed");

/** ∇ of mean((tanh(X W1) W2 − Y)²) by backpropagation written out. */
function mlpGradient(X: NdArray, Y: NdArray, W1: NdArray, W2: NdArray): { W1: number[]; W2: number[] } {
  const H = fill(n, h, (i, j) => Math.tanh(Array.from({ length: d }, (_, l) => X.get(i, l) * W1.get(l, j)).reduce((s, v) => s + v, 0)));
  const dP = fill(n, k, (i, j) => {
    const p = Array.from({ length: h }, (_, l) => H.get(i, l) * W2.get(l, j)).reduce((s, v) => s + v, 0);
    return (2 * (p - Y.get(i, j))) / (n * k);
  });
  const dW2 = fill(h, k, (i, j) => Array.from({ length: n }, (_, r) => H.get(r, i) * dP.get(r, j)).reduce((s, v) => s + v, 0));
  const dZ = fill(n, h, (i, j) => {
    const dH = Array.from({ length: k }, (_, l) => dP.get(i, l) * W2.get(j, l)).reduce((s, v) => s + v, 0);
    return dH * (1 - H.get(i, j) ** 2);
  });
  const dW1 = fill(d, h, (i, j) => Array.from({ length: n }, (_, r) => X.get(r, i) * dZ.get(r, j)).reduce((s, v) => s + v, 0));
  return { W1: Array.from(dW1.data), W2: Array.from(dW2.data) };
}

/** ∇ of Σ 100 (x_{i+1} − x_i²)² + (1 − x_i)², written out. */
function rosenbrockGradient(x: readonly number[]): number[] {
  const g = x.map(() => 0);
  for (let i = 0; i + 1 < x.length; i++) {
    g[i] += -400 * x[i] * (x[i + 1] - x[i] * x[i]) - 2 * (1 - x[i]);
    g[i + 1] += 200 * (x[i + 1] - x[i] * x[i]);
  }
  return g;
}
