/**
 * @file The demo's two-layer network on two half-moons (packages/core/src/demo/main.ts,
 * "Tensors: a two-layer network trained on generated data"), trained with @wengert/optim.
 * The data, the network and the loss are the demo's, line for line; the training is one
 * call to `fit` with `sgd(0.5)`, where the demo writes the update of each parameter and
 * the loop by hand (nine lines there, three here; the numbers are the same to the bit).
 *
 * Run: npx tsc -b packages/optim/bench && node packages/optim/bench/dist/examples/half-moons.js
 */
import ndarray from "ndarray";
import { pathToFileURL } from "node:url";
import { add, logSoftmax, matmul, mean, mul, sum, tanh, type NdArray, type Scalar, type Tensor } from "@wengert/core";
import { fit, sgd } from "@wengert/optim";

// Two interleaved half-moons in the plane, labelled 0 and 1: not linearly separable.
let seed = 42;
const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
const n = 200;
export const X: NdArray = ndarray(new Float64Array(n * 2), [n, 2]);
export const labels = new Int32Array(n);
for (let i = 0; i < n; i++) {
  const c = i % 2;
  const t = Math.PI * random();
  X.set(i, 0, c === 0 ? Math.cos(t) : 1 - Math.cos(t) + 0.1 * (random() - 0.5));
  X.set(i, 1, c === 0 ? Math.sin(t) : 0.5 - Math.sin(t) + 0.1 * (random() - 0.5));
  labels[i] = c;
}
const init = (rows: number, cols: number, scale: number): NdArray => ndarray(Float64Array.from({ length: rows * cols }, () => scale * (random() * 2 - 1)), [rows, cols]);
export type Net = { W1: NdArray; b1: NdArray; W2: NdArray; b2: NdArray };
export const initialNet: Net = { W1: init(2, 16, 1), b1: init(1, 16, 0), W2: init(16, 2, 0.5), b2: init(1, 2, 0) };
const onehot: NdArray = ndarray(new Float64Array(n * 2), [n, 2]);
for (let i = 0; i < n; i++) onehot.set(i, labels[i], 1);
// mean cross-entropy of softmax(tanh(X W1 + b1) W2 + b2) against the labels
export const crossEntropy = (p: { [K in keyof Net]: Tensor }): Scalar => {
  const hidden = tanh(add(matmul(X, p.W1), p.b1));
  const logp = logSoftmax(add(matmul(hidden, p.W2), p.b2), 1);
  return mul(-1, mean(sum(mul(logp, onehot), 1))); // −mean over examples of log p(label)
};

/** Correctly classified examples of the training set. */
export function correct(net: Net): number {
  const scores = add(matmul(tanh(add(matmul(X, net.W1), net.b1)), net.W2), net.b2) as NdArray;
  let count = 0;
  for (let i = 0; i < n; i++) if ((scores.get(i, 1) > scores.get(i, 0) ? 1 : 0) === labels[i]) count++;
  return count;
}

/** Trains the demo's network as the demo does (1500 steps of gradient descent at rate 0.5), reporting every 300 steps. */
export function train(options: { steps?: number; report?: (step: number, loss: number) => void } = {}) {
  const { steps = 1500, report } = options;
  const trained = fit(crossEntropy, initialNet, sgd(0.5), {
    steps, every: 300, onProgress: ({ step, loss }) => report?.(step, loss),
  });
  return { net: trained.params, losses: trained.losses, correct: correct(trained.params) };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { correct: right } = train({ report: (step, loss) => console.log(`step ${step}: cross-entropy ${+loss.toFixed(5)}`) });
  console.log(`training accuracy ${right}/${n}`);
}
