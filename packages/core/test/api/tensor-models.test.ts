/**
 * Small models end to end: a two-layer MLP with tanh and softmax cross-entropy against a
 * gradient derived by hand in plain JS loops (several formulations of the loss, records of
 * ndarrays and Float64Arrays), a few steps of SGD against the same steps in plain JS, and
 * a small convolutional network and an attention block against central differences.
 */
import { describe, expect, it } from "vitest";
import {
  add, conv2d, div, gather, grad, index, log, logSoftmax, logsumexp, matmul, max, mean, mul, neg, reshape, softmax, sqrt, sub, sum,
  tanh, transpose, valueAndGrad, type NdArray, type Scalar, type Tensor,
} from "../../src/index.js";
import { rng, isNd, flat, nd, closeWithin, randArr } from "../helpers/tensors.js";
import { expectRecordGradient } from "../helpers/check.js";

const expectClose = closeWithin(1e-9, 1e-12);

// ---------------------------------------------------------------- MLP, by hand

const B = 5;
const D = 4;
const Hd = 6;
const C = 3;

/** Plain arrays, row-major. */
interface Plain {
  W1: number[];
  b1: number[];
  W2: number[];
  b2: number[];
}

/** Loss and gradient of mean_i −log softmax(tanh(x_i W1 + b1) W2 + b2)[y_i], by hand. */
function mlpByHand(p: Plain, X: number[], y: number[]): { loss: number; g: Plain } {
  const Hs: number[] = new Array(B * Hd).fill(0);
  for (let i = 0; i < B; i++) {
    for (let h = 0; h < Hd; h++) {
      let z = p.b1[h];
      for (let d = 0; d < D; d++) z += X[i * D + d] * p.W1[d * Hd + h];
      Hs[i * Hd + h] = Math.tanh(z);
    }
  }
  let loss = 0;
  const dLogits: number[] = new Array(B * C).fill(0);
  for (let i = 0; i < B; i++) {
    const logits: number[] = [];
    for (let c = 0; c < C; c++) {
      let z = p.b2[c];
      for (let h = 0; h < Hd; h++) z += Hs[i * Hd + h] * p.W2[h * C + c];
      logits.push(z);
    }
    const m = Math.max(...logits);
    const lse = m + Math.log(logits.reduce((s, z) => s + Math.exp(z - m), 0));
    loss += (lse - logits[y[i]]) / B;
    for (let c = 0; c < C; c++) dLogits[i * C + c] = (Math.exp(logits[c] - lse) - (c === y[i] ? 1 : 0)) / B;
  }
  const g: Plain = { W1: new Array(D * Hd).fill(0), b1: new Array(Hd).fill(0), W2: new Array(Hd * C).fill(0), b2: new Array(C).fill(0) };
  for (let i = 0; i < B; i++) {
    for (let c = 0; c < C; c++) {
      g.b2[c] += dLogits[i * C + c];
      for (let h = 0; h < Hd; h++) g.W2[h * C + c] += Hs[i * Hd + h] * dLogits[i * C + c];
    }
    for (let h = 0; h < Hd; h++) {
      let dh = 0;
      for (let c = 0; c < C; c++) dh += dLogits[i * C + c] * p.W2[h * C + c];
      const dz = dh * (1 - Hs[i * Hd + h] ** 2);
      g.b1[h] += dz;
      for (let d = 0; d < D; d++) g.W1[d * Hd + h] += X[i * D + d] * dz;
    }
  }
  return { loss, g };
}

describe("two-layer MLP with softmax cross-entropy", () => {
  const r = rng(2024);
  const plain: Plain = { W1: randArr(D * Hd, r), b1: randArr(Hd, r, 0.1), W2: randArr(Hd * C, r), b2: randArr(C, r, 0.1) };
  const Xp = randArr(B * D, r, 2);
  const y = [0, 2, 1, 2, 0];
  const X = nd(Xp, [B, D]);
  const Y = nd(y.flatMap((c) => [0, 1, 2].map((k) => (k === c ? 1 : 0))), [B, C]);
  const params = { W1: nd(plain.W1, [D, Hd]), b1: nd(plain.b1, [Hd]), W2: nd(plain.W2, [Hd, C]), b2: nd(plain.b2, [C]) };
  type P = { W1: Tensor; b1: Tensor; W2: Tensor; b2: Tensor };
  const logitsOf = (p: P, x: NdArray = X) => add(matmul(tanh(add(matmul(x, p.W1), p.b1)), p.W2), p.b2);
  const { loss: wantLoss, g: want } = mlpByHand(plain, Xp, y);

  const formulations: [string, (p: P) => Scalar][] = [
    ["one-hot · logSoftmax", (p) => neg(mean(sum(mul(Y, logSoftmax(logitsOf(p), 1)), 1)))],
    ["logsumexp − picked logit", (p) => mean(sub(logsumexp(logitsOf(p), 1), sum(mul(Y, logitsOf(p)), 1)))],
    ["gather on the flattened logSoftmax", (p) => div(neg(sum(gather(reshape(logSoftmax(logitsOf(p)), [-1]) as Tensor, y.map((c, i) => i * C + c)))), B)],
    ["log of softmax, read with index", (p) => {
      const P = softmax(logitsOf(p), -1);
      let s: Scalar = 0;
      for (let i = 0; i < B; i++) s = sub(s, log(index(P, [i, y[i]])));
      return div(s, B);
    }],
    ["per example, matmul of a row vector (1-D args)", (p) => {
      let s: Scalar = 0;
      for (let i = 0; i < B; i++) {
        const xi = nd(Xp.slice(i * D, (i + 1) * D), [D]);
        const z = add(matmul(tanh(add(matmul(xi, p.W1), p.b1)), p.W2), p.b2);
        s = add(s, sub(logsumexp(z), index(z, y[i])));
      }
      return div(s, B);
    }],
  ];

  for (const [name, loss] of formulations) {
    it(`${name}: loss and gradient equal the hand-derived ones; cotangents are ndarrays of the parameters' shapes`, () => {
      const [value, g] = valueAndGrad(loss, params) as [number, { W1: NdArray; b1: NdArray; W2: NdArray; b2: NdArray }];
      expect(value).toBeCloseTo(wantLoss, 12);
      expect(g.W1.shape).toEqual([D, Hd]);
      expect(g.b1.shape).toEqual([Hd]);
      expect(g.W2.shape).toEqual([Hd, C]);
      expect(g.b2.shape).toEqual([C]);
      for (const k of ["W1", "b1", "W2", "b2"] as const) expectClose(flat(g[k]), want[k], 1e-9, 1e-12, `${name}: ${k}`);
    });
  }

  it("biases as Float64Arrays come back as Float64Arrays, weights as ndarrays", () => {
    const p2 = { W1: params.W1, b1: Float64Array.from(plain.b1), W2: params.W2, b2: Float64Array.from(plain.b2) };
    const g = grad(formulations[0][1] as never, p2) as { W1: NdArray; b1: Float64Array; W2: NdArray; b2: Float64Array };
    expect(g.b1).toBeInstanceOf(Float64Array);
    expect(g.b2).toBeInstanceOf(Float64Array);
    expect(isNd(g.W1)).toBe(true);
    expectClose(Array.from(g.b1), want.b1, 1e-9, 1e-12, "b1");
    expectClose(Array.from(g.b2), want.b2, 1e-9, 1e-12, "b2");
    expectClose(flat(g.W1), want.W1, 1e-9, 1e-12, "W1");
  });

  it("the parameters are not modified by grad", () => {
    const before = flat(params.W1);
    grad(formulations[0][1] as never, params);
    expect(flat(params.W1)).toEqual(before);
  });

  it("ten steps of SGD follow the plain-JS trajectory", () => {
    let p = { ...plain };
    let q = { W1: nd(plain.W1, [D, Hd]), b1: nd(plain.b1, [Hd]), W2: nd(plain.W2, [Hd, C]), b2: nd(plain.b2, [C]) };
    const lr = 0.5;
    const losses: number[] = [];
    for (let step = 0; step < 10; step++) {
      const { loss, g } = mlpByHand(p, Xp, y);
      const [value, gq] = valueAndGrad(formulations[0][1] as never, q) as [number, Record<keyof Plain, NdArray>];
      expect(value).toBeCloseTo(loss, 10);
      losses.push(loss);
      p = {
        W1: p.W1.map((w, i) => w - lr * g.W1[i]),
        b1: p.b1.map((w, i) => w - lr * g.b1[i]),
        W2: p.W2.map((w, i) => w - lr * g.W2[i]),
        b2: p.b2.map((w, i) => w - lr * g.b2[i]),
      };
      // the update with wengert's own untraced ops (sub, mul on ndarrays)
      q = { W1: sub(q.W1, mul(lr, gq.W1)), b1: sub(q.b1, mul(lr, gq.b1)), W2: sub(q.W2, mul(lr, gq.W2)), b2: sub(q.b2, mul(lr, gq.b2)) };
    }
    expect(losses[9]).toBeLessThan(losses[0]);
    expectClose(flat(q.W1), p.W1, 1e-8, 1e-10, "W1 after 10 steps");
    expectClose(flat(q.b2), p.b2, 1e-8, 1e-10, "b2 after 10 steps");
  });

  it("a batch of size 1 and a batch given as a transposed view", () => {
    const x1 = nd(Xp.slice(0, D), [1, D]);
    const g1 = grad((p: P) => neg(sum(mul(nd([1, 0, 0], [1, 3]), logSoftmax(logitsOf(p, x1))))), params) as Record<keyof Plain, NdArray>;
    const byHand = mlpByHand1(plain, Xp.slice(0, D), y[0]);
    for (const k of ["W1", "b1", "W2", "b2"] as const) expectClose(flat(g1[k]), byHand[k], 1e-9, 1e-12, k);
    // X stored as its transpose [D, B] and viewed as [B, D]
    const XT = nd(Array.from({ length: D * B }, (_, k) => Xp[(k % B) * D + Math.floor(k / B)]), [D, B]);
    const view = XT.transpose(1, 0);
    const g = grad((p: P) => neg(mean(sum(mul(Y, logSoftmax(logitsOf(p, view), 1)), 1))), params) as Record<keyof Plain, NdArray>;
    for (const k of ["W1", "b1", "W2", "b2"] as const) expectClose(flat(g[k]), want[k], 1e-9, 1e-12, `view: ${k}`);
  });
});

function mlpByHand1(p: Plain, x: number[], label: number): Plain {
  // the batch-of-one gradient: the general routine with B copies would average; compute directly
  const h = Array.from({ length: Hd }, (_, j) => Math.tanh(p.b1[j] + x.reduce((s, xd, d) => s + xd * p.W1[d * Hd + j], 0)));
  const z = Array.from({ length: C }, (_, c) => p.b2[c] + h.reduce((s, hj, j) => s + hj * p.W2[j * C + c], 0));
  const m = Math.max(...z);
  const lse = m + Math.log(z.reduce((s, v) => s + Math.exp(v - m), 0));
  const dz = z.map((v, c) => Math.exp(v - lse) - (c === label ? 1 : 0));
  const dh = h.map((hj, j) => dz.reduce((s, d, c) => s + d * p.W2[j * C + c], 0) * (1 - hj * hj));
  return {
    W1: Array.from({ length: D * Hd }, (_, k) => x[Math.floor(k / Hd)] * dh[k % Hd]),
    b1: dh,
    W2: Array.from({ length: Hd * C }, (_, k) => h[Math.floor(k / C)] * dz[k % C]),
    b2: dz,
  };
}

// ---------------------------------------------------------------- models against differences

describe("models against central differences", () => {
  it("a small CNN: conv (stride 2, padding 1), tanh, conv, flatten, dense, softmax cross-entropy", () => {
    const r = rng(7);
    const x = nd(randArr(2 * 2 * 6 * 6, r), [2, 2, 6, 6]);
    const labels = nd([0, 1, 1, 0], [2, 2]);
    const p = {
      k1: nd(randArr(3 * 2 * 3 * 3, r, 0.5), [3, 2, 3, 3]),
      k2: nd(randArr(2 * 3 * 2 * 2, r, 0.5), [2, 3, 2, 2]),
      W: nd(randArr(2 * 2 * 2 * 2, r, 0.5), [8, 2]),
    };
    const f = (q: Record<string, Tensor | NdArray>) => {
      const h1 = tanh(conv2d(x, q.k1, { stride: 2, padding: 1 })); // [2, 3, 3, 3]
      const h2 = conv2d(h1, q.k2, { stride: 1 }); // [2, 2, 2, 2]
      const z = matmul(reshape(h2, [2, -1]) as Tensor | NdArray, q.W); // [2, 2]
      return neg(sum(mul(labels, logSoftmax(z))));
    };
    expectRecordGradient(f as (q: Record<string, NdArray>) => number, p, grad(f, p));
  });

  it("a batched attention block: softmax(QKᵀ/√d) V with batch broadcasting", () => {
    const r = rng(8);
    const x = nd(randArr(2 * 3 * 4, r), [2, 3, 4]);
    const p = { Wq: nd(randArr(16, r, 0.7), [4, 4]), Wk: nd(randArr(16, r, 0.7), [4, 4]), Wv: nd(randArr(8, r, 0.7), [4, 2]) };
    const f = (q: Record<string, Tensor | NdArray>) => {
      const Q = matmul(x, q.Wq);
      const K = matmul(x, q.Wk);
      const V = matmul(x, q.Wv);
      const A = softmax(div(matmul(Q, transpose(K, [0, 2, 1])), sqrt(4)), -1);
      const out = matmul(A, V); // [2, 3, 2]
      return add(sum(mul(out, out)), max(out));
    };
    expectRecordGradient(f as (q: Record<string, NdArray>) => number, p, grad(f, p));
  });
});
