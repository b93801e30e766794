/**
 * @file The plan of a vmap call: the structure of x as a call found it (its shape, which
 * leaves are batched, a lane's dims, and the key by which jit(vmap(f)) keeps its traces),
 * made once and reused by every later call whose x has that structure, whatever its
 * batch size.
 *
 * A call of jit(vmap(f)) on a batch it has seen replays compiled code over the lanes;
 * what is left of its cost whatever the batch size is reading x. So a call whose x has
 * the plan's structure walks x once, collecting its leaves and checking their dims, and
 * builds no shapes, paths or key strings; any other x (a first call, another structure,
 * a mistake) is planned from scratch, and its mistakes named there (`planOf`), as if no
 * plan had been kept.
 */
import { size, type Dims } from "@wengert/ops";
import { WengertError } from "../errors.js";
import { Indexed } from "./indexed.js";
import type { LaneInput } from "../eval/lanes.js";
import { assemble, assertNever, childPath, isPlainObject, REAL, typeString, type Shape } from "../structure.js";
import { concreteShape, isConcreteTensor, toDense, type ConcreteTensor } from "../trace/host-tensor.js";

/** x's structure as a call of vmap found it. */
export interface CallPlan {
  /** x's structure (its batched leaves' dims those of the call that made the plan). */
  readonly shape: Shape;
  /** Which leaves are batched (by inAxes). */
  readonly batched: readonly boolean[];
  /**
   * Per leaf read through an index (api/indexed.ts), the first leaf that reads the same
   * table at the same index and stride (itself if none); −1 for the others (`tableReads`).
   */
  readonly indexed: readonly number[];
  /** Each leaf's structure at one lane. */
  readonly laneShapes: readonly Shape[];
  /** The key of a lane's structure (jit(vmap(f)) keeps traces by it): the batch size is no part of it. */
  readonly key: string;
}

/** x's leaves read by a plan: as lane inputs, and the batch size. */
export interface Planned {
  readonly plan: CallPlan;
  readonly leaves: readonly VmapLeaf[];
  readonly inputs: readonly LaneInput[];
  readonly size: number;
}

/** A leaf of vmap's x: a number, a tensor the user holds, or an indexed batch of reals. */
export type VmapLeaf = number | ConcreteTensor | Indexed;

/** Counters for tests: plans made (x's structure walked and keyed) and plans reused, since set. */
export const planStats = { made: 0, reused: 0 };

/** A lane input of leaf v (checked). */
function laneInput(v: VmapLeaf, batched: boolean, laneShape: Shape): LaneInput {
  if (typeof v === "number") return { values: Float64Array.of(v), batched: false, width: 1 };
  if (v instanceof Indexed) return { values: v.values, batched: true, width: 1, indexed: v };
  const data = toDense(v, "vmap's input").data;
  return { values: data, batched, width: laneShape.kind === "tensor" ? size(laneShape.dims) : 1 };
}

/**
 * x's leaves planned from scratch, checked: a batched leaf is a tensor whose leading dim
 * is the batch size, the same for all of them.
 */
export function planOf(shape: Shape, leaves: readonly VmapLeaf[], batched: readonly boolean[], paths: () => readonly string[]): Planned {
  planStats.made++;
  let B = -1;
  const laneShapes: Shape[] = [];
  const inputs = leaves.map((v, k): LaneInput => {
    if (v instanceof Indexed) {
      if (!batched[k]) throw new WengertError(`vmap: ${paths()[k]} is an indexed batch (indexed(…)), marked null in inAxes; mark it 0 (batched).`);
      if (B >= 0 && v.index.length !== B) {
        throw new WengertError(
          `vmap: ${paths()[k]} is an indexed batch of ${v.index.length} lanes (its index's length), but an earlier batched input has ${B}; ` +
            "every batched input needs the same number of lanes.",
        );
      }
      B = v.index.length;
      laneShapes.push(REAL);
      return laneInput(v, true, REAL);
    }
    if (!batched[k]) {
      const s = typeof v === "number" ? REAL : concreteShape(v);
      laneShapes.push(s);
      return laneInput(v, false, s);
    }
    if (typeof v === "number") {
      throw new WengertError(
        `vmap: ${paths()[k]} is a number, marked batched; a batch of reals is a Float64Array of B numbers ` +
          "(or mark it null in inAxes for the same value in every lane).",
      );
    }
    const d = toDense(v, "vmap's input");
    if (d.dims.length === 0) throw new WengertError(`vmap: ${paths()[k]} is a 0-d tensor, marked batched; a batch has a leading axis.`);
    if (B >= 0 && d.dims[0] !== B) {
      throw new WengertError(
        `vmap: ${paths()[k]} has ${d.dims[0]} lanes (dims [${d.dims.join(", ")}]), but an earlier batched input has ${B}; ` +
          "every batched input needs the same leading dim.",
      );
    }
    B = d.dims[0];
    const lane = d.dims.slice(1);
    const s: Shape = lane.length === 0 ? REAL : { kind: "tensor", dims: lane, container: "ndarray" };
    laneShapes.push(s);
    return laneInput(v, true, s);
  });
  const laneDims = JSON.stringify(laneShapes.map((s) => (s.kind === "tensor" ? s.dims : null)));
  const indexed = tableReads(leaves);
  const key = laneDims + JSON.stringify(batched) + JSON.stringify(indexed) + typeString(laneStructure(shape, laneShapes));
  return { plan: { shape, batched: [...batched], indexed, laneShapes, key }, leaves, inputs, size: B };
}

/**
 * Per leaf read through an index, the first leaf that reads the same table (values) at
 * the same index and stride, itself if none; −1 for a leaf not indexed. The columns of
 * one table row (ba's 11 camera parameters) share a row: compiled, each lane reads the
 * row's index once and each column at its offset from there (jit/lanes.ts), where read
 * apart every column loaded the index and checked its bounds again, and the many arrays
 * in the loop would not stay in registers.
 */
export function tableReads(leaves: readonly VmapLeaf[]): number[] {
  // the first leaves of each index's rows (few per index: one per table and stride)
  const firsts = new Map<Int32Array, number[]>();
  return leaves.map((v, k) => {
    if (!(v instanceof Indexed)) return -1;
    let rows = firsts.get(v.index);
    if (rows === undefined) firsts.set(v.index, (rows = []));
    for (const j of rows) {
      const u = leaves[j] as Indexed;
      if (u.values === v.values && u.stride === v.stride) return j;
    }
    rows.push(k);
    return k;
  });
}

/** The structure of x at one lane: x's, its leaves the lanes' shapes. */
const laneStructure = (shape: Shape, laneShapes: readonly Shape[]): Shape =>
  assemble<Shape>(shape, laneShapes, (items) => ({ kind: "tuple", items }), (keys, fields) => ({ kind: "record", keys, fields }));

/** Whether dims d are `lane`, after a leading (batch) dim if `batched`. */
function dimsFit(d: Dims, lane: Shape, batched: boolean): boolean {
  const want: Dims = lane.kind === "tensor" ? lane.dims : [];
  const skip = batched ? 1 : 0;
  if (d.length !== want.length + skip) return false;
  for (let i = 0; i < want.length; i++) if (d[i + skip] !== want[i]) return false;
  return true;
}

/**
 * x's leaves read by `plan`, or null where x does not have its structure (another
 * structure, other lane dims, batch sizes that differ, traced values): the caller then
 * plans x from scratch, which names any mistake. One walk of x, recursive in the nesting
 * of the user's data only.
 */
export function planned(plan: CallPlan, x: unknown): Planned | null {
  const leaves: VmapLeaf[] = [];
  const walk = (s: Shape, v: unknown): boolean => {
    switch (s.kind) {
      case "real":
        if (typeof v !== "number") return false;
        leaves.push(v);
        return true;
      case "tensor":
        if (!isConcreteTensor(v) && !(v instanceof Indexed)) return false;
        leaves.push(v);
        return true;
      case "tuple":
        if (!Array.isArray(v) || v.length !== s.items.length) return false;
        for (let i = 0; i < s.items.length; i++) if (!walk(s.items[i], v[i])) return false;
        return true;
      case "record": {
        if (!isPlainObject(v)) return false;
        const names = Object.keys(v);
        if (names.length !== s.keys.length) return false;
        for (let i = 0; i < names.length; i++) if (names[i] !== s.keys[i] || !walk(s.fields[i], v[names[i]])) return false;
        return true;
      }
      default:
        return assertNever(s);
    }
  };
  if (!walk(plan.shape, x)) return null;
  // every leaf's dims checked before any is read: a mistake anywhere is named by planOf, in its order
  let B = -1;
  for (let k = 0; k < leaves.length; k++) {
    const v = leaves[k];
    if (typeof v === "number") continue;
    if (plan.indexed[k] >= 0 !== v instanceof Indexed) return null;
    const d = v instanceof Indexed ? [v.index.length] : v instanceof Float64Array ? [v.length] : v.shape;
    if (!dimsFit(d, plan.laneShapes[k], plan.batched[k])) return null;
    if (plan.batched[k]) {
      if (B >= 0 && d[0] !== B) return null;
      B = d[0];
    }
  }
  // the leaves that share a table and index as the plan's did: the compiled lanes read each such row once
  const reads = tableReads(leaves);
  for (let k = 0; k < reads.length; k++) if (reads[k] !== plan.indexed[k]) return null;
  planStats.reused++;
  const inputs = leaves.map((v, k) => laneInput(v, plan.batched[k], plan.laneShapes[k]));
  return { plan, leaves, inputs, size: B };
}

/** Each leaf's path (`x[1].w`), for messages. */
export function leafPaths(shape: Shape, root: string): string[] {
  const out: string[] = [];
  const walk = (s: Shape, path: string): void => {
    if (s.kind === "tuple") s.items.forEach((item, i) => walk(item, childPath(path, i)));
    else if (s.kind === "record") s.keys.forEach((k, i) => walk(s.fields[i], childPath(path, k)));
    else out.push(path);
  };
  walk(shape, root);
  return out;
}
