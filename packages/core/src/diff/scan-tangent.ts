/**
 * @file A scan's forward sweep where it is kept (the outermost level, or a trace only
 * evaluated: unroll.ts `keepsScans`): one `scanTangent` instruction that
 * runs the body's tangent term forward over the iterations, the carries and their
 * tangents together.
 *
 * The body's tangent term `T` (pushforward.ts applied to the body's term, its own
 * instructions in front) computes one block of the written-out forward sweep from the
 * iteration's carry, x, captured values and their tangents. A tangent that is the
 * symbolic zero stays one (a term per pattern of present tangents, decided ahead), so
 * the numbers are the written-out sweep's.
 */
import type { Buf, Dims } from "@wengert/ops";
import { size } from "@wengert/ops";
import type { Body } from "../trace/body.js";
import {
  flatXs,
  stackedLeaf,
  hasScans,
  isScanCode,
  scanCodes,
  scanOutputs,
  writeAt,
  xArgCount,
  type DerivedParams,
  type ScanOutParams,
  type ScanParams,
} from "../trace/scan-ops.js";
import { TraceTerm } from "../trace/term.js";
import { closeTrace, sinkFor, type Trace } from "../trace/tracer.js";
import { Interpreter } from "../eval/interpreter.js";
import { tangentReals } from "../eval/scan-tangent-run.js";
import { scanCode } from "../jit/scan-code.js";
import { WengertError } from "../errors.js";
import type { Transform } from "./place.js";
import { Runs } from "./runs.js";

export interface ScanTangents {
  /** Whether instruction i is a scan's (a scan's tangents emitted, and its outputs' set in `dt`). */
  at(i: number, dt: Int32Array): boolean;
}

const UNIT = { kind: "tuple", items: [] } as const;

/** The scans of a term pushed forward where its scans are kept (unroll.ts `keepsScans`); `at[v]`: the sink's variable for v. */
export function scanTangents(term: TraceTerm, sink: Trace, at: Int32Array, pushforward: Transform): ScanTangents | null {
  if (!hasScans(term.tape)) return null;
  const tape = term.tape;
  const codes = scanCodes();
  const outputsOf = scanOutputs(tape);
  // scans whose packed values stacked scans read (a reverse sweep emitted as scans: scan-nested.ts)
  const read = new Set<number>();
  for (let i = 0; i < tape.length; i++) {
    const p = tape.op[i] === codes.scan ? (tape.params(i) as ScanParams) : null;
    if (p !== null && p.stacked !== undefined) read.add(tape.args(i)[p.body.nc]);
  }
  const masks = new Map<number, Uint8Array>();
  return {
    at(i, dt) {
      const code = tape.op[i];
      if (!isScanCode(code)) return false;
      if (code === codes.scanOut) return true;
      if (code !== codes.scan) throw new WengertError("internal: a scan's derivative instruction in a term pushed forward again.");
      emitTangent(tape.params(i) as ScanParams, tape.args(i), outputsOf.get(i) ?? [], tape, { sink, at, self: i, read: read.has(i), masks }, dt, pushforward);
      return true;
    },
  };
}

/** One block's tangent term for one pattern of present input tangents. */
export interface BlockTangent {
  readonly term: TraceTerm;
  /** Its outputs' first: carry′ of the leaves that change (the tangents follow). */
  readonly primalCount: number;
  /** The inputs whose tangents it takes (in order). */
  readonly ins: readonly number[];
  /** Per carry leaf: whether carry′'s tangent comes out present; per written slot, likewise. */
  readonly carryPresent: Uint8Array;
  readonly obsPresent: Uint8Array;
  interpreter: Interpreter | null;
}

/**
 * `T`: the body's term, then its tangents. Inputs: the body's, then the present
 * tangents `ins`; outputs: carry′ (the leaves that change), carry′'s present tangents,
 * the written slots' present tangents.
 */
function blockTangent(body: Body, obs: Int32Array, ins: number[], pushforward: Transform): BlockTangent {
  const tape = body.term.tape;
  const nin = body.nc + body.nx + body.np;
  const sink = sinkFor(tape, "scan", false);
  const tangents = new Array<number>(nin).fill(-1);
  ins.forEach((k, j) => {
    const dims = tape.dims(body.inputVar[k]);
    tangents[k] = dims.length === 0 ? sink.tape.input(nin + j, 0) : sink.tape.tensorInput(nin + j, { dims, data: new Float64Array(size(dims)) });
  });
  const outs = [...body.carryOut, ...obs];
  const target = new TraceTerm(tape, [{ name: "in", shape: UNIT, atoms: [] }], { shape: UNIT, atoms: outs });
  const d = pushforward(target, sink, tangents, null);
  closeTrace(sink);
  const carryPresent = new Uint8Array(body.nc);
  const obsPresent = new Uint8Array(obs.length);
  const atoms: number[] = [];
  body.carryOut.forEach((v, k) => body.carryKind[k] !== "identity" && atoms.push(d.outputs[k]));
  body.carryOut.forEach((_v, k) => {
    if (body.carryKind[k] !== "internal" || !d.present![k]) return;
    carryPresent[k] = 1;
    atoms.push(d.results[k]);
  });
  obs.forEach((_v, s) => {
    if (!d.present![body.nc + s]) return;
    obsPresent[s] = 1;
    atoms.push(d.results[body.nc + s]);
  });
  const term = new TraceTerm(sink.tape, [{ name: "in", shape: UNIT, atoms: [] }], { shape: UNIT, atoms });
  const primalCount = body.carryKind.filter((kind) => kind !== "identity").length;
  return { term, primalCount, ins, carryPresent, obsPresent, interpreter: null };
}

const tangentTerms = new WeakMap<Body, Map<string, BlockTangent>>();

interface TangentPlan {
  readonly patterns: BlockTangent[];
  readonly at: Runs;
  /** Offsets of the present tangents in the packed value: per written slot (r·|obs| + s), per carry leaf; -1 absent. */
  readonly obsOffset: Int32Array;
  readonly carryOffset: Int32Array;
  readonly length: number;
}

function planTangent(p: ScanParams, has: Uint8Array, pushforward: Transform): TangentPlan {
  const { body, n, layout } = p;
  const obs = layout.obs;
  const nin = body.nc + body.nx + body.np;
  const chain = Uint8Array.from({ length: body.nc }, (_, k) => (body.literal[k] ? 0 : has[k]));
  const at = new Runs(1);
  const obsOffset = new Int32Array(n * obs.length).fill(-1);
  const carryOffset = new Int32Array(body.nc).fill(-1);
  let length = 0;
  const sizes = Array.from(obs, (v) => size(body.term.tape.dims(v)));
  // which inputs' tangents are present at this iteration, against the iteration before: a
  // steady loop decides its pattern without a key (or an allocation) per iteration
  const { nc, nx, np } = body;
  const nobs = obs.length;
  const literal = body.literal;
  const internal = Uint8Array.from(body.carryKind, (kind) => (kind === "internal" ? 1 : 0));
  const present = new Uint8Array(nin);
  for (let q = 0; q < np; q++) present[nc + nx + q] = literal[nc + nx + q] ? 0 : has[nc + n * nx + q];
  const index = new Map<BlockTangent, number>();
  const patterns: BlockTangent[] = [];
  let t: BlockTangent | null = null;
  let i = -1;
  for (let r = 0; r < n; r++) {
    let changed = t === null;
    for (let k = 0; k < nc; k++) {
      const now = literal[k] ? 0 : chain[k];
      if (now !== present[k]) (present[k] = now), (changed = true);
    }
    for (let l = 0; l < nx; l++) {
      const now = literal[nc + l] ? 0 : has[nc + r * nx + l];
      if (now !== present[nc + l]) (present[nc + l] = now), (changed = true);
    }
    if (changed) {
      t = patternOf(body, present, obs, pushforward);
      const known = index.get(t);
      if (known === undefined) {
        index.set(t, (i = patterns.length));
        patterns.push(t);
      } else i = known;
    }
    const u = t!;
    at.set(r, i);
    // the carries' tangents as they came in: later iterations are this one's up to the next whose x's presence differs
    let steady = r > 0;
    for (let k = 0; k < nc; k++) {
      if (!internal[k]) continue;
      if (chain[k] !== u.carryPresent[k]) steady = false;
      chain[k] = u.carryPresent[k];
    }
    let last = r + 1;
    if (steady && (nx === 0 || (nx === 1 && literal[nc]))) last = n;
    else if (steady && nx === 1) {
      // one x leaf (a stacked scan's): the next change of its presence, found natively
      const e = has.indexOf(present[nc] ^ 1, nc + r + 1);
      last = e < 0 || e >= nc + n ? n : e - nc;
    }
    for (let rr = r; rr < last; rr++) {
      for (let s = 0; s < nobs; s++) {
        if (!u.obsPresent[s]) continue;
        obsOffset[rr * nobs + s] = length;
        length += sizes[s];
      }
    }
    r = last - 1;
  }
  for (let k = 0; k < body.nc; k++) {
    if (body.carryKind[k] !== "internal" || !chain[k] || obs.includes(body.carryOut[k])) continue;
    carryOffset[k] = length;
    length += size(body.inputDims[k]);
  }
  return { patterns, at, obsOffset, carryOffset, length };
}

/** The block tangent taking the present inputs' tangents, for the tangents of `obs` (made once per body, obs and pattern). */
export function patternOf(body: Body, present: Uint8Array, obs: Int32Array, pushforward: Transform): BlockTangent {
  let terms = tangentTerms.get(body);
  if (terms === undefined) tangentTerms.set(body, (terms = new Map()));
  const ins: number[] = [];
  for (let k = 0; k < present.length; k++) if (present[k]) ins.push(k);
  const key = `${obs.join(",")}|${ins.join(",")}`;
  let t = terms.get(key);
  if (t === undefined) terms.set(key, (t = blockTangent(body, obs, ins, pushforward)));
  return t;
}

/**
 * Where a scan's forward sweep is emitted: the sink and its variables for the term's, the
 * scan instruction, whether stacked scans read its packed value (its tangent is then laid
 * out as that value is, too), and which elements of such tangents are present, by the
 * sink's variable.
 */
interface Where {
  readonly sink: Trace;
  readonly at: Int32Array;
  readonly self: number;
  readonly read: boolean;
  readonly masks: Map<number, Uint8Array>;
}

function emitTangent(
  p: ScanParams,
  args: readonly number[],
  outputs: readonly number[],
  tape: TraceTerm["tape"],
  { sink, at, self, read, masks }: Where,
  dt: Int32Array,
  pushforward: Transform,
): void {
  const { body, n, layout } = p;
  const codes = scanCodes();
  const hasArg = Uint8Array.from(args, (v) => (dt[v] >= 0 ? 1 : 0));
  // per iteration's x leaf: read from the packed value's tangent where it is present (a stacked scan)
  const stacked = p.stacked;
  const has = stacked === undefined ? hasArg : new Uint8Array(body.nc + n * body.nx + body.np);
  if (stacked !== undefined) {
    has.set(hasArg.subarray(0, body.nc));
    has.set(hasArg.subarray(body.nc + 1), body.nc + n * body.nx);
    const mask = hasArg[body.nc] ? masks.get(dt[args[body.nc]])! : null;
    if (mask !== null) for (let i = 0; i < n; i++) for (let l = 0; l < body.nx; l++) has[body.nc + i * body.nx + l] = mask[stacked.at[l] + i * stacked.step];
  }
  const plan = planTangent(p, has, pushforward);
  const tangentArgs = args.filter((v) => dt[v] >= 0).map((v) => dt[v]);
  const params: DerivedParams = { scan: p, length: plan.length, what: "tangent", run: (values) => tangentRun(p, plan, { has, hasArg }, values) };
  const tan = sink.recordOp(codes.scanTangent, [...args.map((v) => at[v]), ...tangentArgs], params);
  const nobs = layout.obs.length;
  for (const j of outputs) {
    const q = tape.params(j) as ScanOutParams;
    if (q.held) continue;
    let offset: number;
    let dims: Dims;
    if (q.offset < n * layout.width) {
      const r = Math.floor(q.offset / layout.width);
      const s = layout.obsOffset.indexOf(q.offset - r * layout.width);
      offset = plan.obsOffset[r * nobs + s];
      dims = body.term.tape.dims(layout.obs[s]);
    } else {
      const k = layout.carryOffset.indexOf(q.offset);
      offset = plan.carryOffset[k];
      dims = body.inputDims[k];
    }
    dt[j] = offset < 0 ? -1 : sink.recordOp(codes.scanOut, [tan], { offset, dims, held: false });
  }
  if (read) {
    // the tangent as the packed value is laid out (zero where absent), for the stacked scans that read it
    const mask = new Uint8Array(layout.length);
    const from = new Int32Array(layout.length).fill(-1);
    // a tensor's slot element by element
    const relay = (to: number, at: number, dims: Dims): void => {
      for (let e = 0; e < size(dims); e++) from[to + e] = at + e;
    };
    layout.obs.forEach((v, s) => {
      const dims = body.term.tape.dims(v);
      for (let r = 0; r < n; r++) if (plan.obsOffset[r * nobs + s] >= 0) relay(r * layout.width + layout.obsOffset[s], plan.obsOffset[r * nobs + s], dims);
    });
    for (let k = 0; k < body.nc; k++) if (plan.carryOffset[k] >= 0) relay(layout.carryOffset[k], plan.carryOffset[k], body.inputDims[k]);
    for (let e = 0; e < from.length; e++) mask[e] = from[e] >= 0 ? 1 : 0;
    const relaid: DerivedParams = {
      scan: p,
      length: layout.length,
      what: "tangent laid out as the run's value",
      run: ([t]) => {
        const v = t as Float64Array;
        const out = new Float64Array(from.length);
        for (let e = 0; e < from.length; e++) if (from[e] >= 0) out[e] = v[from[e]];
        return out;
      },
    };
    dt[self] = sink.recordOp(codes.scanTangent, [tan], relaid);
    masks.set(dt[self], mask);
  }
}

function tangentRun(p: ScanParams, plan: TangentPlan, { has, hasArg }: { has: Uint8Array; hasArg: Uint8Array }, values: readonly Buf[]): Float64Array {
  if (p.body.reals && scanCode.enabled) return tangentReals(p, plan, hasArg, values);
  const { body, n, layout } = p;
  const nargs = body.nc + n * body.nx + body.np;
  const xArgs = xArgCount(p);
  const obs = layout.obs;
  // the tangents of the arguments, then as one per leaf and iteration (a stacked scan's read from its packed value's)
  const ofArg: (Buf | null)[] = new Array<Buf | null>(hasArg.length).fill(null);
  let next = hasArg.length;
  for (let a = 0; a < hasArg.length; a++) if (hasArg[a]) ofArg[a] = values[next++];
  const stacked = p.stacked;
  const tangentOf: (Buf | null)[] = new Array<Buf | null>(nargs).fill(null);
  for (let k = 0; k < body.nc; k++) tangentOf[k] = ofArg[k];
  for (let q = 0; q < body.np; q++) tangentOf[nargs - body.np + q] = ofArg[body.nc + xArgs + q];
  const xs = stacked === undefined || !body.reals ? null : flatXs(p, values);
  if (stacked === undefined) for (let e = 0; e < n * body.nx; e++) tangentOf[body.nc + e] = ofArg[body.nc + e];
  // a stacked scan's x tangents, read where they are (a million iterations are not a million boxed numbers)
  const packedTangent = stacked === undefined ? null : (ofArg[body.nc] as Float64Array | null);
  const xTangent = (r: number, l: number): Buf | null =>
    packedTangent === null ? tangentOf[body.nc + r * body.nx + l] : has[body.nc + r * body.nx + l] ? stackedLeaf(p, packedTangent, r, l) : null;
  const xValue = (r: number, l: number): Buf =>
    xs !== null ? xs[r * body.nx + l] : stacked !== undefined ? stackedLeaf(p, values[body.nc] as Float64Array, r, l) : values[body.nc + r * body.nx + l];
  const carry = values.slice(0, body.nc) as Buf[];
  const chain: (Buf | null)[] = Array.from({ length: body.nc }, (_, k) => tangentOf[k]);
  const pv = values.slice(body.nc + xArgs, body.nc + xArgs + body.np) as Buf[];
  const out = new Float64Array(plan.length);
  const nin = body.nc + body.nx + body.np;
  // each pattern's inputs (the body's, then the tangents it takes), one array reused iteration after iteration
  const argvs = plan.patterns.map((t) => new Array<Buf>(nin + t.ins.length));
  for (const argv of argvs) for (let q = 0; q < body.np; q++) argv[body.nc + body.nx + q] = pv[q];
  const nextCarry = carry.slice();
  for (let r = 0; r < n; r++) {
    const which = plan.at.at(r);
    const t = plan.patterns[which];
    const argv = argvs[which];
    for (let k = 0; k < body.nc; k++) argv[k] = carry[k];
    for (let l = 0; l < body.nx; l++) argv[body.nc + l] = xValue(r, l);
    t.ins.forEach((k, j) => {
      argv[nin + j] = (
        k < body.nc
          ? chain[k]
          : k < body.nc + body.nx
            ? xTangent(r, k - body.nc)
            : tangentOf[body.nc + n * body.nx + (k - body.nc - body.nx)]
      )!;
    });
    const it = (t.interpreter ??= new Interpreter(t.term.tape, t.term.output.atoms));
    it.run(argv);
    const atoms = t.term.output.atoms;
    // the written values first: one may be a carry′ (a nested sweep's residual), whose buffer is taken below
    let j = atoms.length;
    for (let s = obs.length - 1; s >= 0; s--) if (t.obsPresent[s]) writeAt(out, plan.obsOffset[r * obs.length + s], it.value(atoms[--j]));
    j = 0;
    for (let k = 0; k < body.nc; k++) nextCarry[k] = carry[k];
    for (let k = 0; k < body.nc; k++) if (body.carryKind[k] !== "identity") nextCarry[k] = it.take(atoms[j++]);
    for (let k = 0; k < body.nc; k++) if (body.carryKind[k] === "internal") chain[k] = t.carryPresent[k] ? it.take(atoms[j++]) : null;
    it.clear();
    for (let k = 0; k < body.nc; k++) carry[k] = nextCarry[k];
  }
  for (let k = 0; k < body.nc; k++) if (plan.carryOffset[k] >= 0) writeAt(out, plan.carryOffset[k], chain[k]!);
  return out;
}
