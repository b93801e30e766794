/**
 * @file A scan's reverse sweep at the outermost level: one `scanGrad` instruction that
 * runs the body's derivative term backwards over the iterations, with the carries
 * recomputed from checkpoints.
 *
 * Written out, the loop is one block of instructions per iteration, and the reverse sweep
 * (differentiate.ts) runs over the blocks from the last to the first, each variable's
 * cotangent accumulated with `+` in that order. The body's derivative term (Fig. 6
 * applied to the body's term, the body's own instructions replayed in front: a term `D`,
 * made once) computes one block's part of that sweep, given where it starts: the
 * cotangents its outputs have gathered (from the next iteration, from uses after the
 * loop) and those its inputs hold already (a captured value's running sum, a carry used
 * after the loop). `D` takes them as inputs, seeded first, and returns its inputs'
 * cotangents, so the sums are the written-out sweep's, in its order, to the last bit. A
 * cotangent that is the symbolic zero stays one: `D` is made per pattern of which
 * cotangents are present (the plan, decided ahead from the structure alone).
 *
 * The carries of the forward run are stored at checkpoints and recomputed segment by
 * segment (ScanOptions.checkpoint); each iteration's other values are recomputed by `D`.
 */
import type { Buf, Dims } from "@wengert/ops";
import { size } from "@wengert/ops";
import type { Body } from "../trace/body.js";
import { INPUT } from "../trace/opcodes.js";
import { scanCodes, isScanCode, hasScans, writeAt, type DerivedParams, type ScanParams, type ScanOutParams } from "../trace/scan-ops.js";
import { TraceTerm } from "../trace/term.js";
import { closeTrace, sinkFor, type Trace } from "../trace/tracer.js";
import { runForward } from "../eval/scan-forward.js";
import { Interpreter } from "../eval/interpreter.js";
import { WengertError } from "../errors.js";
import { activity, type Transform } from "./place.js";
import { compiledReverse } from "../jit/scan-code.js";

/** What differentiate.ts lends a scan's reverse sweep. */
export interface CotangentState {
  readonly ct: Int32Array;
  /** A variable's cotangent, its pending pieces placed. */
  settle(v: number): number;
  /** Set a variable's cotangent (the scan's sum includes what it held). */
  replace(v: number, c: number): void;
}

export interface ScanSweep {
  /** Whether instruction i is a scan's (handled here: a scan's reverse emitted, an output's cotangent left for its scan). */
  at(i: number, state: CotangentState): boolean;
}

const UNIT = { kind: "tuple", items: [] } as const;

/** The scans of a term being differentiated at the outermost level (null if it has none). */
export function scanSweep(term: TraceTerm, sink: Trace, differentiate: Transform): ScanSweep | null {
  if (!hasScans(term.tape)) return null;
  const tape = term.tape;
  const codes = scanCodes();
  const outputsOf = new Map<number, number[]>();
  for (let i = 0; i < tape.length; i++) {
    if (tape.op[i] !== codes.scanOut) continue;
    const s = tape.args(i)[0];
    let list = outputsOf.get(s);
    if (list === undefined) outputsOf.set(s, (list = []));
    list.push(i);
  }
  let active: Uint8Array | null = null;
  return {
    at(i, state) {
      const code = tape.op[i];
      if (!isScanCode(code)) return false;
      if (code === codes.scanOut) return true;
      if (code !== codes.scan) throw new WengertError("internal: a scan's derivative instruction in a term differentiated again.");
      active ??= activity(term);
      emitReverse(tape.params(i) as ScanParams, tape.args(i), outputsOf.get(i) ?? [], tape, sink, state, active, differentiate);
      return true;
    },
  };
}

/** Per body: the distinct variables whose cotangents a block starts from (its computed outputs), and what they are. */
interface Outs {
  /** Computed, non-literal output variables: the carry′ leaves that are computed, then the written ys. */
  readonly w: Int32Array;
  /** For each: the carry leaf k it is (-1: none). */
  readonly carry: Int32Array;
  /** For each: its slot among the written variables (-1: none). */
  readonly slot: Int32Array;
  /** Per carry leaf k: the slot of carry′ k among the written variables (-1: not written). */
  readonly carrySlot: Int32Array;
}

function outsOf(body: Body, obs: Int32Array): Outs {
  const w: number[] = [];
  const carry: number[] = [];
  const slot: number[] = [];
  const lit = body.literalOnly;
  body.carryOut.forEach((v, k) => {
    if (body.carryKind[k] !== "internal") return;
    w.push(v);
    carry.push(k);
    slot.push(obs.indexOf(v));
  });
  obs.forEach((v, s) => {
    if (lit[v] || w.includes(v)) return;
    w.push(v);
    carry.push(-1);
    slot.push(s);
  });
  const carrySlot = Int32Array.from(body.carryOut, (v, k) => (body.carryKind[k] === "internal" || body.carryKind[k] === "literal" ? obs.indexOf(v) : -1));
  return { w: Int32Array.from(w), carry: Int32Array.from(carry), slot: Int32Array.from(slot), carrySlot };
}

/** One block's derivative term for one pattern of present cotangents. */
export interface BlockDerivative {
  readonly term: TraceTerm;
  /** Which of Outs.w are seeded (in order), then which inputs start with a cotangent. */
  readonly outs: readonly number[];
  readonly ins: readonly number[];
  /** The inputs whose cotangents it returns (in order), and whether each input's is present. */
  readonly results: readonly number[];
  readonly present: Uint8Array;
  readonly reals: boolean;
  interpreter: Interpreter | null;
}

/**
 * `D` for a block: the body's term, then its derivative with the outputs `outs` (of
 * Outs.w) seeded and the inputs `ins` starting from given cotangents. Its inputs: the
 * body's, then those cotangents; its outputs: the present cotangents of the body's
 * inputs that are not literals.
 */
function blockDerivative(body: Body, o: Outs, outs: number[], ins: number[], differentiate: Transform): BlockDerivative {
  const tape = body.term.tape;
  const nin = body.nc + body.nx + body.np;
  const seeded = [...outs.map((j) => o.w[j]), ...ins.map((k) => body.inputVar[k])];
  const sink = sinkFor(tape, "scan", false);
  const seeds = seeded.map((v, j) => {
    const dims = tape.dims(v);
    return dims.length === 0 ? sink.tape.input(nin + j, 0) : sink.tape.tensorInput(nin + j, { dims, data: new Float64Array(size(dims)) });
  });
  const target = new TraceTerm(tape, [{ name: "in", shape: UNIT, atoms: [] }], { shape: UNIT, atoms: seeded });
  const d = differentiate(target, sink, seeds, null);
  closeTrace(sink);
  const results: number[] = [];
  const present = new Uint8Array(nin);
  for (let k = 0; k < nin; k++) {
    if (body.literal[k] || !d.present![k]) continue;
    present[k] = 1;
    results.push(k);
  }
  const term = new TraceTerm(sink.tape, [{ name: "in", shape: UNIT, atoms: [] }], { shape: UNIT, atoms: results.map((k) => d.results[k]) });
  return { term, outs, ins, results, present, reals: sink.tape.tensorCount === 0, interpreter: null };
}

/** The reverse sweep of one scan decided ahead: each iteration's pattern, each pattern's term. */
export interface ReversePlan {
  readonly patterns: BlockDerivative[];
  /** Per iteration: its pattern's index. */
  readonly at: Uint32Array;
  /** Per argument of the scan: whether its cotangent comes out present. */
  readonly present: Uint8Array;
}

/** Where a scanGrad's inputs are: which outputs of the scan were seeded, which arguments held cotangents. */
export interface ReverseInputs {
  /** Per written slot (iteration r, slot s at r·|obs| + s): seeded. */
  readonly seedObs: Uint8Array;
  /** Per carry leaf: its final value seeded (when not written as an obs). */
  readonly seedFinal: Uint8Array;
  /** Per argument: its cotangent so far present (and needed: active). */
  readonly acc: Uint8Array;
  /** Per argument: whether its cotangent is wanted (it is active). */
  readonly need: Uint8Array;
}

const bodyOuts = new WeakMap<Body, Map<Int32Array, { outs: Outs; derivatives: Map<string, BlockDerivative> }>>();

function cacheFor(body: Body, obs: Int32Array): { outs: Outs; derivatives: Map<string, BlockDerivative> } {
  let byObs = bodyOuts.get(body);
  if (byObs === undefined) bodyOuts.set(body, (byObs = new Map()));
  let c = byObs.get(obs);
  if (c === undefined) byObs.set(obs, (c = { outs: outsOf(body, obs), derivatives: new Map() }));
  return c;
}

/** The plan: which cotangents each block starts from, iteration by iteration from the last (structure only). */
export function planReverse(p: ScanParams, inputs: ReverseInputs, differentiate: Transform): ReversePlan {
  const { body, n } = p;
  const obs = p.layout.obs;
  const { outs: o, derivatives } = cacheFor(body, obs);
  const nobs = obs.length;
  const nin = body.nc + body.nx + body.np;
  const carryArg = (k: number): number => k;
  const xArg = (r: number, l: number): number => body.nc + r * body.nx + l;
  const pArg = (q: number): number => body.nc + n * body.nx + q;
  // presence of the running cotangents
  const chain = new Uint8Array(body.nc);
  const identity = new Uint8Array(body.nc);
  const pAcc = new Uint8Array(body.np);
  for (let k = 0; k < body.nc; k++) if (body.carryKind[k] === "identity" && !body.literal[k]) identity[k] = inputs.acc[carryArg(k)];
  for (let q = 0; q < body.np; q++) pAcc[q] = inputs.acc[pArg(q)];
  const patterns: BlockDerivative[] = [];
  const index = new Map<BlockDerivative, number>();
  const at = new Uint32Array(n);
  const argPresent = new Uint8Array(inputs.acc.length);
  const outs: number[] = [];
  const ins: number[] = [];
  let last = "";
  let lastIndex = -1;
  for (let r = n - 1; r >= 0; r--) {
    outs.length = 0;
    ins.length = 0;
    for (let j = 0; j < o.w.length; j++) {
      const k = o.carry[j];
      const seeded = k >= 0 && r < n - 1 ? chain[k] : o.slot[j] >= 0 ? inputs.seedObs[r * nobs + o.slot[j]] : k >= 0 ? inputs.seedFinal[k] : 0;
      if (seeded) outs.push(j);
    }
    for (let k = 0; k < nin; k++) {
      if (body.literal[k]) continue;
      let has = 0;
      if (k < body.nc) {
        if (body.carryKind[k] === "identity") has = identity[k];
        else if (body.carryKind[k] === "internal") has = r === 0 ? inputs.acc[carryArg(k)] : o.carrySlot[k] >= 0 ? inputs.seedObs[(r - 1) * nobs + o.carrySlot[k]] : 0;
      } else if (k < body.nc + body.nx) has = inputs.acc[xArg(r, k - body.nc)];
      else has = pAcc[k - body.nc - body.nx];
      if (has) ins.push(k);
    }
    const key = `${outs.join(",")}|${ins.join(",")}`;
    let d: BlockDerivative;
    if (key === last) d = patterns[lastIndex];
    else {
      const found = derivatives.get(key);
      d = found ?? blockDerivative(body, o, [...outs], [...ins], differentiate);
      if (found === undefined) derivatives.set(key, d);
      let i = index.get(d);
      if (i === undefined) {
        index.set(d, (i = patterns.length));
        patterns.push(d);
      }
      last = key;
      lastIndex = i;
    }
    at[r] = lastIndex;
    for (let k = 0; k < body.nc; k++) {
      if (body.carryKind[k] === "internal") chain[k] = d.present[k];
      else if (body.carryKind[k] === "identity" && !body.literal[k]) identity[k] = d.present[k];
    }
    for (let l = 0; l < body.nx; l++) if (d.present[body.nc + l]) argPresent[xArg(r, l)] = 1;
    for (let q = 0; q < body.np; q++) pAcc[q] = d.present[body.nc + body.nx + q];
  }
  for (let k = 0; k < body.nc; k++) argPresent[carryArg(k)] = body.carryKind[k] === "internal" ? chain[k] : body.carryKind[k] === "identity" && !body.literal[k] ? identity[k] : 0;
  for (let q = 0; q < body.np; q++) argPresent[pArg(q)] = pAcc[q];
  // an argument that held a cotangent still holds it
  for (let a = 0; a < argPresent.length; a++) argPresent[a] = (argPresent[a] | inputs.acc[a]) & inputs.need[a];
  return { patterns, at, present: argPresent };
}

/** Emit the reverse sweep of the scan instruction (its args, its outputs' instructions) into the sink. */
function emitReverse(p: ScanParams, args: readonly number[], outputs: readonly number[], tape: TraceTerm["tape"], sink: Trace, state: CotangentState, active: Uint8Array, differentiate: Transform): void {
  const { body, n, layout } = p;
  const codes = scanCodes();
  const nobs = layout.obs.length;
  const seedObs = new Uint8Array(n * nobs);
  const seedFinal = new Uint8Array(body.nc);
  const seedAtoms = new Map<number, number>();
  for (const j of outputs) {
    const q = tape.params(j) as ScanOutParams;
    if (q.held) continue;
    const c = state.settle(j);
    if (c < 0) continue;
    seedAtoms.set(q.offset, c);
    if (q.offset < n * layout.width) {
      const r = Math.floor(q.offset / layout.width);
      const s = layout.obsOffset.indexOf(q.offset - r * layout.width);
      seedObs[r * nobs + s] = 1;
    } else seedFinal[layout.carryOffset.indexOf(q.offset)] = 1;
  }
  const need = Uint8Array.from(args, (v) => active[v]);
  const acc = new Uint8Array(args.length);
  const accAtoms: number[] = [];
  args.forEach((v, a) => {
    if (!need[a]) return;
    const c = state.settle(v);
    if (c >= 0) {
      acc[a] = 1;
      accAtoms.push(c);
    }
  });
  const inputs: ReverseInputs = { seedObs, seedFinal, acc, need };
  const plan = planReverse(p, inputs, differentiate);
  // the seeds in slot order, then the cotangents held
  const seedOrder = [...seedAtoms.keys()].sort((x, y) => x - y);
  const dimsOf = (a: number): Dims => tape.dims(args[a]);
  const offsets: number[] = [];
  let length = 0;
  for (let a = 0; a < args.length; a++) {
    offsets.push(length);
    if (plan.present[a]) length += size(dimsOf(a));
  }
  const params: DerivedParams = {
    scan: p,
    length,
    what: "reverse",
    run: (values) => reverseRun(p, plan, inputs, seedOrder, values, offsets, length),
  };
  const grad = sink.applyOp(codes.scanGrad, [...args, ...seedOrder.map((o) => seedAtoms.get(o)!), ...accAtoms], params);
  for (let a = 0; a < args.length; a++) {
    if (!plan.present[a]) continue;
    const dims = dimsOf(a);
    state.replace(args[a], sink.applyOp(codes.scanOut, [grad], { offset: offsets[a], dims, held: false }));
  }
}

/** Segment length for a checkpoint policy. */
export function segmentLength(p: ScanParams): number {
  const c = p.checkpoint;
  return c === "every" ? p.n : c === "sqrt" ? Math.max(1, Math.ceil(Math.sqrt(p.n))) : Math.min(c, p.n);
}

/** Counters for tests: carries stored by the last reverse run, and its iterations swept. */
export const reverseStats = { stored: 0, maxStored: 0, swept: 0 };

/** The scanGrad's value: the cotangents of the scan's arguments (present ones, packed). */
function reverseRun(p: ScanParams, plan: ReversePlan, inputs: ReverseInputs, seedOrder: readonly number[], values: readonly Buf[], offsets: readonly number[], length: number): Float64Array {
  const { body, n, layout } = p;
  const nargs = body.nc + n * body.nx + body.np;
  const nobs = layout.obs.length;
  const carry0 = values.slice(0, body.nc) as Buf[];
  const xAt = (r: number): Buf[] => values.slice(body.nc + r * body.nx, body.nc + (r + 1) * body.nx) as Buf[];
  const pv = values.slice(body.nc + n * body.nx, nargs) as Buf[];
  // the seeds by offset, the held cotangents by argument
  const seed = new Map<number, Buf>();
  seedOrder.forEach((o, j) => seed.set(o, values[nargs + j]));
  const held: (Buf | null)[] = new Array<Buf | null>(nargs).fill(null);
  let next = nargs + seedOrder.length;
  for (let a = 0; a < nargs; a++) if (inputs.acc[a]) held[a] = values[next++];
  const seedObs = (r: number, s: number): Buf | null => (s < 0 ? null : (seed.get(r * layout.width + layout.obsOffset[s]) ?? null));
  const seedFinal = (k: number): Buf | null => seed.get(layout.carryOffset[k]) ?? null;
  const { outs: o } = cacheFor(body, layout.obs);

  const compiled = body.reals ? compiledReverse(body) : null;
  void compiled;
  // running cotangents
  const chain: (Buf | null)[] = new Array<Buf | null>(body.nc).fill(null);
  const identity: (Buf | null)[] = body.carryKind.map((kind, k) => (kind === "identity" && !body.literal[k] ? held[k] : null));
  const pAcc: (Buf | null)[] = Array.from({ length: body.np }, (_, q) => held[body.nc + n * body.nx + q]);
  const xResult: (Buf | null)[] = new Array<Buf | null>(n * body.nx).fill(null);

  // the carries: checkpoints every K iterations, then each segment's recomputed
  const K = segmentLength(p);
  const checkpoints: Buf[][] = [];
  const copy = (c: readonly Buf[]): Buf[] => c.map((b) => (typeof b === "number" ? b : b.slice()));
  const forward = (from: number, to: number, carry: Buf[], store: (i: number, c: readonly Buf[]) => void): void => {
    runForward({ body, x: xAt, p: pv, from, to, checkFrom: n, reportTies: false, obs: null, write: null, store }, carry, false);
  };
  if (K < n) forward(0, n, carry0.slice(), (i, c) => i % K === 0 && checkpoints.push(copy(c)));
  else checkpoints.push(carry0);
  reverseStats.stored = checkpoints.length;
  reverseStats.maxStored = checkpoints.length;
  reverseStats.swept = 0;

  const inputsOf = new Array<Buf>(body.nc + body.nx + body.np);
  for (let q = 0; q < body.np; q++) inputsOf[body.nc + body.nx + q] = pv[q];
  for (let seg = checkpoints.length - 1; seg >= 0; seg--) {
    const lo = seg * K;
    const hi = Math.min(n, lo + K);
    const carries: Buf[][] = [];
    forward(lo, hi, copy(checkpoints[seg]), (_i, c) => carries.push(copy(c)));
    reverseStats.maxStored = Math.max(reverseStats.maxStored, checkpoints.length + carries.length);
    for (let r = hi - 1; r >= lo; r--) {
      const d = plan.patterns[plan.at[r]];
      const c = carries[r - lo];
      for (let k = 0; k < body.nc; k++) inputsOf[k] = c[k];
      const x = xAt(r);
      for (let l = 0; l < body.nx; l++) inputsOf[body.nc + l] = x[l];
      const states: Buf[] = [];
      for (const j of d.outs) {
        const k = o.carry[j];
        const s = k >= 0 && r < n - 1 ? chain[k] : o.slot[j] >= 0 ? seedObs(r, o.slot[j]) : k >= 0 ? seedFinal(k) : null;
        states.push(s!);
      }
      for (const k of d.ins) {
        let s: Buf | null;
        if (k < body.nc) s = body.carryKind[k] === "identity" ? identity[k] : r === 0 ? held[k] : seedObs(r - 1, o.carrySlot[k]);
        else if (k < body.nc + body.nx) s = held[body.nc + r * body.nx + (k - body.nc)];
        else s = pAcc[k - body.nc - body.nx];
        states.push(s!);
      }
      const it = (d.interpreter ??= new Interpreter(d.term.tape, d.term.output.atoms));
      it.run([...inputsOf, ...states]);
      const out = d.term.output.atoms;
      const got = new Array<Buf | null>(body.nc + body.nx + body.np).fill(null);
      d.results.forEach((k, j) => (got[k] = it.take(out[j])));
      it.clear();
      for (let k = 0; k < body.nc; k++) {
        if (body.carryKind[k] === "internal") chain[k] = got[k];
        else if (body.carryKind[k] === "identity" && !body.literal[k]) identity[k] = got[k];
      }
      for (let l = 0; l < body.nx; l++) xResult[r * body.nx + l] = got[body.nc + l] ?? held[body.nc + r * body.nx + l];
      for (let q = 0; q < body.np; q++) pAcc[q] = got[body.nc + body.nx + q];
      reverseStats.swept++;
    }
  }
  const out = new Float64Array(length);
  const result = (a: number): Buf | null => {
    if (a < body.nc) return body.carryKind[a] === "internal" ? chain[a] : body.carryKind[a] === "identity" ? identity[a] : null;
    if (a < body.nc + n * body.nx) return xResult[a - body.nc];
    return pAcc[a - body.nc - n * body.nx];
  };
  for (let a = 0; a < nargs; a++) {
    if (!plan.present[a]) continue;
    writeAt(out, offsets[a], (result(a) ?? held[a])!);
  }
  void INPUT;
  return out;
}
