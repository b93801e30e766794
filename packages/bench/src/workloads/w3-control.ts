/**
 * @file W3 control flow: data-dependent loops and branches.
 *
 * m = 1000, a_k = 0.5 + 2k/m.
 * g(a): y = a; repeat up to 50 times while |y² − a| > 1e-12: y = (y + a/y)/2;
 *       return y > 1 ? y³ : sin y.
 * f(a) = Σ_k g(a_k); gradient w.r.t. the vector a (component k is g′(a_k)).
 *
 * Peers come in two forms. Vectorised (what a tensor-library user writes): a mask of
 * the elements still iterating, `where(mask, newton(y), y)`, and `where(y > 1, y³,
 * sin y)`; TF.js stops when no element is active (it can read values inside tf.grad),
 * jax-js runs all 50 masked iterations (inside jax-js's grad and jit, values are
 * abstract tracers and cannot be read, as in JAX; a JAX user would write a fori_loop).
 * Per element: the scalar code of the workload transcribed op for op, with the loop
 * condition and the branch read from the tensor (the pathological case).
 */
import type { Array as JaxArray } from "@jax-js/jax";
import type { Scalar as TfScalar, Tensor } from "@tensorflow/tfjs-core";
import { add, compileGrad, div, grad, gt, lt, mul, sin, sub, type Scalar } from "@wengert/core";
import type { Builder, Jax, Tf, Vec, Workload } from "../types.js";
import { readTf } from "../peers/tfjs.js";

export const MAX_ITERS = 50;
export const EPS = 1e-12;

export function controlInput(m: number): Float64Array {
  const a = new Float64Array(m);
  for (let k = 0; k < m; k++) a[k] = 0.5 + (2 * k) / m;
  return a;
}

export function g(a: number): number {
  let y = a;
  for (let it = 0; it < MAX_ITERS && Math.abs(y * y - a) > EPS; it++) y = 0.5 * (y + a / y);
  return y > 1 ? y * y * y : Math.sin(y);
}

export function control(a: ArrayLike<number>): number {
  let s = 0;
  for (let k = 0; k < a.length; k++) s += g(a[k]);
  return s;
}

/**
 * Hand-written: each g_k depends on a_k only, so the gradient is g′(a_k), carried
 * forward through the same iterations: y′ ← (y′ + (y − a y′)/y²)/2, then 3y² y′ or cos(y) y′.
 */
export function gPrime(a: number): number {
  let y = a;
  let dy = 1;
  for (let it = 0; it < MAX_ITERS && Math.abs(y * y - a) > EPS; it++) {
    dy = 0.5 * (dy + (y - a * dy) / (y * y));
    y = 0.5 * (y + a / y);
  }
  return y > 1 ? 3 * y * y * dy : Math.cos(y) * dy;
}

export function controlGrad(a: ArrayLike<number>, out: Float64Array = new Float64Array(a.length)): Float64Array {
  for (let k = 0; k < a.length; k++) out[k] = gPrime(a[k]);
  return out;
}

/** With wengert's functions; predicates are decided on the concrete values. */
export function gW(a: Scalar): Scalar {
  let y = a;
  for (let it = 0; it < MAX_ITERS; it++) {
    const r = sub(mul(y, y), a);
    if (!(gt(r, EPS) || lt(r, -EPS))) break;
    y = mul(0.5, add(y, div(a, y)));
  }
  return gt(y, 1) ? mul(mul(y, y), y) : sin(y);
}

export function controlW(a: readonly Scalar[]): Scalar {
  let s: Scalar = 0;
  for (const ak of a) s = add(s, gW(ak));
  return s;
}

/**
 * a_250 = 1 exactly, where Newton's y is 1 and `y > 1` is decided at a tie: wengert would
 * warn on every call; like the hand-written gradient it takes the branch the primal takes.
 */
export const controlWengertGrad = (a: readonly number[]): number[] => grad(controlW, a, { ties: "ignore" }) as number[];

/**
 * TF.js vectorised, stopping when no element is active. The masks are computed on
 * detached copies of the values: TF.js has no gradient for Greater, and fails ("gradient
 * function not found for Greater") when a comparison of a differentiated tensor is on
 * the tape, even as the condition of `where`; it has no stop_gradient either.
 */
export const tfjsControlAt = (input: (m: number) => Float64Array): Builder<Tf> => (tf, m) => {
  const a = tf.tensor1d(new Float32Array(input(m)));
  const detach = (t: Tensor) => tf.tensor(t.dataSync(), t.shape);
  const loss = (a: Tensor) => {
    const av = detach(a);
    let y: Tensor = a;
    for (let it = 0; it < MAX_ITERS; it++) {
      const yv = detach(y);
      const mask = tf.greater(tf.abs(tf.sub(tf.mul(yv, yv), av)), EPS);
      if (!tf.any(mask).dataSync()[0]) break;
      y = tf.where(mask, tf.mul(0.5, tf.add(y, tf.div(a, y))), y);
    }
    return tf.sum(tf.where(tf.greater(detach(y), 1), tf.mul(tf.mul(y, y), y), tf.sin(y)));
  };
  const gr = tf.grad(loss);
  return () => readTf(tf, () => gr(a));
};

export const tfjsControl: Builder<Tf> = tfjsControlAt(controlInput);

/** TF.js per element: scalar tensors, the loop condition and branch read back each time. */
export const tfjsControlPerElement: Builder<Tf> = (tf, m) => {
  const a = tf.tensor1d(new Float32Array(controlInput(m)));
  const gk = (ak: TfScalar): TfScalar => {
    let y = ak;
    for (let it = 0; it < MAX_ITERS && tf.abs(tf.sub(tf.mul(y, y), ak)).dataSync()[0] > EPS; it++) y = tf.mul(0.5, tf.add(y, tf.div(ak, y)));
    return y.dataSync()[0] > 1 ? tf.mul(tf.mul(y, y), y) : tf.sin(y);
  };
  const loss = (a: Tensor) => tf.addN(tf.unstack(a).map((ak) => gk(ak as TfScalar)));
  const gr = tf.grad(loss);
  return () => readTf(tf, () => gr(a));
};

/** g with masks in jax-js: 50 masked iterations (a fori_loop in JAX) and a `where`, elementwise on a. */
export const jaxMaskedG = (np: Jax["numpy"], a: JaxArray): JaxArray => {
  let y = a.ref;
  for (let it = 0; it < MAX_ITERS; it++) {
    const mask = np.greater(np.abs(y.ref.mul(y.ref).sub(a.ref)), EPS);
    y = np.where(mask, y.ref.add(a.ref.div(y.ref)).mul(0.5), y);
  }
  a.dispose();
  const cube = y.ref.mul(y.ref).mul(y.ref);
  return np.where(np.greater(y.ref, 1), cube, np.sin(y));
};

/** jax-js vectorised: 50 masked iterations (a fori_loop in JAX). */
const jaxControl =
  (jit: boolean): Builder<Jax> =>
  (jax, m) => {
    const np = jax.numpy;
    const loss = (a: JaxArray) => np.sum(jaxMaskedG(np, a));
    const a = np.array(new Float32Array(controlInput(m)));
    const g0 = jax.grad(loss);
    const gr = jit ? jax.jit(g0) : g0;
    return () => gr(a.ref).dataSync();
  };

/** g in jax-js as written, the loop condition and the branch read from the values (which a transformation's tracers refuse). */
export const jaxReadingG = (np: Jax["numpy"], where: string) => {
  const read = (x: JaxArray): number => {
    const item = (x as unknown as { item?: () => number }).item;
    if (typeof item !== "function") {
      throw new Error(`jax-js: cannot read the value of a ${x.constructor.name} inside ${where} (data-dependent control flow on traced values)`);
    }
    return item.call(x);
  };
  return (ak: JaxArray): JaxArray => {
    let y = ak.ref;
    for (let it = 0; it < MAX_ITERS && read(np.abs(y.ref.mul(y.ref).sub(ak.ref))) > EPS; it++) y = y.ref.add(ak.ref.div(y)).mul(0.5);
    ak.dispose();
    return read(y.ref) > 1 ? y.ref.mul(y.ref).mul(y) : np.sin(y);
  };
};

/** jax-js per element: reads the loop condition from the array (fails on tracers inside grad/jit). */
const jaxControlPerElement =
  (jit: boolean): Builder<Jax> =>
  (jax, m) => {
    const np = jax.numpy;
    const gk = jaxReadingG(np, "a transformation");
    const loss = (a: JaxArray) => {
      const parts = np.unstack(a);
      let s = gk(parts[0]);
      for (let k = 1; k < parts.length; k++) s = s.add(gk(parts[k]));
      return s;
    };
    const a = np.array(new Float32Array(controlInput(m)));
    const g0 = jax.grad(loss);
    const gr = jit ? jax.jit(g0) : g0;
    return () => gr(a.ref).dataSync();
  };

export function w3(m = 1000): Workload {
  const a = controlInput(m);
  const as = Array.from(a);
  const out = new Float64Array(m);
  return {
    id: "W3",
    family: "W3",
    title: `W3 control flow m=${m}`,
    what: "gradient",
    size: m,
    sizeName: "m",
    primal: () => control(a),
    hand: () => controlGrad(a, out),
    wengert: (): Vec => controlWengertGrad(as),
    wengertCompiled: ((g) => (): Vec => g(as) as number[])(compileGrad(controlW, { ties: "ignore" })),
    peers: [
      { label: "", note: "vectorised with masks", tfjs: tfjsControl, jaxEager: jaxControl(false), jaxJit: jaxControl(true) },
      {
        label: "per element",
        probeSizes: [10, 100],
        note: "the scalar code transcribed op for op: loop condition and branch read from the tensors",
        tfjs: tfjsControlPerElement,
        jaxEager: jaxControlPerElement(false),
        jaxJit: jaxControlPerElement(true),
      },
    ],
  };
}
