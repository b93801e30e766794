/**
 * @file W6's RK4 Lotka–Volterra as a scan: the step traced once per call of grad (the
 * body's compiled code is shared across calls by its structure), the state the carry.
 */
import { add, grad, mul, scan, sub, type Scalar } from "@wengert/core";
import { DT, STEPS, U0, V0 } from "./w6-ode.js";

export const odeScan =
  (steps = STEPS, dt = DT) =>
  (theta: readonly Scalar[]): Scalar => {
    const [al, be, ga, de] = theta;
    const f = (u: Scalar, v: Scalar): [Scalar, Scalar] => {
      const uv = mul(u, v);
      return [sub(mul(al, u), mul(be, uv)), sub(mul(de, uv), mul(ga, v))];
    };
    const h = 0.5 * dt;
    const step = ([u, v]: readonly Scalar[]): [Scalar[]] => {
      const [k1u, k1v] = f(u, v);
      const [k2u, k2v] = f(add(u, mul(h, k1u)), add(v, mul(h, k1v)));
      const [k3u, k3v] = f(add(u, mul(h, k2u)), add(v, mul(h, k2v)));
      const [k4u, k4v] = f(add(u, mul(dt, k3u)), add(v, mul(dt, k3v)));
      return [[add(u, mul(dt / 6, add(add(k1u, mul(2, k2u)), add(mul(2, k3u), k4u)))), add(v, mul(dt / 6, add(add(k1v, mul(2, k2v)), add(mul(2, k3v), k4v))))]];
    };
    const [[u, v]] = scan(step, [U0, V0] as Scalar[], steps);
    return add(mul(u, u), mul(v, v));
  };

export const odeScanGrad = (theta: readonly number[], steps = STEPS): number[] => grad(odeScan(steps), theta) as number[];
