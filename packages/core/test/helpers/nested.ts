/**
 * @file Functions for the tests of nested derivatives of a scan: a real computed from f's
 * gradient (differentiating it differentiates f twice), and the sizes of the terms that
 * show whether a nested derivative keeps its scans (counted, not timed).
 */
import { add, derivativeOf, grad, hessian, hvp, jacobian, jit, jvp, mul, scan, traceOf, vmap, type Scalar } from "../../src/index.js";
import { expectSame } from "./same-bits.js";

export type F = (th: Scalar[]) => Scalar;

export const sumSquares = (q: Scalar[]): Scalar => q.reduce<Scalar>((s, e) => add(s, mul(e, e)), 0);

/** Σ (∂f/∂θᵢ)²: a real computed from f's gradient. */
export const gradNorm =
  (f: F): F =>
  (th) =>
    sumSquares(grad(f, th) as Scalar[]);

/** Instructions of: the trace of ∂f/∂θ₀ (grad traced inside a trace), its derivative term, and grad∘grad's derivative term. */
export function nestedSizes(f: F, th: number[]): number[] {
  const gradient = (x: Scalar[]): Scalar => (grad(f, x) as Scalar[])[0];
  return [traceOf(gradient, th).length, derivativeOf(gradient, th, 1).length, derivativeOf(gradNorm(f), th, 1).length];
}

/**
 * S and L (a scan, and the loop written out) give the same numbers, bit for bit, for
 * grad∘grad, hessian, hvp, jvp∘grad, jacobian of grad (every output of the gradient seeded,
 * one row at a time: one-hot seeds, constants), and third orders (grad of a function of the
 * gradient's gradient, jvp of the hessian), at th along v.
 */
export function expectSameToThirdOrder(S: F, L: F, th: number[], v: number[]): void {
  expectSame(grad(gradNorm(S), th), grad(gradNorm(L), th));
  expectSame(hessian(S, th), hessian(L, th));
  expectSame(hvp(S, th, v), hvp(L, th, v));
  expectSame(jvp((x: Scalar[]) => grad(S, x), th, v), jvp((x: Scalar[]) => grad(L, x), th, v));
  expectSame(jacobian((x: Scalar[]) => grad(S, x), th), jacobian((x: Scalar[]) => grad(L, x), th));
  expectSame(grad(gradNorm(gradNorm(S)), th), grad(gradNorm(gradNorm(L)), th));
  expectSame(jvp((x: Scalar[]) => hessian(S, x), th, v), jvp((x: Scalar[]) => hessian(L, x), th, v));
}

/**
 * vmap of grad∘grad of S in its first input (the second fixed at 0.8) at xs, and its jit over
 * three rounds (compiled after replays), give each point's numbers of L's, bit for bit.
 */
export function expectSameOverPoints(S: F, L: F, xs: readonly number[]): void {
  const f = (y: Scalar): Scalar => grad((z: Scalar) => grad((w: Scalar) => S([w, 0.8]), z), y);
  const g = (y: Scalar): Scalar => grad((z: Scalar) => grad((w: Scalar) => L([w, 0.8]), z), y);
  expectSame(vmap(f)(Float64Array.from(xs)), Float64Array.from(xs, (x) => g(x) as number));
  const jf = jit(f);
  for (let round = 0; round < 3; round++) for (const x of xs) expectSame(jf(x), g(x));
}

/** A loop body of the tests: the carry's leaves, x's leaves, a parameter a. */
export type LoopBody = (carry: Scalar[], x: Scalar[], a: Scalar) => Scalar[];

/**
 * f(θ) = Σ carry² (+ 0.01 Σ ys: each y a variable of the trace) after the xs, the carry
 * starting at θ's first `carry` leaves, a = θ[carry], the xs made from θ (data, or traced
 * values) before the loop: as a scan, or the loop written out.
 */
export function scanAndLoop(body: LoopBody, carry: number, xsOf: (th: Scalar[]) => Scalar[][], ys = true): { scanned: F; loop: F } {
  const out = (c: Scalar[], path: Scalar[]): Scalar => (ys ? add(sumSquares(c), path.reduce<Scalar>((s, p) => add(s, mul(0.01, p)), 0)) : sumSquares(c));
  const scanned: F = (th) => {
    const a = th[carry];
    const [c, path] = scan(
      (cr: Scalar[], x: Scalar[]) => {
        const next = body(cr, x, a);
        // a y returned is a variable per iteration of the trace: none when the sum does not read them
        return ys ? [next, next[0]] : [next];
      },
      th.slice(0, carry),
      xsOf(th),
    );
    return out(c as Scalar[], (path ?? []) as Scalar[]);
  };
  // the xs made before the loop, as the scan's are (the order of the instructions is the order of a cotangent's sum)
  const loop: F = (th) => {
    const a = th[carry];
    const xs = xsOf(th);
    let c = th.slice(0, carry);
    const path: Scalar[] = [];
    for (const x of xs) {
      c = body(c, x, a);
      path.push(c[0]);
    }
    return out(c, path);
  };
  return { scanned, loop };
}
