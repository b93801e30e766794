/**
 * @file What a scan's reverse sweep starts from, whichever way it is emitted (one
 * scanGrad instruction, scan-reverse.ts and scan-stacked.ts; scans of its rules,
 * scan-nested.ts): the cotangents differentiate.ts lends it, the seeds of the scan's outputs
 * and the cotangents its arguments hold, and the plan made from them.
 */
import type { ScanParams, ScanOutParams } from "../trace/scan-ops.js";
import type { TraceTerm } from "../trace/term.js";
import type { Trace } from "../trace/tracer.js";
import { maskId, type Mask } from "./cotangent-mask.js";
import { planBoxes } from "./box-plan.js";
import { PARTS, planReverse, type Differentiate, type ReverseInputs, type ReversePlan } from "./reverse-plan.js";

/** What differentiate.ts lends a scan's reverse sweep. */
export interface CotangentState {
  /** Each variable's dense cotangent so far (-1: the symbolic zero). */
  readonly ct: Int32Array;
  /** The mask of a variable's dense cotangent (null: none, every element may be nonzero; cotangent-mask.ts). */
  maskOf(v: number): Mask | null;
  /** The mask of a tensor variable's pending pieces (null: none), before `pending` takes them. */
  piecesMask(v: number): Mask | null;
  /** A tensor variable's pending pieces placed by one embed and taken away (-1: none). */
  pending(v: number): number;
  /**
   * Set a variable's dense cotangent and its pieces (one whole piece, or -1), with their masks: the
   * scan's sums include what it held.
   */
  replace(v: number, c: number, whole: number, mask?: Mask | null, wholeMask?: Mask | null): void;
}

/** Where a scan's sweep is emitted: the sink, the sink's variable for each of the term's, and the scan instruction's own. */
export interface Where {
  readonly sink: Trace;
  readonly at: Int32Array;
  readonly self: number;
  /** Per scan read by stacked scans (a reverse sweep emitted as scans): which elements of its packed value's cotangent are present. */
  readonly packed: Map<number, Uint8Array>;
  /** The same: the masks (ids, cotangent-mask.ts) of the tensor slots whose cotangent has one, by the slot's first element. */
  readonly packedMasks: Map<number, Map<number, number>>;
  /** The scanOut instructions of each scan, by the scan's variable. */
  readonly outputsOf: Map<number, number[]>;
}

/** A scan instruction whose reverse sweep is to be emitted, and where: each emitter's one argument (scan-reverse.ts picks the emitter). */
export interface ScanReverseCall {
  readonly p: ScanParams;
  readonly args: readonly number[];
  /** Its scanOut instructions. */
  readonly outputs: readonly number[];
  readonly tape: TraceTerm["tape"];
  readonly where: Where;
  readonly state: CotangentState;
  readonly active: Uint8Array;
  readonly differentiate: Differentiate;
}

/** What a scan's reverse sweep starts from: which outputs were seeded and which arguments hold cotangents, and their variables in the sink. */
export interface Gathered {
  readonly inputs: ReverseInputs;
  /** The seeds' variables by output part (2 · offset + part). */
  readonly seedAtoms: Map<number, number>;
  /** The held cotangents' variables, in argument and part order. */
  readonly accAtoms: number[];
  /** The same by argument part (2a + part; -1: none). */
  readonly held: Int32Array;
}

/** The seeds of a scan instruction's outputs and the cotangents its arguments hold (state's), by part. */
export function gather(
  p: ScanParams,
  args: readonly number[],
  outputs: readonly number[],
  tape: TraceTerm["tape"],
  state: CotangentState,
  active: Uint8Array,
): Gathered {
  const { body, n, layout } = p;
  const nobs = layout.obs.length;
  const seedObs = new Uint8Array(PARTS * n * nobs);
  const seedFinal = new Uint8Array(PARTS * body.nc);
  // the seeds (outputs' cotangents) by offset and part, then the arguments' cotangents held
  const seedAtoms = new Map<number, number>();
  const byOffset = new Map<number, number>();
  for (const j of outputs) {
    const q = tape.params(j) as ScanOutParams;
    if (q.held) continue;
    const tensor = tape.dims(j).length > 0;
    const ids = tensor ? [maskId(state.maskOf(j)), maskId(state.piecesMask(j))] : [0, 0];
    const parts = [state.ct[j], tensor ? state.pending(j) : -1];
    const r = Math.floor(q.offset / layout.width);
    const flag =
      q.offset < n * layout.width
        ? (part: number) => (seedObs[2 * (r * nobs + layout.obsOffset.indexOf(q.offset - r * layout.width)) + part] = 1)
        : (part: number) => (seedFinal[2 * layout.carryOffset.indexOf(q.offset) + part] = 1);
    parts.forEach((c, part) => {
      if (c < 0) return;
      seedAtoms.set(2 * q.offset + part, c);
      flag(part);
      if (ids[part] !== 0) byOffset.set(2 * q.offset + part, ids[part]);
    });
  }
  const need = Uint8Array.from(args, (v) => active[v]);
  const acc = new Uint8Array(PARTS * args.length);
  const accAtoms: number[] = [];
  const held = new Int32Array(PARTS * args.length).fill(-1);
  const accMasks = new Map<number, number>();
  args.forEach((v, a) => {
    if (!need[a]) return;
    const tensor = tape.dims(v).length > 0;
    const ids = tensor ? [maskId(state.maskOf(v)), maskId(state.piecesMask(v))] : [0, 0];
    const parts = [state.ct[v], tensor ? state.pending(v) : -1];
    parts.forEach((c, part) => {
      if (c < 0) return;
      if (ids[part] !== 0) accMasks.set(2 * a + part, ids[part]);
      acc[2 * a + part] = 1;
      accAtoms.push(c);
      held[2 * a + part] = c;
    });
  });
  // the seeds' masks by slot part (2 (r·|obs| + s) + part) and carry part, as the plan reads them
  const seedObsMasks = new Map<number, number>();
  const seedFinalMasks = new Map<number, number>();
  for (const [e, id] of byOffset) {
    const offset = e >> 1;
    const part = e & 1;
    if (offset < n * layout.width) {
      const r = Math.floor(offset / layout.width);
      seedObsMasks.set(2 * (r * nobs + layout.obsOffset.indexOf(offset - r * layout.width)) + part, id);
    } else seedFinalMasks.set(2 * layout.carryOffset.indexOf(offset) + part, id);
  }
  const masked = seedObsMasks.size + seedFinalMasks.size + accMasks.size > 0;
  const masks = { seedObs: seedObsMasks, seedFinal: seedFinalMasks, acc: accMasks };
  return { inputs: { seedObs, seedFinal, acc, need, ...(masked ? { masks } : {}) }, seedAtoms, accAtoms, held };
}

/**
 * The plan of a scan's reverse sweep; the same scan differentiated again (a loop's gradient call
 * after call) takes the plan made then. A sweep kept as one instruction (`bounded`: scanGrad,
 * evaluated, not differentiated again as blocks) passes masks from block to block as long as
 * the patterns they make stay within MASK_BUDGET; beyond it, each block starts unmasked (the
 * same numbers wherever the forward values outside a mask are finite and no zero's sign decides).
 */
export function planFor(p: ScanParams, inputs: ReverseInputs, differentiate: Differentiate, bounded = false): ReversePlan {
  const key =
    inputs.seedObs.length + inputs.acc.length < 512
      ? `${p.n}|${p.layout.obs.join(",")}|${inputs.seedObs.join("")}|` +
        `${inputs.seedFinal.join("")}|${inputs.acc.join("")}|${inputs.need.join("")}|${+bounded}` +
        (inputs.masks === undefined ? "" : `|${[inputs.masks.seedObs, inputs.masks.seedFinal, inputs.masks.acc].map((m) => [...m].join(";")).join("|")}`)
      : null;
  const known = key === null ? undefined : (p.body.plans.get(key) as ReversePlan | undefined);
  // a sweep kept as one instruction passes each carry's cotangent between blocks as one vector (reverse-plan.ts mergeable)
  const plan =
    known ??
    (bounded ? planBoxes(p, inputs, differentiate, { merge: true, unneeded: true }) : null) ??
    planReverse(p, inputs, differentiate, { budget: bounded ? MASK_BUDGET : Infinity, merge: bounded, unneeded: bounded }) ??
    planReverse(p, inputs, differentiate, { dropMasks: true, merge: bounded, unneeded: bounded })!;
  if (key !== null && known === undefined && p.body.plans.size < 16) p.body.plans.set(key, plan);
  return plan;
}

/**
 * Elements of masks (summed over the block derivatives made for them) beyond which a sweep kept
 * as one instruction drops them: each such pattern is a block derivative of its own, evaluated
 * apart. GradBench ode's mask grows by four elements per step of a vector of 10⁴: with every
 * step's pattern its gradient went from ×2.2 to ×55 of the primal (1.4 GB); with a budget that
 * made a few patterns first, ×5–8 (a gradient traced anew per call plans anew).
 */
const MASK_BUDGET = 1 << 12;
