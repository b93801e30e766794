/**
 * The pieces of the minimizers on their own: the strong-Wolfe line search (its result
 * meets both conditions), the symmetric eigendecomposition (A V = V Λ, VᵀV = I), and the
 * trust-region subproblem (N&W Thm. 4.1's conditions, the hard case included, and the
 * minimum over the circle found by brute force in 2-D).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { interpolate, strongWolfe, WOLFE, type Phi } from "../src/minimize/line-search.js";
import { symmetricEigen } from "../src/minimize/eigen.js";
import { solveSubproblem } from "../src/minimize/trust-exact.js";

/** A random symmetric matrix from a seed, with `repeat` copies of one eigenvalue when asked. */
function symmetric(n: number, seed: number): Float64Array {
  let s = seed;
  const random = () => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31 - 0.5;
  const a = new Float64Array(n * n);
  for (let i = 0; i < n; i++) for (let j = 0; j <= i; j++) a[i * n + j] = a[j * n + i] = random();
  return a;
}

describe("strong-Wolfe line search (N&W Alg. 3.5, 3.6)", () => {
  const cases: [string, (a: number) => [number, number]][] = [
    ["a quadratic with its minimum at 0.3", (a) => [(a - 0.3) ** 2, 2 * (a - 0.3)]],
    ["a quartic, minimum far out at 40", (a) => [(a - 40) ** 4 / 1e4, (4 * (a - 40) ** 3) / 1e4]],
    ["a sharp valley at 1e-3", (a) => [1e6 * (a - 1e-3) ** 2, 2e6 * (a - 1e-3)]],
    ["N&W's example φ(α) = −α/(α² + 2)", (a) => [-a / (a * a + 2), (a * a - 2) / (a * a + 2) ** 2]],
  ];
  it.each(cases)("%s: the step meets sufficient decrease and curvature", (_name, fn) => {
    const phi: Phi = (a) => {
      const [value, slope] = fn(a);
      return { value, slope };
    };
    const [phi0, dphi0] = fn(0);
    const r = strongWolfe(phi, phi0, dphi0, 1, { ...WOLFE, maxEvaluations: 50 });
    expect(r.kind).toBe("wolfe");
    if (r.kind !== "wolfe") return;
    const { alpha, value, slope } = r.trial;
    expect(value).toBeLessThanOrEqual(phi0 + WOLFE.c1 * alpha * dphi0);
    expect(Math.abs(slope)).toBeLessThanOrEqual(-WOLFE.c2 * dphi0);
  });

  it("NaN beyond a point (f undefined there) is a step too long, not an answer", () => {
    const phi: Phi = (a) => (a > 0.5 ? { value: NaN, slope: NaN } : { value: (a - 0.4) ** 2, slope: 2 * (a - 0.4) });
    const r = strongWolfe(phi, 0.16, -0.8, 1, WOLFE);
    expect(r.kind).toBe("wolfe");
    if (r.kind === "wolfe") expect(r.trial.alpha).toBeLessThanOrEqual(0.5);
  });

  it("an ascent direction gives no step", () => {
    const r = strongWolfe((a) => ({ value: a, slope: 1 }), 0, 1, 1, WOLFE);
    expect(r.kind).toBe("failed");
  });

  it("the cubic's minimizer, kept inside the interval", () => {
    // φ = (α − 0.3)²: the cubic through (0, 0.09, −0.6) and (1, 0.49, 1.4) is the quadratic itself
    expect(interpolate({ alpha: 0, value: 0.09, slope: -0.6 }, { alpha: 1, value: 0.49, slope: 1.4 })).toBeCloseTo(0.3, 14);
    // its minimizer outside [0.1, 0.9] of the interval: bisection
    expect(interpolate({ alpha: 0, value: 0, slope: -1 }, { alpha: 1, value: -0.999, slope: -0.001 })).toBe(0.5);
  });
});

describe("symmetric eigendecomposition (tred2 + tql2)", () => {
  const check = (a: Float64Array, n: number) => {
    const { values, vectors: V } = symmetricEigen(a, n);
    const scale = Math.max(1, ...Array.from(values, Math.abs));
    for (let k = 1; k < n; k++) expect(values[k]).toBeGreaterThanOrEqual(values[k - 1]);
    for (let i = 0; i < n; i++) {
      for (let k = 0; k < n; k++) {
        let av = 0;
        let vv = 0;
        for (let j = 0; j < n; j++) {
          av += a[i * n + j] * V[j * n + k];
          vv += V[j * n + i] * V[j * n + k];
        }
        expect(Math.abs(av - values[k] * V[i * n + k])).toBeLessThan(1e-12 * n * scale);
        expect(Math.abs(vv - (i === k ? 1 : 0))).toBeLessThan(1e-12 * n);
      }
    }
  };

  it("property: random symmetric matrices up to 40×40", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 2 ** 30 }), (n, seed) => check(symmetric(n, seed), n)),
      { numRuns: 60 },
    );
  });

  it("repeated eigenvalues, zeros, a diagonal, a 1×1", () => {
    const n = 6;
    const identity = new Float64Array(n * n);
    for (let i = 0; i < n; i++) identity[i * n + i] = 1;
    check(identity, n);
    check(new Float64Array(n * n), n);
    check(Float64Array.from([3, 0, 0, 0, -1, 0, 0, 0, 2]), 3);
    expect(Array.from(symmetricEigen(Float64Array.from([3, 0, 0, 0, -1, 0, 0, 0, 2]), 3).values)).toEqual([-1, 2, 3]);
    expect(Array.from(symmetricEigen(Float64Array.from([-7]), 1).values)).toEqual([-7]);
    // a rank-one matrix u uᵀ: eigenvalues 0 (n − 1 times) and ‖u‖²
    const u = [1, 2, 3, 4];
    const r1 = Float64Array.from({ length: 16 }, (_, k) => u[Math.floor(k / 4)] * u[k % 4]);
    check(r1, 4);
    expect(symmetricEigen(r1, 4).values[3]).toBeCloseTo(30, 12);
  });
});

describe("the trust-region subproblem", () => {
  /** m(p) = gᵀp + ½ pᵀHp. */
  const model = (H: Float64Array, g: Float64Array, p: Float64Array) => {
    const n = g.length;
    let m = 0;
    for (let i = 0; i < n; i++) {
      m += g[i] * p[i];
      for (let j = 0; j < n; j++) m += 0.5 * p[i] * H[i * n + j] * p[j];
    }
    return m;
  };
  /** min m over ‖p‖ ≤ Δ in 2-D by brute force: the boundary at 2·10⁵ angles, and the interior Newton point if it is a minimum. */
  const bruteForce = (H: Float64Array, g: Float64Array, radius: number) => {
    let best = 0;
    for (let k = 0; k < 200_000; k++) {
      const t = (2 * Math.PI * k) / 200_000;
      best = Math.min(best, model(H, g, Float64Array.from([radius * Math.cos(t), radius * Math.sin(t)])));
    }
    const det = H[0] * H[3] - H[1] * H[2];
    if (H[0] > 0 && det > 0) {
      const p = Float64Array.from([-(H[3] * g[0] - H[1] * g[1]) / det, -(-H[2] * g[0] + H[0] * g[1]) / det]);
      if (Math.hypot(p[0], p[1]) <= radius) best = Math.min(best, model(H, g, p));
    }
    return best;
  };

  it.each([
    ["positive definite, Newton step inside", [2, 0.5, 0.5, 1], [1, -1], 10],
    ["positive definite, on the boundary", [2, 0.5, 0.5, 1], [1, -1], 0.1],
    ["indefinite", [1, 2, 2, -3], [0.3, 0.7], 1],
    ["negative definite", [-1, 0, 0, -4], [0.1, 0.2], 2],
    ["the hard case: g ⊥ the lowest eigenvector", [-1, 0, 0, 2], [0, 1], 2],
    ["the hard case, g = 0 at a saddle", [-2, 0, 0, 1], [0, 0], 0.5],
    ["nearly the hard case", [-1, 0, 0, 2], [1e-9, 1], 2],
  ])("%s: the model's minimum over the ball", (_name, h, gv, radius) => {
    const H = Float64Array.from(h);
    const g = Float64Array.from(gv);
    const p = new Float64Array(2);
    const { decrease, boundary } = solveSubproblem(symmetricEigen(H, 2), g, radius, p);
    const norm = Math.hypot(p[0], p[1]);
    expect(norm).toBeLessThanOrEqual(radius * (1 + 1e-12));
    expect(boundary).toBe(Math.abs(norm - radius) <= 1e-9 * radius);
    expect(decrease).toBeCloseTo(-model(H, g, p), 12);
    // no point of the ball does better (the brute force samples the circle finely: 1e-9 relative)
    const best = bruteForce(H, g, radius);
    expect(model(H, g, p)).toBeLessThanOrEqual(best + 1e-9 * Math.max(1, Math.abs(best)));
  });

  it("property: N&W Thm. 4.1 holds, (H + λI)p = −g with λ ≥ 0, λ(Δ − ‖p‖) = 0, H + λI ⪰ 0", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 2 ** 30 }), fc.double({ min: 1e-3, max: 1e2, noNaN: true }), (n, seed, radius) => {
        const H = symmetric(n, seed);
        const g = symmetric(n, seed + 1).subarray(0, n);
        const eigen = symmetricEigen(H, n);
        const p = new Float64Array(n);
        solveSubproblem(eigen, g, radius, p);
        const norm = Math.hypot(...p);
        expect(norm).toBeLessThanOrEqual(radius * (1 + 1e-10));
        // λ from the first component of (H p + g) = −λ p, least squares over all
        let num = 0;
        let den = 0;
        const r = new Float64Array(n);
        for (let i = 0; i < n; i++) {
          for (let j = 0; j < n; j++) r[i] += H[i * n + j] * p[j];
          r[i] += g[i];
          num -= r[i] * p[i];
          den += p[i] * p[i];
        }
        const lambda = den > 0 ? num / den : 0;
        expect(lambda).toBeGreaterThanOrEqual(-1e-8);
        for (let i = 0; i < n; i++) expect(Math.abs(r[i] + lambda * p[i])).toBeLessThan(1e-7 * Math.max(1, Math.hypot(...g)));
        if (lambda > 1e-8) expect(Math.abs(norm - radius)).toBeLessThan(1e-8 * radius);
        expect(lambda + eigen.values[0]).toBeGreaterThanOrEqual(-1e-8);
      }),
      { numRuns: 200 },
    );
  });
});
