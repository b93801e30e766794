/**
 * @file GradBench `ht`: hand tracking (ADBench's HT) — the residuals between measured
 * points and a skinned hand model posed by 26 parameters, and their Jacobian; the
 * "simple" variant (each point matched to a vertex) and the "complicated" one (each
 * point matched to a position on a triangle, given by barycentric coordinates `us`
 * that are differentiated too).
 *
 * As cpp/gradbench/evals/ht.hpp: θ gives the pose parameters (global rotation as an
 * angle-axis vector, scale 1, global translation, then per finger one two-angle and two
 * one-angle joints); each bone's relative transform is its base relative transform
 * times its Euler rotation (R_z R_y R_x, angles in the order x, z, y); absolute
 * transforms compose along the parents; each vertex is the weighted sum over bones of
 * (absolute · inverse base absolute) applied to its base position; then the global
 * rotation and translation. The residual of point i is `points[i] − vertex` (simple)
 * or `points[i] − (u0 V_a + u1 V_b + (1 − u0 − u1) V_c)` over its triangle (complicated).
 *
 * The bone chain is small (22 4×4 products); the per-vertex and per-point work is
 * whole-tensor operations (one [3, 4B] × [4B, M] matmul for all bones and vertices,
 * gathers for the correspondences), coordinate-major ([3, M] vertices, [3, N] points).
 * Only the M vertices some point reads are skinned (usedVertices: 544 of the big model's
 * 10 000, read by its triangles), with the same numbers for each.
 *
 * `objective` gives the 3N residuals, point by point. `jacobian` gives the 3N × 26 (simple)
 * or 3N × 28 (complicated) matrix as rows, by forward mode (`jacfwd`: one trace, the
 * columns as lanes of one tangent term). In the complicated variant residual i depends on
 * us only through (u_i0, u_i1), so its first two columns are ∂r_i/∂u_i0 and ∂r_i/∂u_i1
 * (the diagonal blocks GradBench's layout keeps): the derivatives along shifts (a, b)
 * added to every u_i0 and u_i1, a `jacfwd` of their own (see htJacobian).
 */
import ndarray from "ndarray";
import {
  add, cos, div, gather, jacfwd, jit, lt, matmul, mul, neg, reshape, sin, slice, sqrt, stack, sub, sum, transpose, unstack, vjp,
  type Indices, type Jitted, type NdArray, type Scalar, type TensorArg,
} from "@wengert/core";
import { defineFunction } from "../define.js";
import { htInput } from "../inputs.js";
import { field, InputError, matrix, numbers, record } from "../json.js";
import type { EvalModule } from "../module.js";

type T = TensorArg;
type M3 = Scalar[][];

export interface HtPrepared {
  readonly theta: Float64Array;
  readonly bones: number;
  readonly parents: Int32Array;
  /** Per bone, 4 × 4 (row-major as given). */
  readonly baseRelatives: readonly NdArray[];
  readonly inverseBaseAbsolutes: readonly NdArray[];
  /**
   * The homogeneous base positions weighted by each bone, [4B, M] (M the vertices the
   * residuals read: usedVertices): row 4b + k, column j is w_b(v) · p_v[k] of vertex v = used[j]. Skinning Σ_b w_b(v) (T_b p_v) is then one product of the
   * transforms' rows side by side ([3, 4B]) with it.
   */
  readonly weightedPositions: NdArray;
  readonly isMirrored: boolean;
  /** The measured points, [3, N] (one column per point, as the vertices). */
  readonly points: NdArray;
  /** Simple variant: each point's vertex (a column of weightedPositions). */
  readonly correspondences: Int32Array;
  /** Complicated variant: the triangle's vertices of each point (columns of weightedPositions), and us as [1, N] rows. */
  readonly triangle: readonly [Int32Array, Int32Array, Int32Array] | null;
  readonly us: readonly [NdArray, NdArray] | null;
}

const squareMatrices = (v: unknown, what: string): NdArray[] => {
  if (!Array.isArray(v)) throw new InputError(`${what} is not an array of 4 × 4 matrices`);
  return v.map((m, i) => {
    const a = matrix(m, `${what}[${i}]`);
    if (a.rows !== 4 || a.cols !== 4) throw new InputError(`${what}[${i}] is ${a.rows} × ${a.cols}; expected 4 × 4`);
    return ndarray(a.data, [4, 4]);
  });
};

const integers = (v: unknown, what: string): Int32Array => Int32Array.from(numbers(v, what));

/** How prepareHt lays out the model. */
export interface HtPrepareOptions {
  /**
   * Skin only the vertices the residuals read (default), or every vertex of the model (the
   * reference the tests compare with): see usedVertices.
   */
  readonly allVertices?: boolean;
}

/**
 * The vertices the residuals read (each point's vertex, or its triangle's three), ascending,
 * and each vertex's position among them (−1 where unread). The model has 10 000 vertices in
 * GradBench's big hand, its triangles 544 of them: skinning the 544 alone is the same
 * numbers for each (a column of the skinning product is its vertex's alone, as is the
 * global transform's), at 1/18 of the product's and its operand's size.
 */
export function usedVertices(reads: readonly Int32Array[], vertices: number): { readonly used: Int32Array; readonly at: Int32Array } {
  const at = new Int32Array(vertices).fill(-1);
  for (const r of reads) for (let i = 0; i < r.length; i++) at[r[i]] = 0;
  let count = 0;
  for (let v = 0; v < vertices; v++) if (at[v] === 0) at[v] = count++;
  const used = new Int32Array(count);
  for (let v = 0; v < vertices; v++) if (at[v] >= 0) used[at[v]] = v;
  return { used, at };
}

/** Each entry of `ids` checked to be below `count`. */
function inRange(ids: Int32Array, count: number, what: string): Int32Array {
  for (let i = 0; i < ids.length; i++) {
    if (ids[i] < 0 || ids[i] >= count) throw new InputError(`${what}[${i}] is ${ids[i]}; expected 0 … ${count - 1}`);
  }
  return ids;
}

export function prepareHt(json: unknown, { allVertices = false }: HtPrepareOptions = {}): HtPrepared {
  const input = record(json);
  const theta = numbers(field(input, "theta"), "theta");
  if (theta.length !== 26) throw new InputError(`theta has ${theta.length} entries; expected 26`);
  const data = record(field(input, "data"), "data");
  const model = record(field(data, "model"), "data.model");
  const parents = integers(field(model, "parents"), "parents");
  const B = parents.length;
  if (B + 3 < 24) throw new InputError(`the model has ${B} bones; the 26 pose parameters need at least 21`);
  const baseRelatives = squareMatrices(field(model, "base_relatives"), "base_relatives");
  const inverseBaseAbsolutes = squareMatrices(field(model, "inverse_base_absolutes"), "inverse_base_absolutes");
  if (baseRelatives.length !== B || inverseBaseAbsolutes.length !== B) throw new InputError(`expected ${B} base_relatives and inverse_base_absolutes`);
  const pos = matrix(field(model, "base_positions"), "base_positions");
  if (pos.cols !== 4) throw new InputError(`base_positions rows have ${pos.cols} entries; expected 4 (homogeneous)`);
  const w = matrix(field(model, "weights"), "weights");
  if (w.rows !== pos.rows || w.cols !== B) throw new InputError(`weights is ${w.rows} × ${w.cols}; expected ${pos.rows} × ${B}`);
  const given = integers(field(data, "correspondences"), "correspondences");
  const N = given.length;
  const pts = matrix(field(data, "points"), "points");
  if (pts.rows !== N || pts.cols !== 3) throw new InputError(`points is ${pts.rows} × ${pts.cols}; expected ${N} × 3`);
  const usJson = Object.hasOwn(input, "us") ? input.us : [];
  const complicated = Array.isArray(usJson) && usJson.length > 0;
  // the vertices each point reads: its own (simple), or its triangle's three
  let reads: Int32Array[];
  let us: [NdArray, NdArray] | null = null;
  if (complicated) {
    // N pairs (as GradBench's eval sends them), or 2N numbers point by point
    const u = typeof usJson[0] === "number" ? { data: numbers(usJson, "us"), rows: usJson.length / 2, cols: 2 } : matrix(usJson, "us");
    if (u.rows !== N || u.cols !== 2) throw new InputError(`us is ${u.rows} × ${u.cols}; expected ${N} × 2`);
    us = [0, 1].map((j) => ndarray(Float64Array.from({ length: N }, (_, i) => u.data[2 * i + j]), [1, N])) as [NdArray, NdArray];
    const tri = matrix(field(model, "triangles"), "triangles");
    if (tri.cols !== 3) throw new InputError(`triangles rows have ${tri.cols} entries; expected 3`);
    inRange(given, tri.rows, "correspondences");
    reads = [0, 1, 2].map((j) => inRange(Int32Array.from(given, (c) => tri.data[c * 3 + j]), pos.rows, `triangles[correspondences][${j}]`));
  } else reads = [inRange(given, pos.rows, "correspondences")];
  const { used, at } = allVertices ? { used: Int32Array.from({ length: pos.rows }, (_, v) => v), at: null } : usedVertices(reads, pos.rows);
  const vertexReads = at === null ? reads : reads.map((r) => r.map((v) => at[v]));
  const M = used.length;
  const weighted = new Float64Array(4 * B * M);
  for (let b = 0; b < B; b++) {
    for (let k = 0; k < 4; k++) for (let j = 0; j < M; j++) weighted[(4 * b + k) * M + j] = w.data[used[j] * B + b] * pos.data[used[j] * 4 + k];
  }
  const mirrored = Object.hasOwn(model, "is_mirrored") && model.is_mirrored === true;
  return {
    theta, bones: B, parents, baseRelatives, inverseBaseAbsolutes,
    weightedPositions: ndarray(weighted, [4 * B, M]), isMirrored: mirrored,
    points: ndarray(Float64Array.from({ length: 3 * N }, (_, k) => pts.data[(k % N) * 3 + Math.floor(k / N)]), [3, N]),
    correspondences: vertexReads[0],
    triangle: complicated ? (vertexReads as [Int32Array, Int32Array, Int32Array]) : null,
    us,
  };
}

/** ht.hpp's to_pose_params: B + 3 rows of 3 (rotation, scale, translation, then one per bone). */
export function poseParams(theta: readonly Scalar[], bones: number): Scalar[][] {
  const pose: Scalar[][] = Array.from({ length: bones + 3 }, () => [0, 0, 0]);
  pose[0] = theta.slice(0, 3);
  pose[1] = [1, 1, 1];
  pose[2] = theta.slice(3, 6);
  let iTheta = 6;
  let iPose = 5;
  for (let finger = 0; finger < 5; finger++) {
    for (let joint = 2; joint <= 4; joint++) {
      pose[iPose][0] = theta[iTheta++];
      if (joint === 2) pose[iPose][1] = theta[iTheta++];
      iPose++;
    }
    iPose++;
  }
  return pose;
}

const matmul3 = (a: M3, b: M3): M3 =>
  [0, 1, 2].map((i) => [0, 1, 2].map((j) => add(add(mul(a[i][0], b[0][j]), mul(a[i][1], b[1][j])), mul(a[i][2], b[2][j]))));

/** R_z R_y R_x of Euler angles given in the order (x, z, y). */
export function eulerRotation(xzy: readonly Scalar[]): M3 {
  const [tx, tz, ty] = xzy;
  const Rx: M3 = [[1, 0, 0], [0, cos(tx), neg(sin(tx))], [0, sin(tx), cos(tx)]];
  const Ry: M3 = [[cos(ty), 0, sin(ty)], [0, 1, 0], [neg(sin(ty)), 0, cos(ty)]];
  const Rz: M3 = [[cos(tz), neg(sin(tz)), 0], [sin(tz), cos(tz), 0], [0, 0, 1]];
  return matmul3(matmul3(Rz, Ry), Rx);
}

/** The rotation of an angle-axis vector (the identity when its norm is below 1e-4). */
export function angleAxisRotation(aa: readonly Scalar[]): M3 | null {
  const norm = sqrt(add(add(mul(aa[0], aa[0]), mul(aa[1], aa[1])), mul(aa[2], aa[2])));
  if (lt(norm, 0.0001)) return null;
  const [x, y, z] = aa.map((v) => div(v, norm));
  const s = sin(norm);
  const c = cos(norm);
  const omc = sub(1, c);
  return [
    [add(mul(x, x), mul(sub(1, mul(x, x)), c)), sub(mul(mul(x, y), omc), mul(z, s)), add(mul(mul(x, z), omc), mul(y, s))],
    [add(mul(mul(x, y), omc), mul(z, s)), add(mul(y, y), mul(sub(1, mul(y, y)), c)), sub(mul(mul(y, z), omc), mul(x, s))],
    [sub(mul(mul(x, z), omc), mul(y, s)), add(mul(mul(z, y), omc), mul(x, s)), add(mul(z, z), mul(sub(1, mul(z, z)), c))],
  ];
}

/** A 3 × 3 matrix of reals as a [3, 3] tensor. */
const tensor3 = (R: M3): T => reshape(stack(R.flat()), [3, 3]) as T;

/** The skinned, posed vertex positions as a [3, M] tensor, a column per vertex (ht.hpp's get_skinned_vertex_positions with the global transform). */
export function vertexPositions(h: HtPrepared, theta: readonly Scalar[]): T {
  const B = h.bones;
  const pose = poseParams(theta, B);
  // relatives: base relative · [R 0; 0 1]; absolutes along the parents; · inverse base absolute
  const absolutes: T[] = [];
  const transforms: T[] = [];
  for (let b = 0; b < B; b++) {
    const R = eulerRotation(pose[b + 3]);
    const tr = reshape(stack([...R[0], 0, ...R[1], 0, ...R[2], 0, 0, 0, 0, 1]), [4, 4]) as T;
    const relative = matmul(h.baseRelatives[b], tr) as T;
    absolutes.push(h.parents[b] === -1 ? relative : (matmul(absolutes[h.parents[b]], relative) as T));
    transforms.push(matmul(absolutes[b], h.inverseBaseAbsolutes[b]) as T);
  }
  // all bones and vertices at once: the transforms' top rows side by side, [3, 4B], times
  // the weighted base positions, [4B, M]: Σ_b w_b(v) (T_b p_v) as one sum over (b, k)
  const rows = reshape(transpose(slice(stack(transforms) as T, [0, 0, 0], [B, 3, 4]) as T, [1, 0, 2]) as T, [3, 4 * B]) as T;
  let positions = matmul(rows, h.weightedPositions) as T; // [3, M]
  if (h.isMirrored) positions = mul(positions, ndarray(Float64Array.of(-1, 1, 1), [3, 1])) as T;
  // the global transform; its scale (pose row 1) is 1 by construction, so R's columns are not scaled
  const R = angleAxisRotation(pose[0]);
  if (R !== null) positions = matmul(tensor3(R), positions) as T;
  return add(positions, reshape(stack(pose[2]), [3, 1]) as T) as T;
}

/**
 * The residuals as a [3, N] tensor, a column per point, of the vertex positions V ([3, M])
 * and, in the complicated variant, the barycentric coordinates (u0, u1) ([1, N] each).
 * Coordinate-major, so that each operation on them is over rows of N (a point's u
 * broadcast down its column), not N rows of 3.
 *
 * points − (u0 Va + u1 Vb + w Vc) is computed as points + ((−u0) Va + (−u1) Vb + (−w) Vc)
 * (and points − V_c as points + (−V)_c): the same residuals, negation being exact and
 * rounding symmetric (in the Jacobian, an entry whose terms cancel exactly is +0 where it
 * was −0), but the tangent of `points + x` is x's own, where that of
 * `points − x` is a negation of it: one pass fewer over the Jacobian's lanes of [3, N]
 * (the negations are of the weights, [1, N], or of V, [3, M], computed once).
 */
export function pointResiduals(h: HtPrepared, V: T, us: readonly [T, T] | null): T {
  if (h.triangle === null || us === null) return add(h.points, gather(neg(V), h.correspondences, 1)) as T;
  const [Va, Vb, Vc] = h.triangle.map((t) => gather(V, t, 1) as T);
  const [u0, u1] = us;
  const point = add(add(mul(neg(u0), Va), mul(neg(u1), Vb)), mul(neg(sub(sub(1, u0), u1)), Vc)) as T;
  return add(h.points, point) as T;
}

export const residuals = (h: HtPrepared, theta: readonly Scalar[]): T => pointResiduals(h, vertexPositions(h, theta), h.us);

/**
 * The residuals point by point ([N, 3]) traced, as a reference: under a trace (vjp's value,
 * no pullback), whose intermediates are fresh buffers kept until the trace is dropped
 * (see gmm.ts on untraced tensor operations).
 */
export function htObjectiveTraced(h: HtPrepared): Float64Array {
  const [err] = vjp((t) => transpose(residuals(h, unstack(t) as Scalar[])), h.theta);
  return (err as NdArray).data as Float64Array;
}

/** The argument of the objective's jitted residuals: θ, and the vertices each point reads as positions (its own, or its triangle's three). */
interface PosedReads {
  readonly theta: Float64Array;
  readonly reads: readonly Float64Array[];
}

/** ht's input prepared for the objective: point-major constants, its jitted residuals, and the buffer each call writes them into (3N numbers). */
export interface HtObjectivePrepared extends HtPrepared {
  readonly residuals: Jitted<PosedReads, T>;
  /** The vertices each point reads (correspondences, or the triangle's three), as positions: the jitted function's argument. */
  readonly reads: readonly Float64Array[];
  readonly out: Float64Array;
}

/** A [rows, N] array's transpose [N, rows], each of its rows repeated `times` times along the last axis ([N, rows · times]). */
function pointMajor(a: NdArray, times = 1): NdArray {
  const [rows, N] = a.shape;
  const src = a.data as Float64Array;
  const width = rows * times;
  const r = new Float64Array(N * width);
  for (let i = 0; i < N; i++) for (let k = 0; k < width; k++) r[i * width + k] = src[(k % rows) * N + i];
  return ndarray(r, [N, width]);
}

/**
 * The residuals point by point ([N, 3]) of the vertex positions V ([3, M]): pointResiduals'
 * arithmetic, element for element, point-major. Each point's vertices are rows of V's
 * transpose ([M, 3]) gathered at traced positions, and its u repeated along its row of
 * three ([N, 3]): every operation over the points is then over tensors of one shape, and
 * the whole is one chain of a jitted trace, one loop over the 3N residuals (jit/chains.ts:
 * gatherAt along axis 0 fuses, a constant gather or a broadcast closes a chain), where
 * pointResiduals' gathers, broadcast products and final transpose each made a pass.
 */
function pointMajorResiduals(V: T, reads: readonly T[], points: NdArray, us: readonly [NdArray, NdArray] | null): T {
  const rows = transpose(V) as T; // [M, 3]
  if (us === null) return add(points, gather(neg(rows), reads[0] as unknown as Indices, 0)) as T;
  const [Va, Vb, Vc] = reads.map((p) => gather(rows, p as unknown as Indices, 0) as T);
  const [u0, u1] = us;
  return add(points, add(add(mul(neg(u0), Va), mul(neg(u1), Vb)), mul(neg(sub(sub(1, u0), u1)), Vc))) as T;
}

/**
 * The residuals `jit`ted once per prepared input (GradBench evaluates one input again and
 * again; the points, us and weighted positions are constants of the trace, read when it is
 * traced; the positions the points read are its argument, so that the gathers are of
 * traced positions and join the chain). The first call traces; later ones replay the
 * trace on pooled buffers, the per-point work one compiled loop (pointMajorResiduals),
 * where the traced objective made a fresh buffer per operation. The same numbers, bit for
 * bit (tests: against htObjectiveTraced). The global rotation's threshold is a guard: a θ
 * on its other side traces again.
 */
export function prepareHtObjective(json: unknown, options: HtPrepareOptions = {}): HtObjectivePrepared {
  const h = prepareHt(json, options);
  const points = pointMajor(h.points);
  const us = h.us === null ? null : ([pointMajor(h.us[0], 3), pointMajor(h.us[1], 3)] as const);
  const reads = (h.triangle ?? [h.correspondences]).map((r) => Float64Array.from(r));
  const residuals = jit((x: PosedReads) => pointMajorResiduals(vertexPositions(h, unstack(x.theta) as Scalar[]), x.reads as unknown as T[], points, us));
  return { ...h, residuals: residuals as unknown as Jitted<PosedReads, T>, reads, out: new Float64Array(3 * h.points.shape[1]) };
}

/** The residuals at h.theta, written where the last call's were (as GradBench's manual tools keep their output). */
export const htObjective = (h: HtObjectivePrepared): Float64Array => h.residuals.into({ theta: h.theta, reads: h.reads }, h.out);

/**
 * The Jacobian as a [3N, ncols] ndarray (rows: residual 3i + j), by forward mode: each
 * `jacfwd` emits one tangent term and evaluates it with its columns as lanes. Its function
 * returns the residuals point by point, as the objective does ([N, 3]), so that its block
 * [N, 3, C] is the matrix of GradBench's rows as it is. The θ columns hold the us
 * constant; in the complicated variant the (a, b) columns before them (the derivatives
 * along shifts added to every u_i0 and u_i1: residual i depends on us only through
 * (u_i0, u_i1), and these are the diagonal blocks GradBench's layout keeps) hold the
 * vertices constant. So neither set of lanes carries the other's tangents through the
 * per-point work (9 operations over [3, N] per lane where one set of lanes for both took 16).
 * Each jacfwd writes its columns of the one [3N, 28] matrix (its `column` option), where
 * they are: neither a second matrix nor a pass copying columns into it.
 */
export function htJacobian(h: HtJacobianPrepared): NdArray {
  const N = h.points.shape[1];
  const ab = h.us === null ? 0 : 2;
  // written where the last call's was (jacfwd's into), as GradBench's manual tools keep their
  // output: the θ columns after the (a, b) ones (jacfwd's column)
  jacfwd((t) => transpose(residuals(h, unstack(t) as Scalar[])), h.theta, { into: h.jacobian, column: ab }); // [N, 3, 26] of [N, 3, ab + 26]
  if (h.us !== null) {
    const [u0, u1] = h.us;
    const V = vertexPositions(h, Array.from(h.theta));
    jacfwd((v) => {
      const [a, b] = unstack(v) as Scalar[];
      return transpose(pointResiduals(h, V, [add(u0, a) as T, add(u1, b) as T]));
    }, new Float64Array(2), { into: h.jacobian, column: 0 }); // [N, 3, 2] of [N, 3, 28]
  }
  return ndarray(h.jacobian, [3 * N, ab + 26]);
}

/** ht's input prepared for the Jacobian: with the buffer each call writes it into (3N × ncols numbers). */
export interface HtJacobianPrepared extends HtPrepared {
  readonly jacobian: Float64Array;
}

export function prepareHtJacobian(json: unknown, options: HtPrepareOptions = {}): HtJacobianPrepared {
  const h = prepareHt(json, options);
  return { ...h, jacobian: new Float64Array(h.points.shape[1] * 3 * (h.us === null ? 26 : 28)) };
}

/**
 * Warm-up inputs for `define` (module.ts): synthetic hands of 100 points on 544 vertices,
 * complicated and simple in turn, each run 10 times, so that V8 has optimised the tracing,
 * lane and chain code before GradBench's first timed run. Without it the Jacobian's first
 * second of calls on hand1 averaged ×5 its later calls (GradBench times about 20 of them).
 */
const warmUp = { input: (r: number) => ({ ...htInput(100, 544, r % 2 === 0, 1 + r), min_runs: 10 }), rounds: 6 };

export const ht: EvalModule = {
  objective: defineFunction({ prepare: (json) => prepareHtObjective(json), run: htObjective, warmUp }),
  jacobian: defineFunction({ prepare: (json) => prepareHtJacobian(json), run: htJacobian, warmUp }),
};
