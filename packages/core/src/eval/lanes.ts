/**
 * @file A trace term evaluated at many points at once (vmap): the paper's ordinary
 * evaluator (Fig. 2 on trace terms) on columns, every instruction over a column of the
 * lanes' values.
 *
 * An input is batched (one value per lane) or not (one value for all); so is every
 * variable, as its arguments are. A variable that is not batched is computed once, a
 * batched real into a column (one number per lane, the primitive's loop inside), a
 * batched tensor into one buffer of the lanes side by side (a lane axis in front), by
 * one kernel call for all lanes where the primitive has a batching rule (lane-rules.ts),
 * or, for a chain of elementwise instructions and gathers, one loop that writes only the
 * chain's last result (lane-fusion.ts).
 * Lanes are taken in blocks, so that the columns of a long trace stay a bounded size.
 *
 * The term holds at a lane where its recorded decisions come out as they did (the
 * paper's trace is valid on the region its predicates select): every guard and kink is
 * checked per lane, and a lane where one does not hold is reported back (vmap traces f
 * there). With `checkNaN`, so is a lane where a value is NaN or infinite (tracing there
 * names the primitive). Each value is computed by the kernels tracing used: per lane,
 * the numbers of a trace at that lane's point.
 */
import { alloc, predicates, release, type Buf, type Dims } from "@wengert/ops";
import { ARITY, CODE, CONST, FREE, INPUT, IS_TENSOR_OP, KERNELS, KINKS, tensorSpec } from "../trace/opcodes.js";
import { binaryKernel, compute } from "../trace/tape.js";
import { laneArg, onLanes } from "./lane-rules.js";
import { runFused, type ChainOperand } from "./lane-fusion.js";
import { writeElementMajor } from "./lane-layout.js";
import { someIndex } from "./lane-plan.js";
import { cachedLanePlan } from "./lane-plans.js";
import type { Indexed } from "../api/indexed.js";
import type { TraceTerm } from "../trace/term.js";
import type { Guard } from "../trace/tracer.js";
import { isScanCode, scanCodes, type ScanParams } from "../trace/scan-ops.js";
import { scanLanes, type LaneArg } from "../jit/scan-lanes.js";

/**
 * An input of the term over the batch: `values` holds one value for all lanes (batched
 * false) or one per lane, lane l's at l·width (batched true); `width` is 1 for a real,
 * else the tensor's size.
 */
export interface LaneInput {
  readonly values: Float64Array;
  readonly batched: boolean;
  readonly width: number;
  /** A batch of reals read through an index (api/indexed.ts): lane l's value is indexed's, `values` its table. */
  readonly indexed?: Indexed;
}

/** `input` with its lanes' values one per lane: an indexed batch written out (columns read lane by lane). */
const written = (input: LaneInput): LaneInput => (input.indexed === undefined ? input : { values: input.indexed.dense(), batched: true, width: 1 });

export interface LaneOptions {
  /** A decision or kink at a tie does not hold (tracing reports it). */
  readonly reportTies: boolean;
  /** A NaN or infinite value does not hold (tracing names it). */
  readonly checkNaN: boolean;
  /**
   * The outputs element-major (lane-layout.ts): element e of output j at batch index b at
   * e·B + b, B = outs[j].length / its width (jacfwd's blocks, the columns last); by
   * default lane-major, at b·width + e.
   */
  readonly elementMajor?: boolean;
  /**
   * The term's instructions before this index were traced at the lanes' unbatched inputs
   * (jacfwd's point, columns.ts): those not varying with the lane are read from the tape,
   * not computed again (tracing computed them with the same kernels). Default 0.
   */
  readonly tracedBefore?: number;
}

/** Batched columns per block: lanes × batched variables stays below this (16 MB of doubles). */
const BLOCK_VALUES = 1 << 21;

const { add: ADD, sub: SUB, mul: MUL, div: DIV } = CODE;

/**
 * The term's outputs at `lanes` (batch indices), written into `outs` (output j of lane l
 * at l·width of output j, as the inputs are laid out). Returns, per position in `lanes`,
 * 1 where the term held there (its outputs written) and 0 where it did not.
 */
export function runLanes(
  term: TraceTerm,
  guards: readonly Guard[],
  options: LaneOptions,
  given: readonly LaneInput[],
  lanes: Int32Array,
  outs: readonly Float64Array[],
): Uint8Array {
  const inputs = given.map(written);
  const tape = term.tape;
  const { op, a, b, x, length: n } = tape;
  const m = lanes.length;
  const held = new Uint8Array(m).fill(1);

  // which variables vary with the lane and are needed, the chains, the columns: the term's structure's (lane-plan.ts)
  const plan = cachedLanePlan(term, guards, options, inputs.map((input) => input.batched));
  const { batched, live, tieChecked, kinked, fusion, directTo, transposedTo, outputOf, places } = plan;
  const { slotOf, slots, tensors, widthOf, endsAt, tensorOp, outWidths } = plan;
  const dims = (v: number): Dims => tape.dims(v);
  const isTensor = (v: number): boolean => tape.isTensor(v);

  // the values that do not vary: once, before any lane
  const vals = new Float64Array(n);
  const bufs: (Float64Array | null)[] = new Array<Float64Array | null>(n).fill(null);
  const made: number[] = [];
  const one = (v: number): Buf => (isTensor(v) ? bufs[v]! : vals[v]);
  // a tie or (with checkNaN) a NaN among them: the term holds at no lane
  let nowhere = false;
  const traced = options.tracedBefore ?? 0;
  for (let i = 0; i < n; i++) {
    if (batched[i] || !live[i]) continue;
    if (op[i] === CONST || op[i] === FREE) {
      if (isTensor(i)) bufs[i] = tape.buf(i);
      else vals[i] = tape.val[i];
    } else if (op[i] === INPUT) {
      const input = inputs[a[i]];
      if (isTensor(i)) bufs[i] = input.values.subarray(0, input.width);
      else vals[i] = input.values[0];
    } else if (i < traced && !tieChecked[i] && !options.checkNaN && !tape.isDeferred(i)) {
      // traced at these very inputs (LaneOptions.tracedBefore): tracing's value
      if (isTensor(i)) bufs[i] = tape.buf(i);
      else vals[i] = tape.val[i];
    } else {
      const args = tape.args(i).map(one);
      const ds = tape.args(i).map(dims);
      const y = compute(op[i], args, ds, tape.params(i), dims(i));
      if (typeof y === "number") vals[i] = y;
      else {
        bufs[i] = y;
        made.push(i);
      }
      if ((tieChecked[i] && tieAt(op[i], args, ds, tape.params(i), y)) || (options.checkNaN && !finite(y))) nowhere = true;
    }
  }
  const test = (g: Guard, va: number, vb: number): boolean => !(options.reportTies && va === vb && g.distinct) && predicates[g.pred].test(va, vb) === g.outcome;
  const fixed = Array.from(plan.fixed, (k) => guards[k]);
  const atKink = (i: number): boolean => !batched[i] && live[i] !== 0 && kinked[i] === 1 && KINKS[op[i]]!(vals[a[i]]);
  if (nowhere || !fixed.every((g) => test(g, vals[g.a], vals[g.b])) || someIndex(n, atKink)) {
    for (const i of made) release(bufs[i]!);
    return held.fill(0);
  }
  const varying = Array.from(plan.varying, (k) => guards[k]);

  // the batched variables, in blocks of lanes
  const L = Math.max(1, Math.min(m, Math.floor(BLOCK_VALUES / Math.max(1, slots + tensors))));
  const columns = Array.from({ length: slots }, () => new Float64Array(L));
  const cols: (Float64Array | null)[] = Array.from(slotOf, (s) => (s < 0 ? null : columns[s]));
  // a batched tensor's lanes of the block side by side; a pool's buffer (owned) or a view of the input
  const laneBuf: (Float64Array | null)[] = new Array<Float64Array | null>(n).fill(null);
  const owned = new Uint8Array(n);
  const drop = (v: number): void => {
    if (owned[v]) release(laneBuf[v]!);
    laneBuf[v] = null;
    owned[v] = 0;
  };
  const outAtoms = term.output.atoms;
  const batchedAt = (v: number, k: number): Buf => (isTensor(v) ? laneBuf[v]!.subarray(k * widthOf[v], (k + 1) * widthOf[v]) : cols[v]![k]);
  const valueAt = (v: number, k: number): Buf => (batched[v] ? batchedAt(v, k) : one(v));

  for (let start = 0; start < m; start += L) {
    const end = Math.min(m, start + L);
    const w = end - start;
    const ok = held.subarray(start, end);

    /**
     * A scan of reals at every lane of the block by its column code (jit/scan-lanes.ts),
     * packed as onLanes packs: null where that does not apply. A lane whose decisions fail
     * in the loop is left with the scan's flag 0 (its guard sends it to a trace of its own).
     */
    const scanStep = (i: number): Float64Array | null => {
      if (!isScanCode(op[i]) || op[i] !== scanCodes().scan) return null;
      const args: LaneArg[] = tape.args(i).map((v) => ({ column: batched[v] ? cols[v] : null, value: vals[v] }));
      return scanLanes(tape.params(i) as ScanParams, args, w, ok);
    };

    /** Tensor instruction i at every lane of the block, one kernel call (lane by lane without a rule). */
    const tensorStep = (i: number): void => {
      const scanned = scanStep(i);
      if (scanned !== null) {
        laneBuf[i] = scanned;
        owned[i] = 1;
        return;
      }
      const as = tape.args(i);
      const params = tape.params(i);
      const laneArgs = {
        lanes: w,
        args: as.map((v) => (!batched[v] ? one(v) : isTensor(v) ? laneBuf[v]! : cols[v]!.subarray(0, w))),
        dims: as.map(dims),
        batched: as.map((v) => batched[v] === 1),
      };
      const ys = onLanes(op[i], laneArgs, params, dims(i), ok);
      const W = widthOf[i];
      for (let l = 0; l < w && (tieChecked[i] || options.checkNaN); l++) {
        if (!ok[l]) continue;
        const y = ys.subarray(l * W, (l + 1) * W);
        if (tieChecked[i] && tieAt(op[i], laneArgs.args.map((_, k) => laneArg(laneArgs, k, l)), laneArgs.dims, params, isTensor(i) ? y : y[0])) ok[l] = 0;
        else if (options.checkNaN && !finite(y)) ok[l] = 0;
      }
      if (isTensor(i)) {
        laneBuf[i] = ys;
        owned[i] = 1;
      } else {
        cols[i]!.set(ys.subarray(0, w));
        release(ys);
      }
    };

    /** Chain i's lanes of the block (a pool's buffer, or its place in the output), its operands as they are now. */
    const written = new Uint8Array(outs.length);
    const chainStep = (i: number): void => {
      const W = widthOf[i];
      const j = directTo[i];
      const consecutive = lanes[end - 1] - lanes[start] === w - 1;
      const direct = j >= 0 && consecutive;
      const operand = (v: number): ChainOperand => {
        if (!batched[v]) return { values: isTensor(v) ? bufs[v]! : Float64Array.of(vals[v]), laneSize: 0 };
        return isTensor(v) ? { values: laneBuf[v]!, laneSize: widthOf[v] } : { values: cols[v]!, laneSize: 1 };
      };
      const t = transposedTo[i];
      if (t >= 0 && consecutive) {
        // its transpose is output t: its lanes go straight to their permuted places there
        runFused(fusion!.chains.get(i)!, w, outs[t], operand, { stride: batchSize(outs[t], W), first: lanes[start], permuted: places[i] });
        written[t] = 1;
        return;
      }
      if (direct && options.elementMajor) {
        // nothing reads it after: its lanes go straight to their places in the output
        runFused(fusion!.chains.get(i)!, w, outs[j], operand, { stride: batchSize(outs[j], W), first: lanes[start] });
        written[j] = 1;
        return;
      }
      const ys = direct ? outs[j].subarray(lanes[start] * W, (lanes[start] + w) * W) : alloc(w * W, true);
      runFused(fusion!.chains.get(i)!, w, ys, operand);
      laneBuf[i] = ys;
      owned[i] = +!direct;
      if (direct) written[j] = 1;
    };

    for (let i = 0; i < n; i++) {
      if (!batched[i] || !live[i] || fusion?.absorbed[i]) continue;
      const code = op[i];
      if (code === INPUT) {
        const input = inputs[a[i]];
        if (isTensor(i)) {
          const S = input.width;
          const first = lanes[start];
          if (lanes[end - 1] - first === w - 1) laneBuf[i] = input.values.subarray(first * S, (first + w) * S);
          else {
            const lb = (laneBuf[i] = alloc(w * S, true));
            owned[i] = 1;
            for (let k = 0; k < w; k++) lb.set(input.values.subarray(lanes[start + k] * S, (lanes[start + k] + 1) * S), k * S);
          }
        } else {
          const col = cols[i]!;
          for (let k = 0; k < w; k++) col[k] = input.values[lanes[start + k]];
        }
        continue;
      }
      if (fusion?.chains.has(i)) chainStep(i);
      else if (outputOf[i] >= 0 && written[outputOf[i]]) continue; // written by its chain
      else if (tensorOp[i]) tensorStep(i);
      else {
        realColumn(code, cols[i]!, w, cols[a[i]], vals[a[i]], ARITY[code] === 2 ? cols[b[i]] : null, vals[b[i]]);
        // a tie at a kink, as tieAt checks it for a scalar primitive on a real
        if (tieChecked[i] && x[i] !== 0) {
          const col = cols[a[i]];
          for (let k = 0; k < w; k++) if (KINKS[code]!(col === null ? vals[a[i]] : col[k])) ok[k] = 0;
        }
        if (kinked[i]) {
          const col = cols[a[i]]!;
          for (let k = 0; k < w; k++) if (KINKS[code]!(col[k])) ok[k] = 0;
        }
        if (options.checkNaN) for (let k = 0; k < w; k++) if (ok[k] && !Number.isFinite(cols[i]![k])) ok[k] = 0;
      }
      // tensors read for the last time by i back to the pool, so the next instructions
      // take buffers still in cache rather than holding every lane's to the block's end
      for (const v of endsAt[i] ?? NONE) drop(v);
    }
    for (const g of varying) {
      const ca = batched[g.a] ? cols[g.a] : null;
      const cb = batched[g.b] ? cols[g.b] : null;
      for (let k = 0; k < w; k++) if (ok[k] && !test(g, ca === null ? vals[g.a] : ca[k], cb === null ? vals[g.b] : cb[k])) ok[k] = 0;
    }
    // the outputs of the lanes where the term held
    for (let j = 0; j < outAtoms.length; j++) {
      if (written[j]) continue;
      const v = outAtoms[j];
      const width = outWidths[j];
      const out = outs[j];
      if (options.elementMajor) {
        writeElementMajorAt(out, width, (k) => (ok[k] ? valueAt(v, k) : null), lanes.subarray(start, end), batched[v] && isTensor(v) ? laneBuf[v] : null);
        continue;
      }
      for (let k = 0; k < w; k++) {
        if (!ok[k]) continue;
        const y = valueAt(v, k);
        if (typeof y === "number") out[lanes[start + k]] = y;
        else out.set(y, lanes[start + k] * width);
      }
    }
    // this block's tensor buffers back to the pool
    for (let i = 0; i < n; i++) if (laneBuf[i] !== null) drop(i);
  }
  for (const i of made) release(bufs[i]!);
  return held;
}

/** The batch size of an output buffer of `width` values per lane, as an integer (an index's stride in generated loops). */
const batchSize = (out: Float64Array, width: number): number => (out.length / width) | 0;

/**
 * The block's values of one output into `out` element-major (LaneOptions.elementMajor):
 * lane k's value (null where the term did not hold) at batch index lanes[k]. A batched
 * tensor whose lanes all held and are consecutive is transposed whole (`laneMajor`, its
 * lanes side by side); otherwise lane by lane.
 */
function writeElementMajorAt(out: Float64Array, width: number, valueOf: (k: number) => Buf | null, lanes: Int32Array, laneMajor: Float64Array | null): void {
  const w = lanes.length;
  const B = batchSize(out, width);
  let whole = laneMajor !== null && lanes[w - 1] - lanes[0] === w - 1;
  for (let k = 0; k < w && whole; k++) if (valueOf(k) === null) whole = false;
  if (whole) return writeElementMajor(laneMajor!, w, width, out, { stride: B, first: lanes[0] });
  for (let k = 0; k < w; k++) {
    const y = valueOf(k);
    if (y === null) continue;
    if (typeof y === "number") out[lanes[k]] = y;
    else for (let e = 0; e < width; e++) out[e * B + lanes[k]] = y[e];
  }
}

const NONE: readonly number[] = [];

/** Whether tracing would report a tie at this tensor instruction: an element at a kink, or the primitive's tie rule. */
function tieAt(code: number, args: readonly Buf[], ds: readonly Dims[], params: unknown, y: Buf): boolean {
  if (IS_TENSOR_OP[code]) return tensorSpec(code).tie!(args, ds, params, y) !== null;
  const kink = KINKS[code]!;
  const arg = args[0];
  return typeof arg === "number" ? kink(arg) : arg.some((t) => kink(t));
}

const finite = (y: Buf): boolean => (typeof y === "number" ? Number.isFinite(y) : y.every(Number.isFinite));

/**
 * `out[k] = op(A[k], B[k])` for the first w lanes, a column or, where it is null, the
 * one value: the arithmetic inline, every other kernel through the table.
 */
function realColumn(code: number, out: Float64Array, w: number, A: Float64Array | null, va: number, B: Float64Array | null, vb: number): void {
  if (ARITY[code] === 1) {
    const kernel = KERNELS[code];
    for (let k = 0; k < w; k++) out[k] = kernel(A![k], 0);
    return;
  }
  if (A !== null && B !== null) {
    if (code === ADD) for (let k = 0; k < w; k++) out[k] = A[k] + B[k];
    else if (code === MUL) for (let k = 0; k < w; k++) out[k] = A[k] * B[k];
    else if (code === SUB) for (let k = 0; k < w; k++) out[k] = A[k] - B[k];
    else if (code === DIV) for (let k = 0; k < w; k++) out[k] = A[k] / B[k];
    else for (let k = 0; k < w; k++) out[k] = binaryKernel(code, A[k], B[k]);
  } else if (A !== null) {
    if (code === ADD) for (let k = 0; k < w; k++) out[k] = A[k] + vb;
    else if (code === MUL) for (let k = 0; k < w; k++) out[k] = A[k] * vb;
    else if (code === SUB) for (let k = 0; k < w; k++) out[k] = A[k] - vb;
    else if (code === DIV) for (let k = 0; k < w; k++) out[k] = A[k] / vb;
    else for (let k = 0; k < w; k++) out[k] = binaryKernel(code, A[k], vb);
  } else {
    if (code === ADD) for (let k = 0; k < w; k++) out[k] = va + B![k];
    else if (code === MUL) for (let k = 0; k < w; k++) out[k] = va * B![k];
    else if (code === SUB) for (let k = 0; k < w; k++) out[k] = va - B![k];
    else if (code === DIV) for (let k = 0; k < w; k++) out[k] = va / B![k];
    else for (let k = 0; k < w; k++) out[k] = binaryKernel(code, va, B![k]);
  }
}
