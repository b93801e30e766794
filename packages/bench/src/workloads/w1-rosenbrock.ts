/**
 * @file W1 rosenbrock(n): scalar-op heavy.
 *
 * x_i = 0.5 cos(i);  f(x) = Σ_{i=0}^{n-2} 100 (x_{i+1} − x_i²)² + (1 − x_i)².
 * Trace-based (wengert): scalar ops in a loop, as a user would write. Tensor
 * libraries: the vectorised form; and wengert written that way too (`w1Tensors`), the
 * like-for-like comparison with their eager modes: about ten tensor operations, where
 * the scalar form traces 8n.
 */
import type { Array as JaxArray } from "@jax-js/jax";
import type { Tensor } from "@tensorflow/tfjs-core";
import { add, compileGrad, grad, mul, shapeOf, slice, square, sub, sum, type Scalar, type Tensor as WTensor } from "@wengert/core";
import type { Builder, Jax, Tf, Vec, Workload } from "../types.js";
import { readTf } from "../peers/tfjs.js";

export function rosenbrockInput(n: number): Float64Array {
  const x = new Float64Array(n);
  for (let i = 0; i < n; i++) x[i] = 0.5 * Math.cos(i);
  return x;
}

/** The primal on numbers. */
export function rosenbrock(x: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < x.length - 1; i++) {
    const xi = x[i];
    const t = x[i + 1] - xi * xi;
    const u = 1 - xi;
    s += 100 * t * t + u * u;
  }
  return s;
}

/** Hand-written gradient: ∂/∂x_i of term i is −400 x_i t_i − 2(1 − x_i); of term i−1, 200 t_{i−1}. */
export function rosenbrockGrad(x: ArrayLike<number>, out: Float64Array = new Float64Array(x.length)): Float64Array {
  out.fill(0);
  for (let i = 0; i < x.length - 1; i++) {
    const xi = x[i];
    const t = x[i + 1] - xi * xi;
    out[i] += -400 * xi * t - 2 * (1 - xi);
    out[i + 1] += 200 * t;
  }
  return out;
}

/** The same function written with wengert's primitives (JS operators on traced reals throw). */
export function rosenbrockW(x: readonly Scalar[]): Scalar {
  let s: Scalar = 0;
  for (let i = 0; i < x.length - 1; i++) {
    const t = sub(x[i + 1], square(x[i]));
    s = add(s, add(mul(100, square(t)), square(sub(1, x[i]))));
  }
  return s;
}

export const rosenbrockWengertGrad = (x: readonly number[]): number[] => grad(rosenbrockW, x) as number[];

/** With wengert's tensors, as the peers write it: slices of x. */
export function rosenbrockTensors(x: WTensor): Scalar {
  const n = shapeOf(x)[0];
  const head = slice(x, [0], [n - 1]);
  const t = sub(slice(x, [1], [n]), square(head));
  return sum(add(mul(100, square(t)), square(sub(1, head))));
}

/** TF.js, vectorised: slices of x. */
export const tfjsRosenbrockLoss = (tf: Tf) => (x: Tensor) => {
  const n = x.shape[0];
  const head = tf.slice(x, 0, n - 1);
  const tail = tf.slice(x, 1, n - 1);
  const t = tf.sub(tail, tf.square(head));
  return tf.sum(tf.add(tf.mul(100, tf.square(t)), tf.square(tf.sub(1, head))));
};

export const tfjsRosenbrock: Builder<Tf> = (tf, n) => {
  const x = tf.tensor1d(new Float32Array(rosenbrockInput(n)));
  const g = tf.grad(tfjsRosenbrockLoss(tf));
  return () => readTf(tf, () => g(x));
};

/** jax-js, vectorised (reference-counted: every second use of an array needs .ref). */
export const jaxRosenbrockLoss = (jax: Jax) => (x: JaxArray) => {
  const np = jax.numpy;
  const n = x.shape[0];
  const tail = x.ref.slice([1, n]);
  const head = x.slice([0, n - 1]);
  const t = tail.sub(head.ref.mul(head.ref));
  const u = np.subtract(1, head);
  return np.sum(t.ref.mul(t).mul(100).add(u.ref.mul(u)));
};

const jaxRosenbrock =
  (jit: boolean): Builder<Jax> =>
  (jax, n) => {
    const x = jax.numpy.array(new Float32Array(rosenbrockInput(n)));
    const g0 = jax.grad(jaxRosenbrockLoss(jax));
    const g = jit ? jax.jit(g0) : g0;
    return () => g(x.ref).dataSync();
  };

const W1_PEERS = [{ label: "", tfjs: tfjsRosenbrock, jaxEager: jaxRosenbrock(false), jaxJit: jaxRosenbrock(true) }];

export function w1(n: number): Workload {
  const x = rosenbrockInput(n);
  const xs = Array.from(x);
  const out = new Float64Array(n);
  return {
    id: `W1-${n}`,
    family: "W1",
    title: `W1 rosenbrock n=${n}`,
    what: "gradient",
    size: n,
    sizeName: "n",
    primal: () => rosenbrock(x),
    hand: () => rosenbrockGrad(x, out),
    wengert: (): Vec => rosenbrockWengertGrad(xs),
    wengertCompiled: ((g) => (): Vec => g(xs) as number[])(compileGrad(rosenbrockW)),
    peers: W1_PEERS,
  };
}

/** W1 with wengert written with its tensors, as the peers are (the vectorised form): the like-for-like row. */
export function w1Tensors(n: number): Workload {
  const x = rosenbrockInput(n);
  const out = new Float64Array(n);
  const gradOf = (g: Float64Array | { data: Float64Array }): Vec => (g instanceof Float64Array ? g : g.data);
  return {
    id: `W1-${n}-tensors`,
    family: "W1",
    title: `W1 rosenbrock n=${n}, wengert with tensors`,
    what: "gradient",
    size: n,
    sizeName: "n",
    primal: () => rosenbrock(x),
    hand: () => rosenbrockGrad(x, out),
    wengert: (): Vec => gradOf(grad(rosenbrockTensors, x) as Float64Array),
    wengertCompiled: ((g) => (): Vec => gradOf(g(x) as Float64Array))(compileGrad(rosenbrockTensors)),
    peers: [{ ...W1_PEERS[0], note: "wengert: written with its tensors (slices of x, as the peers), not scalar ops" }],
  };
}
