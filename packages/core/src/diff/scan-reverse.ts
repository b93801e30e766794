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
import { scanCodes, scanOutputs, isScanCode, hasScans, segmentLength, writeAt, type DerivedParams, type ScanParams, type ScanOutParams } from "../trace/scan-ops.js";
import { TraceTerm } from "../trace/term.js";
import { closeTrace, sinkFor, type Trace } from "../trace/tracer.js";
import { runForward } from "../eval/scan-forward.js";
import { Interpreter } from "../eval/interpreter.js";
import { WengertError } from "../errors.js";
import { byStructure, compiledBlock, scanCode, type CompiledBlock } from "../jit/scan-code.js";
import { Runs } from "./runs.js";
import { giveColumn, takeColumn } from "../trace/columns.js";
import { activity, type Emitted } from "./place.js";

/** What differentiate.ts lends a scan's reverse sweep. */
export interface CotangentState {
  /** Each variable's dense cotangent so far (-1: the symbolic zero). */
  readonly ct: Int32Array;
  /** A tensor variable's pending pieces placed by one embed and taken away (-1: none). */
  pending(v: number): number;
  /** Set a variable's dense cotangent and its pieces (one whole piece, or -1): the scan's sums include what it held. */
  replace(v: number, c: number, whole: number): void;
}

export interface ScanSweep {
  /** Whether instruction i is a scan's (handled here: a scan's reverse emitted, an output's cotangent left for its scan). */
  at(i: number, state: CotangentState): boolean;
}

/** differentiate.ts's signature, with the blocks' option (scan-reverse runs it on a body's term). */
export type Differentiate = (term: TraceTerm, sink: Trace, seeds: readonly number[], placement: null, split?: { readonly pieces: readonly { readonly v: number; readonly atom: number }[] }) => Emitted;

const UNIT = { kind: "tuple", items: [] } as const;

/** The scans of a term being differentiated at the outermost level (null if it has none). */
export function scanSweep(term: TraceTerm, sink: Trace, differentiate: Differentiate): ScanSweep | null {
  if (!hasScans(term.tape)) return null;
  const tape = term.tape;
  const codes = scanCodes();
  const outputsOf = scanOutputs(tape);
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

/**
 * A cotangent's two parts, as the written-out sweep keeps them until its variable is
 * settled: the dense sum (part 0) and, for a tensor, the pieces (part 1) gathered from
 * slices and indices, placed by one embed (differentiate.ts).
 */
const PARTS = 2;

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
  /** The seeded parts of Outs.w (2j + part), then the inputs' parts it starts from (2k + part), in order. */
  readonly outs: readonly number[];
  readonly ins: readonly number[];
  /** The inputs' parts it returns (2k + part), in order; and which are present. */
  readonly results: readonly number[];
  readonly present: Uint8Array;
  interpreter: Interpreter | null;
  /** Its middle iterations as JavaScript (bodies of reals), once compiled. */
  compiled?: CompiledBlock;
}

/**
 * `D` for a block: the body's term, then its derivative with the parts `outs` of
 * Outs.w seeded and the inputs' parts `ins` starting from given cotangents. Its inputs:
 * the body's, then those cotangents; its outputs: the present parts of the cotangents of
 * the body's inputs that are not literals.
 */
function blockDerivative(body: Body, o: Outs, outs: number[], ins: number[], differentiate: Differentiate): BlockDerivative {
  const tape = body.term.tape;
  const nin = body.nc + body.nx + body.np;
  const vars = [...outs.map((e) => o.w[e >> 1]), ...ins.map((e) => body.inputVar[e >> 1])];
  const parts = [...outs, ...ins].map((e) => e & 1);
  const sink = sinkFor(tape, "scan", false);
  const atoms = vars.map((v, j) => {
    const dims = tape.dims(v);
    return dims.length === 0 ? sink.tape.input(nin + j, 0) : sink.tape.tensorInput(nin + j, { dims, data: new Float64Array(size(dims)) });
  });
  const dense = vars.filter((_v, j) => parts[j] === 0);
  const target = new TraceTerm(tape, [{ name: "in", shape: UNIT, atoms: [] }], { shape: UNIT, atoms: dense });
  const pieces = vars.flatMap((v, j) => (parts[j] === 1 ? [{ v, atom: atoms[j] }] : []));
  const d = differentiate(
    target,
    sink,
    atoms.filter((_a, j) => parts[j] === 0),
    null,
    { pieces },
  );
  closeTrace(sink);
  const results: number[] = [];
  const out: number[] = [];
  const present = new Uint8Array(PARTS * nin);
  for (let k = 0; k < nin; k++) {
    if (body.literal[k]) continue;
    if (d.present![k]) {
      present[2 * k] = 1;
      results.push(2 * k);
      out.push(d.results[k]);
    }
    const piece = d.pieceResults?.[k] ?? -1;
    if (piece >= 0) {
      present[2 * k + 1] = 1;
      results.push(2 * k + 1);
      out.push(piece);
    }
  }
  const term = new TraceTerm(sink.tape, [{ name: "in", shape: UNIT, atoms: [] }], { shape: UNIT, atoms: out });
  return { term, outs, ins, results, present, interpreter: null };
}

/** The reverse sweep of one scan decided ahead: each iteration's pattern, each pattern's term. */
export interface ReversePlan {
  readonly patterns: BlockDerivative[];
  /** Per iteration: its pattern's index. */
  readonly at: Runs;
  /** Per argument of the scan and part (2a + part): whether its cotangent comes out present. */
  readonly present: Uint8Array;
}

/** Where a scanGrad's inputs are: which outputs of the scan were seeded, which arguments held cotangents (by part). */
export interface ReverseInputs {
  /** Per written slot and part ((r·|obs| + s)·2 + part): seeded. */
  readonly seedObs: Uint8Array;
  /** Per carry leaf and part: its final value seeded (when not written as an obs). */
  readonly seedFinal: Uint8Array;
  /** Per argument and part: its cotangent so far present (and needed: active). */
  readonly acc: Uint8Array;
  /** Per argument: whether its cotangent is wanted (it is active). */
  readonly need: Uint8Array;
}

/** Per body structure and written variables: the outputs' roles, and the block derivatives made so far (by pattern). */
interface BodyCache {
  readonly outs: Outs;
  readonly derivatives: Map<string, BlockDerivative>;
}

const byBody = new WeakMap<Body, Map<Int32Array, BodyCache>>();

function cacheFor(body: Body, obs: Int32Array): BodyCache {
  let mine = byBody.get(body);
  if (mine === undefined) byBody.set(body, (mine = new Map()));
  let c = mine.get(obs);
  if (c === undefined) {
    // by structure, not by object: a body traced again by a later call reuses the terms (and their compiled code)
    mine.set(obs, (c = byStructure(body, `D${obs.join(",")}`, () => ({ outs: outsOf(body, obs), derivatives: new Map<string, BlockDerivative>() }))));
  }
  return c;
}

/** Where each state of a block comes from, for iteration r of n (the plan and the run read the same rules). */
interface Sources<T> {
  chain(k: number, part: number): T;
  identity(k: number, part: number): T;
  p(q: number, part: number): T;
  seedObs(r: number, s: number, part: number): T;
  seedFinal(k: number, part: number): T;
  acc(a: number, part: number): T;
  none: T;
}

/** The state a block at iteration r starts from for output part 2j + part. */
function outState<T>(o: Outs, j: number, part: number, r: number, n: number, src: Sources<T>): T {
  const k = o.carry[j];
  if (k >= 0 && r < n - 1) return src.chain(k, part);
  if (o.slot[j] >= 0) return src.seedObs(r, o.slot[j], part);
  return k >= 0 ? src.seedFinal(k, part) : src.none;
}

/** The state a block at iteration r starts from for input k's part. */
function inState<T>(body: Body, o: Outs, k: number, part: number, r: number, n: number, src: Sources<T>): T {
  if (k < body.nc) {
    if (body.carryKind[k] === "identity") return src.identity(k, part);
    if (body.carryKind[k] !== "internal") return src.none;
    if (r === 0) return src.acc(k, part);
    return o.carrySlot[k] >= 0 ? src.seedObs(r - 1, o.carrySlot[k], part) : src.none;
  }
  if (k < body.nc + body.nx) return src.acc(body.nc + r * body.nx + (k - body.nc), part);
  return src.p(k - body.nc - body.nx, part);
}

/** The plan: which cotangents each block starts from, iteration by iteration from the last (structure only). */
export function planReverse(p: ScanParams, inputs: ReverseInputs, differentiate: Differentiate): ReversePlan {
  const { body, n } = p;
  const obs = p.layout.obs;
  const { outs: o, derivatives } = cacheFor(body, obs);
  const nobs = obs.length;
  const nin = body.nc + body.nx + body.np;
  const nargs = body.nc + n * body.nx + body.np;
  const chain = new Uint8Array(PARTS * body.nc);
  const identity = new Uint8Array(PARTS * body.nc);
  const pAcc = new Uint8Array(PARTS * body.np);
  for (let k = 0; k < body.nc; k++) if (body.carryKind[k] === "identity" && !body.literal[k]) for (let part = 0; part < PARTS; part++) identity[2 * k + part] = inputs.acc[2 * k + part];
  for (let q = 0; q < body.np; q++) for (let part = 0; part < PARTS; part++) pAcc[2 * q + part] = inputs.acc[2 * (nargs - body.np + q) + part];
  const src: Sources<number> = {
    chain: (k, part) => chain[2 * k + part],
    identity: (k, part) => identity[2 * k + part],
    p: (q, part) => pAcc[2 * q + part],
    seedObs: (r, s, part) => inputs.seedObs[2 * (r * nobs + s) + part],
    seedFinal: (k, part) => inputs.seedFinal[2 * k + part],
    acc: (a, part) => inputs.acc[2 * a + part],
    none: 0,
  };
  const patterns: BlockDerivative[] = [];
  const index = new Map<BlockDerivative, number>();
  const at = new Runs(-1);
  const argPresent = new Uint8Array(PARTS * nargs);
  const outs: number[] = [];
  const ins: number[] = [];
  // a pattern's key as a number when its bits fit (a loop of a million iterations makes as many), else a string
  const small = PARTS * (o.w.length + nin) <= 30;
  const numbers = new Map<number, number>();
  let last: number | string = -1;
  let lastIndex = -1;
  // a middle iteration whose outside inputs (seeds, x's cotangents) are the next one's, starting from the
  // presence that one started from, has its pattern: a steady loop is decided in O(1) per iteration
  let steady = false;
  const sameRow = (flags: Uint8Array, width: number, r: number, r2: number): boolean => {
    for (let e = 0; e < width; e++) if (flags[r * width + e] !== flags[r2 * width + e]) return false;
    return true;
  };
  const sameX = (r: number): boolean => {
    for (let e = 0; e < PARTS * body.nx; e++) if (inputs.acc[PARTS * (body.nc + r * body.nx) + e] !== inputs.acc[PARTS * (body.nc + (r + 1) * body.nx) + e]) return false;
    return true;
  };
  const outside = (r: number): boolean => sameRow(inputs.seedObs, PARTS * nobs, r, r + 1) && sameRow(inputs.seedObs, PARTS * nobs, r - 1, r) && sameX(r);
  const before = new Uint8Array(chain.length + identity.length + pAcc.length);
  const snapshot = (into: Uint8Array): void => {
    into.set(chain, 0);
    into.set(identity, chain.length);
    into.set(pAcc, chain.length + identity.length);
  };
  for (let r = n - 1; r >= 0; r--) {
    if (steady && r > 1 && r < n - 2 && nobs === 0 && body.nx === 0) {
      // nothing comes from outside per iteration: the pattern holds down to iteration 1
      at.set(r, lastIndex);
      r = 1;
      continue;
    }
    if (steady && r > 0 && r < n - 2 && outside(r)) {
      at.set(r, lastIndex);
      const d = patterns[lastIndex];
      for (let l = 0; l < body.nx; l++) for (let part = 0; part < PARTS; part++) argPresent[2 * (body.nc + r * body.nx + l) + part] = d.present[2 * (body.nc + l) + part];
      continue;
    }
    snapshot(before);
    outs.length = 0;
    ins.length = 0;
    let bits = 0;
    for (let j = 0; j < o.w.length; j++)
      for (let part = 0; part < PARTS; part++)
        if (outState(o, j, part, r, n, src)) {
          outs.push(2 * j + part);
          bits |= 1 << (2 * j + part);
        }
    for (let k = 0; k < nin; k++)
      if (!body.literal[k])
        for (let part = 0; part < PARTS; part++)
          if (inState(body, o, k, part, r, n, src)) {
            ins.push(2 * k + part);
            bits |= 1 << (PARTS * o.w.length + 2 * k + part);
          }
    const key: number | string = small ? bits : `${outs.join(",")}|${ins.join(",")}`;
    if (key !== last && small && numbers.has(bits)) {
      last = key;
      lastIndex = numbers.get(bits)!;
    } else if (key !== last) {
      const name = `${outs.join(",")}|${ins.join(",")}`;
      let d = derivatives.get(name);
      if (d === undefined) derivatives.set(name, (d = blockDerivative(body, o, [...outs], [...ins], differentiate)));
      let i = index.get(d);
      if (i === undefined) {
        index.set(d, (i = patterns.length));
        patterns.push(d);
      }
      if (small) numbers.set(bits, i);
      last = key;
      lastIndex = i;
    }
    const d = patterns[lastIndex];
    at.set(r, lastIndex);
    for (let part = 0; part < PARTS; part++) {
      for (let k = 0; k < body.nc; k++) {
        if (body.carryKind[k] === "internal") chain[2 * k + part] = d.present[2 * k + part];
        else if (body.carryKind[k] === "identity" && !body.literal[k]) identity[2 * k + part] = d.present[2 * k + part];
      }
      for (let l = 0; l < body.nx; l++) argPresent[2 * (body.nc + r * body.nx + l) + part] = d.present[2 * (body.nc + l) + part];
      for (let q = 0; q < body.np; q++) pAcc[2 * q + part] = d.present[2 * (body.nc + body.nx + q) + part];
    }
    const after = new Uint8Array(before.length);
    snapshot(after);
    steady = after.every((b, e) => b === before[e]);
  }
  for (let part = 0; part < PARTS; part++) {
    for (let k = 0; k < body.nc; k++) {
      const kind = body.carryKind[k];
      argPresent[2 * k + part] = kind === "internal" ? chain[2 * k + part] : kind === "identity" && !body.literal[k] ? identity[2 * k + part] : 0;
    }
    for (let q = 0; q < body.np; q++) argPresent[2 * (nargs - body.np + q) + part] = pAcc[2 * q + part];
  }
  // an argument that held a cotangent still holds it
  for (let a = 0; a < nargs; a++) for (let part = 0; part < PARTS; part++) argPresent[2 * a + part] = (argPresent[2 * a + part] | inputs.acc[2 * a + part]) & inputs.need[a];
  return { patterns, at, present: argPresent };
}

/** Emit the reverse sweep of the scan instruction (its args, its outputs' instructions) into the sink. */
function emitReverse(p: ScanParams, args: readonly number[], outputs: readonly number[], tape: TraceTerm["tape"], sink: Trace, state: CotangentState, active: Uint8Array, differentiate: Differentiate): void {
  const { body, n, layout } = p;
  const codes = scanCodes();
  const nobs = layout.obs.length;
  const seedObs = new Uint8Array(PARTS * n * nobs);
  const seedFinal = new Uint8Array(PARTS * body.nc);
  // the seeds (outputs' cotangents) by offset and part, then the arguments' cotangents held
  const seedAtoms = new Map<number, number>();
  for (const j of outputs) {
    const q = tape.params(j) as ScanOutParams;
    if (q.held) continue;
    const parts = [state.ct[j], tape.dims(j).length === 0 ? -1 : state.pending(j)];
    const r = Math.floor(q.offset / layout.width);
    const flag = q.offset < n * layout.width ? (part: number) => (seedObs[2 * (r * nobs + layout.obsOffset.indexOf(q.offset - r * layout.width)) + part] = 1) : (part: number) => (seedFinal[2 * layout.carryOffset.indexOf(q.offset) + part] = 1);
    parts.forEach((c, part) => {
      if (c < 0) return;
      seedAtoms.set(2 * q.offset + part, c);
      flag(part);
    });
  }
  const need = Uint8Array.from(args, (v) => active[v]);
  const acc = new Uint8Array(PARTS * args.length);
  const accAtoms: number[] = [];
  args.forEach((v, a) => {
    if (!need[a]) return;
    const parts = [state.ct[v], tape.dims(v).length === 0 ? -1 : state.pending(v)];
    parts.forEach((c, part) => {
      if (c < 0) return;
      acc[2 * a + part] = 1;
      accAtoms.push(c);
    });
  });
  const inputs: ReverseInputs = { seedObs, seedFinal, acc, need };
  const plan = planReverse(p, inputs, differentiate);
  const seedOrder = [...seedAtoms.keys()].sort((x, y) => x - y);
  const dimsOf = (a: number): Dims => tape.dims(args[a]);
  const offsets: number[] = [];
  let length = 0;
  for (let e = 0; e < PARTS * args.length; e++) {
    offsets.push(length);
    if (plan.present[e]) length += size(dimsOf(e >> 1));
  }
  const params: DerivedParams = {
    scan: p,
    length,
    what: "reverse",
    run: (values) => reverseRun(p, plan, inputs, seedOrder, values, offsets, length),
  };
  const grad = sink.applyOp(codes.scanGrad, [...args, ...seedOrder.map((o) => seedAtoms.get(o)!), ...accAtoms], params);
  const read = (e: number): number => (plan.present[e] ? sink.applyOp(codes.scanOut, [grad], { offset: offsets[e], dims: dimsOf(e >> 1), held: false }) : -1);
  for (let a = 0; a < args.length; a++) {
    if (!need[a] || (!plan.present[2 * a] && !plan.present[2 * a + 1])) continue;
    state.replace(args[a], read(2 * a), read(2 * a + 1));
  }
}


/** Counters for tests: carries stored by the last reverse run (checkpoints, and at most at once), and its iterations swept. */
export const reverseStats = { stored: 0, maxStored: 0, swept: 0 };

/** The scanGrad's value: the cotangents of the scan's arguments (present parts, packed). */
function reverseRun(p: ScanParams, plan: ReversePlan, inputs: ReverseInputs, seedOrder: readonly number[], values: readonly Buf[], offsets: readonly number[], length: number): Float64Array {
  return p.body.reals && scanCode.enabled ? reverseReals(p, plan, inputs, seedOrder, values as readonly number[], offsets, length) : reverseAny(p, plan, inputs, seedOrder, values, offsets, length);
}

/** reverseRun for any body: each block's term interpreted. */
function reverseAny(p: ScanParams, plan: ReversePlan, inputs: ReverseInputs, seedOrder: readonly number[], values: readonly Buf[], offsets: readonly number[], length: number): Float64Array {
  const { body, n, layout } = p;
  const nargs = body.nc + n * body.nx + body.np;
  const nobs = layout.obs.length;
  const nin = body.nc + body.nx + body.np;
  const carry0 = values.slice(0, body.nc) as Buf[];
  const xAt = (r: number): Buf[] => values.slice(body.nc + r * body.nx, body.nc + (r + 1) * body.nx) as Buf[];
  const pv = values.slice(body.nc + n * body.nx, nargs) as Buf[];
  const seed = new Map<number, Buf>();
  seedOrder.forEach((o, j) => seed.set(o, values[nargs + j]));
  const held: (Buf | null)[] = new Array<Buf | null>(PARTS * nargs).fill(null);
  let next = nargs + seedOrder.length;
  for (let e = 0; e < PARTS * nargs; e++) if (inputs.acc[e]) held[e] = values[next++];
  const { outs: o } = cacheFor(body, layout.obs);
  // running cotangents, by part
  const chain: (Buf | null)[] = new Array<Buf | null>(PARTS * body.nc).fill(null);
  const identity: (Buf | null)[] = Array.from({ length: PARTS * body.nc }, (_, e) => (body.carryKind[e >> 1] === "identity" && !body.literal[e >> 1] ? held[e] : null));
  const pAcc: (Buf | null)[] = Array.from({ length: PARTS * body.np }, (_, e) => held[PARTS * (nargs - body.np) + e]);
  const xResult: (Buf | null)[] = new Array<Buf | null>(PARTS * n * body.nx).fill(null);
  const src: Sources<Buf | null> = {
    chain: (k, part) => chain[2 * k + part],
    identity: (k, part) => identity[2 * k + part],
    p: (q, part) => pAcc[2 * q + part],
    seedObs: (r, s, part) => (s < 0 ? null : (seed.get(2 * (r * layout.width + layout.obsOffset[s]) + part) ?? null)),
    seedFinal: (k, part) => seed.get(2 * layout.carryOffset[k] + part) ?? null,
    acc: (a, part) => held[2 * a + part],
    none: null,
  };
  void nobs;

  // the carries: checkpoints every K iterations, then each segment's recomputed
  const K = segmentLength(p.checkpoint, p.n);
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

  const inputsOf = new Array<Buf>(nin);
  for (let q = 0; q < body.np; q++) inputsOf[body.nc + body.nx + q] = pv[q];
  const got: (Buf | null)[] = new Array<Buf | null>(PARTS * nin);
  for (let seg = checkpoints.length - 1; seg >= 0; seg--) {
    const lo = seg * K;
    const hi = Math.min(n, lo + K);
    const carries: Buf[][] = [];
    forward(lo, hi, copy(checkpoints[seg]), (_i, c) => carries.push(copy(c)));
    reverseStats.maxStored = Math.max(reverseStats.maxStored, checkpoints.length + carries.length);
    for (let r = hi - 1; r >= lo; r--) {
      const d = plan.patterns[plan.at.at(r)];
      const c = carries[r - lo];
      for (let k = 0; k < body.nc; k++) inputsOf[k] = c[k];
      const x = xAt(r);
      for (let l = 0; l < body.nx; l++) inputsOf[body.nc + l] = x[l];
      const states: Buf[] = [];
      for (const e of d.outs) states.push(outState(o, e >> 1, e & 1, r, n, src)!);
      for (const e of d.ins) states.push(inState(body, o, e >> 1, e & 1, r, n, src)!);
      const it = (d.interpreter ??= new Interpreter(d.term.tape, d.term.output.atoms));
      it.run([...inputsOf, ...states]);
      const out = d.term.output.atoms;
      got.fill(null);
      d.results.forEach((e, j) => (got[e] = it.take(out[j])));
      it.clear();
      for (let e = 0; e < PARTS * body.nc; e++) {
        const kind = body.carryKind[e >> 1];
        if (kind === "internal") chain[e] = got[e];
        else if (kind === "identity" && !body.literal[e >> 1]) identity[e] = got[e];
      }
      for (let l = 0; l < body.nx; l++) for (let part = 0; part < PARTS; part++) xResult[PARTS * (r * body.nx + l) + part] = got[PARTS * (body.nc + l) + part] ?? held[PARTS * (body.nc + r * body.nx + l) + part];
      for (let e = 0; e < PARTS * body.np; e++) pAcc[e] = got[PARTS * (body.nc + body.nx) + e];
      reverseStats.swept++;
    }
  }
  const out = new Float64Array(length);
  const result = (e: number): Buf | null => {
    const a = e >> 1;
    if (a < body.nc) return body.carryKind[a] === "internal" ? chain[e] : body.carryKind[a] === "identity" ? identity[e] : null;
    if (a < body.nc + n * body.nx) return xResult[e - PARTS * body.nc];
    return pAcc[e - PARTS * (nargs - body.np)];
  };
  for (let e = 0; e < PARTS * nargs; e++) {
    if (!plan.present[e]) continue;
    writeAt(out, offsets[e], (result(e) ?? held[e])!);
  }
  return out;
}

/**
 * reverseRun for a body of reals: the carries recomputed by compiled code into flat
 * arrays, the middle iterations (0 < r < n − 1) by each pattern's compiled block, the
 * first and last (whose cotangents come from elsewhere) interpreted.
 */
function reverseReals(p: ScanParams, plan: ReversePlan, inputs: ReverseInputs, seedOrder: readonly number[], values: readonly number[], offsets: readonly number[], length: number): Float64Array {
  const { body, n, layout } = p;
  const { nc, nx, np } = body;
  const nargs = nc + n * nx + np;
  const nobs = layout.obs.length;
  const nin = nc + nx + np;
  const X = Float64Array.from(values.slice(nc, nc + n * nx));
  const P = Float64Array.from(values.slice(nc + n * nx, nargs));
  // seeds and held cotangents, dense (reals have no pieces)
  const S = new Float64Array(n * nobs);
  const seedFinal = new Float64Array(nc);
  seedOrder.forEach((o, j) => {
    const offset = o >> 1;
    const v = values[nargs + j];
    if (offset < n * layout.width) S[Math.floor(offset / layout.width) * nobs + layout.obsOffset.indexOf(offset % layout.width)] = v;
    else seedFinal[layout.carryOffset.indexOf(offset)] = v;
  });
  const held = new Float64Array(nargs);
  let next = nargs + seedOrder.length;
  for (let a = 0; a < nargs; a++) if (inputs.acc[2 * a]) held[a] = values[next++];
  const A = held.subarray(nc, nc + n * nx);
  // x's cotangents start as held: a block that returns one started from it
  const XR = A.slice();
  const { outs: o } = cacheFor(body, layout.obs);
  // running cotangents: st = [chain (nc)][identity (nc)][captured (np)]
  const st = new Float64Array(2 * nc + np);
  for (let k = 0; k < nc; k++) if (body.carryKind[k] === "identity") st[nc + k] = held[k];
  for (let q = 0; q < np; q++) st[2 * nc + q] = held[nargs - np + q];
  // checkpoints (those the traced run stored, at these values; else a forward run), then each segment's carries
  const forward = (from: number, to: number, carry: number[], storeOut: Float64Array, every: number): void => {
    runForward({ body, x: () => [], p: Array.from(P), from, to, checkFrom: n, reportTies: false, obs: null, write: null, reals: { xs: X, obsOut: null, obsBase: 0, storeOut, storeFrom: from, storeEvery: every } }, carry, false);
  };
  const stash = takeStash(p, values.slice(0, nargs));
  // every carry stored: one segment whose carries are there
  const all = stash !== null && stash.every === 1 && n > 1;
  const K = all ? n : (stash?.every ?? segmentLength(p.checkpoint, n));
  const count = Math.ceil(n / K);
  let checkpoints: Float64Array;
  if (all) checkpoints = stash.carries.subarray(0, nc);
  else if (stash !== null) checkpoints = stash.carries;
  else {
    checkpoints = takeColumn(Float64Array, count * nc);
    if (K < n) forward(0, n, values.slice(0, nc), checkpoints, K);
    else checkpoints.set(values.slice(0, nc));
  }
  reverseStats.stored = all ? n : count;
  reverseStats.maxStored = all ? n : count;
  reverseStats.swept = 0;
  const C = all ? stash.carries : takeColumn(Float64Array, Math.min(K, n) * nc);
  const interpretedStep = (r: number, cBase: number): void => {
    const d = plan.patterns[plan.at.at(r)];
    const src: Sources<number | null> = {
      chain: (k) => st[k],
      identity: (k) => st[nc + k],
      p: (q) => st[2 * nc + q],
      seedObs: (rr, s) => (s < 0 ? null : S[rr * nobs + s]),
      seedFinal: (k) => seedFinal[k],
      acc: (a) => held[a],
      none: null,
    };
    const states: number[] = [];
    for (const e of d.outs) states.push(outState(o, e >> 1, 0, r, n, src)!);
    for (const e of d.ins) states.push(inState(body, o, e >> 1, 0, r, n, src)!);
    const ins: number[] = [];
    for (let k = 0; k < nc; k++) ins.push(C[(r - cBase) * nc + k]);
    for (let l = 0; l < nx; l++) ins.push(X[r * nx + l]);
    for (let q = 0; q < np; q++) ins.push(P[q]);
    const it = (d.interpreter ??= new Interpreter(d.term.tape, d.term.output.atoms));
    it.run([...ins, ...states]);
    d.results.forEach((e, j) => {
      const k = e >> 1;
      const v = it.value(d.term.output.atoms[j]) as number;
      if (k < nc) st[body.carryKind[k] === "internal" ? k : nc + k] = v;
      else if (k < nc + nx) XR[r * nx + (k - nc)] = v;
      else st[2 * nc + (k - nc - nx)] = v;
    });
    reverseStats.swept++;
  };
  for (let seg = count - 1; seg >= 0; seg--) {
    const lo = seg * K;
    const hi = Math.min(n, lo + K);
    if (!all) forward(lo, hi, Array.from(checkpoints.subarray(seg * nc, (seg + 1) * nc)), C, 1);
    reverseStats.maxStored = Math.max(reverseStats.maxStored, all ? n : count + (hi - lo));
    let r = hi - 1;
    while (r >= lo) {
      if (r === n - 1 || r === 0) {
        interpretedStep(r, lo);
        r--;
        continue;
      }
      // the middle iterations of one pattern, at once
      const pattern = plan.at.at(r);
      const end = Math.max(lo, 1, plan.at.end(r));
      const d = plan.patterns[pattern];
      // compiled once per block derivative (itself made once per body structure and pattern)
      d.compiled ??= compiledBlock(d.term, body, wiring(body, o, nobs, d));
      d.compiled(end, r + 1, C, lo, X, P, S, A, st, XR);
      reverseStats.swept += r + 1 - end;
      r = end - 1;
    }
  }
  // the carries' buffers back to the pool of columns
  if (stash !== null) giveColumn(stash.column);
  else giveColumn(checkpoints);
  if (!all) giveColumn(C);
  const out = new Float64Array(length);
  for (let a = 0; a < nargs; a++) {
    if (!plan.present[2 * a]) continue;
    let v: number;
    if (a < nc) v = body.carryKind[a] === "internal" ? st[a] : st[nc + a];
    else if (a < nc + n * nx) v = XR[a - nc];
    else v = st[2 * nc + (a - nc - n * nx)];
    out[offsets[2 * a]] = v;
  }
  void nin;
  return out;
}

/** Where a block's states come from in a middle iteration, and where its results go (jit/scan-code.ts's BlockWiring). */
function wiring(body: Body, o: Outs, nobs: number, d: BlockDerivative): { states: string[]; results: string[]; locals: string[] } {
  const { nc, nx, np } = body;
  const states: string[] = [];
  for (const e of d.outs) {
    const j = e >> 1;
    states.push(o.carry[j] >= 0 ? `ch${o.carry[j]}` : `S[r * ${nobs} + ${o.slot[j]}]`);
  }
  for (const e of d.ins) {
    const k = e >> 1;
    if (k < nc) states.push(body.carryKind[k] === "identity" ? `id${k}` : `S[(r - 1) * ${nobs} + ${o.carrySlot[k]}]`);
    else if (k < nc + nx) states.push(`A[r * ${nx} + ${k - nc}]`);
    else states.push(`pa${k - nc - nx}`);
  }
  const results = d.results.map((e) => {
    const k = e >> 1;
    if (k < nc) return body.carryKind[k] === "identity" ? `id${k}` : `ch${k}`;
    if (k < nc + nx) return `XR[r * ${nx} + ${k - nc}]`;
    return `pa${k - nc - nx}`;
  });
  const locals = [...Array.from({ length: nc }, (_, k) => `ch${k}`), ...Array.from({ length: nc }, (_, k) => `id${k}`), ...Array.from({ length: np }, (_, q) => `pa${q}`)];
  return { states, results, locals };
}

/** The carries the traced run stored, if the arguments are the values it ran at (taken: used once). */
function takeStash(p: ScanParams, values: readonly number[]): { readonly carries: Float64Array; readonly column: Float64Array; readonly every: number } | null {
  const stash = p.stash;
  if (stash === null) return null;
  p.stash = null;
  for (let a = 0; a < values.length; a++) {
    if (!Object.is(values[a], stash.values[a])) {
      giveColumn(stash.column);
      return null;
    }
  }
  return stash;
}
