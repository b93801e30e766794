/**
 * The GradBench modules hello, lse, llsq, det, ode and kmeans against values computed
 * independently of wengert: each eval's C++ reference (cpp/gradbench/evals/*.hpp)
 * transliterated to plain JS for the primal, and closed forms and finite differences of
 * those plain-JS primals for the derivatives, on small generated inputs shaped like
 * GradBench's (inputs.ts), called as the adapter calls them (prepare, run, JSON).
 */
import ndarray from "ndarray";
import { describe, expect, it } from "vitest";
import { fdGradient, fdNewtonStep } from "./helpers/fd.js";
import { PointSet, rng } from "@wengert/ops";
import { jsonable } from "../src/gradbench/json.js";
import type { EvalFunction, EvalModule } from "../src/gradbench/module.js";
import { modules } from "../src/gradbench/modules/index.js";
import { assign, assignedCost, pointCost } from "../src/gradbench/modules/kmeans.js";
import { div, grad, index, jvp, logsumexp, type NdArray, type Scalar, type Tensor } from "@wengert/core";
import { samples } from "../src/gradbench/modules/llsq.js";
import { solve } from "../src/gradbench/modules/ode.js";
import { evaluate, respond, warmUp } from "../src/gradbench/protocol.js";
import { detInput, kmeansInput, llsqInput, lseInput, odeInput, SAMPLE_INPUTS } from "../src/gradbench/inputs.js";
import { derivativeOverPrimal, FUNCTION_PAIRS, NO_PRIMAL, ratiosForAll, ratioTable } from "../src/gradbench/report.js";

/** The output the eval would receive for `module.fn(input)`. */
function call(module: EvalModule, fn: string, input: unknown): unknown {
  const r = evaluate(module[fn] as unknown as EvalFunction<unknown>, input);
  if (!r.success) throw new Error(r.error);
  return jsonable(r.output);
}

const num = (v: unknown) => v as number;
const vec = (v: unknown) => v as number[];

/** max |a − b| / max(1, max |b|) */
function relErr(a: readonly number[], b: readonly number[]): number {
  expect(a).toHaveLength(b.length);
  let e = 0;
  let m = 1;
  for (let i = 0; i < b.length; i++) {
    e = Math.max(e, Math.abs(a[i] - b[i]));
    m = Math.max(m, Math.abs(b[i]));
  }
  return e / m;
}

describe("hello", () => {
  it("square is x², double is its derivative 2x", () => {
    for (const x of [1, 2, -1.5, 0, 1e10]) {
      expect(call(modules.hello, "square", x)).toBe(x * x);
      expect(call(modules.hello, "double", x)).toBe(2 * x);
    }
  });
});

// ---- lse ----
/** lse.hpp in plain JS. */
function lsePlain(x: readonly number[]): number {
  let a = x[0];
  for (let i = 1; i < x.length; i++) a = Math.max(a, x[i]);
  let s = 0;
  for (const v of x) s += Math.exp(v - a);
  return Math.log(s) + a;
}
const softmax = (x: readonly number[]): number[] => {
  const l = lsePlain(x);
  return x.map((v) => Math.exp(v - l));
};

describe("lse", () => {
  it("primal = lse.hpp in plain JS", () => {
    for (const n of [1, 2, 10, 2500]) {
      const { x } = lseInput(n, n);
      expect(num(call(modules.lse, "primal", { x }))).toBeCloseTo(lsePlain(x), 13);
    }
    // shifted far from 0: the max keeps exp in range
    const x = [1000, 1001, 999.5];
    expect(num(call(modules.lse, "primal", { x }))).toBeCloseTo(lsePlain(x), 11);
  });
  it("gradient = softmax (closed form) and = central differences", () => {
    const { x } = lseInput(40, 7);
    const g = vec(call(modules.lse, "gradient", { x }));
    expect(relErr(g, softmax(x))).toBeLessThan(1e-14);
    expect(relErr(g, fdGradient(lsePlain, x, 1e-5))).toBeLessThan(1e-9);
  });
  it("gradient at 10⁶ elements sums to 1 and is the softmax", () => {
    const { x } = lseInput(1_000_000, 3);
    const g = vec(call(modules.lse, "gradient", { x }));
    expect(g).toHaveLength(1_000_000);
    expect(g.reduce((s, v) => s + v, 0)).toBeCloseTo(1, 10);
    // the maximum's share, 1 − Σ softmax (rounding: ~10⁻¹⁴ over 10⁶ terms), goes to the argmax
    expect(relErr(g, softmax(x))).toBeLessThan(1e-13);
  });
  it("on its prepared input (held in the exp kernels' memory) = logsumexp and its grad of the plain array, to the bit, call after call", () => {
    const fn = (name: "primal" | "gradient") => modules.lse[name] as unknown as Required<EvalFunction<unknown>>;
    const run = (name: "primal" | "gradient", prepared: unknown) => fn(name).run(prepared);
    const inputs = [300, 4097, 70_001].map((n, i) => lseInput(n, 11 + i).x);
    const prepared = inputs.map((x) => ({ primal: fn("primal").prepare({ x }), gradient: fn("gradient").prepare({ x }) }));
    for (let round = 0; round < 2; round++) {
      // the last prepared first: each input's after the others' calls
      for (let i = inputs.length - 1; i >= 0; i--) {
        const x = Float64Array.from(inputs[i]);
        expect(run("primal", prepared[i].primal), `primal, n = ${x.length}`).toBe(logsumexp(x));
        // toEqual: Object.is on each element
        expect((run("gradient", prepared[i].gradient) as NdArray).data, `gradient, n = ${x.length}`).toEqual(grad((v: Tensor) => logsumexp(v), x));
      }
    }
  });
});

// ---- llsq ----
/** llsq.hpp in plain JS. */
function llsqPlain(x: readonly number[], n: number): number {
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const t = -1 + (i * 2) / (n - 1);
    let inner = Number(0 < t) - Number(t < 0);
    let mul = 1;
    for (let j = 0; j < x.length; j++) {
      inner -= x[j] * mul;
      mul *= t;
    }
    sum += inner * inner;
  }
  return sum / 2;
}
/** ∂y/∂xⱼ = −Σᵢ rᵢ tᵢʲ with rᵢ = sᵢ − Σⱼ xⱼ tᵢʲ. */
function llsqGradPlain(x: readonly number[], n: number): number[] {
  const g = new Array<number>(x.length).fill(0);
  for (let i = 0; i < n; i++) {
    const t = -1 + (i * 2) / (n - 1);
    let r = Number(0 < t) - Number(t < 0);
    let p = 1;
    for (let j = 0; j < x.length; j++, p *= t) r -= x[j] * p;
    p = 1;
    for (let j = 0; j < x.length; j++, p *= t) g[j] -= r * p;
  }
  return g;
}

describe("llsq", () => {
  it("primal = llsq.hpp in plain JS", () => {
    for (const [n, m] of [
      [2, 1],
      [16, 128],
      [33, 5],
      [300, 7], // blocks of 128 rows and a last one of 44
      [1024, 128],
    ]) {
      const input = llsqInput(n, m, n + m);
      const y = num(call(modules.llsq, "primal", input));
      expect(Math.abs(y - llsqPlain(input.x, n)) / Math.abs(llsqPlain(input.x, n))).toBeLessThan(1e-12);
    }
  });
  it("samples: T's rows are llsq.hpp's running products of tᵢ, bit for bit, and s their signs", () => {
    for (const [n, m] of [[2, 3], [5, 4], [7, 9], [12, 1], [33, 17]]) {
      const { T, s } = samples({ x: new Float64Array(m), n });
      for (let i = 0; i < n; i++) {
        const t = -1 + (i * 2) / (n - 1);
        expect(s[i]).toBe(Number(0 < t) - Number(t < 0));
        let p = 1;
        for (let j = 0; j < m; j++, p *= t) expect(T.get(i, j), `n=${n} m=${m} i=${i} j=${j}`).toBe(p);
      }
    }
  });
  it("gradient = the closed form and = central differences", () => {
    const input = llsqInput(64, 6, 11);
    const g = vec(call(modules.llsq, "gradient", input));
    expect(relErr(g, llsqGradPlain(input.x, 64))).toBeLessThan(1e-13);
    // y is quadratic: central differences are exact up to rounding
    expect(relErr(g, fdGradient((x) => llsqPlain(x, 64), input.x, 1e-3))).toBeLessThan(1e-8);
    // the gradient is jitted: a second x of the same shape is a replay
    const again = llsqInput(64, 6, 12);
    expect(again.x).not.toEqual(input.x);
    expect(relErr(vec(call(modules.llsq, "gradient", again)), llsqGradPlain(again.x, 64))).toBeLessThan(1e-13);
    const big = llsqInput(2048, 128, 5);
    expect(relErr(vec(call(modules.llsq, "gradient", big)), llsqGradPlain(big.x, 2048))).toBeLessThan(1e-12);
  });
});

// ---- det ----
/** det.hpp's recursion in plain JS (rows from the top, columns in increasing order). */
function detRecursive(A: readonly number[], ell: number): number {
  const rec = (row: number, cols: number[]): number => {
    if (cols.length === 1) return A[row * ell + cols[0]];
    let d = 0;
    let sign = 1;
    for (let j = 0; j < cols.length; j++) {
      const s = rec(
        row + 1,
        cols.filter((_, k) => k !== j),
      );
      d = sign > 0 ? d + A[row * ell + cols[j]] * s : d - A[row * ell + cols[j]] * s;
      sign = -sign;
    }
    return d;
  };
  return rec(
    0,
    Array.from({ length: ell }, (_, i) => i),
  );
}
/** det by Gaussian elimination with partial pivoting. */
function detLU(A: readonly number[], ell: number): number {
  const a = [...A];
  let d = 1;
  for (let c = 0; c < ell; c++) {
    let p = c;
    for (let r = c + 1; r < ell; r++) if (Math.abs(a[r * ell + c]) > Math.abs(a[p * ell + c])) p = r;
    if (p !== c) {
      for (let k = 0; k < ell; k++) [a[c * ell + k], a[p * ell + k]] = [a[p * ell + k], a[c * ell + k]];
      d = -d;
    }
    const piv = a[c * ell + c];
    d *= piv;
    for (let r = c + 1; r < ell; r++) {
      const f = a[r * ell + c] / piv;
      for (let k = c; k < ell; k++) a[r * ell + k] -= f * a[c * ell + k];
    }
  }
  return d;
}
/** ∂det/∂Aᵢⱼ = the cofactor (−1)^(i+j) det(A without row i and column j). */
function cofactors(A: readonly number[], ell: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < ell; i++) {
    for (let j = 0; j < ell; j++) {
      const M: number[] = [];
      for (let r = 0; r < ell; r++) for (let c = 0; c < ell; c++) if (r !== i && c !== j) M.push(A[r * ell + c]);
      out.push((i + j) % 2 === 0 ? detLU(M, ell - 1) : -detLU(M, ell - 1));
    }
  }
  return out;
}

describe("det", () => {
  it("primal = det.hpp's recursive expansion in plain JS, bit for bit", () => {
    for (let ell = 1; ell <= 7; ell++) {
      const input = detInput(ell, ell);
      expect(call(modules.det, "primal", input)).toBe(detRecursive(input.A, ell));
    }
  });
  it("primal at ell = 11 (the eval's largest) = elimination", () => {
    const input = detInput(11, 1);
    const d = num(call(modules.det, "primal", input));
    expect(Math.abs(d - detLU(input.A, 11)) / Math.abs(d)).toBeLessThan(1e-9);
  });
  it("gradient = the cofactors, and = central differences (det is linear in each entry)", () => {
    for (const ell of [1, 2, 3, 5, 8, 11]) {
      const input = detInput(ell, 100 + ell);
      const g = vec(call(modules.det, "gradient", input));
      expect(relErr(g, cofactors(input.A, ell))).toBeLessThan(1e-10);
      if (ell <= 5) expect(relErr(g, fdGradient((A) => detRecursive(A, ell), input.A, 1e-3))).toBeLessThan(1e-10);
    }
  });
  it("a singular matrix: det 0, gradient the (nonzero) cofactors", () => {
    const A = [1, 2, 3, 2, 4, 6, 1, 0, 1];
    expect(call(modules.det, "primal", { A, ell: 3 })).toBe(0);
    expect(relErr(vec(call(modules.det, "gradient", { A, ell: 3 })), cofactors(A, 3))).toBeLessThan(1e-14);
  });
});

// ---- ode ----
/** ode.hpp in plain JS. */
function odePlain(x: readonly number[], s: number): number[] {
  const n = x.length;
  const h = 2 / s;
  const yf = new Array<number>(n).fill(0);
  const f = (y: readonly number[]) => y.map((_, i) => (i === 0 ? x[0] : x[i] * y[i - 1]));
  for (let step = 0; step < s; step++) {
    const k1 = f(yf);
    const k2 = f(yf.map((v, i) => v + (h * k1[i]) / 2));
    const k3 = f(yf.map((v, i) => v + (h * k2[i]) / 2));
    const k4 = f(yf.map((v, i) => v + h * k3[i]));
    for (let i = 0; i < n; i++) yf[i] += (h * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i])) / 6;
  }
  return yf;
}

describe("ode", () => {
  it("primal = ode.hpp in plain JS, bit for bit", () => {
    for (const [n, s] of [
      [1, 1],
      [2, 3],
      [10, 1],
      [100, 10],
      [1000, 10],
    ]) {
      const input = odeInput(n, s, n * s);
      expect(call(modules.ode, "primal", input)).toEqual(odePlain(input.x, s));
    }
  });
  it("primal replayed (jit) at another x of the same n and s: the same numbers as called once; the gradient too", () => {
    // the module keeps a jitted primal per s: the second input of each pair is a replay
    for (const [n, s] of [
      [3, 2],
      [50, 7],
    ]) {
      const first = odeInput(n, s, 5 * n + s);
      const second = odeInput(n, s, 11 * n + s);
      expect(first.x).not.toEqual(second.x);
      expect(call(modules.ode, "primal", first)).toEqual(odePlain(first.x, s));
      expect(call(modules.ode, "primal", second)).toEqual(odePlain(second.x, s));
      const g1 = vec(call(modules.ode, "gradient", first));
      const g2 = vec(call(modules.ode, "gradient", second));
      expect(relErr(g1, fdGradient((x) => odePlain(x, s)[n - 1], first.x, 1e-5))).toBeLessThan(1e-8);
      expect(relErr(g2, fdGradient((x) => odePlain(x, s)[n - 1], second.x, 1e-5))).toBeLessThan(1e-8);
    }
  });
  it("primal: y₀ = 2x₀, y₁ = 2x₀x₁ exactly (RK4 integrates polynomials of degree ≤ 4)", () => {
    const y = vec(call(modules.ode, "primal", { x: [0.5, 3, 1], s: 4 }));
    expect(y[0]).toBeCloseTo(1, 15);
    expect(y[1]).toBeCloseTo(0.5 * 3 * 2, 14); // y₁' = x₁x₀t ⇒ y₁(2) = 2x₀x₁
    expect(y[2]).toBeCloseTo((0.5 * 3 * 1 * 8) / 6, 14); // y₂ = x₀x₁x₂t³/6
  });
  it("gradient of the last component = central differences", () => {
    for (const [n, s] of [
      [1, 2],
      [4, 3],
      [12, 5],
    ]) {
      const input = odeInput(n, s, 17 * n + s);
      const g = vec(call(modules.ode, "gradient", input));
      const fd = fdGradient((x) => odePlain(x, s)[n - 1], input.x, 1e-5);
      expect(relErr(g, fd)).toBeLessThan(1e-8);
    }
  });
  it("the jitted solvers (y(0) an input) give what solve gives from its literal y(0), unjitted, bit for bit", () => {
    const rand = rng(5);
    const bits = (v: ArrayLike<number>): number[] => Array.from(new Uint32Array(Float64Array.from(v).buffer));
    for (const [n, s] of [
      [1, 1],
      [2, 1],
      [3, 2],
      [7, 3],
      [64, 10],
      [1500, 4],
    ]) {
      // x of either sign, with zeros (products of ±0); the first call traces, the later ones replay
      for (let round = 0; round < 3; round++) {
        const x = Array.from({ length: n }, (_, i) => (i % 7 === 3 ? 0 : (rand() - 0.4) * 3));
        const xf = Float64Array.from(x);
        const y = solve(xf, s) as unknown as NdArray;
        expect(bits(vec(call(modules.ode, "primal", { x, s })))).toEqual(bits(y.data));
        const g = grad((w): Scalar => index(solve(w, s), n - 1), xf) as Float64Array;
        expect(bits(vec(call(modules.ode, "gradient", { x, s })))).toEqual(bits(g));
      }
    }
  });
  it("define's warm-up runs both functions on its synthetic x; the numbers after it are the same", () => {
    const input = odeInput(1000, 10, 23);
    const before = [vec(call(modules.ode, "primal", input)), vec(call(modules.ode, "gradient", input))];
    expect(warmUp(modules.ode)?.success).toBe(true);
    expect([vec(call(modules.ode, "primal", input)), vec(call(modules.ode, "gradient", input))]).toEqual(before);
  });
  it("gradient with x of length 1000 and 10 steps: shape, and the first entries by differences", () => {
    const input = odeInput(1000, 10, 99);
    const g = vec(call(modules.ode, "gradient", input));
    expect(g).toHaveLength(1000);
    // the last component depends on every xᵢ; most are far below rounding of y, so check a short x
    const short = { x: input.x.slice(0, 6), s: 10 };
    const gs = vec(call(modules.ode, "gradient", short));
    expect(relErr(gs, fdGradient((x) => odePlain(x, 10)[5], short.x, 1e-5))).toBeLessThan(1e-8);
  });
});

// ---- kmeans ----
/** kmeans.hpp's objective in plain JS. */
function kmeansCostPlain(points: readonly number[][], centroids: readonly number[][]): number {
  let cost = 0;
  for (const a of points) {
    let closest = Infinity;
    for (const b of centroids) {
      let d = 0;
      for (let l = 0; l < a.length; l++) d += (a[l] - b[l]) * (a[l] - b[l]);
      closest = Math.min(closest, d);
    }
    cost += closest;
  }
  return cost;
}
/** J/diag(H) in closed form: 2 Σ (c − p) over the points nearest to c, over 2 |those points|: c − their mean. */
function kmeansDirPlain(points: readonly number[][], centroids: readonly number[][]): number[][] {
  const d = centroids[0].length;
  const sums = centroids.map(() => new Array<number>(d).fill(0));
  const counts = centroids.map(() => 0);
  for (const p of points) {
    let best = Infinity;
    let arg = 0;
    centroids.forEach((c, j) => {
      let e = 0;
      for (let l = 0; l < d; l++) e += (p[l] - c[l]) ** 2;
      if (e < best) [best, arg] = [e, j];
    });
    counts[arg]++;
    for (let l = 0; l < d; l++) sums[arg][l] += p[l];
  }
  return centroids.map((c, j) => c.map((v, l) => v - sums[j][l] / counts[j]));
}

/** kmeans.hpp's choice of centroid for each point: the first of the least distances computed directly. */
function assignPlain(points: readonly number[][], centroids: readonly number[][]): number[] {
  return points.map((p) => {
    let best = Infinity;
    let arg = 0;
    centroids.forEach((c, j) => {
      let e = 0;
      for (let l = 0; l < p.length; l++) e += (p[l] - c[l]) * (p[l] - c[l]);
      if (e < best) [best, arg] = [e, j];
    });
    return arg;
  });
}

describe("kmeans", () => {
  it("assign picks kmeans.hpp's centroid where the product form's rounding cannot tell: near-ties, far from the origin, points on centroids", () => {
    const rand = rng(5);
    const asNd = (rows: number[][]) => ndarray(Float64Array.from(rows.flat()), [rows.length, rows[0].length]);
    const cases: [number[][], number[][]][] = [];
    // far from the origin: ‖p‖² ≈ 10¹² swamps distances of 10⁻⁴ in ‖c‖² − 2p·c
    // (all 1000 of them beyond the single-precision filter: the double-precision path decides them, past its direct loop's size)
    const far = Array.from({ length: 1000 }, () => [1e6 + rand() * 1e-2, -1e6 + rand() * 1e-2, 1e6 + rand() * 1e-2]);
    cases.push([far, far.slice(-40)]);
    // pairs of centroids mirrored about each point (exact or one-ulp ties), and duplicated centroids
    const pts = Array.from({ length: 200 }, () => [rand(), rand(), rand(), rand()]);
    const mirrored = pts.slice(0, 30).flatMap((p) => {
      const v = [rand(), rand(), rand(), rand()].map((u) => (u - 0.5) * 1e-3);
      return [p.map((x, l) => x + v[l]), p.map((x, l) => x - v[l])];
    });
    cases.push([pts, [...mirrored, ...mirrored.slice(0, 6)]]);
    // GradBench's own shape: the centroids are the last k points
    const { points, centroids } = kmeansInput(2000, 300, 8, 9);
    cases.push([points, centroids]);
    // few centroids: blocks of 2048 points, and a last one of 904
    const few = kmeansInput(5000, 16, 3, 4);
    cases.push([few.points, few.centroids]);
    for (const [P, C] of cases) {
      const points = asNd(P);
      const want = assignPlain(P, C);
      expect(Array.from(assign(points, asNd(C)))).toEqual(want);
      // through ops' single-precision filter, each point's distance beside its choice
      const dist = new Float64Array(P.length);
      expect(Array.from(assign(points, asNd(C), new PointSet(points.data as Float64Array, P.length, P[0].length), dist))).toEqual(want);
      expect([...dist]).toEqual(P.map((p, i) => p.reduce((s, x, l) => s + (x - C[want[i]][l]) * (x - C[want[i]][l]), 0)));
    }
  });
  it("cost = kmeans.hpp in plain JS, to the bit", () => {
    for (const [n, k, d] of [
      [10, 1, 2],
      [50, 3, 1],
      [100, 10, 8],
      [203, 7, 5],
      [1000, 10, 16],
    ]) {
      const input = kmeansInput(n, k, d, n + k + d);
      const c = num(call(modules.kmeans, "cost", input));
      expect(Object.is(c, kmeansCostPlain(input.points, input.centroids))).toBe(true);
    }
  });
  it("cost equals pointCost run untraced, and dir, jitted per prepared input, replays to the bit the definition run untraced", () => {
    for (const [n, k, d] of [
      [100, 10, 8],
      [2000, 10, 16],
    ]) {
      const p = modules.kmeans.cost.prepare!(kmeansInput(n, k, d, 7)) as { points: NdArray; centroids: NdArray };
      const a = assign(p.points, p.centroids);
      const cost = pointCost(p.points, p.centroids, a);
      const ones = ndarray(new Float64Array(p.centroids.size).fill(1), p.centroids.shape.slice());
      const [J, H1] = jvp((c: Tensor) => grad((c2: Tensor) => assignedCost(p.points, c2, a), c), p.centroids, ones) as [NdArray, NdArray];
      const dir = div(J, H1) as NdArray;
      // the first run traces, the next ones replay
      for (let run = 0; run < 3; run++) {
        expect(Object.is(modules.kmeans.cost.run(p as never), cost)).toBe(true);
        expect([...(modules.kmeans.dir.run(p as never) as NdArray).data]).toEqual([...dir.data]);
      }
    }
  });
  it("dir = J/diag(H) in closed form (c − mean of its points)", () => {
    const input = kmeansInput(1000, 10, 8, 4);
    const dir = call(modules.kmeans, "dir", input) as number[][];
    expect(dir).toHaveLength(10);
    expect(relErr(dir.flat(), kmeansDirPlain(input.points, input.centroids).flat())).toBeLessThan(1e-12);
  });
  it("dir = first over second central differences of the plain-JS cost", () => {
    const rand = rng(12);
    const points = Array.from({ length: 60 }, () => [rand(), rand(), rand()]);
    // centroids near (not on) some points: every cluster nonempty, no assignment changes within ±h
    const centroids = points.slice(-4).map((p) => p.map((v) => v + 0.01));
    const dir = (call(modules.kmeans, "dir", { points, centroids }) as number[][]).flat();
    const c = centroids.flat();
    const cost = (flat: readonly number[]) =>
      kmeansCostPlain(
        points,
        centroids.map((_, j) => flat.slice(j * 3, j * 3 + 3)),
      );
    expect(relErr(dir, fdNewtonStep(cost, c, 1e-4))).toBeLessThan(1e-5);
  });
  it("answers through the protocol with a k × d array", () => {
    const input = kmeansInput(200, 5, 4, 8);
    const a = respond(
      JSON.stringify({ id: 1, kind: "evaluate", module: "kmeans", function: "dir", input: { ...input, min_runs: 2, min_seconds: 0 } }),
      modules,
    );
    expect(a.success).toBe(true);
    const dir = a.output as number[][];
    expect(dir.map((r) => r.length)).toEqual([4, 4, 4, 4, 4]);
    expect((a.timings as { name: string }[]).filter((t) => t.name === "evaluate")).toHaveLength(2);
  });
});

describe("derivative / primal for pnpm bench", () => {
  it("times both functions of each eval and tabulates the ratio; a failing eval gets its error", () => {
    const broken: EvalModule = { primal: modules.lse.primal, gradient: modules.det.gradient };
    const rows = ratiosForAll({ hello: modules.hello, det: modules.det, lse: broken }, SAMPLE_INPUTS, true, { minRuns: 2, minSeconds: 0, warmup: 1 });
    expect(rows.map((r) => r.eval)).toEqual(["hello", "det", "lse"]);
    for (const r of rows.slice(0, 2)) {
      expect("ratio" in r.result).toBe(true);
      if (!("ratio" in r.result)) continue;
      expect(r.result.primal.runs).toBe(2);
      expect(r.result.derivative.medianNs).toBeGreaterThan(0);
      expect(r.result.ratio).toBeCloseTo(r.result.derivative.medianNs / r.result.primal.medianNs, 12);
    }
    expect("error" in rows[2].result && rows[2].result.error).toMatch(/InputError: the input has no field "A"/);
    const table = ratioTable(rows);
    expect(table.split("\n")).toHaveLength(2 + 3);
    expect(table).toContain("| det (gradient / primal) | 9 |");
    expect(table).toContain("failed: InputError");
  });

  it("warms each function up, then times the primal and the derivative by turns, a collection before each turn", () => {
    const calls: string[] = [];
    const fn = (name: string): EvalFunction<unknown> => ({ run: () => void calls.push(name) }) as unknown as EvalFunction<unknown>;
    const gc = () => void calls.push("gc");
    const r = derivativeOverPrimal({ objective: fn("p"), jacobian: fn("d") } as unknown as EvalModule, FUNCTION_PAIRS.ht, null, {
      minRuns: 4, minSeconds: 0, warmup: 3, warmupSeconds: 60, rounds: 2, gc,
    });
    expect(calls.join(" ")).toBe("p p p d d d gc p p gc d d gc d d gc p p");
    expect(r.primal.runs).toBe(4);
    expect(r.derivative.runs).toBe(4);
  });

  it("every registered eval has a function pair naming its module's functions, and a quick sample input they accept", () => {
    for (const [name, module] of Object.entries(modules)) {
      const pair = FUNCTION_PAIRS[name];
      expect(pair, name).toBeDefined();
      expect(SAMPLE_INPUTS[name], name).toBeDefined();
      const { input } = SAMPLE_INPUTS[name](true);
      for (const fn of [pair.primal, pair.derivative]) {
        if (fn === undefined) continue;
        expect(Object.keys(module), name).toContain(fn);
        const f = module[fn] as unknown as EvalFunction<unknown>;
        expect(() => f.prepare?.(input), `${name}.${fn}`).not.toThrow();
      }
    }
    expect(Object.keys(FUNCTION_PAIRS).filter((n) => FUNCTION_PAIRS[n].primal === undefined).sort()).toEqual(["particle", "saddle"]);
  });

  it("an eval without a primal (particle, saddle) gets its derivative's time alone; one without a pair or a sample gets a row saying why", () => {
    // particle's rr stood in for by hello's double (the real one takes ~0.75 s per call)
    const samples = { ...SAMPLE_INPUTS, particle: () => ({ description: "x=3", input: 3 }) };
    delete (samples as Record<string, unknown>).lse;
    const rows = ratiosForAll({ particle: { rr: modules.hello.double }, mystery: modules.hello, lse: modules.lse }, samples, true, {
      minRuns: 2,
      minSeconds: 0,
      warmup: 1,
    });
    expect(rows.map((r) => r.eval)).toEqual(["particle", "mystery", "lse"]);
    const [p, m, l] = rows;
    expect(p.pair).toEqual({ derivative: "rr" });
    expect("noPrimal" in p.result && p.result.derivative.runs).toBe(2);
    expect(m.pair).toBeUndefined();
    expect("skipped" in m.result && m.result.skipped).toBe("not timed: no function pair (report.ts FUNCTION_PAIRS), no sample input (inputs.ts SAMPLE_INPUTS)");
    expect("skipped" in l.result && l.result.skipped).toBe("not timed: no sample input (inputs.ts SAMPLE_INPUTS)");
    const lines = ratioTable(rows).split("\n");
    expect(lines).toHaveLength(2 + 3);
    expect(lines[2].split(" | ")).toEqual(["| particle (rr)", "x=3", NO_PRIMAL, expect.stringMatching(/^[0-9.e+-]+$/), `${NO_PRIMAL} |`]);
    expect(lines[3]).toBe("| mystery | — | not timed: no function pair (report.ts FUNCTION_PAIRS), no sample input (inputs.ts SAMPLE_INPUTS) | | |");
    expect(lines[4]).toBe("| lse (gradient / primal) | — | not timed: no sample input (inputs.ts SAMPLE_INPUTS) | | |");
  });
});
