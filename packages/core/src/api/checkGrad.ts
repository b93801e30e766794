/**
 * @file `checkGrad`: test a function's derivatives (and so its primitives' rules).
 *
 * Along random directions u, with random output weights w, three numbers must agree:
 * the reverse derivative ⟨rd(f, x, w), u⟩, the forward one ⟨w, jvp(f, x, u)⟩ (the
 * dot-product test ⟨J u, w⟩ = ⟨u, Jᵀ w⟩, exact up to rounding), and central finite
 * differences of ⟨w, f(x + h u)⟩ (up to truncation error).
 */
import { rng } from "@wengert/ops";
import { GradientCheckError, WengertError, type GradCheck, type GradCheckReport } from "../errors.js";
import { leafShapes, showValue } from "../structure.js";
import { componentCount, componentsOf, fromComponents } from "./components.js";
import { jvpAs } from "./forward.js";
import { rd } from "./rd.js";
import { checkOptionKeys, RD_OPTIONS, type RdOptions } from "./options.js";
import { trace, userValue, type Fn } from "./tracing.js";
import type { Traced } from "./types.js";

/** checkGrad's options (docs/checking.md), and `rd`'s. */
export interface CheckGradOptions extends RdOptions {
  /** How many random directions (default 4). */
  readonly directions?: number;
  /** Finite-difference step, relative to the size of x (default 1e-6). */
  readonly eps?: number;
  /** Tolerance of reverse against finite differences, relative (default 1e-5) and absolute (default 1e-8). */
  readonly rtol?: number;
  readonly atol?: number;
  /** Tolerance of forward against reverse, relative (default 1e-10). */
  readonly dotTol?: number;
  /** Seed of the random directions (default 1): the same seed checks the same directions. */
  readonly seed?: number;
}

// the report is what a GradientCheckError carries: declared with it (errors.ts, the bottom layer)
export type { GradCheck, GradCheckReport } from "../errors.js";

const dot = (a: readonly number[], b: readonly number[]): number => a.reduce((s, x, i) => s + x * b[i], 0);

/**
 * Check `f`'s derivatives at `x` (numbers and tensors, not traced values). Returns the report; throws a
 * GradientCheckError naming the worst disagreement if any check fails.
 */
export function checkGrad<const X>(f: (x: Traced<X>) => unknown, x: X, options: CheckGradOptions = {}): GradCheckReport {
  checkOptionKeys("checkGrad", options, ["directions", "eps", "rtol", "atol", "dotTol", "seed", ...RD_OPTIONS]);
  const { directions = 4, eps = 1e-6, rtol = 1e-5, atol = 1e-8, dotTol = 1e-10, seed = 1, ...rdOptions } = options;
  // a check with no direction, or with a step or tolerance that is not a number, passes or fails whatever the rules
  const want = (name: string, v: number, ok: boolean, what: string): void => {
    if (!ok) throw new WengertError(`checkGrad: options.${name} is ${showValue(v)}; expected ${what}.`);
  };
  want("directions", directions, Number.isInteger(directions) && directions > 0, "a positive integer");
  want("eps", eps, typeof eps === "number" && eps > 0 && eps < Infinity, "a positive number");
  for (const [name, tol] of [["rtol", rtol], ["atol", atol], ["dotTol", dotTol]] as const) want(name, tol, typeof tol === "number" && tol >= 0, "a number ≥ 0");
  want("seed", seed, Number.isFinite(seed), "a finite number");
  const xs = componentsOf(x, "checkGrad");
  const leaves = (v: unknown): number[] => componentsOf(v, "checkGrad").values;
  // f runs traced, so that options such as maxTraceLength apply to every evaluation
  const valuesAt = (p: number[]): number[] => {
    const { term } = trace("checkGrad", f as Fn, fromComponents(xs.shape, p), rdOptions);
    const shapes = leafShapes(term.output.shape);
    return leaves(term.output.atoms.map((v, j) => userValue(term.tape, v, shapes[j])));
  };
  const outShape = trace("checkGrad", f as Fn, x, rdOptions).term.output.shape;
  const m = componentCount(outShape);
  const rand = rng(seed); // the same seed, the same directions
  const h = eps * Math.max(1, ...xs.values.map(Math.abs));
  const checks: GradCheck[] = [];
  for (let d = 0; d < directions; d++) {
    const u = xs.values.map(() => 2 * rand() - 1);
    const w = Array.from({ length: m }, () => 2 * rand() - 1);
    const reverse = dot(leaves(rd(f, x, fromComponents(outShape, w), rdOptions)), u);
    const forward = dot(w, leaves(jvpAs("jvp", f as Fn, x, fromComponents(xs.shape, u), rdOptions)[1]));
    const plus = valuesAt(xs.values.map((v, i) => v + h * u[i]));
    const minus = valuesAt(xs.values.map((v, i) => v - h * u[i]));
    const fdiff = (dot(w, plus) - dot(w, minus)) / (2 * h);
    const e1 = Math.abs(reverse - fdiff);
    checks.push({
      direction: d,
      test: "reverse vs finite differences",
      expected: fdiff,
      got: reverse,
      error: e1,
      ok: e1 <= atol + rtol * Math.max(Math.abs(reverse), Math.abs(fdiff)),
    });
    const e2 = Math.abs(forward - reverse);
    checks.push({ direction: d, test: "forward vs reverse", expected: reverse, got: forward, error: e2, ok: e2 <= dotTol * Math.max(1, Math.abs(reverse)) });
  }
  const report = { ok: checks.every((c) => c.ok), checks };
  if (!report.ok) {
    const worst = checks.filter((c) => !c.ok).sort((p, q) => q.error - p.error)[0];
    throw new GradientCheckError(
      `checkGrad: ${worst.test} disagree along direction ${worst.direction}: expected ${worst.expected}, got ${worst.got} ` +
        `(error ${worst.error.toExponential(2)}); ${checks.filter((c) => !c.ok).length} of ${checks.length} checks failed. ` +
        `The report is on this error's .report.`,
      report,
    );
  }
  return report;
}
