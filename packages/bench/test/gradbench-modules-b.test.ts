/**
 * GradBench eval modules gmm, ba, ht, lstm, particle and saddle against values computed
 * independently: each primal against the same function written in plain JS (after
 * GradBench's C++ headers), each derivative against central differences of that plain
 * JS primal, the nested evals against GradBench's expected outputs and closed forms.
 * Inputs are small and generated, shaped like GradBench's.
 */
import { describe, expect, it } from "vitest";
import { grad, jvp, type Scalar } from "@wengert/core";
import type { EvalFunction } from "../src/gradbench/module.js";
import { modules } from "../src/gradbench/modules/index.js";
import { gmm, gmmGradient, gmmObjective, lgamma, logGammaDistrib, prepareGmm } from "../src/gradbench/modules/gmm.js";
import { abbreviate, ba, baJacobian, prepareBa, type BaPrepared } from "../src/gradbench/modules/ba.js";
import { ht } from "../src/gradbench/modules/ht.js";
import { lstm, lstmGradient, prepareLstm } from "../src/gradbench/modules/lstm.js";
import { naiveEuler, particle } from "../src/gradbench/modules/particle.js";
import { saddle, saddleFunction } from "../src/gradbench/modules/saddle.js";
import { maximum, objectiveBy, type Mode, type Vec } from "../src/gradbench/modules/gd.js";

// ---------------------------------------------------------------- helpers

/** A small deterministic generator (LCG), uniform in [0, 1). */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}
const normal = (r: () => number) => Math.sqrt(-2 * Math.log(r() + 1e-300)) * Math.cos(2 * Math.PI * r());
const table = (rows: number, cols: number, f: () => number): number[][] => Array.from({ length: rows }, () => Array.from({ length: cols }, f));
const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

/** Run one function of a module as the adapter does: prepare, then run. */
function call(f: EvalFunction<never>, input: unknown): unknown {
  const g = f as unknown as EvalFunction<unknown>;
  return g.run(g.prepare === undefined ? input : g.prepare(input));
}

/** Central difference of a plain-JS function of a flat parameter vector, along coordinate i. */
function central(f: (v: number[]) => number, v: readonly number[], i: number, h = 1e-6): number {
  const a = [...v];
  const b = [...v];
  a[i] += h;
  b[i] -= h;
  return (f(a) - f(b)) / (2 * h);
}

/** |a − b| / max(1, |a|, |b|), the worst over two arrays. */
function worst(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let e = 0;
  for (let i = 0; i < a.length; i++) e = Math.max(e, Math.abs(a[i] - b[i]) / Math.max(1, Math.abs(a[i]), Math.abs(b[i])));
  return e;
}

const logsumexp = (v: readonly number[]) => {
  const m = Math.max(...v);
  return Math.log(v.reduce((s, x) => s + Math.exp(x - m), 0)) + m;
};

it("the registry holds the six modules with the functions GradBench's evals call", () => {
  for (const [name, fns] of Object.entries({ gmm: ["objective", "jacobian"], ba: ["objective", "jacobian"], ht: ["objective", "jacobian"], lstm: ["objective", "jacobian"], particle: ["rr", "rf", "fr", "ff"], saddle: ["rr", "rf", "fr", "ff"] })) {
    expect(Object.keys(modules[name]).sort()).toEqual([...fns].sort());
  }
});

// ---------------------------------------------------------------- gmm

interface GmmJson { d: number; k: number; n: number; alpha: number[]; means: number[][]; icf: number[][]; x: number[][]; gamma: number; m: number }

function gmmInput(d: number, k: number, n: number, seed: number, gamma = 1, m = 0): GmmJson {
  const r = rng(seed);
  return {
    d, k, n, gamma, m,
    alpha: Array.from({ length: k }, () => normal(r)),
    means: table(k, d, r),
    icf: table(k, (d * (d + 1)) / 2, () => normal(r)),
    x: table(n, d, () => normal(r)),
  };
}

/** gmm.hpp's objective, loop by loop. */
function gmmPlain(g: GmmJson): number {
  const { d, k, n, gamma, m } = g;
  const icfSize = (d * (d + 1)) / 2;
  const sumQs = g.icf.map((q) => q.slice(0, d).reduce((s, v) => s + v, 0));
  const Qdiag = g.icf.map((q) => q.slice(0, d).map(Math.exp));
  let slse = 0;
  for (let ix = 0; ix < n; ix++) {
    const main: number[] = [];
    for (let ik = 0; ik < k; ik++) {
      const xc = g.x[ix].map((v, j) => v - g.means[ik][j]);
      const out = xc.map((v, j) => Qdiag[ik][j] * v);
      let l = d;
      for (let i = 0; i < d; i++) for (let j = i + 1; j < d; j++) out[j] += g.icf[ik][l++] * xc[i];
      main.push(g.alpha[ik] + sumQs[ik] - 0.5 * out.reduce((s, v) => s + v * v, 0));
    }
    slse += logsumexp(main);
  }
  const dof = d + m + 1;
  const C = dof * d * (Math.log(gamma) - 0.5 * Math.log(2)) - logGammaDistrib(0.5 * dof, d);
  let prior = 0;
  for (let ik = 0; ik < k; ik++) {
    let frob = 0;
    for (let j = 0; j < d; j++) frob += Qdiag[ik][j] ** 2;
    for (let j = d; j < icfSize; j++) frob += g.icf[ik][j] ** 2;
    prior += 0.5 * gamma * gamma * frob - m * sumQs[ik];
  }
  return -n * d * 0.5 * Math.log(2 * Math.PI) + slse - n * logsumexp(g.alpha) + prior - k * C;
}

const gmmFlat = (g: GmmJson) => [...g.alpha, ...g.means.flat(), ...g.icf.flat()];
function gmmUnflat(g: GmmJson, v: number[]): GmmJson {
  let p = 0;
  const take = (row: number[]) => row.map(() => v[p++]);
  return { ...g, alpha: take(g.alpha), means: g.means.map(take), icf: g.icf.map(take) };
}

describe("gmm", () => {
  it("lgamma and the log multivariate gamma function", () => {
    expect(lgamma(5)).toBeCloseTo(Math.log(24), 13);
    expect(lgamma(0.5)).toBeCloseTo(0.5 * Math.log(Math.PI), 13);
    expect(lgamma(10.3)).toBeCloseTo(13.48203678613836, 11); // log Γ(10.3), as Python's math.lgamma
    expect(logGammaDistrib(1.5, 1)).toBeCloseTo(lgamma(1.5), 14);
    // Γ_2(a) = √π Γ(a) Γ(a − ½)
    expect(logGammaDistrib(2.5, 2)).toBeCloseTo(0.5 * Math.log(Math.PI) + lgamma(2.5) + lgamma(2), 13);
  });

  for (const [d, k, n, gamma, m] of [[3, 4, 9, 1, 0], [2, 3, 5, 0.7, 2], [1, 2, 4, 1.3, 1]] as const) {
    it(`objective and gradient at d=${d} k=${k} n=${n} γ=${gamma} m=${m}`, () => {
      const g = gmmInput(d, k, n, 11 * d + k, gamma, m);
      const value = call(gmm.objective, g) as number;
      expect(Math.abs(value - gmmPlain(g)) / Math.abs(gmmPlain(g))).toBeLessThan(1e-13);
      const jac = call(gmm.jacobian, g) as Float64Array;
      const v = gmmFlat(g);
      expect(jac.length).toBe(k + k * d + (k * d * (d + 1)) / 2);
      const fd = v.map((_, i) => central((w) => gmmPlain(gmmUnflat(g, w)), v, i));
      expect(worst(jac, fd)).toBeLessThan(1e-7);
    });
  }

  it("in chunks of points: the same objective and gradient", () => {
    const g = gmmInput(4, 3, 23, 5);
    const whole = prepareGmm(g);
    const chunked = prepareGmm(g, 4 * 3 * 5); // 5 points per chunk
    expect(whole.chunks.length).toBe(1);
    expect(chunked.chunks.length).toBe(5);
    expect(Math.abs(gmmObjective(chunked) - gmmObjective(whole))).toBeLessThan(1e-11);
    expect(worst(gmmGradient(chunked), gmmGradient(whole))).toBeLessThan(1e-13);
  });

  it("rejects a malformed input with a message naming the field", () => {
    const g = gmmInput(2, 2, 3, 1);
    expect(() => prepareGmm({ ...g, means: [[1, 2]] })).toThrow(/means/);
    expect(() => prepareGmm({ ...g, alpha: [1] })).toThrow(/alpha/);
  });
});

// ---------------------------------------------------------------- ba

interface BaJson { n: number; m: number; p: number; cam: number[]; x: number[]; w: number; feat: number[] }

const baJson: BaJson = {
  n: 3, m: 5, p: 17,
  cam: [0.1, -0.2, 0.3, 0.5, 0.4, -3, 400, 1.5, -2.5, 1e-3, -2e-6],
  x: [0.3, 0.7, 2.0], w: 0.8, feat: [10, -20],
};

/** ba.hpp's computeReprojError for one observation (params: cam 0–10, X 0–2, w). */
function reprojPlain(q: readonly number[], feat: readonly number[]): [number, number] {
  const cam = q.slice(0, 11);
  const X = q.slice(11, 14);
  const w = q[14];
  const cross = (a: number[], b: number[]) => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
  const Xo = [0, 1, 2].map((i) => X[i] - cam[3 + i]);
  const r = cam.slice(0, 3);
  const sq = r[0] ** 2 + r[1] ** 2 + r[2] ** 2;
  let Xcam: number[];
  if (sq !== 0) {
    const th = Math.sqrt(sq);
    const [c, s] = [Math.cos(th), Math.sin(th)];
    const a = r.map((v) => v / th);
    const ac = cross(a, Xo);
    const t = (a[0] * Xo[0] + a[1] * Xo[1] + a[2] * Xo[2]) * (1 - c);
    Xcam = [0, 1, 2].map((i) => Xo[i] * c + ac[i] * s + a[i] * t);
  } else {
    const rc = cross(r, Xo);
    Xcam = [0, 1, 2].map((i) => Xo[i] + rc[i]);
  }
  let p = [Xcam[0] / Xcam[2], Xcam[1] / Xcam[2]];
  const rsq = p[0] ** 2 + p[1] ** 2;
  const L = 1 + cam[9] * rsq + cam[10] * rsq * rsq;
  p = p.map((v) => v * L);
  return [w * (p[0] * cam[6] + cam[7] - feat[0]), w * (p[1] * cam[6] + cam[8] - feat[1])];
}

/** Every observation's 2 × 15 block from the CSR matrix, checked against central differences. */
function checkBaJacobian(b: BaPrepared): void {
  const J = baJacobian(b);
  const { n, m, p } = b;
  expect(J.nrows).toBe(3 * p);
  expect(J.ncols).toBe(11 * n + 3 * m + p);
  expect(J.rows.length).toBe(3 * p + 1);
  expect(J.rows[3 * p]).toBe(31 * p);
  let worstErr = 0;
  for (let i = 0; i < p; i++) {
    const c = b.camIdx[i];
    const x = b.ptIdx[i];
    const q = [...b.cams.subarray(11 * c, 11 * c + 11), ...b.X.subarray(3 * x, 3 * x + 3), b.w[i]];
    const feat = [b.featX[i], b.featY[i]];
    for (let row = 0; row < 2; row++) {
      const r = 2 * i + row;
      expect(J.rows[r + 1] - J.rows[r]).toBe(15);
      const cols = Array.from(J.cols.subarray(J.rows[r], J.rows[r + 1]));
      expect(cols).toEqual([...Array.from({ length: 11 }, (_, j) => 11 * c + j), ...[0, 1, 2].map((j) => 11 * n + 3 * x + j), 11 * n + 3 * m + i]);
      const vals = J.vals.subarray(J.rows[r], J.rows[r + 1]);
      const fd = q.map((_, j) => central((v) => reprojPlain(v, feat)[row], q, j));
      worstErr = Math.max(worstErr, worst(vals, fd));
    }
    // the weight row: ∂(1 − w²)/∂w
    const r = 2 * p + i;
    expect(J.rows[r + 1] - J.rows[r]).toBe(1);
    expect(J.cols[J.rows[r]]).toBe(11 * n + 3 * m + i);
    expect(J.vals[J.rows[r]]).toBeCloseTo(-2 * b.w[i], 14);
  }
  expect(worstErr).toBeLessThan(1e-7);
}

describe("ba", () => {
  it("objective: the first observation's errors and the repeat counts, as ba.hpp's to_json", () => {
    const out = call(ba.objective, baJson) as { reproj_error: { elements: number[]; repeated: number }; w_err: { element: number; repeated: number } };
    const e = reprojPlain([...baJson.cam, ...baJson.x, baJson.w], baJson.feat);
    expect(out.reproj_error.repeated).toBe(baJson.p);
    expect(out.w_err.repeated).toBe(baJson.p);
    expect(worst(out.reproj_error.elements, e)).toBeLessThan(1e-14);
    expect(out.w_err.element).toBeCloseTo(1 - baJson.w ** 2, 15);
  });

  it("jacobian: every block against central differences, in ba.hpp's CSR layout", () => {
    checkBaJacobian(prepareBa(baJson));
  });

  it("jacobian where some cameras have zero rotation (the other branch of rodrigues_rotate_point)", () => {
    const b = prepareBa(baJson);
    // camera 1 unrotated, camera 2 with other parameters
    b.cams.fill(0, 11, 14);
    b.cams.set([0.4, 0.1, -0.2, 1, -1, -4, 300, 0.5, 0.2, -2e-3, 1e-6], 22);
    b.X.set([1, -0.5, 3], 6);
    b.w[4] = 1.3;
    checkBaJacobian(b);
    // all cameras unrotated
    const z = prepareBa({ ...baJson, cam: [0, 0, 0, ...baJson.cam.slice(3)] });
    checkBaJacobian(z);
  });

  it("jacobian output: ba.hpp's abbreviation (the first 30 entries and the last of each array)", () => {
    const b = prepareBa(baJson);
    const J = baJacobian(b);
    const out = call(ba.jacobian, baJson) as { rows: number[]; cols: number[]; vals: number[] };
    expect(out).toEqual(abbreviate(J));
    expect(out.rows.length).toBe(31);
    expect(out.rows.slice(0, 4)).toEqual([0, 15, 30, 45]);
    expect(out.rows[30]).toBe(31 * baJson.p);
    expect(out.cols[30]).toBe(11 * baJson.n + 3 * baJson.m + baJson.p - 1);
    expect(out.vals[30]).toBeCloseTo(-2 * baJson.w, 14);
    expect(out.cols.slice(0, 15)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 33, 34, 35, 48]);
  });
});

// ---------------------------------------------------------------- ht

type Mat = number[][];
const mm = (A: Mat, B: Mat): Mat => A.map((r) => B[0].map((_, j) => r.reduce((s, a, k) => s + a * B[k][j], 0)));

interface HtJson {
  theta: number[];
  data: {
    model: { bone_count: number; bone_names: string[]; parents: number[]; base_relatives: Mat[]; inverse_base_absolutes: Mat[]; base_positions: Mat; weights: Mat; triangles: number[][]; is_mirrored: boolean };
    correspondences: number[];
    points: Mat;
  };
  us: number[][];
}

/** A synthetic hand shaped like ADBench's: 22 bones, M vertices, N points. */
function htInput(N: number, M: number, complicated: boolean, seed: number, mirrored = false): HtJson {
  const r = rng(seed);
  const u = () => 2 * r() - 1;
  const B = 22;
  const rotation = (): Mat => {
    const [a, b] = [u(), u()];
    return mm([[Math.cos(b), -Math.sin(b), 0], [Math.sin(b), Math.cos(b), 0], [0, 0, 1]], [[1, 0, 0], [0, Math.cos(a), -Math.sin(a)], [0, Math.sin(a), Math.cos(a)]]);
  };
  const rigid = (): Mat => {
    const R = rotation();
    return [[...R[0], u()], [...R[1], u()], [...R[2], u()], [0, 0, 0, 1]];
  };
  const T = M - 2;
  return {
    theta: Array.from({ length: 26 }, () => 0.5 * u()),
    data: {
      model: {
        bone_count: B,
        bone_names: Array.from({ length: B }, (_, i) => `bone${i}`),
        parents: Array.from({ length: B }, (_, i) => (i === 0 ? -1 : Math.floor(r() * i))),
        base_relatives: Array.from({ length: B }, rigid),
        inverse_base_absolutes: Array.from({ length: B }, rigid),
        base_positions: Array.from({ length: M }, () => [u(), u(), u(), 1]),
        weights: Array.from({ length: M }, () => {
          const w = Array.from({ length: B }, () => (r() < 0.25 ? r() : 0));
          const s = w.reduce((a, b) => a + b, 0) || 1;
          return w.map((v) => v / s);
        }),
        triangles: Array.from({ length: T }, () => [0, 1, 2].map(() => Math.floor(r() * M))),
        is_mirrored: mirrored,
      },
      correspondences: Array.from({ length: N }, () => Math.floor(r() * (complicated ? T : M))),
      points: table(N, 3, u),
    },
    us: complicated ? Array.from({ length: N }, () => [r(), 0.5 * r()]) : [],
  };
}

/** ht.hpp's objective (both variants) with plain matrices. */
function htPlain(h: HtJson): number[] {
  const { model } = h.data;
  const B = model.parents.length;
  const th = h.theta;
  const pose: Mat = Array.from({ length: B + 3 }, () => [0, 0, 0]);
  pose[0] = th.slice(0, 3);
  pose[1] = [1, 1, 1];
  pose[2] = th.slice(3, 6);
  let it = 6;
  let ip = 5;
  for (let f = 0; f < 5; f++) {
    for (let i = 2; i <= 4; i++) {
      pose[ip][0] = th[it++];
      if (i === 2) pose[ip][1] = th[it++];
      ip++;
    }
    ip++;
  }
  const euler = ([tx, tz, ty]: number[]): Mat => {
    const Rx = [[1, 0, 0], [0, Math.cos(tx), -Math.sin(tx)], [0, Math.sin(tx), Math.cos(tx)]];
    const Ry = [[Math.cos(ty), 0, Math.sin(ty)], [0, 1, 0], [-Math.sin(ty), 0, Math.cos(ty)]];
    const Rz = [[Math.cos(tz), -Math.sin(tz), 0], [Math.sin(tz), Math.cos(tz), 0], [0, 0, 1]];
    return mm(mm(Rz, Ry), Rx);
  };
  const absolutes: Mat[] = [];
  const transforms: Mat[] = [];
  for (let b = 0; b < B; b++) {
    const R = euler(pose[b + 3]);
    const rel = mm(model.base_relatives[b], [[...R[0], 0], [...R[1], 0], [...R[2], 0], [0, 0, 0, 1]]);
    absolutes.push(model.parents[b] === -1 ? rel : mm(absolutes[model.parents[b]], rel));
    transforms.push(mm(absolutes[b], model.inverse_base_absolutes[b]));
  }
  const pos = model.base_positions.map(() => [0, 0, 0]);
  for (let b = 0; b < B; b++) {
    model.base_positions.forEach((bp, v) => {
      for (let i = 0; i < 3; i++) pos[v][i] += transforms[b][i].reduce((s, t, k) => s + t * bp[k], 0) * model.weights[v][b];
    });
  }
  if (model.is_mirrored) for (const p of pos) p[0] = -p[0];
  const aa = pose[0];
  const n = Math.hypot(aa[0], aa[1], aa[2]);
  let R: Mat = [[1, 0, 0], [0, 1, 0], [0, 0, 1]];
  if (!(n < 1e-4)) {
    const [x, y, z] = aa.map((v) => v / n);
    const [s, c] = [Math.sin(n), Math.cos(n)];
    R = [
      [x * x + (1 - x * x) * c, x * y * (1 - c) - z * s, x * z * (1 - c) + y * s],
      [x * y * (1 - c) + z * s, y * y + (1 - y * y) * c, y * z * (1 - c) - x * s],
      [x * z * (1 - c) - y * s, z * y * (1 - c) + x * s, z * z + (1 - z * z) * c],
    ];
  }
  const V = pos.map((p) => [0, 1, 2].map((i) => R[i][0] * p[0] + R[i][1] * p[1] + R[i][2] * p[2] + pose[2][i]));
  const err: number[] = [];
  h.data.points.forEach((pt, i) => {
    const c = h.data.correspondences[i];
    for (let j = 0; j < 3; j++) {
      if (h.us.length === 0) err.push(pt[j] - V[c][j]);
      else {
        const [a, b, cc] = model.triangles[c];
        const [u0, u1] = h.us[i];
        err.push(pt[j] - (u0 * V[a][j] + u1 * V[b][j] + (1 - u0 - u1) * V[cc][j]));
      }
    }
  });
  return err;
}

describe("ht", () => {
  for (const [variant, complicated] of [["simple", false], ["complicated", true]] as const) {
    it(`${variant}: objective and the Jacobian against central differences`, () => {
      const h = htInput(9, 14, complicated, complicated ? 7 : 3);
      const err = call(ht.objective, h) as Float64Array;
      expect(worst(err, htPlain(h))).toBeLessThan(1e-13);
      const J = call(ht.jacobian, h) as { shape: number[]; get: (i: number, j: number) => number };
      const ncols = complicated ? 28 : 26;
      expect(J.shape).toEqual([27, ncols]);
      // columns: [u_i0, u_i1 (complicated)], θ_0 … θ_25
      const columns = Array.from({ length: ncols }, (_, c) => {
        const shifted = (delta: number): number[] => {
          const g = clone(h);
          if (complicated && c < 2) g.us.forEach((u) => (u[c] += delta));
          else g.theta[complicated ? c - 2 : c] += delta;
          return htPlain(g);
        };
        const [a, b] = [shifted(1e-6), shifted(-1e-6)];
        return a.map((v, i) => (v - b[i]) / 2e-6);
      });
      let e = 0;
      for (let c = 0; c < ncols; c++) for (let r = 0; r < 27; r++) e = Math.max(e, Math.abs(J.get(r, c) - columns[c][r]));
      expect(e).toBeLessThan(1e-7);
    });
  }

  it("a mirrored model, and a global rotation below the angle-axis threshold", () => {
    const h = htInput(5, 10, false, 9, true);
    expect(worst(call(ht.objective, h) as Float64Array, htPlain(h))).toBeLessThan(1e-13);
    h.theta[0] = h.theta[1] = h.theta[2] = 1e-5;
    expect(worst(call(ht.objective, h) as Float64Array, htPlain(h))).toBeLessThan(1e-13);
  });
});

// ---------------------------------------------------------------- lstm

interface LstmJson { main_params: number[][]; extra_params: number[][]; state: number[][]; sequence: number[][] }

function lstmInput(l: number, c: number, b: number, seed: number): LstmJson {
  const r = rng(seed);
  const u = () => 2 * r() - 1;
  return { main_params: table(2 * l, 4 * b, u), extra_params: table(3, b, u), state: table(2 * l, b, u), sequence: table(c, b, u) };
}

/** lstm.hpp's objective, loop by loop. */
function lstmPlain(inp: LstmJson): number {
  const l = inp.main_params.length / 2;
  const b = inp.extra_params[0].length;
  const c = inp.sequence.length;
  const sig = (x: number) => 1 / (1 + Math.exp(-x));
  const state = inp.state.map((row) => [...row]);
  let total = 0;
  let count = 0;
  for (let t = 0; t < c - 1; t++) {
    let x = inp.sequence[t].map((v, i) => v * inp.extra_params[0][i]);
    for (let L = 0; L < l; L++) {
      const [W, Bs] = [inp.main_params[2 * L], inp.main_params[2 * L + 1]];
      const [h, cell] = [state[2 * L], state[2 * L + 1]];
      for (let i = 0; i < b; i++) {
        const forget = sig(x[i] * W[i] + Bs[i]);
        const ingate = sig(h[i] * W[b + i] + Bs[b + i]);
        const outgate = sig(x[i] * W[2 * b + i] + Bs[2 * b + i]);
        const change = Math.tanh(h[i] * W[3 * b + i] + Bs[3 * b + i]);
        cell[i] = cell[i] * forget + ingate * change;
        h[i] = outgate * Math.tanh(cell[i]);
      }
      x = h;
    }
    const y = x.map((v, i) => v * inp.extra_params[1][i] + inp.extra_params[2][i]);
    const lse = Math.log(y.reduce((s, v) => s + Math.exp(v), 0) + 2);
    for (let i = 0; i < b; i++) total += inp.sequence[t + 1][i] * (y[i] - lse);
    count += b;
  }
  return -total / count;
}

describe("lstm", () => {
  it("objective and gradient against central differences", () => {
    const inp = lstmInput(2, 6, 3, 17);
    expect(Math.abs((call(lstm.objective, inp) as number) - lstmPlain(inp))).toBeLessThan(1e-14);
    const g = call(lstm.jacobian, inp) as Float64Array;
    const v = [...inp.main_params.flat(), ...inp.extra_params.flat()];
    const unflat = (w: number[]): LstmJson => {
      let p = 0;
      const take = (row: number[]) => row.map(() => w[p++]);
      return { ...inp, main_params: inp.main_params.map(take), extra_params: inp.extra_params.map(take) };
    };
    const fd = v.map((_, i) => central((w) => lstmPlain(unflat(w)), v, i));
    expect(worst(g, fd)).toBeLessThan(1e-8);
  });

  it("the gradient over segments of steps (chained pullbacks) = one trace of all steps", () => {
    const s = prepareLstm(lstmInput(3, 12, 4, 23));
    const whole = lstmGradient(s);
    for (const ops of [1, 60, 130]) expect(worst(lstmGradient(s, ops), whole)).toBeLessThan(1e-14);
  });
});

// ---------------------------------------------------------------- particle

/** The particle's objective in plain JS, ∇p in closed form: −Σ_c (x − c)/‖x − c‖³. */
function naiveEulerPlain(w: number): number {
  const charges = [[10, 10 - w], [10, 0]];
  let x = [0, 8];
  let xdot = [0.75, 0];
  for (;;) {
    const xddot = [0, 1].map((j) => charges.reduce((s, c) => s + (x[j] - c[j]) / Math.hypot(c[0] - x[0], c[1] - x[1]) ** 3, 0));
    x = [x[0] + 0.1 * xdot[0], x[1] + 0.1 * xdot[1]];
    if (x[1] <= 0) {
      const dtf = -x[1] / xdot[1];
      return (x[0] + dtf * xdot[0]) ** 2;
    }
    xdot = [xdot[0] + 0.1 * xddot[0], xdot[1] + 0.1 * xddot[1]];
  }
}

const MODES: readonly [Mode, Mode][] = [["r", "r"], ["r", "f"], ["f", "r"], ["f", "f"]];

describe("particle", () => {
  it("the trajectory's objective, and its derivative in w by each outer × inner mode, against central differences", () => {
    for (const w of [0, 0.15, -0.3]) {
      for (const inner of ["r", "f"] as const) expect(Math.abs((naiveEuler(w, inner) as number) - naiveEulerPlain(w))).toBeLessThan(1e-12);
      const fd = (naiveEulerPlain(w + 1e-6) - naiveEulerPlain(w - 1e-6)) / 2e-6;
      for (const [outer, inner] of MODES) {
        const d = outer === "r" ? (grad((v: Scalar) => naiveEuler(v, inner), w) as number) : (jvp((v: Scalar) => naiveEuler(v, inner), w, 1)[1] as number);
        expect(Math.abs(d - fd) / Math.max(1, Math.abs(fd))).toBeLessThan(1e-7);
      }
    }
  });

  // rf's descent is the same code as the others' (its derivative is checked above); left
  // out to keep this file's time down (the inner forward mode is the slow one)
  for (const v of ["rr", "fr", "ff"]) {
    it(`${v} from w = 0 gives GradBench's expected w`, () => {
      expect(Math.abs((call(particle[v], { w: 0 }) as number) - 0.2071918746486116)).toBeLessThan(1e-9);
    });
  }
});

// ---------------------------------------------------------------- saddle

describe("saddle", () => {
  it("max_{p2} f(p1, p2) and its gradient in p1 by each outer × inner mode: p1x² + p1y² and 2·p1 (up to the solver's tolerance)", () => {
    const p1 = [0.3, -0.7];
    for (const [outer, inner] of MODES) {
      const maxOver = (q: Vec): Scalar => maximum(objectiveBy(inner, (p2) => saddleFunction(q, p2)), [1, 1]);
      expect(Math.abs((maxOver(p1) as number) - (0.09 + 0.49))).toBeLessThan(1e-9);
      const g = objectiveBy(outer, maxOver).grad(p1) as number[];
      expect(worst(g, [0.6, -1.4])).toBeLessThan(1e-12);
    }
  });

  for (const v of ["rr", "rf", "fr", "ff"]) {
    it(`${v} from (1, 1) gives GradBench's expected saddle point`, () => {
      const out = call(saddle[v], { start: [1, 1] }) as number[];
      expect(worst(out, Array(4).fill(8.246324826140356e-6))).toBeLessThan(1e-12);
    });
  }
});
