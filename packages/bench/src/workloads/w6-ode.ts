/**
 * @file W6 ode: RK4 Lotka–Volterra.
 *
 * θ = (α, β, γ, δ) = (1.5, 1.0, 3.0, 1.0); (u, v)(0) = (1, 1);
 * u′ = αu − βuv, v′ = δuv − γv; dt = 0.01; 1000 RK4 steps; loss = u_T² + v_T².
 * Gradient w.r.t. θ.
 *
 * The hand-written gradient is the discrete adjoint of RK4 (exactly the derivative of
 * the computed loss, not of the ODE's): states are stored on the way forward, the
 * stages are recomputed on the way back and pulled back through in reverse order.
 */
import type { Array as JaxArray } from "@jax-js/jax";
import type { Scalar as TfScalar, Tensor } from "@tensorflow/tfjs-core";
import { add, compileGrad, grad, mul, sub, type Scalar } from "@wengert/core";
import type { Builder, Jax, Tf, Vec, Workload } from "../types.js";
import { readTf } from "../peers/tfjs.js";

export const THETA: readonly [number, number, number, number] = [1.5, 1.0, 3.0, 1.0];
export const U0 = 1;
export const V0 = 1;
export const DT = 0.01;
export const STEPS = 1000;

export function odeLoss(theta: ArrayLike<number>, steps = STEPS, dt = DT): number {
  const [al, be, ga, de] = [theta[0], theta[1], theta[2], theta[3]];
  let u = U0;
  let v = V0;
  for (let s = 0; s < steps; s++) {
    const k1u = al * u - be * u * v;
    const k1v = de * u * v - ga * v;
    let su = u + 0.5 * dt * k1u;
    let sv = v + 0.5 * dt * k1v;
    const k2u = al * su - be * su * sv;
    const k2v = de * su * sv - ga * sv;
    su = u + 0.5 * dt * k2u;
    sv = v + 0.5 * dt * k2v;
    const k3u = al * su - be * su * sv;
    const k3v = de * su * sv - ga * sv;
    su = u + dt * k3u;
    sv = v + dt * k3v;
    const k4u = al * su - be * su * sv;
    const k4v = de * su * sv - ga * sv;
    u += (dt / 6) * (k1u + 2 * k2u + 2 * k3u + k4u);
    v += (dt / 6) * (k1v + 2 * k2v + 2 * k3v + k4v);
  }
  return u * u + v * v;
}

/**
 * The discrete adjoint of RK4. One step maps s to
 *   s′ = s + dt/6 (k1 + 2k2 + 2k3 + k4),  k1 = f(s), k2 = f(s + dt/2 k1), k3 = f(s + dt/2 k2), k4 = f(s + dt k3).
 * Given λ′ = ∂L/∂s′, the stage cotangents start at k̄1 = k̄4 = dt/6 λ′, k̄2 = k̄3 = dt/3 λ′,
 * λ = λ′; then for stage j = 4, 3, 2, 1 with input s_j: w = k̄_j, s̄_j = J_s(s_j)ᵀ w,
 * θ̄ += J_θ(s_j)ᵀ w, λ += s̄_j, and the previous stage's k̄ gets c_j s̄_j (c = dt, dt/2, dt/2).
 * For f(u, v) = (αu − βuv, δuv − γv):
 *   J_sᵀ w = (w_u(α − βv) + w_v δv,  −w_u βu + w_v(δu − γ)),
 *   J_θᵀ w = (w_u u, −w_u uv, −w_v v, w_v uv).
 */
export function odeGrad(theta: ArrayLike<number>, steps = STEPS, dt = DT, out: Float64Array = new Float64Array(4)): Float64Array {
  const [al, be, ga, de] = [theta[0], theta[1], theta[2], theta[3]];
  const us = new Float64Array(steps + 1);
  const vs = new Float64Array(steps + 1);
  let u = U0;
  let v = V0;
  us[0] = u;
  vs[0] = v;
  for (let s = 0; s < steps; s++) {
    const k1u = al * u - be * u * v;
    const k1v = de * u * v - ga * v;
    let su = u + 0.5 * dt * k1u;
    let sv = v + 0.5 * dt * k1v;
    const k2u = al * su - be * su * sv;
    const k2v = de * su * sv - ga * sv;
    su = u + 0.5 * dt * k2u;
    sv = v + 0.5 * dt * k2v;
    const k3u = al * su - be * su * sv;
    const k3v = de * su * sv - ga * sv;
    su = u + dt * k3u;
    sv = v + dt * k3v;
    const k4u = al * su - be * su * sv;
    const k4v = de * su * sv - ga * sv;
    u += (dt / 6) * (k1u + 2 * k2u + 2 * k3u + k4u);
    v += (dt / 6) * (k1v + 2 * k2v + 2 * k3v + k4v);
    us[s + 1] = u;
    vs[s + 1] = v;
  }
  // λ_T = ∂(u² + v²)/∂(u, v).
  let lu = 2 * u;
  let lv = 2 * v;
  let gal = 0;
  let gbe = 0;
  let gga = 0;
  let gde = 0;
  for (let s = steps - 1; s >= 0; s--) {
    u = us[s];
    v = vs[s];
    // Recompute the stage inputs s1..s4 of this step.
    const k1u = al * u - be * u * v;
    const k1v = de * u * v - ga * v;
    const s2u = u + 0.5 * dt * k1u;
    const s2v = v + 0.5 * dt * k1v;
    const k2u = al * s2u - be * s2u * s2v;
    const k2v = de * s2u * s2v - ga * s2v;
    const s3u = u + 0.5 * dt * k2u;
    const s3v = v + 0.5 * dt * k2v;
    const k3u = al * s3u - be * s3u * s3v;
    const k3v = de * s3u * s3v - ga * s3v;
    const s4u = u + dt * k3u;
    const s4v = v + dt * k3v;
    // Stage cotangents from s′ = s + dt/6 (k1 + 2k2 + 2k3 + k4).
    const c6 = dt / 6;
    const c3 = dt / 3;
    let b1u = c6 * lu;
    let b1v = c6 * lv;
    let b2u = c3 * lu;
    let b2v = c3 * lv;
    let b3u = c3 * lu;
    let b3v = c3 * lv;
    const b4u = c6 * lu;
    const b4v = c6 * lv;
    // λ′ passes straight through the `s +` term: lu, lv keep their values and accumulate below.
    // Stage 4: k4 = f(s4), s4 = s + dt k3.
    {
      const wu = b4u;
      const wv = b4v;
      const su = wu * (al - be * s4v) + wv * de * s4v;
      const sv = -wu * be * s4u + wv * (de * s4u - ga);
      gal += wu * s4u;
      gbe -= wu * s4u * s4v;
      gga -= wv * s4v;
      gde += wv * s4u * s4v;
      lu += su;
      lv += sv;
      b3u += dt * su;
      b3v += dt * sv;
    }
    // Stage 3: k3 = f(s3), s3 = s + dt/2 k2.
    {
      const wu = b3u;
      const wv = b3v;
      const su = wu * (al - be * s3v) + wv * de * s3v;
      const sv = -wu * be * s3u + wv * (de * s3u - ga);
      gal += wu * s3u;
      gbe -= wu * s3u * s3v;
      gga -= wv * s3v;
      gde += wv * s3u * s3v;
      lu += su;
      lv += sv;
      b2u += 0.5 * dt * su;
      b2v += 0.5 * dt * sv;
    }
    // Stage 2: k2 = f(s2), s2 = s + dt/2 k1.
    {
      const wu = b2u;
      const wv = b2v;
      const su = wu * (al - be * s2v) + wv * de * s2v;
      const sv = -wu * be * s2u + wv * (de * s2u - ga);
      gal += wu * s2u;
      gbe -= wu * s2u * s2v;
      gga -= wv * s2v;
      gde += wv * s2u * s2v;
      lu += su;
      lv += sv;
      b1u += 0.5 * dt * su;
      b1v += 0.5 * dt * sv;
    }
    // Stage 1: k1 = f(s).
    {
      const wu = b1u;
      const wv = b1v;
      const su = wu * (al - be * v) + wv * de * v;
      const sv = -wu * be * u + wv * (de * u - ga);
      gal += wu * u;
      gbe -= wu * u * v;
      gga -= wv * v;
      gde += wv * u * v;
      lu += su;
      lv += sv;
    }
  }
  out[0] = gal;
  out[1] = gbe;
  out[2] = gga;
  out[3] = gde;
  return out;
}

/** One RK4 step of (u, v) with wengert's functions. */
export function rk4Step(theta: readonly Scalar[], dt = DT): (s: readonly Scalar[]) => [Scalar, Scalar] {
  const [al, be, ga, de] = theta;
  const f = (u: Scalar, v: Scalar): [Scalar, Scalar] => {
    const uv = mul(u, v);
    return [sub(mul(al, u), mul(be, uv)), sub(mul(de, uv), mul(ga, v))];
  };
  const h = 0.5 * dt;
  return ([u, v]) => {
    const [k1u, k1v] = f(u, v);
    const [k2u, k2v] = f(add(u, mul(h, k1u)), add(v, mul(h, k1v)));
    const [k3u, k3v] = f(add(u, mul(h, k2u)), add(v, mul(h, k2v)));
    const [k4u, k4v] = f(add(u, mul(dt, k3u)), add(v, mul(dt, k3v)));
    return [add(u, mul(dt / 6, add(add(k1u, mul(2, k2u)), add(mul(2, k3u), k4u)))), add(v, mul(dt / 6, add(add(k1v, mul(2, k2v)), add(mul(2, k3v), k4v))))];
  };
}

/** With wengert's functions. */
export const odeW =
  (steps = STEPS, dt = DT) =>
  (theta: readonly Scalar[]): Scalar => {
    const step = rk4Step(theta, dt);
    let s: readonly Scalar[] = [U0, V0];
    for (let i = 0; i < steps; i++) s = step(s);
    const [u, v] = s;
    return add(mul(u, u), mul(v, v));
  };

export const odeWengertGrad = (theta: readonly number[], steps = STEPS): number[] => grad(odeW(steps), theta) as number[];

export const tfjsOde: Builder<Tf> = (tf, steps) => {
  const theta = tf.tensor1d(new Float32Array(THETA));
  const loss = (theta: Tensor) => {
    const [al, be, ga, de] = tf.unstack(theta) as TfScalar[];
    const f = (u: TfScalar, v: TfScalar): [TfScalar, TfScalar] => {
      const uv = tf.mul(u, v);
      return [tf.sub(tf.mul(al, u), tf.mul(be, uv)), tf.sub(tf.mul(de, uv), tf.mul(ga, v))];
    };
    let u = tf.scalar(U0);
    let v = tf.scalar(V0);
    const h = 0.5 * DT;
    for (let s = 0; s < steps; s++) {
      const [k1u, k1v] = f(u, v);
      const [k2u, k2v] = f(tf.add(u, tf.mul(h, k1u)), tf.add(v, tf.mul(h, k1v)));
      const [k3u, k3v] = f(tf.add(u, tf.mul(h, k2u)), tf.add(v, tf.mul(h, k2v)));
      const [k4u, k4v] = f(tf.add(u, tf.mul(DT, k3u)), tf.add(v, tf.mul(DT, k3v)));
      u = tf.add(u, tf.mul(DT / 6, tf.addN([k1u, tf.mul(2, k2u), tf.mul(2, k3u), k4u])));
      v = tf.add(v, tf.mul(DT / 6, tf.addN([k1v, tf.mul(2, k2v), tf.mul(2, k3v), k4v])));
    }
    return tf.add(tf.square(u), tf.square(v));
  };
  const g = tf.grad(loss);
  return () => readTf(tf, () => g(theta));
};

const jaxOde =
  (jit: boolean): Builder<Jax> =>
  (jax, steps) => {
    const np = jax.numpy;
    const loss = (theta: JaxArray) => {
      const [al, be, ga, de] = np.unstack(theta);
      const f = (u: JaxArray, v: JaxArray): [JaxArray, JaxArray] => {
        const uv = u.ref.mul(v.ref);
        return [al.ref.mul(u).sub(be.ref.mul(uv.ref)), de.ref.mul(uv).sub(ga.ref.mul(v))];
      };
      let u = np.array(U0, { dtype: np.float32 });
      let v = np.array(V0, { dtype: np.float32 });
      const h = 0.5 * DT;
      for (let s = 0; s < steps; s++) {
        const [k1u, k1v] = f(u.ref, v.ref);
        const [k2u, k2v] = f(u.ref.add(k1u.ref.mul(h)), v.ref.add(k1v.ref.mul(h)));
        const [k3u, k3v] = f(u.ref.add(k2u.ref.mul(h)), v.ref.add(k2v.ref.mul(h)));
        const [k4u, k4v] = f(u.ref.add(k3u.ref.mul(DT)), v.ref.add(k3v.ref.mul(DT)));
        u = u.add(k1u.add(k2u.mul(2)).add(k3u.mul(2)).add(k4u).mul(DT / 6));
        v = v.add(k1v.add(k2v.mul(2)).add(k3v.mul(2)).add(k4v).mul(DT / 6));
      }
      al.dispose();
      be.dispose();
      ga.dispose();
      de.dispose();
      return u.ref.mul(u).add(v.ref.mul(v));
    };
    const g0 = jax.grad(loss);
    const g = jit ? jax.jit(g0) : g0;
    const theta = np.array(new Float32Array(THETA));
    return () => g(theta.ref).dataSync();
  };

export function w6(steps = STEPS): Workload {
  const theta = Array.from(THETA);
  const out = new Float64Array(4);
  return {
    id: "W6",
    family: "W6",
    title: `W6 ode RK4 Lotka-Volterra, ${steps} steps`,
    what: "gradient",
    size: steps,
    sizeName: "steps",
    primal: () => odeLoss(theta, steps),
    hand: () => odeGrad(theta, steps, DT, out),
    wengert: (): Vec => odeWengertGrad(theta, steps),
    wengertCompiled: ((g) => (): Vec => g(theta) as number[])(compileGrad(odeW(steps))),
    peers: [{ label: "", probeSizes: [1, 10, 100], tfjs: tfjsOde, jaxEager: jaxOde(false), jaxJit: jaxOde(true) }],
  };
}
