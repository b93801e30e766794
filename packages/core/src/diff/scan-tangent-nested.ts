/**
 * @file A scan's forward sweep emitted where it will be differentiated again (`grad` of
 * `jvp`, a jvp traced inside another transformation): scans again, so that the tangent of
 * a scan is a scan and the enclosing trace keeps a few instructions for it.
 *
 * Written out, the forward sweep is the loop's blocks placed first (place.ts), then the
 * tangent rules of every instruction in order: the rules of iteration 0, of iteration 1…,
 * reading the blocks' variables. A derivative to be differentiated again must keep that
 * structure to give the loop's numbers: a forward variable read by rules of its own
 * iteration and of the next is one variable whose cotangent sums the rules' contributions
 * before the block's own (a scan of the body and its rules together would add them in
 * another order). So, as for a reverse sweep (scan-nested.ts):
 *
 * - the loop's scan is kept, writing per iteration the body's variables the tangent rules
 *   read (`withTangentResiduals`);
 * - the tangent rules of the steady iterations are a scan of their own, over the iterations
 *   upward, whose carry is the carries' tangents and which reads each iteration's forward
 *   values from the loop scan's packed value (a stacked scan, scan-ops.ts, stepping forward);
 * - the first iteration (whose carry comes from outside the loop), iterations whose
 *   pattern of present tangents is not steady yet, iterations where the loop written out
 *   folds a rule on a value of the data (lastFold's, upward) and short runs are placed as
 *   the loop written out places them: their rules, reading the forward values by `scanOut`.
 *
 * The instructions are those of the loop written out, in its order, applied per
 * iteration: the numbers are the same to the last bit, and the next differentiation of
 * this term (scan-reverse.ts, scan-stacked.ts, scan-nested.ts) sees two scans.
 */
import { ARITY, CONST, FIRST_PRIMITIVE, INPUT } from "../trace/opcodes.js";
import { Body } from "../trace/body.js";
import { hasScans, layoutOf, scanCodes, scanOutputs, type ScanOutParams, type ScanParams } from "../trace/scan-ops.js";
import { Tape } from "../trace/tape.js";
import { TraceTerm } from "../trace/term.js";
import type { Trace } from "../trace/tracer.js";
import { REAL, type Shape } from "../structure.js";
import type { Transform } from "./place.js";
import { copyRules, foldsAt, forwardValues, nestable, withReads, type PlacedScan } from "./scan-nested.js";
import { patternOf, type BlockTangent, type ScanTangents } from "./scan-tangent.js";

/** Iterations of the steady pattern from which the tangent rules run as a scan rather than placed block by block. */
const STACK_FROM = 4;

const tuple = (n: number): Shape => ({ kind: "tuple", items: Array.from({ length: n }, () => REAL) });

/**
 * Whether a scan's forward sweep emitted into an enclosing trace can be scans: as for its
 * reverse sweep (scan-nested.ts `nestable`: carries computed, passed on or literal), a body
 * of reals, xs that are data (a traced x's tangent per iteration is not read from one scan),
 * more than one iteration, no scan inside the body.
 */
export function tangentNestable(p: ScanParams): boolean {
  const { body } = p;
  for (let l = 0; l < body.nx; l++) if (!body.literal[body.nc + l]) return false;
  return p.n > 1 && body.reals && nestable(p) && !hasScans(body.term.tape);
}

/** Every input of the body whose tangent can be present (not a literal). */
function fullPattern(body: Body): Uint8Array {
  return Uint8Array.from(body.literal, (l) => 1 - l).fill(0, body.nc, body.nc + body.nx);
}

/** The body variables (below `B`) the rules of a block tangent read, in order; null when a tangent is a forward value itself. */
function readByTangent(t: BlockTangent, B: number): number[] | null {
  const tape = t.term.tape;
  const seen = new Uint8Array(B);
  const read = (v: number): void => {
    if (v < B && tape.op[v] !== CONST) seen[v] = 1;
  };
  for (let i = B; i < tape.length; i++) {
    if (tape.op[i] < FIRST_PRIMITIVE) continue;
    read(tape.a[i]);
    if (ARITY[tape.op[i]] === 2) read(tape.b[i]);
  }
  const atoms = t.term.output.atoms;
  for (let j = t.primalCount; j < atoms.length; j++) if (atoms[j] < B) return null;
  const out: number[] = [];
  seen.forEach((s, v) => s && out.push(v));
  return out;
}

/** The scan's params writing, besides its own, the body variables its tangent rules read (every tangent present: scan-nested.ts `withReads`). */
export function withTangentResiduals(p: ScanParams, pushforward: Transform): ScanParams | null {
  if (!tangentNestable(p)) return null;
  const read = readByTangent(patternOf(p.body, fullPattern(p.body), p.layout.obs, pushforward), p.body.length);
  return read === null ? null : withReads(p, read);
}

/** A steady pattern's tangent rules as a scan's body. */
interface Rules {
  readonly body: Body;
  /** Per state (carry leaf of the rules): the loop's carry leaf whose tangent it is. */
  readonly states: readonly number[];
  /** Per x leaf: the forward variable it reads, and the carry leaf k when it is carry-in k (read as carry′ k one iteration before). */
  readonly xs: readonly { readonly v: number; readonly carry: number }[];
  /** Per captured leaf: a body input read alike at every iteration (≥ 0), or the tangent of input −1 − k. */
  readonly ps: readonly number[];
  /** Per obs tangent the pattern has: its index among the rules' y leaves (-1: the symbolic zero). */
  readonly ys: Int32Array;
}

const rulesOf = new WeakMap<BlockTangent, Rules | null>();

function rules(t: BlockTangent, body: Body): Rules | null {
  if (rulesOf.has(t)) return rulesOf.get(t)!;
  const made = makeRules(t, body);
  rulesOf.set(t, made);
  return made;
}

/** Pattern t's rules as a scan's body, or null where its carries' tangents are not passed on as they come in. */
function makeRules(t: BlockTangent, body: Body): Rules | null {
  const { nc, nx } = body;
  const B = body.length;
  const nin = nc + nx + body.np;
  const states: number[] = [];
  for (let k = 0; k < nc; k++) {
    if (body.carryKind[k] !== "internal") continue;
    const comesIn = t.ins.includes(k);
    if (comesIn !== (t.carryPresent[k] === 1)) return null;
    if (comesIn) states.push(k);
  }
  const read = readByTangent(t, B);
  if (read === null) return null;
  const from = t.term.tape;
  const tape = new Tape();
  const map = new Int32Array(from.length).fill(-1);
  const stateVar = new Int32Array(t.ins.length);
  states.forEach((k, j) => (stateVar[t.ins.indexOf(k)] = tape.input(j, 0)));
  const xs: { v: number; carry: number }[] = [];
  const ps: number[] = [];
  const alike = (k: number): boolean => k >= nc + nx || (k >= 0 && k < nc && body.carryKind[k] === "identity");
  for (const v of read) {
    const k = from.op[v] === INPUT ? from.a[v] : -1;
    if (alike(k)) continue;
    map[v] = tape.input(states.length + xs.length, from.val[v]);
    xs.push({ v, carry: k >= 0 && k < nc ? k : -1 });
  }
  const base = states.length + xs.length;
  for (const v of read) {
    const k = from.op[v] === INPUT ? from.a[v] : -1;
    if (!alike(k)) continue;
    // a literal passed on unchanged is a constant of the loop written out (its rules fold on it): placed instead
    if (body.literal[k]) return null;
    map[v] = tape.input(base + ps.length, from.val[v]);
    ps.push(k);
  }
  t.ins.forEach((k, j) => {
    if (states.includes(k)) return;
    stateVar[j] = tape.input(base + ps.length, 0);
    ps.push(-1 - k);
  });
  copyRules(t, B, nin, tape, map, stateVar);
  const atoms = t.term.output.atoms;
  const carryAt = (k: number): number => {
    let j = t.primalCount;
    for (let kk = 0; kk < k; kk++) if (t.carryPresent[kk]) j++;
    return atoms[j];
  };
  const results = states.map((k) => map[carryAt(k)]);
  const ys = new Int32Array(t.obsPresent.length).fill(-1);
  const yAtoms: number[] = [];
  let j = t.primalCount + t.carryPresent.reduce((s, c) => s + c, 0);
  t.obsPresent.forEach((present, s) => {
    if (!present) return;
    ys[s] = yAtoms.length;
    yAtoms.push(map[atoms[j++]]);
  });
  const atomsOut = [...results, ...yAtoms];
  const term = new TraceTerm(tape, [{ name: "in", shape: tuple(0), atoms: [] }], { shape: tuple(atomsOut.length), atoms: atomsOut });
  // a value of the data alone is a literal of the loop written out, as in the body: the rules' folds on it are decisions
  const literal = new Uint8Array(base + ps.length);
  xs.forEach(({ v }, i) => (literal[states.length + i] = body.literalOnly[v]));
  const yShape = yAtoms.length > 0 ? tuple(yAtoms.length) : null;
  const rb = new Body(term, states.length, xs.length, ps.length, literal, tuple(states.length), tuple(xs.length), yShape, [], false);
  if (!rb.carryKind.every((kind) => kind === "internal")) return null;
  return { body: rb, states, xs, ps, ys };
}

/**
 * The scans of a term placed in an enclosing trace (kept by `withTangentResiduals`), pushed
 * forward as scans; null when the term has none.
 */
export function nestedScanTangents(term: TraceTerm, sink: Trace, at: Int32Array, pushforward: Transform): ScanTangents | null {
  if (!hasScans(term.tape)) return null;
  const tape = term.tape;
  const codes = scanCodes();
  const outputsOf = scanOutputs(tape);
  return {
    at(i, dt) {
      const code = tape.op[i];
      if (code === codes.scanOut) return true;
      if (code !== codes.scan) return false;
      emitNestedTangent({ p: tape.params(i) as ScanParams, args: tape.args(i), outputs: outputsOf.get(i) ?? [], tape, sink, at, self: i, dt, pushforward });
      return true;
    },
  };
}

/** A scan instruction placed in a sink that will be differentiated again, whose forward sweep is to be emitted there. */
interface NestedTangentCall extends PlacedScan {
  readonly p: ScanParams;
  readonly dt: Int32Array;
  readonly pushforward: Transform;
}

/** Emit the forward sweep of scan instruction `self` into a sink that will be differentiated again (see the file's comment). */
function emitNestedTangent({ p, args, outputs, tape, sink, at, self, dt, pushforward }: NestedTangentCall): void {
  const { body, n, layout } = p;
  const { nc, nx, np } = body;
  const codes = scanCodes();
  const width = layout.width;
  const pArg = (q: number): number => nc + n * nx + q;
  const values = forwardValues(p, { args, outputs, tape, sink, at, self });
  const { packed, slotOffset, input } = values;
  // the outputs wanting a tangent: per iteration, (output, obs index); the final carry's leaves
  const wanted = new Map<number, { j: number; s: number }[]>();
  const finals: { j: number; k: number }[] = [];
  const obsT: number[] = [];
  for (const j of outputs) {
    const q = tape.params(j) as ScanOutParams;
    if (q.held) continue;
    if (q.offset >= n * width) {
      finals.push({ j, k: layout.carryOffset.indexOf(q.offset) });
      continue;
    }
    const r = Math.floor(q.offset / width);
    const v = layout.obs[layout.obsOffset.indexOf(q.offset - r * width)];
    if (!obsT.includes(v)) obsT.push(v);
    const list = wanted.get(r) ?? [];
    list.push({ j, s: obsT.indexOf(v) });
    wanted.set(r, list);
  }
  const obs = Int32Array.from(obsT);
  // the carries' tangents passed from block to block (-1: the symbolic zero); the others' are fixed
  const chain = Int32Array.from({ length: nc }, (_, k) => (body.literal[k] ? -1 : dt[args[k]]));
  const fixedTangent = (k: number): number => (k < nc ? dt[args[k]] : k < nc + nx ? -1 : dt[args[pArg(k - nc - nx)]]);
  const tangentOf = (k: number): number => (k < nc && body.carryKind[k] === "internal" ? chain[k] : fixedTangent(k));
  const present = new Uint8Array(nc + nx + np);
  const patternNow = (): BlockTangent => {
    for (let k = 0; k < present.length; k++) present[k] = k < nc + nx && body.literal[k] ? 0 : tangentOf(k) >= 0 ? 1 : 0;
    return patternOf(body, present, obs, pushforward);
  };
  const setWanted = (r: number, tangentOfObs: (s: number) => number): void => {
    for (const { j, s } of wanted.get(r) ?? []) dt[j] = tangentOfObs(s);
  };

  /** Block r's rules placed, reading the forward values by scanOut. */
  const place = (t: BlockTangent, r: number): void => {
    const from = t.term.tape;
    const B = body.length;
    const nin = nc + nx + np;
    const map = new Int32Array(from.length).fill(-1);
    for (const v of readByTangent(t, B) ?? []) map[v] = from.op[v] === INPUT ? input(r, from.a[v]) : values.forward(r, v);
    for (let i = 0; i < from.length; i++) {
      const code = from.op[i];
      if (code === CONST) map[i] = sink.constant(from.val[i]);
      else if (i < B) continue;
      else if (code === INPUT) map[i] = tangentOf(t.ins[from.a[i] - nin]);
      else if (code >= FIRST_PRIMITIVE) map[i] = sink.record(code, map[from.a[i]], ARITY[code] === 2 ? map[from.b[i]] : 0);
    }
    const atoms = t.term.output.atoms;
    let j = t.primalCount;
    const next = chain.slice();
    for (let k = 0; k < nc; k++) {
      if (body.carryKind[k] !== "internal") continue;
      next[k] = t.carryPresent[k] ? map[atoms[j++]] : -1;
    }
    const ys = new Int32Array(obs.length).fill(-1);
    for (let s = 0; s < obs.length; s++) if (t.obsPresent[s]) ys[s] = map[atoms[j++]];
    chain.set(next);
    setWanted(r, (s) => ys[s]);
  };

  /** Where the rules' x leaf i reads at iteration r. */
  const xAt = (rl: Rules, i: number, r: number): number => {
    const { v, carry } = rl.xs[i];
    return carry >= 0 ? slotOffset(r - 1, body.carryOut[carry]) : slotOffset(r, v);
  };

  /** Iterations lo to hi as one scan of the rules, reading the forward values from the loop scan's packed value. */
  const run = (rl: Rules, lo: number, hi: number): void => {
    const m = hi - lo + 1;
    const yVars = rl.body.yOut;
    const distinctYs = Int32Array.from(new Set(yVars));
    const rp: ScanParams = {
      body: rl.body,
      n: m,
      start: 0,
      layout: layoutOf(rl.body, distinctYs, m),
      reportTies: false,
      checkpoint: p.checkpoint,
      caller: p.caller,
      ...(p.nestsOnly ? { nestsOnly: true } : {}),
      stash: null,
      carries: null,
      stacked: { at: Int32Array.from(rl.xs, (_x, i) => xAt(rl, i, lo)), step: width, alias: aliasOf(rl, body) },
    };
    const states = rl.states.map((k) => chain[k]);
    const ps = rl.ps.map((k) => (k >= 0 ? input(lo, k) : tangentOf(-1 - k)));
    const scanVar = sink.recordOp(codes.scan, [...states, at[self], ...ps], rp);
    const out = (offset: number): number => sink.recordOp(codes.scanOut, [scanVar], { offset, dims: [], held: false });
    rl.states.forEach((k, j) => (chain[k] = out(rp.layout.carryOffset[j])));
    for (let r = lo; r <= hi; r++) {
      setWanted(r, (s) => (rl.ys[s] < 0 ? -1 : out((r - lo) * rp.layout.width + rp.layout.obsOffset[distinctYs.indexOf(yVars[rl.ys[s]])])));
    }
  };

  let r = 0;
  while (r < n) {
    const t = patternNow();
    let rl = r > 0 && n - r >= STACK_FROM ? rules(t, body) : null;
    let hi = n - 1;
    if (rl !== null) {
      // the run ends below an iteration where the loop written out folds a rule on the data
      const value = (i: number, at: number): number => packed[xAt(rl!, i, at)];
      if (rl.body.folds.length > 0) for (let f = r; f <= hi; f++) if (foldsAt(rl.body, value, f)) hi = f - 1;
      const args = [...rl.states.map((k) => chain[k]), ...rl.ps.map((k) => (k >= 0 ? input(r, k) : tangentOf(-1 - k)))];
      // a scan's arguments are distinct variables (a cotangent held by one is its own), but for
      // literals, which hold none (a one-hot direction's zeros are one literal)
      const traced = args.filter((v) => sink.tape.op[v] !== CONST);
      if (hi - r + 1 < STACK_FROM || new Set(traced).size !== traced.length) rl = null;
    }
    if (rl !== null) {
      run(rl, r, hi);
      r = hi + 1;
    } else place(t, r++);
  }
  for (const { j, k } of finals) dt[j] = body.literal[k] ? -1 : tangentOf(k);
}

/**
 * Per x leaf of the rules: the leaf reading the same element at the iteration after (a
 * forward value read as itself at r and as carry-in at r + 1: its cotangent is one sum,
 * Stacked.alias), or -1 (a literal has no cotangent to share).
 */
function aliasOf(rl: Rules, body: Body): Int32Array {
  const { nc, literal } = rl.body;
  return Int32Array.from(rl.xs, ({ v, carry }, j) => {
    if (carry >= 0 || literal[nc + j]) return -1;
    const k = body.carryOut.indexOf(v);
    return k < 0 ? -1 : rl.xs.findIndex((x) => x.carry === k);
  });
}
