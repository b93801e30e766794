/**
 * `minimize`: every method reaches the known minimum of the standard test problems
 * (bench/problems.ts) to the tolerance stated there, at ‖∇f‖ ≤ 1e-8; with SciPy's
 * default tolerances on the small ones; over parameter trees; with its options checked.
 */
import ndarray from "ndarray";
import { describe, expect, it } from "vitest";
import { add, dot, hvp, index, log, mul, square, sub, sum, type NdArray, type Scalar, type Tensor } from "@wengert/core";
import { minimize, ravelTree, OptimOptionsError, type Method, type MinimizeOptions, type Tree } from "../src/index.js";
import { hessianOf } from "../src/core.js";
import { denseHessian } from "../src/minimize/problem.js";
import { beale, boundedRosenbrock, rosen, rosenbrock, testProblems, type TestProblem } from "../bench/problems.js";

const METHODS: readonly Method[] = ["lbfgs", "bfgs", "newton-cg", "trust-exact"];

/** Stopping at ‖∇f‖ ≤ 1e-8 for every method (L-BFGS's ftol and Newton-CG's xtol off). */
const TIGHT: { readonly [M in Method]: MinimizeOptions<Tree> } = {
  lbfgs: { gtol: 1e-8, ftol: 0 },
  bfgs: { gtol: 1e-8 },
  "newton-cg": { gtol: 1e-8, xtol: 0 },
  "trust-exact": { gtol: 1e-8 },
};

const maxAbs = (v: Float64Array) => v.reduce((m, x) => Math.max(m, Math.abs(x)), 0);

describe.each(testProblems().filter((p) => !p.bounds).map((p) => [p.name, p] as const))("%s", (_name, problem: TestProblem) => {
  it.each(METHODS)("%s reaches the minimum", (method) => {
    const r = problem.minimize({ method, ...TIGHT[method] });
    expect(r.success, `${method}: ${r.message} after ${r.nit} iterations`).toBe(true);
    expect(r.status).toBe("gtol");
    const x = ravelTree(r.x).vector;
    expect(maxAbs(ravelTree(r.jac).vector)).toBeLessThanOrEqual(1e-8);
    if (problem.xStar !== null) expect(maxAbs(x.map((v, i) => v - problem.xStar![i]))).toBeLessThanOrEqual(problem.xTol);
    if (problem.fStar !== null) expect(Math.abs(r.fun - problem.fStar)).toBeLessThanOrEqual(1e-10);
    // the first-order condition computed by hand, without wengert (logistic regression)
    if (problem.optimality) expect(problem.optimality(x)).toBeLessThanOrEqual(1e-8);
    expect(r.nfev).toBe(r.njev);
    expect(r.nhev > 0).toBe(method === "newton-cg" || method === "trust-exact");
  });
});

describe("SciPy's defaults", () => {
  it.each(METHODS)("%s with its default tolerances solves Rosenbrock n=2 and Beale to 1e-3", (method) => {
    for (const problem of [rosenbrock(2), beale]) {
      const r = problem.minimize({ method });
      expect(r.success, `${problem.name}: ${r.message}`).toBe(true);
      const x = ravelTree(r.x).vector;
      expect(maxAbs(x.map((v, i) => v - problem.xStar![i]))).toBeLessThanOrEqual(1e-3);
    }
  });

  it("tol sets SciPy's tolerance of each method; without it the defaults stop earlier", () => {
    const loose = minimize(rosen, [-1.2, 1], { method: "bfgs" });
    const tight = minimize(rosen, [-1.2, 1], { method: "bfgs", tol: 1e-10 });
    expect(maxAbs(ravelTree(loose.jac).vector)).toBeLessThanOrEqual(1e-5);
    expect(maxAbs(ravelTree(tight.jac).vector)).toBeLessThanOrEqual(1e-10);
    expect(tight.nit).toBeGreaterThan(loose.nit);
    const ncg = minimize(rosen, [-1.2, 1], { method: "newton-cg", tol: 1e-12 });
    expect(ncg.status).toBe("xtol");
    expect(maxAbs(ravelTree(ncg.jac).vector)).toBeLessThanOrEqual(1e-7);
  });
});

describe("parameter trees", () => {
  // f = Σ (x − c)² over a record of a number, a Float64Array and a 2×2 ndarray, plus a coupling term
  const target = { a: 2, b: new Float64Array([-1, 3]), m: ndarray(new Float64Array([1, 2, 3, 4]), [2, 2]) };
  type P = { a: number; b: Float64Array; m: NdArray };
  const f = (p: { a: Scalar; b: Tensor; m: Tensor }): Scalar =>
    add(
      add(square(sub(p.a, target.a)), sum(square(sub(p.b, target.b))) as Scalar),
      add(sum(square(sub(p.m, target.m))) as Scalar, mul(0.5, square(sub(p.a, index(p.m, [1, 0]))))),
    );
  const x0: P = { a: 0, b: new Float64Array(2), m: ndarray(new Float64Array(4), [2, 2]) };

  it.each(METHODS)("%s: x and jac come back shaped like x0", (method) => {
    const r = minimize(f, x0, { method, ...TIGHT[method] });
    expect(r.success).toBe(true);
    expect(typeof r.x.a).toBe("number");
    expect(r.x.b).toBeInstanceOf(Float64Array);
    expect(r.x.m.shape).toEqual([2, 2]);
    expect(r.jac.m.shape).toEqual([2, 2]);
    // minimizer: b = target.b, m = target.m except (a, m10) solving the coupled pair
    // 2(a − 2) + (a − m10) = 0, 2(m10 − 3) − (a − m10) = 0  ⇒  a = 2.25, m10 = 2.75
    expect(r.x.a).toBeCloseTo(2.25, 8);
    expect(Array.from(r.x.b)).toEqual([expect.closeTo(-1, 8), expect.closeTo(3, 8)]);
    expect(Array.from(r.x.m.data)).toEqual([1, 2, 2.75, 4].map((v) => expect.closeTo(v, 8)));
    expect(x0.a).toBe(0); // x0 untouched
  });

  it("the dense Hessian of a tree agrees with Hessian-vector products along the basis", () => {
    const g = (p: { a: Scalar; b: Tensor; m: Tensor }): Scalar =>
      add(mul(mul(p.a, p.a), dot(p.b, p.b) as Scalar), mul(index(p.m, [0, 1]), mul(index(p.b, 0), index(p.m, [1, 1]))));
    const point: P = { a: 1.5, b: new Float64Array([0.5, -2]), m: ndarray(new Float64Array([1, 2, 3, 4]), [2, 2]) };
    const raveled = ravelTree(point);
    const H = denseHessian(raveled.structure, hessianOf(g)(point), 7);
    for (let j = 0; j < 7; j++) {
      const e = new Float64Array(7);
      e[j] = 1;
      const column = raveled.ravel(hvp(g, point, raveled.unravel(e)));
      for (let i = 0; i < 7; i++) expect(H[i * 7 + j]).toBeCloseTo(column[i], 12);
    }
  });
});

describe("bounds (lbfgs as L-BFGS-B)", () => {
  /** ‖P(x − g) − x‖∞: 0 exactly at a first-order (KKT) point of the box. */
  const projected = (x: Float64Array, g: Float64Array, lower: number[], upper: number[]) =>
    maxAbs(x.map((v, i) => Math.min(Math.max(v - g[i], lower[i]), upper[i]) - v));

  it("Rosenbrock with x ≤ 0.5: the minimum on the bound, (0.5, 0.25), f = 0.25", () => {
    const r = minimize(rosen, [-1.2, 1], { bounds: { upper: [0.5, Infinity] }, gtol: 1e-10, ftol: 0 });
    expect(r.success).toBe(true);
    expect(r.x[0]).toBe(0.5);
    expect(r.x[1]).toBeCloseTo(0.25, 9);
    expect(r.fun).toBeCloseTo(0.25, 12);
  });

  it("a diagonal quadratic in a box: the minimizer is the center clipped to the box", () => {
    const c = Array.from({ length: 20 }, (_, i) => 3 * Math.sin(i));
    const lambda = Array.from({ length: 20 }, (_, i) => 10 ** ((3 * i) / 19));
    const f = (x: Scalar[]) => x.reduce<Scalar>((s, v, i) => add(s, mul(0.5 * lambda[i], square(sub(v, c[i])))), 0);
    const r = minimize(f, new Array<number>(20).fill(0), { bounds: { lower: -1, upper: 2 }, gtol: 1e-10, ftol: 0 });
    expect(r.success).toBe(true);
    // f ≈ 10 resolves ∇f to about 1e-7 (λ ≥ 1): x to the same
    r.x.forEach((v, i) => expect(Math.abs(v - Math.min(Math.max(c[i], -1), 2))).toBeLessThanOrEqual(1e-6));
  });

  it("Rosenbrock n=100 in [0, 0.8]: a first-order point, at SciPy's L-BFGS-B value", () => {
    const r = boundedRosenbrock().minimize({ method: "lbfgs", gtol: 1e-7, ftol: 1e-15 });
    expect(r.success).toBe(true);
    const x = ravelTree(r.x).vector;
    expect(x.every((v) => v >= 0 && v <= 0.8)).toBe(true);
    expect(projected(x, ravelTree(r.jac).vector, new Array(100).fill(0), new Array(100).fill(0.8))).toBeLessThanOrEqual(1e-6);
    expect(x[0]).toBe(0.8);
    // SciPy 1.10's L-BFGS-B from the same point (pnpm bench:optim): 95.09173506163809
    expect(Math.abs(r.fun - 95.09173506163809)).toBeLessThanOrEqual(1e-10);
  });

  it("logistic regression with w ≥ 0: the first-order conditions, computed by hand", () => {
    const problem = testProblems().find((p) => p.name.startsWith("logistic"))!;
    const unconstrained = ravelTree(problem.minimize({ method: "lbfgs", gtol: 1e-10, ftol: 0 }).x).vector;
    expect(unconstrained.some((v) => v < -1e-3)).toBe(true); // so the bound is active
    const r = problem.minimize({ method: "lbfgs", bounds: { lower: 0 }, gtol: 1e-10, ftol: 0 });
    const w = ravelTree(r.x).vector;
    expect(w.every((v) => v >= 0)).toBe(true);
    const g = ravelTree(r.jac).vector;
    const n = w.length;
    expect(projected(w, g, new Array(n).fill(0), new Array(n).fill(Infinity))).toBeLessThanOrEqual(1e-8);
    expect(w.some((v) => v === 0)).toBe(true);
  });

  it("bounds as trees or numbers, a fixed component, x0 outside the box, and their errors", () => {
    const f = (p: { a: Scalar; b: Tensor }) => add(square(sub(p.a, 5)), sum(square(sub(p.b, 5))) as Scalar);
    const r = minimize(f, { a: 0, b: new Float64Array([0, 0]) }, {
      bounds: { lower: { a: -1, b: new Float64Array([7, 1]) }, upper: { a: 2, b: new Float64Array([9, 1]) } },
    });
    expect(r.x.a).toBe(2); // at its upper bound
    expect(Array.from(r.x.b)).toEqual([7, 1]); // x0 projected to 7; a fixed component stays at 1
    expect(() => minimize(rosen, [0, 0], { bounds: { lower: 1, upper: 0 } })).toThrow(/bounds.lower exceeds bounds.upper at component 0/);
    expect(() => minimize(rosen, [0, 0], { bounds: { lower: [0, 0, 0] } })).toThrow(/value has dims|array of 3/);
    expect(() => minimize(rosen, [0, 0], { method: "bfgs", bounds: { lower: 0 } })).toThrow(/option bounds is not used by method "bfgs" \(it is lbfgs's\)/);
    expect(() => minimize(rosen, [0, 0], { bounds: { low: 0 } as never })).toThrow(/unknown option "low"/);
  });
});

describe("stopping and errors", () => {
  it("maxIter: not a success, and says so", () => {
    const r = minimize(rosen, [-1.2, 1], { method: "bfgs", maxIter: 3 });
    expect([r.success, r.status, r.nit]).toEqual([false, "maxIter", 3]);
    expect(r.message).toMatch(/Maximum number of iterations/);
  });

  it("the callback sees each iterate as a tree, and returning false stops", () => {
    const seen: number[] = [];
    const r = minimize(rosen, [-1.2, 1], {
      method: "lbfgs",
      callback: ({ nit, x, jac }) => {
        seen.push(nit);
        expect(x).toHaveLength(2);
        expect(jac).toHaveLength(2);
        return nit < 5;
      },
    });
    expect(seen).toEqual([1, 2, 3, 4, 5]);
    expect(r.status).toBe("callback");
  });

  it("NaN at the start is reported, not iterated on", () => {
    const r = minimize((x: Scalar[]) => log(x[0]), [-1], { method: "lbfgs" });
    expect([r.success, r.status]).toEqual([false, "nonFinite"]);
  });

  it("a function unbounded below ends in a failed line search or a non-finite value, not a loop", () => {
    for (const method of ["lbfgs", "bfgs"] as const) {
      const r = minimize((x: Scalar[]) => mul(-1, square(x[0])), [1], { method });
      expect(r.success).toBe(false);
    }
  });

  it("options are checked: the method, keys of another method, values", () => {
    expect(() => minimize(rosen, [1, 1], { method: "cg" as Method })).toThrow(/unknown method "cg"; the methods are lbfgs, bfgs, newton-cg, trust-exact/);
    expect(() => minimize(rosen, [1, 1], { method: "bfgs", memory: 5 })).toThrow(/option memory is not used by method "bfgs" \(it is lbfgs's\)/);
    expect(() => minimize(rosen, [1, 1], { maxiter: 5 } as MinimizeOptions<number[]>)).toThrow(OptimOptionsError);
    expect(() => minimize(rosen, [1, 1], { gtol: -1 })).toThrow(/gtol is -1; it must be a number ≥ 0/);
    expect(() => minimize(rosen, [1, 1], { method: "trust-exact", eta: 0.5 })).toThrow(/eta is 0.5/);
    expect(() => minimize(rosen, [1, 1], { maxIter: 2.5 })).toThrow(/maxIter is 2.5/);
  });
});
