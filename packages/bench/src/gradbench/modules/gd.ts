/**
 * @file The gradient-descent solver of GradBench's `particle` and `saddle` evals
 * (cpp/gradbench/gd.hpp), on wengert values, and gradients by either mode.
 *
 * `argmin` starts at x with step η = 1e-5 and repeats: stop when ‖∇f(x)‖ ≤ 1e-5;
 * after 10 accepted steps double η; otherwise try x' = x − η∇f(x), stop when
 * ‖x − x'‖ ≤ 1e-5, accept x' if f(x') < f(x), else halve η. It runs on numbers, or
 * on values traced by an enclosing `grad`/`jvp` (the nested evals differentiate through
 * it). Its decisions are taken on the values (`primal`), as wengert's predicates do: the
 * trace records the branch taken.
 */
import { grad, jacfwd, mul, neg, primal, sub, type Scalar } from "@wengert/core";

export type Vec = Scalar[];

/** A function to minimise and its gradient. */
export interface Objective {
  readonly f: (x: Vec) => Scalar;
  readonly grad: (x: Vec) => Vec;
}

/**
 * Reverse (`r`: `grad`, one reverse sweep) or forward (`f`: `jacfwd`, one forward sweep
 * per coordinate, as one `jvp` along each basis vector but tracing `f` once) mode.
 */
export type Mode = "r" | "f";

/** The gradient of `f` at `x` by wengert, in the given mode. */
export function gradientBy(mode: Mode, f: (x: Vec) => Scalar, x: Vec): Vec {
  if (mode === "r") return grad(f as (x: unknown) => Scalar, x as number[]) as Vec;
  return jacfwd(f as (x: unknown) => unknown, x as number[]) as Vec;
}

/** `f` with its gradient in the given mode. */
export const objectiveBy = (mode: Mode, f: (x: Vec) => Scalar): Objective => ({ f, grad: (x) => gradientBy(mode, f, x) });

const norm = (v: readonly number[]): number => {
  let s = 0;
  for (const x of v) s += x * x;
  return Math.sqrt(s);
};

export function argmin(o: Objective, start: Vec): Vec {
  let x = start;
  let fx = o.f(x);
  let gx = o.grad(x);
  let i = 0;
  let eta = 1e-5;
  for (;;) {
    if (norm(gx.map(primal)) <= 1e-5) return x;
    if (i === 10) {
      eta *= 2;
      i = 0;
      continue;
    }
    const xNew = x.map((v, j) => sub(v, mul(eta, gx[j])));
    if (norm(x.map((v, j) => primal(v) - primal(xNew[j]))) <= 1e-5) return x;
    const fxNew = o.f(xNew);
    if (primal(fxNew) < primal(fx)) {
      x = xNew;
      fx = fxNew;
      gx = o.grad(x);
      i++;
    } else {
      eta /= 2;
      i = 0;
    }
  }
}

export const argmax = (o: Objective, start: Vec): Vec => argmin({ f: (x) => neg(o.f(x)), grad: (x) => o.grad(x).map((g) => neg(g)) }, start);

export const maximum = (o: Objective, start: Vec): Scalar => o.f(argmax(o, start));
