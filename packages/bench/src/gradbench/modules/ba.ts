/**
 * @file GradBench `ba`: bundle adjustment (ADBench's BA) — reprojection errors and
 * their sparse Jacobian.
 *
 * As cpp/gradbench/evals/ba.hpp: n cameras of 11 parameters (Rodrigues rotation r,
 * centre C, focal length f, principal point (u0, v0), radial distortion (k1, k2)), m
 * points X, p observations (camera i mod n, point i mod m) with weight w_i and feature
 * (x, y). Observation i has
 *
 *   Xcam = rodrigues(r, X − C),  q = Xcam[0:2] / Xcam[2],  q ← q (1 + k1‖q‖² + k2‖q‖⁴),
 *   reproj_err_i = w_i (f q + (u0, v0) − feat_i),   w_err_i = 1 − w_i².
 *
 * The inputs are replicated as the C++ eval does (`cam`, `x`, `w`, `feat` once each).
 * Each observation's residual depends only on its own 15 parameters (its camera's 11, its
 * point's 3, its weight), so the work is per observation: `reprojError` is ba.hpp's
 * function on reals, `vmap`ped over the observations (the camera and point parameters read
 * through the observations' indices: `indexed`) and compiled by `jit` into one loop over them;
 * the Jacobian's 2 × 15 blocks are `jacrev` of it, vmapped and compiled the same way;
 * `grad` of Σ w_err gives the weight rows. The blocks are assembled into ba.hpp's CSR
 * matrix (rows, cols, vals) with 2p + p rows and 11n + 3m + p columns. The errors, the
 * blocks (`jit(vmap(f)).into`) and the CSR arrays are kept per input and written again at
 * every call, as the C++ tool writes into its output (a caller keeping one copies it; the
 * functions GradBench calls return numbers copied out of them).
 *
 * Output, as ba.hpp's to_json (which abbreviates the repeated data): `objective` gives
 * `{reproj_error: {elements: [2], repeated: p}, w_err: {element, repeated: p}}` (the
 * first observation's values); `jacobian` gives the first 30 entries of rows, cols and
 * vals, each followed by its last entry.
 */
import {
  add, cos, div, grad, indexed, jacrev, jit, mul, ne, sin, sqrt, square, sub, sum, vmap,
  type Indexed, type Scalar, type TensorArg,
} from "@wengert/core";
import { defineFunction } from "../define.js";
import { field, InputError, integer, number, numbers, record } from "../json.js";
import type { EvalModule } from "../module.js";

type T = TensorArg;

export const NCAMPARAMS = 11;

export interface BaPrepared {
  readonly n: number;
  readonly m: number;
  readonly p: number;
  /** n × 11, row-major. */
  readonly cams: Float64Array;
  /** m × 3, row-major. */
  readonly X: Float64Array;
  /** p weights. */
  readonly w: Float64Array;
  /** Camera and point index of each observation. */
  readonly camIdx: Int32Array;
  readonly ptIdx: Int32Array;
  /** The features' x and y coordinates, one vector each. */
  readonly featX: Float64Array;
  readonly featY: Float64Array;
}

export function prepareBa(json: unknown): BaPrepared {
  const input = record(json);
  const n = integer(field(input, "n"), "n", 1);
  const m = integer(field(input, "m"), "m", 1);
  const p = integer(field(input, "p"), "p", 1);
  const cam = numbers(field(input, "cam"), "cam");
  const x = numbers(field(input, "x"), "x");
  const w = number(field(input, "w"), "w");
  const feat = numbers(field(input, "feat"), "feat");
  if (cam.length !== NCAMPARAMS) throw new InputError(`cam has ${cam.length} entries; expected ${NCAMPARAMS}`);
  if (x.length !== 3) throw new InputError(`x has ${x.length} entries; expected 3`);
  if (feat.length !== 2) throw new InputError(`feat has ${feat.length} entries; expected 2`);
  const cams = new Float64Array(n * NCAMPARAMS);
  for (let i = 0; i < n; i++) cams.set(cam, i * NCAMPARAMS);
  const X = new Float64Array(m * 3);
  for (let i = 0; i < m; i++) X.set(x, i * 3);
  const camIdx = new Int32Array(p);
  const ptIdx = new Int32Array(p);
  for (let i = 0; i < p; i++) {
    camIdx[i] = i % n;
    ptIdx[i] = i % m;
  }
  return {
    n,
    m,
    p,
    cams,
    X,
    w: new Float64Array(p).fill(w),
    camIdx,
    ptIdx,
    featX: new Float64Array(p).fill(feat[0]),
    featY: new Float64Array(p).fill(feat[1]),
  };
}

/** Each input's observation parameters as vmap reads them, made once per input (indexed checks its index at each making). */
const views = new WeakMap<BaPrepared, (Indexed | Float64Array)[]>();

/**
 * The 15 parameter vectors of the observations (camera 0–10, point 0–2, weight): the
 * camera and point tables read through each observation's indices (`indexed`: the
 * compiled lanes read them where reprojError uses them, not gathered into columns first,
 * which cost as much as the errors), the weights one per observation.
 */
export function observationColumns(b: BaPrepared): (Indexed | Float64Array)[] {
  let cols = views.get(b);
  if (cols === undefined) {
    cols = [
      ...Array.from({ length: NCAMPARAMS }, (_, j) => indexed(b.cams, b.camIdx, { stride: NCAMPARAMS, offset: j })),
      ...Array.from({ length: 3 }, (_, j) => indexed(b.X, b.ptIdx, { stride: 3, offset: j })),
      b.w,
    ];
    views.set(b, cols);
  }
  return cols;
}

const cross = (a: readonly Scalar[], b: readonly Scalar[]): Scalar[] => [
  sub(mul(a[1], b[2]), mul(a[2], b[1])),
  sub(mul(a[2], b[0]), mul(a[0], b[2])),
  sub(mul(a[0], b[1]), mul(a[1], b[0])),
];

/** ba.hpp's rodrigues_rotate_point: X rotated by the angle-axis vector rot, to first order where ‖rot‖ = 0. */
function rodriguesRotatePoint(rot: readonly Scalar[], X: readonly Scalar[]): Scalar[] {
  const sqtheta = add(add(square(rot[0]), square(rot[1])), square(rot[2]));
  if (!ne(sqtheta, 0)) return cross(rot, X).map((v, i) => add(X[i], v));
  const theta = sqrt(sqtheta);
  const costheta = cos(theta);
  const sintheta = sin(theta);
  const axis = rot.map((r) => div(r, theta));
  const axisCrossPt = cross(axis, X);
  const tmp = mul(add(add(mul(axis[0], X[0]), mul(axis[1], X[1])), mul(axis[2], X[2])), sub(1, costheta));
  return [0, 1, 2].map((i) => add(add(mul(X[i], costheta), mul(axisCrossPt[i], sintheta)), mul(axis[i], tmp)));
}

/**
 * ba.hpp's computeReprojError for one observation: its 15 parameters q (camera 0–10,
 * point 0–2, weight) and its feature (x, y).
 */
export function reprojError(q: readonly Scalar[], featX: Scalar, featY: Scalar): [Scalar, Scalar] {
  const centre = q.slice(3, 6);
  const [f, u0, v0, k1, k2] = q.slice(6, 11);
  const w = q[14];
  const Xcam = rodriguesRotatePoint(q.slice(0, 3), q.slice(11, 14).map((v, i) => sub(v, centre[i])));
  // projective to Euclidean, radial distortion, focal length and principal point
  const px = div(Xcam[0], Xcam[2]);
  const py = div(Xcam[1], Xcam[2]);
  const rsq = add(square(px), square(py));
  const L = add(add(1, mul(k1, rsq)), mul(mul(k2, rsq), rsq));
  const projX = add(mul(mul(px, L), f), u0);
  const projY = add(mul(mul(py, L), f), v0);
  return [mul(w, sub(projX, featX)), mul(w, sub(projY, featY))];
}

/** An observation as vmap takes it: its 15 parameters and its feature. */
type Observation = [Scalar[], Scalar, Scalar];

/**
 * The errors of every observation at once, its reprojection errors and its weight error:
 * reprojError vmapped over the observations, run by jit as one compiled loop over them. rodrigues_rotate_point's branch is decided per observation: lanes
 * that take the other one get their own trace. Its tie (‖rot‖² = 0, where ba.hpp takes
 * the first-order branch) is GradBench's own definition, not a kink to report.
 */
const errorsOf = jit(vmap(([q, fx, fy]: Observation) => [...reprojError(q, fx, fy), weightErrors(q[14])]), { ties: "ignore" });

/**
 * Each observation's 2 × 15 Jacobian block: reverse mode per observation (`jacrev`, two
 * sweeps over its trace, placed into vmap's trace), vmapped and compiled as errorsOf.
 */
const blocksOf = jit(vmap(([q, fx, fy]: Observation) => jacrev((v: Scalar[]) => reprojError(v, fx, fy), q, { ties: "ignore" })), { ties: "ignore" });

/** Zach's weight error 1 − w² (elementwise on a tensor). */
export const weightErrors = <X extends Scalar | T>(w: X): X => sub(1, square(w as never)) as X;

const dataOf = (v: unknown): Float64Array => (v instanceof Float64Array ? v : ((v as { data: Float64Array }).data));

/** Each input's buffers of the vmapped outputs (errors 3p, Jacobian blocks 30p), written again at every call (`into`: no fresh arrays per call). */
const outputs = { errors: new WeakMap<BaPrepared, Float64Array>(), blocks: new WeakMap<BaPrepared, Float64Array>() };

/** `store`'s buffer of `length` numbers for `b`, made at its first call. */
function outputOf(store: WeakMap<BaPrepared, Float64Array>, b: BaPrepared, length: number): Float64Array {
  let out = store.get(b);
  if (out === undefined) store.set(b, (out = new Float64Array(length)));
  return out;
}

/** `out` cut into vectors of p numbers, one after another. */
const lanesOf = (out: Float64Array, p: number): Float64Array[] => Array.from({ length: out.length / p }, (_, j) => out.subarray(j * p, (j + 1) * p));

/** Every observation's reprojection error, x and y, and its weight error (views of the input's buffer, written again at the next call). */
export function reprojErrors(b: BaPrepared): [Float64Array, Float64Array, Float64Array] {
  const out = errorsOf.into([observationColumns(b), b.featX, b.featY], outputOf(outputs.errors, b, 3 * b.p));
  return lanesOf(out, b.p) as [Float64Array, Float64Array, Float64Array];
}

export function baObjective(b: BaPrepared) {
  const [ex, ey, werr] = reprojErrors(b);
  return {
    reproj_error: { elements: [ex[0], ey[0]], repeated: b.p },
    w_err: { element: werr[0], repeated: b.p },
  };
}

/** ba.hpp's SparseMat: CSR with rows (nrows + 1 offsets), cols and vals. */
export interface SparseJacobian {
  readonly nrows: number;
  readonly ncols: number;
  readonly rows: Int32Array;
  readonly cols: Int32Array;
  readonly vals: Float64Array;
}

/** Each input's CSR arrays, written again at every call (their 31p entries fresh cost as much as the blocks). */
const matrices = new WeakMap<BaPrepared, { rows: Int32Array; cols: Int32Array; vals: Float64Array }>();

function matrixOf(b: BaPrepared): { rows: Int32Array; cols: Int32Array; vals: Float64Array } {
  let csr = matrices.get(b);
  if (csr === undefined) {
    const entries = 2 * (NCAMPARAMS + 4) * b.p + b.p;
    matrices.set(b, (csr = { rows: new Int32Array(3 * b.p + 1), cols: new Int32Array(entries), vals: new Float64Array(entries) }));
  }
  return csr;
}

export function baJacobian(b: BaPrepared): SparseJacobian {
  const { n, m, p } = b;
  // row 0 (x residuals), row 1 (y residuals): entry i of parameter column j is ∂err_i/∂param_j
  const blocks = lanesOf(blocksOf.into([observationColumns(b), b.featX, b.featY], outputOf(outputs.blocks, b, 2 * (NCAMPARAMS + 4) * p)), p);
  const J = [blocks.slice(0, NCAMPARAMS + 4), blocks.slice(NCAMPARAMS + 4)];
  const dw = dataOf(grad((w: T) => sum(weightErrors(w)) as Scalar, b.w));

  const { rows, cols: colIdx, vals } = matrixOf(b);
  const pointOffset = NCAMPARAMS * n;
  const weightOffset = pointOffset + 3 * m;
  let r = 0;
  let e = 0;
  for (let i = 0; i < p; i++) {
    const cam = b.camIdx[i] * NCAMPARAMS;
    const pt = pointOffset + 3 * b.ptIdx[i];
    for (let row = 0; row < 2; row++) {
      const g = J[row];
      for (let j = 0; j < NCAMPARAMS; j++, e++) {
        colIdx[e] = cam + j;
        vals[e] = g[j][i];
      }
      for (let j = 0; j < 3; j++, e++) {
        colIdx[e] = pt + j;
        vals[e] = g[NCAMPARAMS + j][i];
      }
      colIdx[e] = weightOffset + i;
      vals[e] = g[NCAMPARAMS + 3][i];
      e++;
      rows[++r] = e;
    }
  }
  for (let i = 0; i < p; i++, e++) {
    colIdx[e] = weightOffset + i;
    vals[e] = dw[i];
    rows[++r] = e + 1;
  }
  return { nrows: 3 * p, ncols: weightOffset + p, rows, cols: colIdx, vals };
}

/** ba.hpp's to_json of the Jacobian: the first 30 entries of each array, and its last. */
export function abbreviate(J: SparseJacobian): { rows: number[]; cols: number[]; vals: number[] } {
  const head = 2 * (NCAMPARAMS + 4);
  const cut = (a: Int32Array | Float64Array): number[] => [...Array.from(a.subarray(0, Math.min(head, a.length))), a[a.length - 1]];
  return { rows: cut(J.rows), cols: cut(J.cols), vals: cut(J.vals) };
}

export const ba: EvalModule = {
  objective: defineFunction({ prepare: prepareBa, run: baObjective }),
  jacobian: defineFunction({ prepare: prepareBa, run: (b: BaPrepared) => abbreviate(baJacobian(b)) }),
};
