/**
 * Gradients through products large enough for the SIMD kernel (and the tiled transposes
 * and run-wise reductions of the reverse sweep), checked by @wengert/core's checkGrad:
 * reverse against central differences, and forward against reverse.
 */
import ndarray from "ndarray";
import { describe, expect, it } from "vitest";
import { add, checkGrad, logsumexp, matmul, mean, mul, sub, sum, tanh, type Tensor } from "../../src/index.js";
import { randomArray, rng } from "../../../ops/test/random.js";

/** loss = mean_b[logsumexp(tanh(X W1 + b1) W2 + b2) − z·onehot], as benchmark W2 has it. */
function mlp(B: number, D: number, H: number, K: number) {
  const next = rng(B * 1000 + H);
  const X = ndarray(randomArray(next, B * D), [B, D]);
  const onehot = ndarray(Float64Array.from({ length: B * K }, (_, i) => (i % K === Math.floor(i / K) % K ? 1 : 0)), [B, K]);
  const loss = (q: { W1: Tensor; b1: Tensor; W2: Tensor; b2: Tensor }) => {
    const h = tanh(add(matmul(X, q.W1), q.b1));
    const z = add(matmul(h, q.W2), q.b2);
    return mean(sub(logsumexp(z, 1), sum(mul(z, onehot), 1)));
  };
  const scaled = (n: number, s: number) => randomArray(next, n).map((v) => s * v);
  const params = { W1: ndarray(scaled(D * H, 0.3), [D, H]), b1: scaled(H, 0.1), W2: ndarray(scaled(H * K, 0.3), [H, K]), b2: scaled(K, 0.1) };
  return { loss, params };
}

describe("gradients through the SIMD product", () => {
  for (const [B, D, H, K] of [[64, 64, 128, 10], [21, 17, 33, 10], [9, 30, 7, 5]]) {
    it(`mlp B=${B} D=${D} H=${H} K=${K}`, () => {
      const { loss, params } = mlp(B, D, H, K);
      expect(checkGrad(loss, params).ok).toBe(true);
    });
  }

  it("a batched product with a broadcast batch axis", () => {
    const next = rng(7);
    const f = (p: { a: Tensor; b: Tensor }) => sum(tanh(matmul(p.a, p.b)));
    const x = { a: ndarray(randomArray(next, 3 * 1 * 19 * 23), [3, 1, 19, 23]), b: ndarray(randomArray(next, 2 * 23 * 18), [2, 23, 18]) };
    expect(checkGrad(f, x).ok).toBe(true);
  });
});
