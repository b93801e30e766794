/**
 * @file A scan's reverse sweep emitted where it will be differentiated again (`grad` of
 * `grad`, `hessian`, `hvp`, a scan inside an inner `grad`): scans again, so that the
 * derivative of a scan is a scan and the enclosing trace keeps a few instructions for it.
 *
 * Written out, the sweep is the forward blocks (one per iteration) followed by the reverse
 * blocks from the last iteration to the first, whose rules read the forward blocks'
 * variables. A derivative that is to be differentiated again must keep that structure to
 * give the loop's numbers: each forward variable the rules read is one variable, whose
 * cotangent gathers the rules' contributions and then the forward block's, in that order
 * (recomputing it inside the reverse blocks would split that sum in two). So:
 *
 * - the forward scan writes, per iteration, the body's variables that the rules read
 *   (`withResiduals`: the values of the paper's evaluation trace the derivative term
 *   mentions), as it writes its ys;
 * - the reverse sweep is a scan over the iterations from the last to the first whose body
 *   is the rules alone (the block derivative `D` of reverse-plan.ts without the body's own
 *   instructions in front); its carry is the cotangents passed from block to block (the
 *   carry's, and the running sums of captured values), and it reads each iteration's
 *   forward values from the forward scan's packed value (a stacked scan, scan-ops.ts);
 * - the first and last iterations of the sweep (whose cotangents come from outside the
 *   loop), iterations seeded from outside (a y used), and short runs are placed as the loop
 *   written out places them: their rules, reading the forward values by `scanOut`.
 *
 * xs that are data (numbers) are literals of the loop written out: the forward scan writes
 * them, and what the body computes from them alone, where the rules read them, and the
 * rules' body marks them literal, as the body does. Where the loop written out would fold a
 * rule on such a value (x · 1, x + (−0), x⁰: the tape's exact folds, whose derivatives are
 * not the instruction's), the run of rules stops and that block is placed, the value a
 * literal there: the tape folds it as the loop written out does (`lastFold`).
 *
 * xs that are traced values are written alike where the rules read them (an element that is
 * an x is read as the x's variable by those who read it again: scan-x-elements.ts), and the
 * scan of rules returns each iteration's x cotangent as its y: the rules' instruction that
 * computes it, or the chained cotangent it is (the carry′ written one iteration before).
 *
 * The instructions are those of the loop written out, in its order, applied per
 * iteration: the numbers are the same to the last bit, and the next differentiation of
 * this term (scan-reverse.ts, or this file again) sees a scan whose body is the rules.
 */
import { size, type Dims } from "@wengert/ops";
import { ARITY, CODE, CONST, FIRST_PRIMITIVE, INPUT, IS_TENSOR_OP } from "../trace/opcodes.js";
import { copyInstruction } from "../trace/copy-instruction.js";
import { ownedCopy } from "../trace/host-tensor.js";
import { Body, folds } from "../trace/body.js";
import { Interpreter } from "../eval/interpreter.js";
import { hasScans, layoutOf, scanCodes, type ScanParams } from "../trace/scan-ops.js";
import { Tape } from "../trace/tape.js";
import type { Trace } from "../trace/tracer.js";
import { TraceTerm } from "../trace/term.js";
import { REAL, type Shape } from "../structure.js";
import { cacheFor, fullDerivative, inState, outState, PARTS, readByRules, type BlockDerivative, type Differentiate, type Sources } from "./reverse-plan.js";
import { gather, planFor, type ScanReverseCall, type Where } from "./scan-cotangents.js";
import { maskById } from "./cotangent-mask.js";

/** Iterations of one pattern from which the reverse sweep is a scan rather than placed block by block. */
const STACK_FROM = 4;

/**
 * Whether the reverse sweep of a scan can be emitted as scans: a body of reals, xs that are
 * data (literal leaves: numbers, whose values the forward scan writes where the rules read
 * them) or traced values (written alike; the scan of rules returns each iteration's x
 * cotangent as its y), every carry leaf computed, passed on, or a literal throughout (a
 * time counter: written as data is), and enough iterations;
 * or one iteration without a carry (checkpoint(f): its block one scan of its rules,
 * scan-single.ts). A body on tensors nests where no input is a literal (its carries and xs
 * traced: no fold on data to stop a run at) and no scan is inside it; the rules' carry then
 * holds a tensor cotangent's dense sum and its pieces apart, as the written-out sweep keeps
 * them until the variable is settled. Where the written-out sweep masks a cotangent (a tensor
 * the loop returns read by an index, a slice or a where after it, a `where` in the body, slices
 * that leave elements out), the mask passes from block to block with it (cotangent-mask.ts): a
 * block derivative per pattern of incoming masks, the iterations placed one by one until the
 * masks settle (a block returns the masks it was given), a scan of its rules from there. Other
 * scans are written out (unroll.ts).
 */
export function nestable(p: ScanParams): boolean {
  const { body } = p;
  const { nc, nx } = body;
  if (p.stacked !== undefined || body.opaque) return false;
  if (!body.reals && (body.literal.some((l) => l !== 0) || hasScans(body.term.tape))) return false;
  if (p.n === 1 && nc === 0) return body.reals;
  return (
    p.n >= STACK_FROM + 2 &&
    body.literal.every((l, k) => k >= nc || l === +(body.carryKind[k] === "literal")) &&
    body.carryKind.every((k) => k === "internal" || k === "identity" || k === "literal")
  );
}

/**
 * The scan's params writing, besides its own, the body variables the rules of its
 * derivative read (carries as their carry′ one iteration before, x's leaves as they come in).
 */
export function withResiduals(p: ScanParams, differentiate: Differentiate): ScanParams {
  return withReads(p, readByRules(fullDerivative(p.body, p.layout.obs, differentiate), p.body));
}

/**
 * The scan's params writing, besides its own, the body variables `read` (a derivative's
 * rules read them: carries as their carry′ one iteration before, x's literal leaves as they come in).
 */
export function withReads(p: ScanParams, read: readonly number[]): ScanParams {
  const { body } = p;
  const tape = body.term.tape;
  const obs = [...p.layout.obs];
  const add = (v: number): void => {
    if (!obs.includes(v)) obs.push(v);
  };
  for (const v of read) {
    const k = tape.op[v] === INPUT ? tape.a[v] : -1;
    if (k < 0 || (k >= body.nc && k < body.nc + body.nx)) add(v);
    else if (k < body.nc && body.carryKind[k] !== "identity") add(body.carryOut[k]);
  }
  if (obs.length === p.layout.obs.length) return p;
  return { ...p, layout: layoutOf(body, Int32Array.from(obs), p.n), stash: null, carries: null };
}

/** A pattern's rules as a body of its own: which cotangents it carries, which forward values it reads per iteration. */
interface Rules {
  readonly body: Body;
  /** Per carry leaf: the state it is (see State). */
  readonly states: readonly State[];
  /** Per x leaf: the forward variable it reads, and whether it is carry-in k's (read as carry′ k one iteration before). */
  readonly xs: readonly { readonly v: number; readonly carry: number }[];
  /** Per captured leaf: the body input it is (an identity carry's value or a captured value). */
  readonly ps: readonly number[];
  /** Per carry leaf of the loop: its carry′ variable. */
  readonly outOf: readonly number[];
  /** Per y leaf: the traced x leaf of the loop whose cotangent it is (one per iteration of the sweep). */
  readonly ys: readonly number[];
}

/**
 * A cotangent passed between blocks: carry leaf k's (chained or running), or captured value
 * q's running sum; `part` 0 its dense sum, 1 a tensor's pieces (reverse-plan.ts PARTS).
 */
type State = ({ readonly kind: "chain" | "identity"; readonly k: number } | { readonly kind: "p"; readonly q: number }) & { readonly part: number };

const rulesOf = new WeakMap<BlockDerivative, Rules | null>();
const leafShape = (dims: Dims): Shape => (dims.length === 0 ? REAL : { kind: "tensor", dims, container: "float64array" });
const tuple = (dims: readonly Dims[]): Shape => ({ kind: "tuple", items: dims.map(leafShape) });

/** An input of a rules' tape: a real, or a tensor of `dims` (its value a placeholder: the rules' tape is a term, never evaluated as traced). */
function inputOf(tape: Tape, index: number, dims: Dims): number {
  return dims.length === 0 ? tape.input(index, 0) : tape.tensorInput(index, { dims, data: new Float64Array(size(dims)) });
}

/** Pattern d's rules as a scan's body, or null where its cotangents are not passed on as they come in (not a steady run). */
function rules(d: BlockDerivative, p: ScanParams): Rules | null {
  if (rulesOf.has(d)) return rulesOf.get(d)!;
  const made = makeRules(d, p);
  rulesOf.set(d, made);
  return made;
}

function makeRules(d: BlockDerivative, p: ScanParams): Rules | null {
  const { body } = p;
  const o = cacheFor(body, p.layout.obs).outs;
  const nin = body.nc + body.nx + body.np;
  const states: State[] = [];
  for (const e of d.outs) {
    const k = o.carry[e >> 1];
    if (k < 0) return null;
    states.push({ kind: "chain", k, part: e & 1 });
  }
  for (const e of d.ins) {
    const k = e >> 1;
    const part = e & 1;
    if (k < body.nc && body.carryKind[k] === "identity") states.push({ kind: "identity", k, part });
    else if (k >= body.nc + body.nx) states.push({ kind: "p", q: k - body.nc - body.nx, part });
    else return null;
  }
  // what each state becomes: the result for its input; besides, only traced x leaves' dense cotangents (the ys) come out
  const resultOf = (s: State): number => 2 * (s.kind === "p" ? body.nc + body.nx + s.q : s.k) + s.part;
  const wanted = states.map(resultOf);
  const others = d.results.filter((e) => !wanted.includes(e));
  if (others.some((e) => (e & 1) !== 0)) return null;
  const ys = others.map((e) => (e >> 1) - body.nc);
  if (!wanted.every((e) => d.results.includes(e)) || ys.some((l) => l < 0 || l >= body.nx || body.literal[body.nc + l])) return null;
  const from = d.term.tape;
  const B = body.length;
  const tape = new Tape();
  const map = new Int32Array(from.length).fill(-1);
  const xs: { v: number; carry: number }[] = [];
  const ps: number[] = [];
  const read = readByRules(d, body);
  // inputs: the states, then the forward values read per iteration (x's leaves among them), then those read alike at every iteration
  const stateDims = states.map((s) => body.inputDims[s.kind === "p" ? body.nc + body.nx + s.q : s.k]);
  const stateVar = new Int32Array(states.length);
  states.forEach((_s, j) => (stateVar[j] = inputOf(tape, j, stateDims[j])));
  const alike = (k: number): boolean => k >= body.nc + body.nx || (k >= 0 && k < body.nc && body.carryKind[k] === "identity");
  for (const v of read) {
    const k = from.op[v] === INPUT ? from.a[v] : -1;
    if (alike(k)) continue;
    map[v] = inputOf(tape, states.length + xs.length, from.dims(v));
    xs.push({ v, carry: k < body.nc ? k : -1 });
  }
  for (const v of read) {
    const k = from.op[v] === INPUT ? from.a[v] : -1;
    if (!alike(k)) continue;
    map[v] = inputOf(tape, states.length + xs.length + ps.length, from.dims(v));
    ps.push(k);
  }
  copyRules(d, B, nin, tape, map, stateVar);
  const results = states.map((s) => map[d.term.output.atoms[d.results.indexOf(resultOf(s))]]);
  const yAtoms = ys.map((l) => map[d.term.output.atoms[d.results.indexOf(2 * (body.nc + l))]]);
  const yDims = ys.map((l) => body.inputDims[body.nc + l]);
  const shape: Shape = ys.length === 0 ? tuple(stateDims) : { kind: "tuple", items: [tuple(stateDims), tuple(yDims)] };
  const term = new TraceTerm(tape, [{ name: "in", shape: { kind: "tuple", items: [] }, atoms: [] }], { shape, atoms: [...results, ...yAtoms] });
  // a value of the data alone (x's leaves, what the body computes from them) is a literal of the loop
  // written out, as in the body: the rules' folds on it are decisions (lastFold), its cotangent none
  const literal = new Uint8Array(states.length + xs.length + ps.length);
  xs.forEach(({ v }, j) => (literal[states.length + j] = body.literalOnly[v]));
  const yShape = ys.length === 0 ? null : tuple(yDims);
  const xDims = xs.map(({ v }) => from.dims(v));
  const rb = new Body(term, states.length, xs.length, ps.length, literal, tuple(stateDims), tuple(xDims), yShape, [], false);
  if (!rb.carryKind.every((k) => k === "internal" || k === "identity")) return null;
  // a fold on data is found per iteration for reals alone (lastFold); a tensor x sliced by a rule
  // would take pieces, which the forward scan's packed cotangent does not hold (scan-stacked.ts)
  if (!rb.reals && (rb.folds.length > 0 || slicesX(rb))) return null;
  // an x cotangent is computed, or a chained cotangent passed on (read as the carry′ written one iteration before)
  if (!rb.ySource.every((y) => y.kind === "var" || (y.kind === "carry" && rb.carryKind[y.k] === "internal"))) return null;
  return { body: rb, states, xs, ps, outOf: body.carryOut, ys };
}

/** Whether a rule of a rules' body slices or indexes one of its x leaves (whose cotangent then has pieces). */
function slicesX(rb: Body): boolean {
  const tape = rb.term.tape;
  const isX = (v: number): boolean => tape.op[v] === INPUT && tape.a[v] >= rb.nc && tape.a[v] < rb.nc + rb.nx;
  for (let i = 0; i < tape.length; i++) if ((tape.op[i] === CODE.slice || tape.op[i] === CODE.index) && tape.args(i).some(isX)) return true;
  return false;
}

/**
 * D's rules (its instructions past the body's B) copied into `tape`, in order: map[v] gives
 * the body variables they read; the states are D's inputs past the body's nin (its seeds,
 * then its inputs' starting cotangents), `stateVar` theirs in `tape`.
 */
export function copyRules(d: Pick<BlockDerivative, "term">, B: number, nin: number, tape: Tape, map: Int32Array, stateVar: Int32Array): void {
  const from = d.term.tape;
  for (let v = 0; v < B; v++) if (from.op[v] === CONST && map[v] < 0) map[v] = copyInstruction(from, v, tape, map);
  for (let i = B; i < from.length; i++) {
    const code = from.op[i];
    if (code === INPUT) map[i] = stateVar[from.a[i] - nin];
    else if (code === CONST || (code >= FIRST_PRIMITIVE && from.x[i] !== 0)) map[i] = copyInstruction(from, i, tape, map);
    else if (code >= FIRST_PRIMITIVE) map[i] = tape.append(code, map[from.a[i]], ARITY[code] === 2 ? map[from.b[i]] : 0);
  }
}

/** Instruction i of a derivative's tape recorded in the sink, its arguments through `map` (a real's, an elementwise or a tensor primitive). */
function recordIn(sink: Trace, from: Tape, i: number, map: Int32Array): number {
  const code = from.op[i];
  if (code === CONST) return from.x[i] === 0 ? sink.constant(from.val[i]) : sink.tape.tensorConstant(ownedCopy({ dims: from.dims(i), data: from.buf(i) }));
  if (from.x[i] === 0) return sink.record(code, map[from.a[i]], ARITY[code] === 2 ? map[from.b[i]] : 0);
  const args = from.args(i).map((v) => map[v]);
  return IS_TENSOR_OP[code] ? sink.recordOp(code, args, from.params(i)) : sink.record(code, args[0], args[1] ?? 0);
}

/**
 * Per x leaf: the leaf that reads its element one iteration of the sweep before (carry-in k
 * at r is carry′ k at r − 1), or -1 (a literal has no cotangent to share).
 */
function aliasOf(rl: Rules): Int32Array {
  const { nc, literal } = rl.body;
  return Int32Array.from(rl.xs, ({ carry }, j) =>
    carry < 0 || literal[nc + j] ? -1 : rl.xs.findIndex((x) => x.carry < 0 && x.v === rl.outOf[carry]),
  );
}

/**
 * Emit the reverse sweep of scan instruction `self` (params p, its args and outputs'
 * instructions in the term's tape) into a sink that will be differentiated again: see
 * the file's comment.
 */
export function emitNested(call: ScanReverseCall): void {
  const { p, args, outputs, tape, where: { sink, at, self }, state, active, differentiate } = call;
  const { body, n, layout } = p;
  const { nc, nx, np } = body;
  const codes = scanCodes();
  const { inputs, seedAtoms, held } = gather(p, args, outputs, tape, state, active);
  const plan = planFor(p, inputs, differentiate);
  const o = cacheFor(body, layout.obs).outs;
  /** The argument of captured value q (after the carry and every iteration's x). */
  const pArg = (q: number): number => nc + n * nx + q;
  const width = layout.width;
  const { packed, slotOffset, forward, input } = forwardValues(p, { args, outputs, tape, sink, at, self });
  // the cotangents passed from block to block by part (2k + part; -1: the symbolic zero), as scan-reverse-run.ts keeps them
  const chain = new Int32Array(PARTS * nc).fill(-1);
  const identity = Int32Array.from({ length: PARTS * nc }, (_, e) => (body.carryKind[e >> 1] === "identity" ? held[e] : -1));
  const pAcc = Int32Array.from({ length: PARTS * np }, (_, e) => held[PARTS * pArg(e >> 1) + (e & 1)]);
  const src: Sources<number> = {
    chain: (k, part) => chain[2 * k + part],
    identity: (k, part) => identity[2 * k + part],
    p: (q, part) => pAcc[2 * q + part],
    seedObs: (r, s, part) => (s < 0 ? -1 : (seedAtoms.get(2 * (r * width + layout.obsOffset[s]) + part) ?? -1)),
    seedFinal: (k, part) => seedAtoms.get(2 * layout.carryOffset[k] + part) ?? -1,
    acc: (a, part) => held[2 * a + part],
    none: -1,
  };
  const statesAt = (d: BlockDerivative, r: number): number[] => [
    ...d.outs.map((e) => outState(o, e >> 1, e & 1, r, n, src)),
    ...d.ins.map((e) => inState(body, o, e >> 1, e & 1, r, n, src)),
  ];
  const settle = (d: BlockDerivative, got: (e: number) => number): void => {
    for (let e = 0; e < PARTS * nc; e++) {
      const c = d.present[e] ? got(e) : -1;
      if (body.carryKind[e >> 1] === "internal") chain[e] = c;
      else identity[e] = c;
    }
    for (let e = 0; e < PARTS * np; e++) pAcc[e] = d.present[PARTS * (nc + nx) + e] ? got(PARTS * (nc + nx) + e) : -1;
  };
  /** The result part e of block derivative d placed (-1: not present). */
  const partOf = (d: BlockDerivative, e: number, got: (e: number) => number): number => (d.present[e] ? got(e) : -1);
  // iterations seeded from outside (a y used), which a run does not cover: from the last down
  const seeded = [...new Set([...seedAtoms.keys()].filter((e) => e >> 1 < n * width).map((e) => Math.floor((e >> 1) / width)))].sort((x, y) => y - x);
  let nextSeeded = 0;

  /** Block r placed: its rules, reading the forward values by scanOut. */
  const place = (d: BlockDerivative, r: number): void => {
    const from = d.term.tape;
    const B = body.length;
    const states = statesAt(d, r);
    const map = new Int32Array(from.length).fill(-1);
    for (const v of readByRules(d, body)) map[v] = from.op[v] === INPUT ? input(r, from.a[v]) : forward(r, v);
    const nin = nc + nx + np;
    for (let i = 0; i < from.length; i++) {
      const code = from.op[i];
      if (code === CONST) map[i] = recordIn(sink, from, i, map);
      else if (i < B) continue;
      else if (code === INPUT) map[i] = states[from.a[i] - nin];
      else if (code >= FIRST_PRIMITIVE) map[i] = recordIn(sink, from, i, map);
    }
    const out = d.term.output.atoms;
    const got = (e: number): number => map[out[d.results.indexOf(e)]];
    settle(d, got);
    // traced x leaves (a checkpoint's arguments: scan-single.ts) take their cotangents here
    for (let l = 0; l < nx; l++) {
      const a = nc + r * nx + l;
      const e = 2 * (nc + l);
      if ((d.present[e] || d.present[e + 1]) && inputs.need[a]) {
        state.replace(args[a], partOf(d, e, got), partOf(d, e + 1, got), maskById(d.masks[e]), maskById(d.masks[e + 1]));
      }
    }
  };

  /** Where the rules' x leaf j reads at iteration r. */
  const xAt = (rl: Rules, j: number, r: number): number => {
    const { v, carry } = rl.xs[j];
    return carry >= 0 ? slotOffset(r - 1, body.carryOut[carry]) : slotOffset(r, v);
  };

  /** Iterations hi down to lo of pattern d as one scan of its rules, reading the forward values from the forward scan's packed value. */
  const run = (d: BlockDerivative, rl: Rules, lo: number, hi: number): void => {
    const m = hi - lo + 1;
    const states = statesAt(d, hi);
    const xsAt = Int32Array.from(rl.xs, (_x, j) => xAt(rl, j, hi));
    const rb = rl.body;
    const rp: ScanParams = {
      body: rb,
      n: m,
      start: 0,
      layout: layoutOf(rb, yWritten(rb), m),
      reportTies: false,
      checkpoint: p.checkpoint,
      caller: p.caller,
      ...(p.nestsOnly ? { nestsOnly: true } : {}),
      stash: null,
      carries: null,
      stacked: { at: xsAt, step: -width, alias: aliasOf(rl) },
    };
    const ps = rl.ps.map((k) => input(hi, k));
    const scanVar = sink.recordOp(codes.scan, [...states, at[self], ...ps], rp);
    // one variable per element read; a carry′ written per iteration (an x cotangent passed on) is read at the last slot (unroll.ts `moved`)
    const { obs, obsOffset, width: w, carryOffset } = rp.layout;
    const got = new Map<number, number>();
    const element = (offset: number, dims: Dims): number => {
      let v = got.get(offset);
      if (v === undefined) got.set(offset, (v = sink.recordOp(codes.scanOut, [scanVar], { offset, dims, held: false })));
      return v;
    };
    const rt = rb.term.tape;
    const slotOf = (i: number, v: number): number => element(i * w + obsOffset[obs.indexOf(v)], rt.dims(v));
    const after = rl.states.map((_s, j) =>
      rb.carryKind[j] === "identity" ? states[j] : obs.includes(rb.carryOut[j]) ? slotOf(m - 1, rb.carryOut[j]) : element(carryOffset[j], rb.inputDims[j]),
    );
    const byResult = new Map<number, number>();
    rl.states.forEach((s, j) => byResult.set(2 * (s.kind === "p" ? nc + nx + s.q : s.k) + s.part, after[j]));
    settle(d, (e) => byResult.get(e)!);
    // each iteration's traced x cotangents: the rules scan's ys (iteration i of the run is the loop's hi − i)
    for (let i = 0; i < m; i++) {
      rl.ys.forEach((l, j) => {
        const a = nc + (hi - i) * nx + l;
        if (!inputs.need[a]) return;
        const y = rb.ySource[j];
        const c = y.kind === "var" ? slotOf(i, rb.yOut[j]) : y.kind === "carry" && i === 0 ? states[y.k] : slotOf(i - 1, rb.carryOut[(y as { k: number }).k]);
        state.replace(args[a], c, -1, maskById(d.masks[2 * (nc + l)]));
      });
    }
  };

  let r = n - 1;
  while (r >= 0) {
    const d = plan.patterns[plan.at.at(r)];
    const top = Math.min(r, n - 2);
    let bottom = Math.max(plan.at.end(r), 1);
    while (nextSeeded < seeded.length && seeded[nextSeeded] > top) nextSeeded++;
    if (nextSeeded < seeded.length) bottom = Math.max(bottom, seeded[nextSeeded] + 1);
    let rl = r === top && top - bottom + 1 >= STACK_FROM ? rules(d, p) : null;
    if (rl !== null) {
      // the run ends above an iteration where the loop written out folds a rule on the data
      bottom = lastFold(rl.body, (j, at) => packed[xAt(rl!, j, at)], bottom, top) + 1;
      if (top - bottom + 1 < STACK_FROM) rl = null;
    }
    // a scan's arguments are distinct variables (a cotangent held by one is its own): where the
    // cotangents come in as the same variable (a rule passing one on twice), one more block placed
    const args = rl === null ? [] : [...statesAt(d, top), ...rl.ps.map((k) => input(top, k))];
    if (rl !== null && new Set(args).size === args.length) {
      run(d, rl, bottom, top);
      r = bottom - 1;
    } else place(d, r--);
  }
  for (let k = 0; k < nc + np; k++) {
    const a = k < nc ? k : pArg(k - nc);
    if (!inputs.need[a] || (!plan.present[2 * a] && !plan.present[2 * a + 1])) continue;
    const c = (part: number): number => (k < nc ? (body.carryKind[k] === "internal" ? chain : identity)[2 * k + part] : pAcc[2 * (k - nc) + part]);
    state.replace(args[a], c(0), c(1), maskById(plan.masks[2 * a]), maskById(plan.masks[2 * a + 1]));
  }
}

/** What a rules' body writes per iteration: its ys computed, and the carry′ a y passes on (scan-record.ts `observed`, for its bodies). */
function yWritten(body: Body): Int32Array {
  const list: number[] = [];
  body.ySource.forEach((y, j) => {
    const v = y.kind === "var" ? body.yOut[j] : y.kind === "carry" ? body.carryOut[y.k] : -1;
    if (v >= 0 && !list.includes(v)) list.push(v);
  });
  return Int32Array.from(list);
}

/** How a derivative's rules, placed in the sink, read a scan's forward values (see forwardValues). */
export interface ForwardValues {
  readonly packed: Float64Array;
  /** The offset of body variable v's slot at iteration r. */
  slotOffset(r: number, v: number): number;
  /**
   * Body variable v's value at iteration r (the term's final carry is read at the last
   * iteration's slot: unroll.ts); a value of the data alone is the literal the loop written out has.
   */
  forward(r: number, v: number): number;
  /** Body input k's value at iteration r (carry-in k: carry′ k one iteration before). */
  input(r: number, k: number): number;
}

/** The scan instruction `self` of a term placed in `sink` (`at`), its args and outputs' instructions: a reverse call's, or a pushforward's. */
export type PlacedScan = Pick<ScanReverseCall, "args" | "outputs" | "tape"> & Pick<Where, "sink" | "at" | "self">;

/** The forward values of a scan placed in a sink: one variable per output of the scan read (the term's own reads of it first). */
export function forwardValues(p: ScanParams, { args, outputs, tape, sink, at, self }: PlacedScan): ForwardValues {
  const { body, n, layout } = p;
  const { nc, nx } = body;
  const codes = scanCodes();
  const width = layout.width;
  const packed = tape.value(self) as Float64Array;
  const reads = new Map<number, number>();
  for (const j of outputs) {
    const q = tape.params(j) as { offset: number; held: boolean };
    if (!q.held) reads.set(q.offset, at[j]);
  }
  const readAt = (offset: number, dims: Dims): number => {
    let v = reads.get(offset);
    if (v === undefined) reads.set(offset, (v = sink.recordOp(codes.scanOut, [at[self]], { offset, dims, held: false })));
    return v;
  };
  const slotOffset = (r: number, v: number): number => r * width + layout.obsOffset[layout.obs.indexOf(v)];
  const literalAt = (offset: number, dims: Dims): number =>
    dims.length === 0 ? sink.constant(packed[offset]) : sink.tape.tensorConstant(ownedCopy({ dims, data: packed.subarray(offset, offset + size(dims)) }));
  const forward = (r: number, v: number): number => {
    const dims = body.term.tape.dims(v);
    return body.literalOnly[v] ? literalAt(slotOffset(r, v), dims) : readAt(slotOffset(r, v), dims);
  };
  const input = (r: number, k: number): number => {
    if (k >= nc + nx) return at[args[nc + n * nx + (k - nc - nx)]];
    if (k >= nc) return at[args[nc + r * nx + (k - nc)]];
    return body.carryKind[k] === "identity" || r === 0 ? at[args[k]] : forward(r - 1, body.carryOut[k]);
  };
  return { packed, slotOffset, forward, input };
}

const foldCheckers = new WeakMap<Body, Interpreter>();

/**
 * The last iteration in [lo, hi] at which a rule of a rules' body folds a value of the data (x · 1,
 * x + (−0), x⁰ where x is a literal of the loop written out: there the written-out sweep
 * holds x itself, or 1, in place of the instruction), or lo − 1. `value(j, r)`: the rules'
 * x leaf j at iteration r. What the folds read is computed from the data alone.
 */
export function lastFold(body: Body, value: (j: number, r: number) => number, lo: number, hi: number): number {
  if (body.folds.length === 0) return lo - 1;
  for (let r = hi; r >= lo; r--) if (foldsAt(body, value, r)) return r;
  return lo - 1;
}

/** Whether a rule of a rules' body folds a value of the data at iteration r (see lastFold). */
export function foldsAt(body: Body, value: (j: number, r: number) => number, r: number): boolean {
  if (body.folds.length === 0) return false;
  let made = foldCheckers.get(body);
  if (made === undefined) foldCheckers.set(body, (made = new Interpreter(body.term.tape, body.folds.map((f) => f.v))));
  const it = made;
  const inputs = new Float64Array(body.nc + body.nx + body.np);
  for (let j = 0; j < body.nx; j++) if (body.literal[body.nc + j]) inputs[body.nc + j] = value(j, r);
  it.run(inputs);
  return body.folds.some((f) => folds(f.code, it.value(f.v) as number));
}
