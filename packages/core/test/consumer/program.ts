/**
 * A program a user of @wengert/core writes: strict TypeScript, no casts, no type
 * arguments, importing only the package, ndarray and node:assert. Every derivative is
 * checked against its closed form; it exits with status 0 when all hold. Typechecked and
 * run by test/consumer.test.ts against the workspace's build, and by the packaging test
 * against the packed tarballs.
 */
import assert from "node:assert/strict";
import ndarray from "ndarray";
import {
  ShapeError, add, compileGrad, cos, div, grad, hessian, jacobian, jvp, matmul, mean, mul, rd, runProgram, sin, square, sub, tanh, taylor, vjp,
  type Scalar, type Tensor,
} from "@wengert/core";

const close = (got: number, want: number, rtol = 1e-12): void => {
  assert.ok(Math.abs(got - want) <= rtol * Math.max(1, Math.abs(want)), `${got} should be ${want}`);
};

// Gradient descent on a number: the gradient of a number is a number.
const bowl = (x: Scalar) => square(sub(x, 3));
let x = 0;
for (let k = 0; k < 50; k++) x -= 0.1 * grad(bowl, x);
// x_{k+1} = x_k − 0.2 (x_k − 3): x_k = 3 (1 − 0.8^k)
close(x, 3 * (1 - 0.8 ** 50));

// Rosenbrock's function of an array: its gradient is an array of numbers.
const rosen = (p: Scalar[]) => {
  let s: Scalar = 0;
  for (let i = 0; i + 1 < p.length; i++) s = add(s, add(square(sub(1, p[i])), mul(100, square(sub(p[i + 1], square(p[i]))))));
  return s;
};
const [gx, gy] = grad(rosen, [1.5, 2]);
close(gx, -2 * (1 - 1.5) - 400 * 1.5 * (2 - 1.5 ** 2));
close(gy, 200 * (2 - 1.5 ** 2));
assert.deepEqual(hessian(rosen, [1, 1]), [[802, -400], [-400, 200]]);

// The paper's nested example, 1.rd_1(x. x × 1.rd_1(y. x + y)) = 1, and a second derivative.
assert.equal(rd((x) => mul(x, rd((y) => add(x, y), 1, 1)), 1, 1), 1);
close(grad((x) => grad(sin, x), 0.5), -Math.sin(0.5));

// Forward and reverse products of f(a, b) = (a b, sin a), whose Jacobian is [[b, a], [cos a, 0]].
const pair = ([a, b]: Scalar[]) => [mul(a, b), sin(a)];
const [value, tangent] = jvp(pair, [2, 3], [1, 0]);
assert.deepEqual(value, [6, Math.sin(2)]);
assert.deepEqual(tangent, [3, Math.cos(2)]);
const [, pullback] = vjp(pair, [2, 3]);
assert.deepEqual(pullback([0, 1]), [Math.cos(2), 0]);
const J = jacobian(pair, [2, 3]);
assert.deepEqual(J, [[3, 2], [Math.cos(2), 0]]);

// A Jacobian of records: polar to cartesian coordinates.
const polar = ({ r, t }: { r: Scalar; t: Scalar }) => ({ x: mul(r, cos(t)), y: mul(r, sin(t)) });
const P = jacobian(polar, { r: 2, t: 0.5 });
close(P.x.r, Math.cos(0.5));
close(P.x.t, -2 * Math.sin(0.5));
close(P.y.r, Math.sin(0.5));
close(P.y.t, 2 * Math.cos(0.5));

// Taylor coefficients of 1/(1 − x): the k-th derivative is k!/(1 − x)^(k+1).
assert.deepEqual(taylor((x) => div(1, sub(1, x)), 0.5, 1, 4), [2, 4, 16, 96, 768]);

// A two-layer network on ndarrays: the loss gradient against backpropagation written out.
const n = 4;
const X = ndarray(Float64Array.from({ length: n * 3 }, (_, i) => Math.sin(i + 1)), [n, 3]);
const y = ndarray(Float64Array.from({ length: n }, (_, i) => Math.cos(i)), [n, 1]);
const params = {
  W1: ndarray(Float64Array.from({ length: 15 }, (_, i) => 0.3 * Math.cos(2 * i)), [3, 5]),
  b1: Float64Array.from({ length: 5 }, (_, i) => 0.1 * i),
  W2: ndarray(Float64Array.from({ length: 5 }, (_, i) => 0.5 - 0.2 * i), [5, 1]),
};
const loss = (p: { W1: Tensor; b1: Tensor; W2: Tensor }) => mean(square(sub(matmul(tanh(add(matmul(X, p.W1), p.b1)), p.W2), y)));
const g = grad(loss, params);
{
  // Z = X W1 + b1, H = tanh Z, E = H W2 − y, L = Σ E² / n
  const H = Array.from({ length: n }, (_, b) => Array.from({ length: 5 }, (_, j) => {
    let z = params.b1[j];
    for (let i = 0; i < 3; i++) z += X.get(b, i) * params.W1.get(i, j);
    return Math.tanh(z);
  }));
  const dE = H.map((h, b) => (2 / n) * (h.reduce((s, hj, j) => s + hj * params.W2.get(j, 0), 0) - y.get(b, 0)));
  const dZ = H.map((h, b) => h.map((hj, j) => dE[b] * params.W2.get(j, 0) * (1 - hj * hj)));
  for (let j = 0; j < 5; j++) {
    close(g.W2.get(j, 0), H.reduce((s, h, b) => s + h[j] * dE[b], 0));
    close(g.b1[j], dZ.reduce((s, d) => s + d[j], 0));
    for (let i = 0; i < 3; i++) close(g.W1.get(i, j), dZ.reduce((s, d, b) => s + X.get(b, i) * d[j], 0));
  }
}

// Training it with compileGrad: the same gradients, to the bit, and a loss that falls at every step.
const step = compileGrad(loss);
const [first, d0] = step.valueAndGrad(params);
assert.deepEqual(d0, g);
let last = Infinity;
for (let k = 0; k < 100; k++) {
  const [l, d] = step.valueAndGrad(params);
  assert.ok(l < last, `step ${k}: the loss rose from ${last} to ${l}`);
  last = l;
  for (let i = 0; i < 15; i++) params.W1.data[i] -= 0.1 * d.W1.data[i];
  for (let j = 0; j < 5; j++) {
    params.b1[j] -= 0.1 * d.b1[j];
    params.W2.data[j] -= 0.1 * d.W2.data[j];
  }
}
assert.ok(last < first, `the loss fell from ${first} to ${last}`);
assert.equal(step.stats.traces, 1);

// compileGrad of a function of number[]: called with number[], it returns number[].
const rosenGrad = compileGrad(rosen);
const p = [-1.2, 1, 0.5];
for (let k = 0; k < 3; k++) {
  const d = rosenGrad(p);
  assert.deepEqual(d, grad(rosen, p));
  for (let i = 0; i < p.length; i++) p[i] -= 1e-4 * d[i];
}

// The paper's language, from TypeScript.
const { value: program } = runProgram("grad_2(x: real. x * sin(x))");
assert.ok(typeof program === "number");
close(program, Math.sin(2) + 2 * Math.cos(2));

// An error names the line of the user's call (consumer.test.ts reads the marker below).
try {
  matmul(ndarray(new Float64Array(12), [4, 3]), ndarray(new Float64Array(8), [4, 2])); // the ShapeError's line
  assert.fail("matmul of 4×3 by 4×2 did not throw");
} catch (e) {
  if (!(e instanceof ShapeError)) throw e;
  console.log(`ShapeError: ${e.message}`);
}

console.log("consumer program: all checks passed");
