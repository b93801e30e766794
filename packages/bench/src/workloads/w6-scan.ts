/**
 * @file W6's RK4 Lotka–Volterra as a scan: the step traced once per call of grad (the
 * body's compiled code is shared across calls by its structure), the state the carry.
 */
import { add, grad, mul, scan, type Scalar } from "@wengert/core";
import { DT, rk4Step, STEPS, U0, V0 } from "./w6-ode.js";

export const odeScan =
  (steps = STEPS, dt = DT) =>
  (theta: readonly Scalar[]): Scalar => {
    const step = rk4Step(theta, dt);
    const [[u, v]] = scan((s: Scalar[]): [Scalar[]] => [step(s)], [U0, V0] as Scalar[], steps);
    return add(mul(u, u), mul(v, v));
  };

export const odeScanGrad = (theta: readonly number[], steps = STEPS): number[] => grad(odeScan(steps), theta) as number[];
