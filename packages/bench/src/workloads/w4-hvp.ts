/**
 * @file W4 hvp: nested differentiation.
 *
 * The Hessian-vector product of W1 rosenbrock at n = 1000, v = all ones.
 * wengert: `hvp` (forward over reverse), and `jit` of it. jax-js: jvp of grad (forward over reverse).
 * TF.js has no forward mode: reverse over reverse, the gradient of x ↦ ⟨∇f(x), v⟩.
 */
import type { Array as JaxArray } from "@jax-js/jax";
import type { Tensor } from "@tensorflow/tfjs-core";
import { hvp, jit, type Scalar } from "@wengert/core";
import type { Builder, Jax, Tf, Vec, Workload } from "../types.js";
import { readTf } from "../peers/tfjs.js";
import { jaxRosenbrockLoss, rosenbrock, rosenbrockInput, rosenbrockW, tfjsRosenbrockLoss } from "./w1-rosenbrock.js";

/**
 * Hand-written H·v. With t_i = x_{i+1} − x_i², term i of f contributes
 * ∂²/∂x_i² = −400 t_i + 800 x_i² + 2, ∂²/∂x_i∂x_{i+1} = −400 x_i, ∂²/∂x_{i+1}² = 200.
 */
export function rosenbrockHvp(x: ArrayLike<number>, v: ArrayLike<number>, out: Float64Array = new Float64Array(x.length)): Float64Array {
  out.fill(0);
  for (let i = 0; i < x.length - 1; i++) {
    const xi = x[i];
    const t = x[i + 1] - xi * xi;
    out[i] += (-400 * t + 800 * xi * xi + 2) * v[i] - 400 * xi * v[i + 1];
    out[i + 1] += -400 * xi * v[i] + 200 * v[i + 1];
  }
  return out;
}

export const rosenbrockWengertHvp = (x: readonly number[], v: readonly number[]): number[] => hvp(rosenbrockW, x, v) as number[];

export const tfjsHvp: Builder<Tf> = (tf, n) => {
  const x = tf.tensor1d(new Float32Array(rosenbrockInput(n)));
  const v = tf.ones([n]);
  const g = tf.grad(tfjsRosenbrockLoss(tf));
  const hv = tf.grad((x: Tensor) => tf.sum(tf.mul(g(x), v)));
  return () => readTf(tf, () => hv(x));
};

const jaxHvp =
  (jit: boolean): Builder<Jax> =>
  (jax, n) => {
    const np = jax.numpy;
    const gradF = jax.grad(jaxRosenbrockLoss(jax));
    const hv0 = (x: JaxArray, v: JaxArray) => jax.jvp(gradF, [x], [v])[1];
    const hv = jit ? jax.jit(hv0) : hv0;
    const x = np.array(new Float32Array(rosenbrockInput(n)));
    const v = np.ones([n]);
    return () => hv(x.ref, v.ref).dataSync();
  };

export function w4(n = 1000): Workload {
  const x = rosenbrockInput(n);
  const xs = Array.from(x);
  const v = new Float64Array(n).fill(1);
  const vs = Array.from(v);
  const out = new Float64Array(n);
  return {
    id: "W4",
    family: "W4",
    title: `W4 hvp rosenbrock n=${n}`,
    what: "Hessian-vector product",
    size: n,
    sizeName: "n",
    primal: () => rosenbrock(x),
    hand: () => rosenbrockHvp(x, v, out),
    wengert: (): Vec => rosenbrockWengertHvp(xs, vs),
    // jit of the HVP, x and v its input (as jax-js jit's)
    wengertCompiled: ((j) => (): Vec => j([xs, vs]) as number[])(jit(([p, w]: [Scalar[], Scalar[]]) => hvp(rosenbrockW, p, w))),
    peers: [{ label: "", tfjs: tfjsHvp, jaxEager: jaxHvp(false), jaxJit: jaxHvp(true) }],
  };
}
