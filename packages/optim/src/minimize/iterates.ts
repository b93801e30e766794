/**
 * @file The iterates of a minimizer: the current point x with f(x) and ∇f(x), a trial
 * point beside it (where line searches and trust regions evaluate), the iteration
 * count, and the tests every method makes before an iteration.
 */
import type { Monitor, Outcome, Stop } from "./outcome.js";
import type { Problem } from "./problem.js";

export class Iterates {
  x: Float64Array;
  g: Float64Array;
  value: number;
  /** Where a trial is evaluated; `accept` makes it current. */
  trial: { x: Float64Array; g: Float64Array };
  nit = 0;

  constructor(
    problem: Problem,
    private readonly monitor: Monitor,
  ) {
    this.x = Float64Array.from(problem.x0);
    this.g = new Float64Array(problem.n);
    this.value = problem.valueAndGrad(this.x, this.g);
    this.trial = { x: new Float64Array(problem.n), g: new Float64Array(problem.n) };
  }

  /** Why to stop before another iteration: f or ∇f not finite, `converged` (gtol), or maxIter; null to go on. */
  check(converged: boolean, maxIter: number): Stop | null {
    if (!Number.isFinite(this.value) || !this.g.every(Number.isFinite)) return "nonFinite";
    if (converged) return "gtol";
    return this.nit >= maxIter ? "maxIter" : null;
  }

  /** The trial point (of value f) becomes current; counts the iteration. False if the monitor says stop. */
  accept(value: number): boolean {
    [this.x, this.trial.x] = [this.trial.x, this.x];
    [this.g, this.trial.g] = [this.trial.g, this.g];
    this.value = value;
    return this.count();
  }

  /** Counts an iteration that keeps the current point (a trust-region step refused). False if the monitor says stop. */
  count(): boolean {
    this.nit++;
    return this.monitor(this.nit, this.x, this.value, this.g);
  }

  outcome(stop: Stop): Outcome {
    return { x: this.x, fun: this.value, jac: this.g, nit: this.nit, stop };
  }
}
