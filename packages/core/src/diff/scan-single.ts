/**
 * @file The reverse sweep of a scan of one iteration without a carry (`checkpoint(f)`,
 * api/checkpoint.ts) emitted where it will be differentiated again: one scan of its rules,
 * so that the derivative of a checkpointed function is again one instruction, however
 * many instructions f has.
 *
 * The sweep is one block: the rules of D (reverse-plan.ts) with the seeds of f's results
 * and the cotangents f's arguments and captured values hold. Written out, the rules read
 * f's variables; here the forward scan writes those (scan-nested.ts `withResiduals`), and
 * the rules are a body of one iteration that reads them from its packed value (a stacked
 * scan, as scan-nested.ts's runs), takes the seeds and the values f read as captured
 * values, and returns as its carry′ the cotangent of each argument and captured value
 * (its carry in: the cotangent the input held, which the rules add to, or an unused 0).
 * The instructions are the loop written out's, in its order: the numbers are the same to
 * the last bit. Where that does not hold as one scan (a rule folding a value of the data,
 * a cotangent that is a seed passed on, one variable given twice) the block is placed as
 * scan-nested.ts places blocks.
 */
import { CONST, INPUT } from "../trace/opcodes.js";
import { Body } from "../trace/body.js";
import { layoutOf, scanCodes, type ScanParams } from "../trace/scan-ops.js";
import { Tape } from "../trace/tape.js";
import { TraceTerm } from "../trace/term.js";
import { REAL, type Shape } from "../structure.js";
import { cacheFor, outState, readByRules, type BlockDerivative } from "./reverse-plan.js";
import { gather, planFor, type ScanReverseCall } from "./scan-cotangents.js";
import { copyRules, emitNested, lastFold } from "./scan-nested.js";

/** The block's rules as a body of one iteration (see the file's comment). */
interface Single {
  readonly body: Body;
  /** Per carry leaf: the body input whose cotangent it is (k of 2k in D's results). */
  readonly inputs: readonly number[];
  /** Per x leaf: the forward variable it reads. */
  readonly xs: readonly number[];
  /** Per captured leaf: D's seed j (of its outs), or the body input k read (−1 − k). */
  readonly ps: readonly number[];
}

const made = new WeakMap<BlockDerivative, Single | null>();
const tuple = (n: number): Shape => ({ kind: "tuple", items: Array.from({ length: n }, () => REAL) });

function single(d: BlockDerivative, p: ScanParams): Single | null {
  if (!made.has(d)) made.set(d, makeSingle(d, p));
  return made.get(d)!;
}

function makeSingle(d: BlockDerivative, p: ScanParams): Single | null {
  const { body } = p;
  const from = d.term.tape;
  const nin = body.nc + body.nx + body.np;
  // reals only: one part per cotangent
  if ([...d.outs, ...d.ins, ...d.results].some((e) => (e & 1) !== 0)) return null;
  const inputs = d.results.map((e) => e >> 1);
  const tape = new Tape();
  const map = new Int32Array(from.length).fill(-1);
  const carryVar = inputs.map((_k, j) => tape.input(j, 0));
  const xs: number[] = [];
  const ps: number[] = [];
  const read = readByRules(d, body);
  // x: the forward values (and literal x leaves) the rules read, written by the forward scan
  for (const v of read) {
    if (from.op[v] === INPUT && !body.literal[from.a[v]]) continue;
    map[v] = tape.input(inputs.length + xs.length, from.val[v]);
    xs.push(v);
  }
  // captured: the seeds, then the inputs read as they are (f's traced arguments, captured values)
  const base = inputs.length + xs.length;
  const stateVar = new Int32Array(d.outs.length + d.ins.length).fill(-1);
  d.outs.forEach((_e, j) => {
    stateVar[j] = tape.input(base + ps.length, 0);
    ps.push(j);
  });
  for (const v of read) {
    if (from.op[v] !== INPUT || body.literal[from.a[v]]) continue;
    map[v] = tape.input(base + ps.length, from.val[v]);
    ps.push(-1 - from.a[v]);
  }
  // an input's starting cotangent is its carry in
  d.ins.forEach((e, j) => (stateVar[d.outs.length + j] = carryVar[inputs.indexOf(e >> 1)]));
  if (stateVar.some((v) => v < 0)) return null;
  copyRules(d, body.length, nin, tape, map, stateVar);
  const out = d.results.map((_e, j) => map[d.term.output.atoms[j]]);
  const term = new TraceTerm(tape, [{ name: "in", shape: { kind: "tuple", items: [] }, atoms: [] }], { shape: tuple(out.length), atoms: out });
  const literal = new Uint8Array(inputs.length + xs.length + ps.length);
  xs.forEach((v, j) => (literal[inputs.length + j] = body.literalOnly[v]));
  const sb = new Body(term, inputs.length, xs.length, ps.length, literal, tuple(inputs.length), tuple(xs.length), null, [], false);
  if (!sb.carryKind.every((k) => k === "internal")) return null;
  return { body: sb, inputs, xs, ps };
}

/**
 * Emit the reverse sweep of scan instruction `self` (one iteration, no carry: see the
 * file's comment) into a sink that will be differentiated again.
 */
export function emitSingle(call: ScanReverseCall): void {
  const { p, args, outputs, tape, where, state, active, differentiate } = call;
  const { body, layout } = p;
  const { sink, at, self } = where;
  const codes = scanCodes();
  const { inputs, seedAtoms, held } = gather(p, args, outputs, tape, state, active);
  const plan = planFor(p, inputs, differentiate);
  const d = plan.patterns[plan.at.at(0)];
  const s = single(d, p);
  const packed = tape.value(self) as Float64Array;
  const offset = (v: number): number => layout.obsOffset[layout.obs.indexOf(v)];
  const o = cacheFor(body, layout.obs).outs;
  const none = -1;
  const seeds = d.outs.map((e) =>
    outState(o, e >> 1, 0, 0, 1, {
      chain: () => none,
      identity: () => none,
      p: () => none,
      seedObs: (_r, slot) => seedAtoms.get(2 * layout.obsOffset[slot]) ?? none,
      seedFinal: () => none,
      acc: () => none,
      none,
    }),
  );
  // the argument of body input k (one iteration: x's leaves, then the captured values)
  const argOf = (k: number): number => args[k];
  const starts = (k: number): boolean => d.ins.includes(2 * k);
  const carryIn = s === null ? [] : s.inputs.map((k) => (starts(k) ? held[2 * k] : sink.constant(0)));
  const ps = s === null ? [] : s.ps.map((q) => (q >= 0 ? seeds[q] : at[argOf(-1 - q)]));
  // a scan's arguments that carry a cotangent are distinct variables (each holds its own; a literal holds none)
  const carrying = [...carryIn.filter((_c, j) => starts(s!.inputs[j])), ...ps].filter((v) => sink.tape.op[v] !== CONST);
  const fits =
    s !== null &&
    !seeds.includes(none) &&
    !carryIn.includes(none) &&
    new Set(carrying).size === carrying.length &&
    lastFold(s.body, (j) => packed[offset(s.xs[j])], 0, 0) < 0;
  if (!fits) {
    emitNested(call);
    return;
  }
  const rp: ScanParams = {
    body: s.body,
    n: 1,
    start: 0,
    layout: layoutOf(s.body, new Int32Array(0), 1),
    reportTies: false,
    checkpoint: p.checkpoint,
    caller: p.caller,
    ...(p.nestsOnly ? { nestsOnly: true } : {}),
    stash: null,
    carries: null,
    stacked: { at: Int32Array.from(s.xs, offset), step: -layout.width, alias: new Int32Array(s.xs.length).fill(-1) },
  };
  const scanVar = sink.recordOp(codes.scan, [...carryIn, at[self], ...ps], rp);
  s.inputs.forEach((k, j) => {
    if (!inputs.need[k]) return;
    state.replace(args[k], sink.recordOp(codes.scanOut, [scanVar], { offset: rp.layout.carryOffset[j], dims: [], held: false }), -1);
  });
}
