/**
 * @file W2 mlp: tensor heavy.
 *
 * B=64, D=64, H=128, K=10; X[b][d] = cos(b·D + d), label[b] = b mod K;
 * W1[i][j] = 0.1 sin(i·H + j), b1[j] = 0.01 j, W2[i][j] = 0.1 cos(i·K + j), b2 = 0.
 * h = tanh(X W1 + b1); z = h W2 + b2; loss = mean_b [logsumexp_k z[b][k] − z[b][label b]].
 * Gradient w.r.t. (W1, b1, W2, b2), flattened in that order (row-major).
 */
import type { Array as JaxArray } from "@jax-js/jax";
import ndarray from "ndarray";
import { add, compileGrad, grad, logsumexp, matmul, mean, mul, sub, sum, tanh, type NdArray, type Scalar, type Tensor as WTensor } from "@wengert/core";
import type { Tensor } from "@tensorflow/tfjs-core";
import type { Builder, Jax, Tf, Vec, Workload } from "../types.js";

export const B = 64;
export const D = 64;
export const H = 128;
export const K = 10;

export interface MlpParams {
  readonly W1: Float64Array; // D×H
  readonly b1: Float64Array; // H
  readonly W2: Float64Array; // H×K
  readonly b2: Float64Array; // K
}

export interface MlpData {
  readonly X: Float64Array; // B×D
  readonly label: Int32Array; // B
}

export function mlpData(): MlpData {
  const X = new Float64Array(B * D);
  for (let b = 0; b < B; b++) for (let d = 0; d < D; d++) X[b * D + d] = Math.cos(b * D + d);
  const label = new Int32Array(B);
  for (let b = 0; b < B; b++) label[b] = b % K;
  return { X, label };
}

export function mlpParams(): MlpParams {
  const W1 = new Float64Array(D * H);
  for (let i = 0; i < D; i++) for (let j = 0; j < H; j++) W1[i * H + j] = 0.1 * Math.sin(i * H + j);
  const b1 = new Float64Array(H);
  for (let j = 0; j < H; j++) b1[j] = 0.01 * j;
  const W2 = new Float64Array(H * K);
  for (let i = 0; i < H; i++) for (let j = 0; j < K; j++) W2[i * K + j] = 0.1 * Math.cos(i * K + j);
  const b2 = new Float64Array(K);
  return { W1, b1, W2, b2 };
}

export const mlpGradLength = D * H + H + H * K + K;

/** h = tanh(X W1 + b1) (B×H) into `h`; z = h W2 + b2 (B×K) into `z`. */
function forward(p: MlpParams, data: MlpData, h: Float64Array, z: Float64Array): void {
  const { X } = data;
  for (let b = 0; b < B; b++) {
    for (let j = 0; j < H; j++) {
      let s = p.b1[j];
      for (let d = 0; d < D; d++) s += X[b * D + d] * p.W1[d * H + j];
      h[b * H + j] = Math.tanh(s);
    }
    for (let k = 0; k < K; k++) {
      let s = p.b2[k];
      for (let j = 0; j < H; j++) s += h[b * H + j] * p.W2[j * K + k];
      z[b * K + k] = s;
    }
  }
}

/** logsumexp of z[b][·] − z[b][label]. */
function rowLoss(z: Float64Array, b: number, label: number): number {
  let m = -Infinity;
  for (let k = 0; k < K; k++) m = Math.max(m, z[b * K + k]);
  let s = 0;
  for (let k = 0; k < K; k++) s += Math.exp(z[b * K + k] - m);
  return m + Math.log(s) - z[b * K + label];
}

export function mlpLoss(p: MlpParams, data: MlpData, h = new Float64Array(B * H), z = new Float64Array(B * K)): number {
  forward(p, data, h, z);
  let loss = 0;
  for (let b = 0; b < B; b++) loss += rowLoss(z, b, data.label[b]);
  return loss / B;
}

/**
 * Hand-written gradient, flattened [W1, b1, W2, b2]:
 * dz = (softmax z − onehot)/B; dW2 = hᵀ dz; db2 = Σ_b dz; dh = dz W2ᵀ;
 * dA = dh ⊙ (1 − h²); dW1 = Xᵀ dA; db1 = Σ_b dA.
 */
export function mlpGrad(p: MlpParams, data: MlpData, out: Float64Array = new Float64Array(mlpGradLength)): Float64Array {
  const h = new Float64Array(B * H);
  const z = new Float64Array(B * K);
  forward(p, data, h, z);
  out.fill(0);
  const oW1 = 0;
  const ob1 = D * H;
  const oW2 = ob1 + H;
  const ob2 = oW2 + H * K;
  const dz = new Float64Array(K);
  const dA = new Float64Array(H);
  const { X, label } = data;
  for (let b = 0; b < B; b++) {
    let m = -Infinity;
    for (let k = 0; k < K; k++) m = Math.max(m, z[b * K + k]);
    let s = 0;
    for (let k = 0; k < K; k++) s += Math.exp(z[b * K + k] - m);
    for (let k = 0; k < K; k++) dz[k] = (Math.exp(z[b * K + k] - m) / s - (k === label[b] ? 1 : 0)) / B;
    for (let k = 0; k < K; k++) out[ob2 + k] += dz[k];
    for (let j = 0; j < H; j++) {
      const hj = h[b * H + j];
      let dh = 0;
      for (let k = 0; k < K; k++) {
        out[oW2 + j * K + k] += hj * dz[k];
        dh += dz[k] * p.W2[j * K + k];
      }
      dA[j] = dh * (1 - hj * hj);
      out[ob1 + j] += dA[j];
    }
    for (let d = 0; d < D; d++) {
      const xd = X[b * D + d];
      const row = oW1 + d * H;
      for (let j = 0; j < H; j++) out[row + j] += xd * dA[j];
    }
  }
  return out;
}

type W2Params = { W1: NdArray; b1: Float64Array; W2: NdArray; b2: Float64Array };

/** wengert's W2 loss, written with tensor operations in float64, and the point it is differentiated at. */
export function wengertW2Loss(): { loss: (q: { W1: WTensor; b1: WTensor; W2: WTensor; b2: WTensor }) => Scalar; params: W2Params } {
  const data = mlpData();
  const p = mlpParams();
  const X = ndarray(data.X, [B, D]);
  const onehot = ndarray(Float64Array.from({ length: B * K }, (_, i) => (i % K === data.label[Math.floor(i / K)] ? 1 : 0)), [B, K]);
  const params: W2Params = { W1: ndarray(p.W1, [D, H]), b1: p.b1, W2: ndarray(p.W2, [H, K]), b2: p.b2 };
  const loss = (q: { W1: WTensor; b1: WTensor; W2: WTensor; b2: WTensor }) => {
    const h = tanh(add(matmul(X, q.W1), q.b1));
    const z = add(matmul(h, q.W2), q.b2);
    return mean(sub(logsumexp(z, 1), sum(mul(z, onehot), 1)));
  };
  return { loss, params };
}

/** wengert's W2 gradient, flattened: by `grad`, or by `compileGrad` (the trace and its derivative replayed). */
export const wengertW2 = (compiled = false): (() => Vec) => {
  const { loss, params } = wengertW2Loss();
  const g = compiled ? compileGrad(loss) : (q: W2Params) => grad(loss, q);
  return () => {
    const r = g(params) as W2Params;
    return concat([r.W1.data, r.b1, r.W2.data, r.b2]);
  };
};

const concat = (parts: readonly ArrayLike<number>[]): Float64Array => {
  const out = new Float64Array(mlpGradLength);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
};

export const tfjsMlp: Builder<Tf> = (tf) => {
  const data = mlpData();
  const p = mlpParams();
  const X = tf.tensor2d(new Float32Array(data.X), [B, D]);
  const onehot = tf.oneHot(tf.tensor1d(data.label, "int32"), K);
  const loss = (W1: Tensor, b1: Tensor, W2: Tensor, b2: Tensor) => {
    const h = tf.tanh(tf.add(tf.matMul(X, W1), b1));
    const z = tf.add(tf.matMul(h, W2), b2);
    return tf.mean(tf.sub(tf.logSumExp(z, 1), tf.sum(tf.mul(z, onehot), 1)));
  };
  const g = tf.grads(loss as (...args: Tensor[]) => Tensor);
  const args = [
    tf.tensor2d(new Float32Array(p.W1), [D, H]),
    tf.tensor1d(new Float32Array(p.b1)),
    tf.tensor2d(new Float32Array(p.W2), [H, K]),
    tf.tensor1d(new Float32Array(p.b2)),
  ];
  return () => {
    const rs = tf.tidy(() => g(args));
    const out = concat(rs.map((r) => r.dataSync()));
    for (const r of rs) r.dispose();
    return out;
  };
};

const jaxMlp =
  (jit: boolean): Builder<Jax> =>
  (jax) => {
    const np = jax.numpy;
    const data = mlpData();
    const p = mlpParams();
    const X = np.array(new Float32Array(data.X)).reshape([B, D]);
    const onehot = np.array(Float32Array.from({ length: B * K }, (_, i) => (i % K === data.label[Math.floor(i / K)] ? 1 : 0))).reshape([B, K]);
    type P = { W1: JaxArray; b1: JaxArray; W2: JaxArray; b2: JaxArray };
    const loss = (q: P) => {
      const h = np.tanh(np.matmul(X.ref, q.W1).add(q.b1));
      const z = np.matmul(h, q.W2).add(q.b2);
      const lse = jax.nn.logsumexp(z.ref, 1);
      return np.mean(lse.sub(np.sum(z.mul(onehot.ref), 1)));
    };
    const g0 = jax.grad(loss);
    const g = jit ? jax.jit(g0) : g0;
    const params = (): P => ({
      W1: np.array(new Float32Array(p.W1)).reshape([D, H]),
      b1: np.array(new Float32Array(p.b1)),
      W2: np.array(new Float32Array(p.W2)).reshape([H, K]),
      b2: np.array(new Float32Array(p.b2)),
    });
    const q = params();
    return () => {
      const r = g({ W1: q.W1.ref, b1: q.b1.ref, W2: q.W2.ref, b2: q.b2.ref }) as P;
      return concat([r.W1.dataSync(), r.b1.dataSync(), r.W2.dataSync(), r.b2.dataSync()]);
    };
  };

export function w2(): Workload {
  const data = mlpData();
  const p = mlpParams();
  const h = new Float64Array(B * H);
  const z = new Float64Array(B * K);
  const out = new Float64Array(mlpGradLength);
  return {
    id: "W2",
    family: "W2",
    title: `W2 mlp B=${B} D=${D} H=${H} K=${K}`,
    what: "gradient",
    size: B,
    sizeName: "B",
    primal: () => mlpLoss(p, data, h, z),
    hand: () => mlpGrad(p, data, out),
    wengert: wengertW2(),
    wengertCompiled: wengertW2(true),
    peers: [{ label: "", tfjs: tfjsMlp, jaxEager: jaxMlp(false), jaxJit: jaxMlp(true) }],
  };
}
