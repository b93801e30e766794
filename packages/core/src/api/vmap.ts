/**
 * @file `vmap`: a function evaluated at a batch of points in one pass, lanes grouped by
 * the decisions they take.
 *
 * `f` is traced at the first lane's point; its trace term C is then evaluated at every
 * lane at once (eval/lanes.ts: each instruction over a column of the lanes' values, the
 * paper's ordinary evaluator on Float64Arrays). C holds at the lanes where the decisions
 * it recorded come out as they did at the first lane (its guards); at the first lane
 * where one does not, `f` is traced again and that trace evaluated at the lanes left,
 * and so on. So branches and loops whose trip count depends on the data work under
 * vmap, each group of lanes that decide alike sharing one trace, where a tensor program
 * (jax.vmap) runs every branch and masks. Transformations inside `f` emit their terms
 * into its trace (Fig. 4): `vmap(x => grad(f, x))` is per-example gradients.
 *
 * A batch is a leading axis: a real of each lane is a Float64Array of B numbers (or an
 * ndarray of dims [B]), a tensor of dims d an ndarray of dims [B, ...d]. `inAxes` says
 * which inputs are batched (0) and which are the same for every lane (null), as a
 * prefix of x's structure; `outAxes` the same of f's outputs (null: the output must not
 * vary along the batch). Ties and NaNs that tracing reports name the lane.
 *
 * Called with traced values (inside an rd), vmap maps `f` over the lanes in that trace
 * (unstack, f per lane, stack), so `grad(x => sum(vmap(f)(x)))` differentiates through
 * it; `jit(vmap(f))` keeps the traces between calls and runs them compiled (jit/lanes.ts).
 */
import ndarray from "ndarray";
import { size, type Dims } from "@wengert/ops";
import { runLanes, type LaneInput } from "../eval/lanes.js";
import { laneCode, type LaneRun } from "../jit/lanes.js";
import { ArgumentError, WengertError } from "../errors.js";
import { childPath, describe, flatten, leafShapes, typeString, unflatten, type Shape } from "../structure.js";
import { Indexed } from "./indexed.js";
import { leafPaths, planned, planOf, type CallPlan, type Planned, type VmapLeaf } from "./vmap-plan.js";
import { FIRST_PRIMITIVE, INPUT } from "../trace/opcodes.js";
import type { TraceTerm } from "../trace/term.js";
import type { ConcreteTensor } from "../trace/host-tensor.js";
import { isOperand, leafShape, Real, Tensor, type Operand } from "../trace/traced.js";
import { reportingAt, tracing, type Guard } from "../trace/tracer.js";
import { stack, unstack } from "./tensor.js";
import { recordedAtTie, type JitStats } from "./traceCache.js";
import { checkOptionKeys, RD_OPTIONS, tiesOf, type RdOptions } from "./options.js";
import type { Axes, BatchOf, BatchOutput, Mode } from "./types.js";
import { trace, type Fn } from "./tracing.js";

export type { Axes } from "./types.js";

/** vmap's options: which inputs and outputs are batched (0) or the same in every lane (null), and `rd`'s. */
export interface VmapOptions<I extends Axes = Axes, O extends Axes = Axes> extends RdOptions {
  /** Default 0: every input batched. */
  readonly inAxes?: I;
  /** Default 0: every output batched. */
  readonly outAxes?: O;
}

const VMAP_OPTIONS = ["inAxes", "outAxes", ...RD_OPTIONS];

/** What jit asks a vmapped function for: the same function keeping its traces between calls, run compiled where it can. */
export interface KeepsLanes {
  readonly [JIT_LANES]: (options: RdOptions) => JitLanes<(x: never) => unknown>;
}

/**
 * `jit(vmap(f))`: the vmapped function, its counts, and `into(x, out)`: the lanes' outputs
 * written into the caller's Float64Array, depth-first (each batched output's B lanes, a
 * lane's tensor whole, one after another; an output marked null in outAxes once), and
 * `out` returned: no fresh arrays per call. `out` holds exactly as many numbers as the
 * outputs have. Outside any trace only.
 */
export type JitLanes<F> = F & {
  readonly stats: JitStats;
  into(x: Parameters<F extends (x: never) => unknown ? F : never>[0], out: Float64Array): Float64Array;
};

/**
 * `f` taking `P` and returning `Y`, vmapped with axes `I` in and `O` out: called with a
 * batch shaped like `P` (types.ts, BatchOf), it returns the lanes' values of `f(x)`.
 */
export interface Vmapped<P, Y, I extends Axes = 0, O extends Axes = 0> extends KeepsLanes {
  <const X extends BatchOf<P, I>>(x: X): BatchOutput<Y, O, Mode<X>>;
}

export const JIT_LANES = Symbol("jit of vmap");

/** `f` over a batch of points: lane by lane its values, from one trace per group of lanes that decide alike. */
export function vmap<P, Y, const I extends Axes = 0, const O extends Axes = 0>(f: (x: P) => Y, options: VmapOptions<I, O> = {}): Vmapped<P, Y, I, O> {
  checkOptionKeys("vmap", options, VMAP_OPTIONS);
  const { inAxes = 0, outAxes = 0, ...rd } = options;
  const plain: Mapping = { f: f as Fn, inAxes, outAxes, options: rd, kept: null, plan: null };
  const call = (x: unknown): unknown => batchCall(plain, x, null);
  return Object.assign(call as Vmapped<P, Y, I, O>, {
    [JIT_LANES]: (more: RdOptions) => {
      const kept: Kept = { traces: new Map(), stats: { traces: 0, replays: 0, compiled: 0 }, calls: 0 };
      const jitted: Mapping = { f: f as Fn, inAxes, outAxes, options: { ...rd, ...more }, kept, plan: null };
      const into = (x: unknown, out: Float64Array): Float64Array => {
        if (!(out instanceof Float64Array)) {
          throw new ArgumentError("jit(vmap(f)).into(x, out): out must be a Float64Array holding as many numbers as the lanes' outputs have.");
        }
        if (tracing()) {
          throw new ArgumentError(
            "jit(vmap(f)).into(x, out) was called inside a trace (an rd, grad, jit…), where the outputs' numbers are not known yet; " +
              "call the jitted function itself there, and into outside.",
          );
        }
        return batchCall(jitted, x, out) as Float64Array;
      };
      return Object.assign((x: unknown) => batchCall(jitted, x, null), { stats: kept.stats, into }) as JitLanes<(x: never) => unknown>;
    },
  });
}

/** A leaf of vmap's x: an operand, or an indexed batch of reals. */
const isVmapLeaf = (v: unknown): v is Operand | Indexed => isOperand(v) || v instanceof Indexed;

/** A leaf's structure: an indexed batch's as a Float64Array of its lanes. */
const vmapLeafShape = (v: Operand | Indexed): Shape =>
  v instanceof Indexed ? { kind: "tensor", dims: [v.index.length], container: "float64array" } : leafShape(v);

/** Whether `f` is a vmapped function (jit asks). */
export const isVmapped = (f: unknown): f is KeepsLanes => typeof f === "function" && JIT_LANES in f;

/** A trace of f at one lane, with what it needs to be evaluated at others. */
export interface LaneTrace {
  readonly term: TraceTerm;
  readonly guards: readonly Guard[];
  /** Which of its inputs are batched (the same for every trace of one call). */
  readonly batched: readonly boolean[];
  /** Per input read through an index (api/indexed.ts), the first that reads the same row (vmap-plan.ts, tableReads); −1 for the others. */
  readonly indexed: readonly number[];
  /** Its compiled lanes (null: none, for this call of plain vmap or for good), once asked for. */
  compiled: LaneRun | null | undefined;
}

/**
 * What jit(vmap(f)) keeps between calls: traces by the structure of a lane, and counts of
 * traces taken, of lanes evaluated by a kept trace, and of those run compiled.
 */
interface Kept {
  readonly traces: Map<string, LaneTrace[]>;
  readonly stats: JitStats;
  calls: number;
}

/** Calls before jit(vmap(f)) compiles its traces (a batch of COMPILE_LANES or more: none). */
const COMPILE_AFTER = 2;

/** Traces jit(vmap(f)) keeps per lane structure (a batch's lanes may take many paths). */
const KEEP = 64;

/** x split into lanes: its leaves as LaneInputs, the batch size, and each lane's point. */
interface Batch {
  readonly size: number;
  readonly inputs: readonly LaneInput[];
  readonly batched: readonly boolean[];
  /** Per input read through an index, the first that reads the same row (vmap-plan.ts, tableReads); −1 for the others. */
  readonly indexed: readonly number[];
  /** The key of a lane's structure (jit of vmap keeps traces by it). */
  readonly key: string;
  pointAt(l: number): unknown;
}

/** A vmapped function: f, its axes and options, what jit keeps of it, and the plan of its last call. */
interface Mapping {
  readonly f: Fn;
  readonly inAxes: Axes;
  readonly outAxes: Axes;
  readonly options: RdOptions;
  readonly kept: Kept | null;
  plan: CallPlan | null;
}

/** One call: at the outermost level by lanes (the outputs written into `into` if given), inside a trace by mapping f. */
function batchCall(m: Mapping, x: unknown, into: Float64Array | null): unknown {
  const { f, inAxes, outAxes, options, kept } = m;
  if (typeof f !== "function") throw new WengertError(`vmap: f is ${typeof f}; expected the function to map over the batch.`);
  // x with the last call's structure: its leaves read by that call's plan
  let lanes = m.plan !== null && !tracing() ? planned(m.plan, x) : null;
  if (lanes === null) {
    const { shape, leaves } = flatten(x, "x", isVmapLeaf, "vmap's input", undefined, vmapLeafShape);
    const batched = axesPerLeaf("vmap", "inAxes", inAxes, shape, "x");
    if (!batched.some((b) => b)) throw new WengertError(`vmap: no input is batched (inAxes ${JSON.stringify(inAxes)}); mark the batched inputs with 0.`);
    if (tracing() || leaves.some((v) => v instanceof Real || v instanceof Tensor)) {
      if (into !== null) {
        throw new ArgumentError("jit(vmap(f)).into(x, out): x holds traced values, whose numbers are not known yet; call the jitted function itself.");
      }
      // an indexed batch written out: unstacked into the lanes like any other
      return mapInTrace(f, shape, leaves.map((v) => (v instanceof Indexed ? v.dense() : v)), batched, outAxes);
    }
    lanes = planOf(shape, leaves as VmapLeaf[], batched, () => leafPaths(shape, "x"));
    m.plan = lanes.plan;
  }
  const batch = batchOf(lanes);
  let traces: LaneTrace[] = [];
  if (kept !== null) {
    traces = kept.traces.get(batch.key) ?? [];
    kept.traces.set(batch.key, traces);
  }
  return byLanes(f, batch, { traces, outAxes, options, kept, into });
}

/** The lanes of planned leaves, and each lane's point as f takes it. */
function batchOf({ plan, leaves, inputs, size: B }: Planned): Batch {
  const { shape, laneShapes } = plan;
  return {
    size: B,
    inputs,
    batched: plan.batched,
    indexed: plan.indexed,
    key: plan.key,
    pointAt: (l) =>
      unflatten(
        shape,
        inputs.map((input, k) => {
          const s = laneShapes[k];
          if (!input.batched) return leaves[k];
          if (input.indexed !== undefined) return input.values[input.indexed.index[l] * input.indexed.stride + input.indexed.offset];
          const data = input.values.slice(l * input.width, (l + 1) * input.width);
          return s.kind === "tensor" ? ndarray(data, [...s.dims]) : data[0];
        }),
      ),
  };
}

/**
 * The lanes of a batch, each computed once: by compiled code where its trace has it,
 * else by columns. Compiled, the lanes are taken in order, each trace over a run of lanes
 * until one where it does not hold, where another is tried or f traced (neighbouring
 * lanes tend to decide alike; a lane costs its trace's code up to the guard that sends it
 * elsewhere). By columns (eval/lanes.ts), each trace is evaluated over all the lanes
 * left, f traced at the first lane where none holds. Plain vmap compiles when its batch
 * is large or its traces' structures were seen before (jit/lanes.ts keeps code by
 * structure, so a later call's traces run the code made for an earlier one's);
 * jit(vmap(f)) from its third call, or at once for a large batch; neither under
 * checkNaN, which columns check per instruction. From the first trace without code
 * (tensors, too large), columns take the lanes left.
 */
/** What a call of the lanes works with besides f and its batch. */
interface LaneCall {
  /** The traces kept for the batch's structure (jit(vmap)), tried before f is traced again; new ones are added. */
  readonly traces: LaneTrace[];
  readonly outAxes: Axes;
  readonly options: RdOptions;
  readonly kept: Kept | null;
  /** The caller's array the outputs are written into (jit(vmap(f)).into), or null for fresh ones. */
  readonly into: Float64Array | null;
}

function byLanes(f: Fn, batch: Batch, { traces, outAxes, options, kept, into }: LaneCall): unknown {
  const B = batch.size;
  const laneOptions = { reportTies: tiesOf(options) !== "ignore", checkNaN: options.checkNaN === true };
  let outs: Output | null = traces.length > 0 ? outputOf(traces[0].term, B, outAxes, into) : null;
  const used = new Set<LaneTrace>();
  /** f traced at lane l, its outputs written there; the trace, unless it read a value (then it holds at l alone). */
  const traceAt = (l: number): LaneTrace | null => {
    // f on numbers reports no ties: only the rds inside it do, naming the lane (jit.ts)
    const traced = reportingAt(`in lane ${l} of vmap`, () => trace("vmap", f, batch.pointAt(l), options, "evaluate"));
    const { term } = traced;
    if (outs === null) outs = outputOf(term, B, outAxes, into);
    else outs.check(term, l);
    outs.write(term, l);
    laneStats.traced++;
    const t: LaneTrace = { term, guards: traced.trace.guards, batched: batch.batched, indexed: batch.indexed, compiled: undefined };
    used.add(t);
    if (kept !== null) kept.stats.traces++;
    if (traced.trace.opaque) return null;
    // plain vmap: for this call's lanes. jit(vmap(f)): up to KEEP, but not one recorded at a
    // tie (a replay at that lane traces again, for the tie to be reported)
    if (kept === null || (traces.length < KEEP && !(laneOptions.reportTies && recordedAtTie(term, t.guards)))) traces.push(t);
    return t;
  };
  const now = kept !== null || B >= COMPILE_LANES;
  const codeOf = (t: LaneTrace): LaneRun | null => {
    if (t.compiled === undefined) t.compiled = laneCode(t.term, t.guards, laneOptions.reportTies, t.batched, t.indexed, now);
    return t.compiled;
  };
  // jit(vmap(f)) waits COMPILE_AFTER calls before compiling, but a batch of COMPILE_LANES
  // pays for its code at once, as plain vmap's does (columns cost ~8× the code per lane)
  const compiling = !laneOptions.checkNaN && (kept === null || kept.calls++ >= COMPILE_AFTER || B >= COMPILE_LANES);
  /** The value; plain vmap's tapes of reals, read no more, hand their columns to the next traces (trace/columns.ts). */
  const done = (): unknown => {
    const y = outs!.result([...used]);
    if (kept === null) for (const t of used) if (t.term.tape.tensorCount === 0) t.term.tape.recycle();
    return y;
  };
  const from = compiling ? inOrder(batch, traces, traceAt, () => outs!, codeOf, kept, used) : 0;
  if (from === B) return done();
  let pending: Int32Array = Int32Array.from({ length: B - from }, (_, q) => from + q);
  const runAt = (t: LaneTrace): void => {
    if (pending.length === 0) return;
    const held = runLanes(t.term, t.guards, laneOptions, batch.inputs, pending, outs!.buffers);
    const before = pending.length;
    pending = compact(pending, held);
    if (pending.length < before) used.add(t);
    laneStats.columns += before - pending.length;
    if (kept !== null) kept.stats.replays += before - pending.length;
  };
  for (const t of traces) runAt(t);
  while (pending.length > 0) {
    const l = pending[0];
    pending = pending.subarray(1);
    const t = traceAt(l);
    if (t === null) continue;
    // its structure seen (compiled at the next sight: a later call runs its lanes compiled)
    if (compiling) codeOf(t);
    runAt(t);
  }
  return done();
}

/**
 * Lanes from which plain vmap compiles a trace whose structure it has not seen. Code for a
 * trace of W7 (60 instructions) costs about what its columns do at 5000 lanes, and by
 * columns a lane is evaluated by about half the traces: a first call breaks even near
 * twice that. Later calls run the code either way.
 */
const COMPILE_LANES = 8192;

/** Counters for tests: lanes computed by tracing f there, by compiled code, and by columns. */
export const laneStats = { traced: 0, compiled: 0, columns: 0 };

/** The lanes whose `held` is 0. */
function compact(lanes: Int32Array, held: Uint8Array): Int32Array {
  let n = 0;
  for (let q = 0; q < lanes.length; q++) if (held[q] === 0) n++;
  const out = new Int32Array(n);
  for (let q = 0, k = 0; q < lanes.length; q++) if (held[q] === 0) out[k++] = lanes[q];
  return out;
}

/**
 * The lanes in order by compiled code, each run of them by the trace that last held, up
 * to the first lane that no trace with code holds while one without code (kept by jit, or
 * just taken) may: the lane from which the rest are left to columns (B: none left).
 */
function inOrder(
  batch: Batch,
  traces: LaneTrace[],
  traceAt: (l: number) => LaneTrace | null,
  output: () => Output,
  codeOf: (t: LaneTrace) => LaneRun | null,
  kept: Kept | null,
  used: Set<LaneTrace>,
): number {
  const B = batch.size;
  const ran = (t: LaneTrace, lanes: number): void => {
    used.add(t);
    laneStats.compiled += lanes;
    if (kept !== null) {
      kept.stats.replays += lanes;
      kept.stats.compiled += lanes;
    }
  };
  let cur = -1;
  let l = 0;
  while (l < B) {
    if (cur >= 0) {
      const stop = codeOf(traces[cur])!(batch.inputs, l, B, output().buffers);
      if (stop > l) ran(traces[cur], stop - l);
      l = stop;
      if (l === B) break;
    }
    // lane l: another trace, or a new one
    const other = traces.findIndex((u, k) => k !== cur && codeOf(u)?.(batch.inputs, l, l + 1, output().buffers) === l + 1);
    if (other >= 0) {
      ran(traces[other], 1);
      cur = other;
    } else if (traces.some((u) => codeOf(u) === null)) {
      // a kept trace without code may hold here: columns try every trace from this lane on
      return l;
    } else {
      const made = traceAt(l);
      if (made !== null && traces.includes(made)) {
        if (codeOf(made) === null) return l + 1;
        cur = traces.indexOf(made);
      }
    }
    l++;
  }
  return B;
}

/** The batched outputs being written, and the value made of them (or the caller's array they were written into). */
interface Output {
  readonly buffers: Float64Array[];
  /** That a later trace's outputs have the first one's structure and dims. */
  check(term: TraceTerm, lane: number): void;
  /** Lane l's outputs from the trace taken there. */
  write(term: TraceTerm, lane: number): void;
  /** The value: batched outputs with a leading axis, the others as one lane's (checked not to vary in the traces used). */
  result(used: readonly LaneTrace[]): unknown;
}

/** What a trace's outputs are, for the buffers of a call: made once per trace (a kept one serves many calls). */
interface OutputLayout {
  readonly shape: Shape;
  readonly batchedOut: readonly boolean[];
  readonly dims: readonly Dims[];
  readonly widths: readonly number[];
  /** Its type and dims, as an error names them. */
  readonly described: string;
}

/** A trace's outputs' type and dims, for comparing lanes' and naming them. */
function described(t: TraceTerm): string {
  const leafDims = leafShapes(t.output.shape).map((s) => (s.kind === "tensor" ? ` [${s.dims.join(", ")}]` : ""));
  return `${typeString(t.output.shape)}${leafDims.join("")}`;
}

const layouts = new WeakMap<TraceTerm, OutputLayout>();

function layoutOf(first: TraceTerm, outAxes: Axes): OutputLayout {
  let layout = layouts.get(first);
  if (layout !== undefined) return layout;
  const shape = first.output.shape;
  const batchedOut = axesPerLeaf("vmap", "outAxes", outAxes, shape, "f(x)");
  const dims = leafShapes(shape).map((s): Dims => (s.kind === "tensor" ? s.dims : []));
  layout = { shape, batchedOut, dims, widths: dims.map((d) => size(d)), described: described(first) };
  layouts.set(first, layout);
  return layout;
}

/**
 * The buffers of a call's outputs: fresh, or (`into`) views of the caller's array, one
 * after another, where the lanes write directly; an output marked null takes its one
 * lane's numbers there at the end.
 */
function outputOf(first: TraceTerm, B: number, outAxes: Axes, into: Float64Array | null): Output {
  const { shape, batchedOut, dims, widths, described: firstDescribed } = layoutOf(first, outAxes);
  const at = intoOffsets(batchedOut, widths, B, into);
  const buffers = widths.map((w, j) => (at === null || !batchedOut[j] ? new Float64Array(B * w) : into!.subarray(at[j], at[j] + B * w)));
  return {
    buffers,
    check(term, lane) {
      // one shape object (a real: REAL), or one description
      if (term.output.shape !== first.output.shape && described(term) !== firstDescribed) {
        throw new WengertError(
          `vmap: f returns ${described(term)} at lane ${lane} but ${firstDescribed} at the first lane; ` +
            "every lane needs the same structure and dims.",
        );
      }
    },
    write(term, lane) {
      term.output.atoms.forEach((v, j) => {
        if (widths[j] === 1 && dims[j].length === 0) buffers[j][lane] = term.tape.val[v];
        else buffers[j].set(term.tape.buf(v), lane * widths[j]);
      });
    },
    result(used) {
      if (at !== null) {
        // an output that must not vary is checked as below; its one lane's numbers copied in
        checkUnvarying(used);
        buffers.forEach((buf, j) => {
          if (!batchedOut[j]) into!.set(buf.subarray(0, widths[j]), at[j]);
        });
        return into;
      }
      checkUnvarying(used);
      const leaves = buffers.map((buf, j) => {
        if (batchedOut[j]) return dims[j].length === 0 ? buf : ndarray(buf, [B, ...dims[j]]);
        return dims[j].length === 0 ? buf[0] : ndarray(buf.slice(0, widths[j]), [...dims[j]]);
      });
      return unflatten(shape, leaves);
    },
  };

  /** That no output marked null varies along the batch in the traces used. */
  function checkUnvarying(used: readonly LaneTrace[]): void {
    buffers.forEach((_, j) => {
      if (batchedOut[j]) return;
      for (const t of used) {
        if (varies(t)[t.term.output.atoms[j]]) {
          throw new WengertError(`vmap: ${leafPaths(shape, "f(x)")[j]} varies along the batch, but outAxes marks it null; mark it 0 for one value per lane.`);
        }
      }
    });
  }
}

/** Where each output starts in `into` (a batched one's B lanes, one marked null once), its length checked; null without `into`. */
function intoOffsets(batchedOut: readonly boolean[], widths: readonly number[], B: number, into: Float64Array | null): number[] | null {
  if (into === null) return null;
  const at: number[] = [];
  let count = 0;
  widths.forEach((w, j) => {
    at.push(count);
    count += batchedOut[j] ? B * w : w;
  });
  if (into.length !== count) {
    throw new ArgumentError(
      `jit(vmap(f)).into(x, out): out holds ${into.length} numbers, the outputs of ${B} lanes have ${count}; ` +
        `pass a Float64Array of length ${count} (each output's lanes one after another, depth-first).`,
    );
  }
  return at;
}

/** What `varies` found of a trace (a kept one is asked at every call). */
const variesIn = new WeakMap<LaneTrace, Uint8Array>();

/** Which variables of a lane trace vary along the batch (depend on a batched input). */
function varies(t: LaneTrace): Uint8Array {
  const known = variesIn.get(t);
  if (known !== undefined) return known;
  const tape = t.term.tape;
  const out = new Uint8Array(tape.length);
  variesIn.set(t, out);
  for (let i = 0; i < tape.length; i++) {
    if (tape.op[i] === INPUT) out[i] = +t.batched[tape.a[i]];
    else if (tape.op[i] >= FIRST_PRIMITIVE) for (const v of tape.args(i)) out[i] |= out[v];
  }
  return out;
}

/**
 * Inside a trace: f mapped over the lanes there (a batched leaf unstacked along its
 * leading axis, f per lane, each output stacked), so that the enclosing transformation
 * differentiates through every lane.
 */
function mapInTrace(f: Fn, shape: Shape, leaves: readonly Operand[], batched: readonly boolean[], outAxes: Axes): unknown {
  const lanes = leaves.map((v, k) => (batched[k] ? unstack(v as Tensor | ConcreteTensor) : null));
  const B = lanes.find((l) => l !== null)!.length;
  lanes.forEach((l, k) => {
    if (l !== null && l.length !== B) throw new WengertError(`vmap: ${leafPaths(shape, "x")[k]} has ${l.length} lanes, but an earlier batched input has ${B}.`);
  });
  const laneInput = (l: number): unknown => unflatten(shape, leaves.map((v, k) => (lanes[k] === null ? v : lanes[k]![l])));
  const ys = Array.from({ length: B }, (_, l) => flatten(f(laneInput(l) as never), "f(x)", isOperand, "the output of f", undefined, leafShape));
  const out = ys[0].shape;
  const batchedOut = axesPerLeaf("vmap", "outAxes", outAxes, out, "f(x)");
  return unflatten(
    out,
    ys[0].leaves.map((_, j) => {
      if (!batchedOut[j]) return ys[0].leaves[j];
      const lane = ys.map((r) => r.leaves[j]);
      // reals computed outside any trace: a Float64Array, as at the outermost level
      return lane.every((v) => typeof v === "number") ? Float64Array.from(lane as number[]) : stack(lane as (Tensor | number)[]);
    }),
  );
}

/** Whether the object `o` has exactly the own keys `keys` (an axes record matching a record shape). */
function hasExactly(o: object, keys: readonly string[]): boolean {
  return Object.keys(o).length === keys.length && keys.every((k) => Object.prototype.hasOwnProperty.call(o, k));
}

/** Per leaf of `shape`, whether `axes` (a prefix of it) marks it batched. */
function axesPerLeaf(caller: string, name: string, axes: Axes, shape: Shape, root: string): boolean[] {
  const out: boolean[] = [];
  const walk = (a: unknown, s: Shape, path: string): void => {
    if (a === 0 || a === null) {
      for (let k = leafShapes(s).length; k > 0; k--) out.push(a === 0);
      return;
    }
    if (s.kind === "tuple" && Array.isArray(a) && a.length === s.items.length) {
      s.items.forEach((item, i) => walk(a[i], item, childPath(path, i)));
      return;
    }
    if (s.kind === "record" && typeof a === "object" && a !== null && !Array.isArray(a) && hasExactly(a, s.keys)) {
      s.keys.forEach((k, i) => walk((a as Record<string, unknown>)[k], s.fields[i], childPath(path, k)));
      return;
    }
    const found = a === undefined ? "missing" : Array.isArray(a) ? `an array of length ${a.length}` : describe(a);
    throw new WengertError(
      `${caller}: ${name} at ${path} is ${found}, for ${path} of type ${typeString(s)}; ` +
        "expected 0 (batched), null (not batched), or the same structure of those.",
    );
  };
  walk(axes, shape, root);
  return out;
}
