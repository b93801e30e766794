/**
 * @file W5 deep chain: depth and linearity.
 *
 * y_0 = x = 0.3; y_{i+1} = 0.9 y_i + 0.1 sin y_i; f(x) = y_N; derivative w.r.t. x.
 * N = 100000 and 200000. Must not overflow the stack; time(2N)/time(N) ≈ 2.
 * Peers: scalar tensors in a loop (there is nothing to vectorise).
 */
import type { Array as JaxArray } from "@jax-js/jax";
import type { Tensor } from "@tensorflow/tfjs-core";
import { add, compileGrad, grad, mul, sin, type Scalar } from "@wengert/core";
import type { Builder, Jax, Tf, Vec, Workload } from "../types.js";
import { readTf } from "../peers/tfjs.js";

export const X0 = 0.3;

export function chain(x: number, N: number): number {
  let y = x;
  for (let i = 0; i < N; i++) y = 0.9 * y + 0.1 * Math.sin(y);
  return y;
}

/** Hand-written: one scalar input, so forward mode: dy_{i+1} = (0.9 + 0.1 cos y_i) dy_i. */
export function chainDerivative(x: number, N: number): number {
  let y = x;
  let dy = 1;
  for (let i = 0; i < N; i++) {
    dy *= 0.9 + 0.1 * Math.cos(y);
    y = 0.9 * y + 0.1 * Math.sin(y);
  }
  return dy;
}

export const chainW =
  (N: number) =>
  (x: Scalar): Scalar => {
    let y = x;
    for (let i = 0; i < N; i++) y = add(mul(0.9, y), mul(0.1, sin(y)));
    return y;
  };

export const chainWengertDerivative = (x: number, N: number): number => grad(chainW(N), x) as number;

export const tfjsChain: Builder<Tf> = (tf, N) => {
  const x = tf.scalar(X0, "float32");
  const f = (x: Tensor) => {
    let y = x;
    for (let i = 0; i < N; i++) y = tf.add(tf.mul(0.9, y), tf.mul(0.1, tf.sin(y)));
    return y;
  };
  const g = tf.grad(f);
  return () => readTf(tf, () => g(x));
};

const jaxChain =
  (jit: boolean): Builder<Jax> =>
  (jax, N) => {
    const np = jax.numpy;
    const f = (x: JaxArray) => {
      let y = x;
      for (let i = 0; i < N; i++) y = y.ref.mul(0.9).add(np.sin(y).mul(0.1));
      return y;
    };
    const g0 = jax.grad(f);
    const g = jit ? jax.jit(g0) : g0;
    const x = np.array(X0, { dtype: np.float32 });
    return () => g(x.ref).dataSync();
  };

export function w5(N: number): Workload {
  return {
    id: `W5-${N}`,
    family: "W5",
    title: `W5 deep chain N=${N}`,
    what: "derivative",
    size: N,
    sizeName: "N",
    primal: () => chain(X0, N),
    hand: (): Vec => [chainDerivative(X0, N)],
    wengert: (): Vec => [chainWengertDerivative(X0, N)],
    wengertCompiled: ((g) => (): Vec => [g(X0) as number])(compileGrad(chainW(N))),
    peers: [{ label: "", probeSizes: [N / 1000, N / 100], tfjs: tfjsChain, jaxEager: jaxChain(false), jaxJit: jaxChain(true) }],
    float32Tolerance: {
      tol: 1e-2,
      reason:
        "float32 rounding compounds over N steps: " +
        "the same recurrence in float32 (Math.fround after every operation) is off by 1.1e-3 at N=100000 and 2.2e-3 at N=200000",
    },
  };
}
