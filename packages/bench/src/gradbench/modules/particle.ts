/**
 * @file GradBench `particle`: Pearlmutter and Siskind's charged particle — nested AD
 * through an ODE whose right-hand side is itself a gradient.
 *
 * A particle starts at (0, 8) with velocity (0.75, 0) in the potential
 * p(x) = Σ_c 1/‖x − c‖ of the charges c = (10, 10 − w) and (10, 0). Euler steps of
 * Δt = 0.1 with acceleration −∇p(x) run until it crosses the x axis; the crossing point
 * is found by linear interpolation, and the objective is its x coordinate squared. The
 * control w is found by gradient descent from the input's `w` (gd.ts). ∇p is taken by
 * wengert inside the objective, and the objective's derivative by wengert around it:
 *
 * - `rr`: the descent's gradient by reverse mode (`grad`), ∇p by reverse mode;
 * - `rf`: reverse over forward (∇p by two `jvp`s);
 * - `fr`: forward (`jvp` in w) over reverse;
 * - `ff`: forward over forward.
 *
 * As GradBench's C++ tools (tools/enzyme/particle.cpp) and gd.hpp. Output: the final w.
 */
import { add, div, mul, neg, primal, sqrt, square, sub, type Scalar } from "@wengert/core";
import { defineFunction } from "../define.js";
import { field, number, record } from "../json.js";
import type { EvalModule } from "../module.js";
import { argmin, gradientBy, objectiveBy, type Mode, type Vec } from "./gd.js";

const DELTA_T = 0.1;

const distance = (u: Vec, v: Vec): Scalar => sqrt(add(square(sub(u[0], v[0])), square(sub(u[1], v[1]))));

/** x + k·v */
const axpy = (x: Vec, k: Scalar, v: Vec): Vec => [add(x[0], mul(k, v[0])), add(x[1], mul(k, v[1]))];

/** The squared x coordinate where the particle controlled by w crosses the x axis. */
export function naiveEuler(w: Scalar, inner: Mode): Scalar {
  const charges: Vec[] = [[10, sub(10, w)], [10, 0]];
  const potential = (x: Vec): Scalar => charges.reduce<Scalar>((a, c) => add(a, div(1, distance(c, x))), 0);
  let x: Vec = [0, 8];
  let xdot: Vec = [0.75, 0];
  for (;;) {
    const xddot = gradientBy(inner, potential, x).map((g) => neg(g));
    x = axpy(x, DELTA_T, xdot);
    if (primal(x[1]) <= 0) {
      const dtf = div(neg(x[1]), xdot[1]);
      const xtf = axpy(x, dtf, xdot);
      return square(xtf[0]);
    }
    xdot = axpy(xdot, DELTA_T, xddot);
  }
}

/** The control w, by descent in `outer` mode over trajectories integrated with ∇p in `inner` mode. */
export function particleW(w0: number, outer: Mode, inner: Mode): number {
  return primal(argmin(objectiveBy(outer, (w) => naiveEuler(w[0], inner)), [w0])[0]);
}

const prepare = (input: unknown): number => number(field(record(input), "w"), "w");
const variant = (outer: Mode, inner: Mode) => defineFunction({ prepare, run: (w0: number) => particleW(w0, outer, inner) });

export const particle: EvalModule = {
  rr: variant("r", "r"),
  rf: variant("r", "f"),
  fr: variant("f", "r"),
  ff: variant("f", "f"),
};
