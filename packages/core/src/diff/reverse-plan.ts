/**
 * @file The plan of a scan's reverse sweep, decided ahead from the structure alone: which
 * cotangents each iteration's block starts from (a pattern), and each pattern's block
 * derivative term `D` (the body's term, then Fig. 6 applied to it with those cotangents
 * seeded). See scan-reverse.ts for what a block is and why the states are seeded.
 */
import { size } from "@wengert/ops";
import type { Body } from "../trace/body.js";
import type { ScanParams } from "../trace/scan-ops.js";
import { TraceTerm } from "../trace/term.js";
import { closeTrace, sinkFor, type Trace } from "../trace/tracer.js";
import type { TermRunner } from "../eval/interpreter.js";
import { byStructure, type CompiledBlock, type CompiledStep } from "../jit/scan-code.js";
import { Runs } from "./runs.js";
import { ARITY, CODE, CONST, FIRST_PRIMITIVE } from "../trace/opcodes.js";
import { emitterFor } from "../trace/emitter.js";
import { readValuesOnly } from "../eval/deferred.js";
import type { Emitted } from "./place.js";
import { maskById, maskId, type Mask } from "./cotangent-mask.js";
import type { BoxSweep } from "../eval/box-block.js";

/** differentiate.ts's signature, with the blocks' option (scan-reverse runs it on a body's term). */
export type Differentiate = (
  term: TraceTerm,
  sink: Trace,
  seeds: readonly number[],
  placement: null,
  split?: {
    readonly pieces: readonly { readonly v: number; readonly atom: number; readonly mask?: Mask | null }[];
    readonly seedMasks?: readonly (Mask | null)[];
    readonly inactive?: Uint8Array;
  },
) => Emitted;

const UNIT = { kind: "tuple", items: [] } as const;

/**
 * A cotangent's two parts, as the written-out sweep keeps them until its variable is
 * settled: the dense sum (part 0) and, for a tensor, the pieces (part 1) gathered from
 * slices and indices, placed by one embed (differentiate.ts).
 */
export const PARTS = 2;

/** Per body: the distinct variables whose cotangents a block starts from (its computed outputs), and what they are. */
export interface Outs {
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
  /** Per input part (2k + part): the mask id of the cotangent it returns (0: none; cotangent-mask.ts). */
  readonly masks: Int32Array;
  interpreter: TermRunner | null;
  /** Its middle iterations as JavaScript (bodies of reals), once compiled. */
  compiled?: CompiledBlock;
  /** One iteration as JavaScript (the first and last of a sweep), once compiled. */
  step?: CompiledStep;
}

/**
 * `D` for a block: the body's term, then its derivative with the parts `outs` of
 * Outs.w seeded and the inputs' parts `ins` starting from given cotangents. Its inputs:
 * the body's, then those cotangents; its outputs: the present parts of the cotangents of
 * the body's inputs that are not literals.
 */
export function blockDerivative(
  body: Body,
  o: Outs,
  outs: number[],
  ins: number[],
  differentiate: Differentiate,
  { masksIn = [], merge = false, unneeded = null }: { masksIn?: readonly number[]; merge?: boolean; unneeded?: Uint8Array | null } = {},
): BlockDerivative {
  const tape = body.term.tape;
  const nin = body.nc + body.nx + body.np;
  const vars = [...outs.map((e) => o.w[e >> 1]), ...ins.map((e) => body.inputVar[e >> 1])];
  const parts = [...outs, ...ins].map((e) => e & 1);
  const sink = sinkFor(tape, "scan", false);
  // D is a term its runs evaluate (eval/scan-reverse-run.ts): its values here, on zero cotangents,
  // are read by no one but the rules that read values (a mask's support), so only those are computed
  sink.tape.defer({ settle: readValuesOnly });
  const atoms = vars.map((v, j) => {
    const dims = tape.dims(v);
    return dims.length === 0 ? sink.tape.input(nin + j, 0) : sink.tape.tensorInput(nin + j, { dims, data: new Float64Array(size(dims)) });
  });
  const dense = vars.filter((_v, j) => parts[j] === 0);
  const target = new TraceTerm(tape, [{ name: "in", shape: UNIT, atoms: [] }], { shape: UNIT, atoms: dense });
  // each state's mask as the written-out sweep has it where the block starts (masksIn: ids, 0 none)
  const maskOf = (j: number): Mask | null => maskById(masksIn[j] ?? 0);
  const pieces = vars.flatMap((v, j) => (parts[j] === 1 ? [{ v, atom: atoms[j], ...(masksIn.length > 0 ? { mask: maskOf(j) } : {}) }] : []));
  const seedMasks = vars.flatMap((_v, j) => (parts[j] === 0 ? [maskOf(j)] : []));
  const d = differentiate(
    target,
    sink,
    atoms.filter((_a, j) => parts[j] === 0),
    null,
    { pieces, ...(masksIn.some((m) => m !== 0) ? { seedMasks } : {}), ...(unneeded !== null ? { inactive: unneeded } : {}) },
  );
  // a carry's two parts summed here, as the next block would settle them (mergeable)
  const merged = new Map<number, { readonly atom: number; readonly mask: Mask | null }>();
  if (merge) {
    const e = emitterFor(sink);
    for (let k = 0; k < body.nc; k++) {
      const piece = d.pieceResults?.[k] ?? -1;
      if (!d.present![k] || piece < 0 || !mergeable(body, k)) continue;
      const dims = tape.dims(body.inputVar[k]);
      const placed = e.embed(dims, [piece], [dims.map(() => 0)]);
      const dense = d.resultMasks?.[k] ?? null;
      const pm = d.pieceMasks?.[k] ?? null;
      merged.set(k, { atom: sink.record(CODE.add, d.results[k], placed), mask: settledMask(dense, pm) });
    }
  }
  sink.tape.settle([]);
  closeTrace(sink);
  const results: number[] = [];
  const out: number[] = [];
  const present = new Uint8Array(PARTS * nin);
  const masks = new Int32Array(PARTS * nin);
  for (let k = 0; k < nin; k++) {
    if (body.literal[k]) continue;
    const both = merged.get(k);
    if (both !== undefined) {
      present[2 * k] = 1;
      masks[2 * k] = maskId(both.mask);
      results.push(2 * k);
      out.push(both.atom);
      continue;
    }
    if (d.present![k]) {
      present[2 * k] = 1;
      masks[2 * k] = maskId(d.resultMasks?.[k] ?? null);
      results.push(2 * k);
      out.push(d.results[k]);
    }
    const piece = d.pieceResults?.[k] ?? -1;
    if (piece >= 0) {
      present[2 * k + 1] = 1;
      masks[2 * k + 1] = maskId(d.pieceMasks?.[k] ?? null);
      results.push(2 * k + 1);
      out.push(piece);
    }
  }
  const term = new TraceTerm(sink.tape, [{ name: "in", shape: UNIT, atoms: [] }], { shape: UNIT, atoms: out });
  return { term, outs, ins, results, present, masks, interpreter: null };
}

/**
 * Whether carry k's cotangent may leave a block as one vector, its dense sum and its pieces
 * added there (`merge`): the block before seeds carry′ k's variable with both parts and
 * settles it (differentiate.ts: dense + embed(pieces)) before anything else adds to it,
 * when nothing in the body reads it and it is seeded once (no other carry′ leaf, no
 * written y). The next block then starts from that sum, one vector read instead of two
 * and one written instead of two per iteration: the same additions in the same order.
 */
function mergeable(body: Body, k: number): boolean {
  if (body.carryKind[k] !== "internal" || body.literal[k]) return false;
  const tape = body.term.tape;
  const w = body.carryOut[k];
  if (body.term.output.atoms.indexOf(w) !== k || body.term.output.atoms.lastIndexOf(w) !== k) return false;
  for (let i = w + 1; i < tape.length; i++) {
    if (tape.op[i] < FIRST_PRIMITIVE) continue;
    if (tape.x[i] !== 0 ? tape.args(i).includes(w) : tape.a[i] === w || (ARITY[tape.op[i]] === 2 && tape.b[i] === w)) return false;
  }
  return true;
}

/**
 * The mask a variable seeded with a dense part (mask `dense`) and a piece (mask `pm`, as
 * piecesMask reads a whole piece's) has once settled, as differentiate.ts's settle makes it.
 */
function settledMask(dense: Mask | null, pm: Mask | null): Mask | null {
  if (pm === null || dense === null) return null;
  const m = dense.map((t, i) => (t !== 0 || pm[i] !== 0 ? 1 : 0));
  return m.every((t) => t !== 0) ? null : m;
}

/**
 * What the rules of a block derivative read of the body's variables: `forward` lists the
 * body's computed variables and inputs that its instructions past the body's (the rules)
 * and its outputs read (constants aside). Made for a pattern with every cotangent present,
 * whose rules are those of any pattern and more.
 */
export function readByRules(d: Pick<BlockDerivative, "term">, body: Body): number[] {
  const tape = d.term.tape;
  const seen = new Uint8Array(body.length);
  const read = (v: number): void => {
    if (v < body.length && tape.op[v] !== CONST) seen[v] = 1;
  };
  for (let i = body.length; i < tape.length; i++) {
    if (tape.op[i] < FIRST_PRIMITIVE) continue;
    if (tape.x[i] !== 0) tape.args(i).forEach(read);
    else {
      read(tape.a[i]);
      if (ARITY[tape.op[i]] === 2) read(tape.b[i]);
    }
  }
  d.term.output.atoms.forEach(read);
  const out: number[] = [];
  seen.forEach((s, v) => s && out.push(v));
  return out;
}

/** The block derivative with every cotangent a body of reals can start from present (see readByRules). */
export function fullDerivative(body: Body, obs: Int32Array, differentiate: Differentiate): BlockDerivative {
  const { outs: o, derivatives } = cacheFor(body, obs);
  const outs = Array.from(o.w, (_v, j) => 2 * j);
  const ins: number[] = [];
  for (let k = 0; k < body.nc + body.nx + body.np; k++) if (!body.literal[k]) ins.push(2 * k);
  const name = `${outs.join(",")}|${ins.join(",")}`;
  let d = derivatives.get(name);
  if (d === undefined) derivatives.set(name, (d = blockDerivative(body, o, outs, ins, differentiate)));
  return d;
}

/** The reverse sweep of one scan decided ahead: each iteration's pattern, each pattern's term. */
export interface ReversePlan {
  readonly patterns: BlockDerivative[];
  /** Per iteration: its pattern's index. */
  readonly at: Runs;
  /** Per argument of the scan and part (2a + part): whether its cotangent comes out present. */
  readonly present: Uint8Array;
  /** The same: the mask id of the cotangent that comes out (0: none; cotangent-mask.ts). */
  readonly masks: Int32Array;
  /** Where every mask is a box: each block evaluated over windows (diff/box-plan.ts). */
  readonly boxes?: BoxSweep;
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
  /** The masks (ids, cotangent-mask.ts) of the seeds and held cotangents that have one, by the index of their flag above. */
  readonly masks?: {
    readonly seedObs: ReadonlyMap<number, number>;
    readonly seedFinal: ReadonlyMap<number, number>;
    readonly acc: ReadonlyMap<number, number>;
  };
}

/** Per body structure and written variables: the outputs' roles, and the block derivatives made so far (by pattern). */
interface BodyCache {
  readonly outs: Outs;
  readonly derivatives: Map<string, BlockDerivative>;
}

const byBody = new WeakMap<Body, Map<Int32Array, BodyCache>>();

export function cacheFor(body: Body, obs: Int32Array): BodyCache {
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
export interface Sources<T> {
  chain(k: number, part: number): T;
  identity(k: number, part: number): T;
  p(q: number, part: number): T;
  seedObs(r: number, s: number, part: number): T;
  seedFinal(k: number, part: number): T;
  acc(a: number, part: number): T;
  none: T;
}

/** The state a block at iteration r starts from for output part 2j + part. */
export function outState<T>(o: Outs, j: number, part: number, r: number, n: number, src: Sources<T>): T {
  const k = o.carry[j];
  if (k >= 0 && r < n - 1) return src.chain(k, part);
  if (o.slot[j] >= 0) return src.seedObs(r, o.slot[j], part);
  return k >= 0 ? src.seedFinal(k, part) : src.none;
}

/** The state a block at iteration r starts from for input k's part. */
export function inState<T>(body: Body, o: Outs, k: number, part: number, r: number, n: number, src: Sources<T>): T {
  if (k < body.nc) {
    if (body.carryKind[k] === "identity") return src.identity(k, part);
    if (body.carryKind[k] !== "internal") return src.none;
    if (r === 0) return src.acc(k, part);
    return o.carrySlot[k] >= 0 ? src.seedObs(r - 1, o.carrySlot[k], part) : src.none;
  }
  if (k < body.nc + body.nx) return src.acc(body.nc + r * body.nx + (k - body.nc), part);
  return src.p(k - body.nc - body.nx, part);
}

/**
 * For a stacked scan's x leaf (argument a, as one argument per leaf and iteration): the
 * argument whose cotangent it starts from, the same element read at the iteration before
 * (Stacked.alias), or -1.
 */
export function aliasOf(p: ScanParams, a: number): number {
  const alias = p.stacked?.alias;
  const { nc, nx } = p.body;
  if (alias === undefined || a < nc || a >= nc + p.n * nx) return -1;
  const r = Math.floor((a - nc) / nx);
  const l = (a - nc) % nx;
  return alias[l] >= 0 && r < p.n - 1 ? nc + (r + 1) * nx + alias[l] : -1;
}

/** The captured values whose cotangents are not wanted, by the body's input index (null: none). */
export function unneededInputs(p: ScanParams, inputs: ReverseInputs): Uint8Array | null {
  const { body, n } = p;
  const nargs = body.nc + n * body.nx + body.np;
  let skip: Uint8Array | null = null;
  for (let q = 0; q < body.np; q++) {
    if (inputs.need[nargs - body.np + q] || body.literal[body.nc + body.nx + q]) continue;
    (skip ??= new Uint8Array(body.nc + body.nx + body.np))[body.nc + body.nx + q] = 1;
  }
  return skip;
}

/**
 * The plan: which cotangents each block starts from, iteration by iteration from the last
 * (structure only), and the masks they carry. With `budget`, null once the patterns made for
 * masks hold more elements of masks than that (a mask that grows step by step over a long
 * vector, GradBench ode's: a block derivative per step); `dropMasks`: the plan with no
 * mask passed between blocks (each block's rules masked by its own `where`s alone); `merge`:
 * carries leave blocks as one vector (mergeable); `unneeded`: the blocks compute no
 * cotangent for captured values whose cotangent nobody wants (traced reals a scan reads
 * that its differentiation does not reach: a step size passed in).
 */
export function planReverse(
  p: ScanParams,
  inputs: ReverseInputs,
  differentiate: Differentiate,
  { budget = Infinity, dropMasks = false, merge = false, unneeded = false }: { budget?: number; dropMasks?: boolean; merge?: boolean; unneeded?: boolean } = {},
): ReversePlan | null {
  const { body, n } = p;
  const obs = p.layout.obs;
  const { outs: o, derivatives } = cacheFor(body, obs);
  const nobs = obs.length;
  const nin = body.nc + body.nx + body.np;
  const nargs = body.nc + n * body.nx + body.np;
  const skip = unneeded ? unneededInputs(p, inputs) : null;
  const skipped = skip === null ? "" : `|skip${skip.join("")}`;
  const chain = new Uint8Array(PARTS * body.nc);
  const identity = new Uint8Array(PARTS * body.nc);
  const pAcc = new Uint8Array(PARTS * body.np);
  for (let k = 0; k < body.nc; k++) {
    if (body.carryKind[k] === "identity" && !body.literal[k]) for (let part = 0; part < PARTS; part++) identity[2 * k + part] = inputs.acc[2 * k + part];
  }
  for (let q = 0; q < body.np; q++) for (let part = 0; part < PARTS; part++) pAcc[2 * q + part] = inputs.acc[2 * (nargs - body.np + q) + part];
  // the masks of the same states (ids, 0: none), passed from block to block as the written-out sweep passes them
  const im = dropMasks ? undefined : inputs.masks;
  let spent = 0;
  // the masked patterns this plan made: forgotten again where it gives up (their terms hold the body's buffers)
  const made: string[] = [];
  const chainM = new Int32Array(PARTS * body.nc);
  const identityM = new Int32Array(PARTS * body.nc);
  const pAccM = new Int32Array(PARTS * body.np);
  const argM = new Int32Array(PARTS * nargs);
  if (im !== undefined) {
    for (let e = 0; e < PARTS * body.nc; e++) if (identity[e]) identityM[e] = im.acc.get(e) ?? 0;
    for (let e = 0; e < PARTS * body.np; e++) pAccM[e] = im.acc.get(PARTS * (nargs - body.np) + e) ?? 0;
  }
  const src: Sources<number> = {
    chain: (k, part) => chain[2 * k + part],
    identity: (k, part) => identity[2 * k + part],
    p: (q, part) => pAcc[2 * q + part],
    seedObs: (r, s, part) => inputs.seedObs[2 * (r * nobs + s) + part],
    seedFinal: (k, part) => inputs.seedFinal[2 * k + part],
    acc: (a, part) => {
      const b = aliasOf(p, a);
      return b >= 0 ? argPresent[2 * b + part] : inputs.acc[2 * a + part];
    },
    none: 0,
  };
  const msrc: Sources<number> = {
    chain: (k, part) => chainM[2 * k + part],
    identity: (k, part) => identityM[2 * k + part],
    p: (q, part) => pAccM[2 * q + part],
    seedObs: (r, s, part) => im?.seedObs.get(2 * (r * nobs + s) + part) ?? 0,
    seedFinal: (k, part) => im?.seedFinal.get(2 * k + part) ?? 0,
    acc: (a, part) => {
      const b = aliasOf(p, a);
      return b >= 0 ? argM[2 * b + part] : (im?.acc.get(2 * a + part) ?? 0);
    },
    none: 0,
  };
  // masks that differ from iteration to iteration outside (seeds, xs' cotangents): no shortcut over them
  const outsideMasks = im !== undefined && im.seedObs.size + im.acc.size > 0;
  // a leaf starting from another's cotangent: its presence is decided as the sweep goes (no shortcut)
  const aliased = p.stacked?.alias.some((l) => l >= 0) ?? false;
  const patterns: BlockDerivative[] = [];
  const index = new Map<BlockDerivative, number>();
  const at = new Runs(-1);
  const argPresent = new Uint8Array(PARTS * nargs);
  const outs: number[] = [];
  const ins: number[] = [];
  // a pattern's key as a number when its bits fit (a loop of a million iterations makes as many), else a string
  const small = PARTS * (o.w.length + nin) <= 30;
  const numbers = new Map<number, number>();
  let last: number | string | null = null;
  let lastIndex = -1;
  // a middle iteration whose outside inputs (seeds, x's cotangents) are the next one's, starting from the
  // presence that one started from, has its pattern: a steady loop is decided in O(1) per iteration
  let steady = false;
  const sameRow = (flags: Uint8Array, width: number, r: number, r2: number): boolean => {
    for (let e = 0; e < width; e++) if (flags[r * width + e] !== flags[r2 * width + e]) return false;
    return true;
  };
  const sameX = (r: number): boolean => {
    for (let e = 0; e < PARTS * body.nx; e++) {
      if (inputs.acc[PARTS * (body.nc + r * body.nx) + e] !== inputs.acc[PARTS * (body.nc + (r + 1) * body.nx) + e]) return false;
    }
    return true;
  };
  const outside = (r: number): boolean => sameRow(inputs.seedObs, PARTS * nobs, r, r + 1) && sameRow(inputs.seedObs, PARTS * nobs, r - 1, r) && sameX(r);
  const flags = chain.length + identity.length + pAcc.length;
  const before = new Int32Array(2 * flags);
  const snapshot = (into: Int32Array): void => {
    into.set(chain, 0);
    into.set(identity, chain.length);
    into.set(pAcc, chain.length + identity.length);
    into.set(chainM, flags);
    into.set(identityM, flags + chain.length);
    into.set(pAccM, flags + chain.length + identity.length);
  };
  const mids: number[] = [];
  // the first iteration with a seeded written slot (n: none): below it, with no x, nothing comes from outside
  const seeded = inputs.seedObs.indexOf(1);
  const firstSeeded = seeded < 0 ? n : Math.floor(seeded / (PARTS * nobs));
  for (let r = n - 1; r >= 0; r--) {
    if (steady && r > 1 && r < n - 2 && firstSeeded > r + 1 && body.nx === 0) {
      // nothing comes from outside per iteration: the pattern holds down to iteration 1
      at.set(r, lastIndex);
      r = 1;
      continue;
    }
    if (steady && r > 0 && r < n - 2 && !outsideMasks && outside(r)) {
      at.set(r, lastIndex);
      const d = patterns[lastIndex];
      for (let l = 0; l < body.nx; l++) {
        for (let part = 0; part < PARTS; part++) {
          argPresent[2 * (body.nc + r * body.nx + l) + part] = d.present[2 * (body.nc + l) + part];
          argM[2 * (body.nc + r * body.nx + l) + part] = dropMasks ? 0 : d.masks[2 * (body.nc + l) + part];
        }
      }
      continue;
    }
    snapshot(before);
    outs.length = 0;
    ins.length = 0;
    mids.length = 0;
    let bits = 0;
    for (let j = 0; j < o.w.length; j++)
      for (let part = 0; part < PARTS; part++)
        if (outState(o, j, part, r, n, src)) {
          outs.push(2 * j + part);
          mids.push(outState(o, j, part, r, n, msrc));
          bits |= 1 << (2 * j + part);
        }
    for (let k = 0; k < nin; k++)
      if (!body.literal[k])
        for (let part = 0; part < PARTS; part++)
          if (inState(body, o, k, part, r, n, src)) {
            ins.push(2 * k + part);
            mids.push(inState(body, o, k, part, r, n, msrc));
            bits |= 1 << (PARTS * o.w.length + 2 * k + part);
          }
    // a pattern with masks is named by them too (its rules are masked as they come in); one whose
    // carries leave as one vector (merge: any block but the first, whose results leave the sweep) by that
    const merged = merge && r > 0;
    const numeric = small && mids.every((m) => m === 0);
    const name = `${outs.join(",")}|${ins.join(",")}${numeric ? "" : `|${mids.join(",")}`}${merged ? "|merged" : ""}${skipped}`;
    const key: number | string = numeric ? (merged ? -1 - bits : bits) : name;
    if (key !== last && numeric && numbers.has(key as number)) {
      last = key;
      lastIndex = numbers.get(key as number)!;
    } else if (key !== last) {
      if (!numeric && !index.has(derivatives.get(name)!)) {
        spent += Math.max(...mids.map((m) => maskById(m)?.length ?? 0));
        if (spent > budget) {
          for (const m of made) derivatives.delete(m);
          return null;
        }
        if (!derivatives.has(name)) made.push(name);
      }
      let d = derivatives.get(name);
      if (d === undefined) {
        derivatives.set(name, (d = blockDerivative(body, o, [...outs], [...ins], differentiate, { masksIn: [...mids], merge: merged, unneeded: skip })));
      }
      let i = index.get(d);
      if (i === undefined) {
        index.set(d, (i = patterns.length));
        patterns.push(d);
      }
      if (numeric) numbers.set(key as number, i);
      last = key;
      lastIndex = i;
    }
    const d = patterns[lastIndex];
    at.set(r, lastIndex);
    for (let part = 0; part < PARTS; part++) {
      for (let k = 0; k < body.nc; k++) {
        const e = 2 * k + part;
        const m = dropMasks ? 0 : d.masks[e];
        if (body.carryKind[k] === "internal") [chain[e], chainM[e]] = [d.present[e], m];
        else if (body.carryKind[k] === "identity" && !body.literal[k]) [identity[e], identityM[e]] = [d.present[e], m];
      }
      for (let l = 0; l < body.nx; l++) {
        const e = 2 * (body.nc + l) + part;
        argPresent[2 * (body.nc + r * body.nx + l) + part] = d.present[e];
        argM[2 * (body.nc + r * body.nx + l) + part] = dropMasks ? 0 : d.masks[e];
      }
      for (let q = 0; q < body.np; q++) {
        const e = 2 * (body.nc + body.nx + q) + part;
        [pAcc[2 * q + part], pAccM[2 * q + part]] = [d.present[e], dropMasks ? 0 : d.masks[e]];
      }
    }
    const after = new Int32Array(before.length);
    snapshot(after);
    steady = !aliased && after.every((b, e) => b === before[e]);
  }
  for (let part = 0; part < PARTS; part++) {
    for (let k = 0; k < body.nc; k++) {
      const kind = body.carryKind[k];
      const e = 2 * k + part;
      argPresent[e] = kind === "internal" ? chain[e] : kind === "identity" && !body.literal[k] ? identity[e] : 0;
      argM[e] = kind === "internal" ? chainM[e] : kind === "identity" && !body.literal[k] ? identityM[e] : 0;
    }
    for (let q = 0; q < body.np; q++) {
      const e = 2 * (nargs - body.np + q) + part;
      [argPresent[e], argM[e]] = [pAcc[2 * q + part], pAccM[2 * q + part]];
    }
  }
  // an argument that held a cotangent still holds it (with its mask, where no block returned one)
  for (let e = 0; e < PARTS * nargs; e++) {
    if (!argPresent[e] && inputs.acc[e]) argM[e] = im?.acc.get(e) ?? 0;
    argPresent[e] = (argPresent[e] | inputs.acc[e]) & inputs.need[e >> 1];
    if (!argPresent[e]) argM[e] = 0;
  }
  return { patterns, at, present: argPresent, masks: argM };
}
