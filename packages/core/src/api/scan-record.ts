/**
 * @file What a run of a scan records in the enclosing trace: one scan instruction and the
 * outputs the loop makes visible (one variable each per iteration, literals as numbers),
 * or one iteration placed as the loop written out records it.
 */
import type { Buf, Dims } from "@wengert/ops";
import { unflatten } from "../structure.js";
import type { Body } from "../trace/body.js";
import type { Leaf, TracedBody } from "../trace/trace-body.js";
import { CONST, FIRST_PRIMITIVE, INPUT, IS_TENSOR_OP } from "../trace/opcodes.js";
import { layoutOf, scanCodes, writeAt, type Checkpoint, type ScanParams } from "../trace/scan-ops.js";
import { fromDense, ownedCopy } from "../trace/host-tensor.js";
import { atomOf, type Operand } from "../trace/traced.js";
import { primalOf, wrap } from "../trace/record.js";
import type { Trace } from "../trace/tracer.js";

/** Where a run starts: its body, its first iteration, the carry's leaves as they come in, x's leaves per iteration. */
export interface RunStart {
  readonly body: Body;
  readonly from: number;
  readonly carryIn: readonly Leaf[];
  readonly x: (j: number) => readonly Leaf[];
}

/** A run [from, to) that ran: where it goes, what it wrote (per iteration, then the final carry's values), its checkpoint policy. */
export interface RanRun {
  readonly target: Trace;
  readonly to: number;
  readonly obs: Int32Array;
  readonly written: Float64Array;
  readonly carry: Buf[];
  readonly checkpoint: Checkpoint;
  readonly caller: string;
  /** options.nested is "scan": written out under a nested derivative, the scan throws (diff/unroll.ts). */
  readonly nested: boolean;
  readonly pAtoms: readonly number[];
  readonly pValues: readonly Operand[];
}

/** Record a run as one scan instruction, and read its outputs: the carry after it, its ys (null: none), and its variable. */
export function recordRun(s: RunStart, r: RanRun): { scanVar: number; carry: Leaf[]; ys: unknown[] | null } {
  const { body, from: i } = s;
  const { target, to: stop, obs, written, carry, checkpoint, pAtoms, pValues } = r;
  const codes = scanCodes();
  const n = stop - i;
  const layout = layoutOf(body, obs, n);
  const packed = new Float64Array(layout.length);
  packed.set(written.subarray(0, n * layout.width));
  for (let k = 0; k < body.nc; k++) writeAt(packed, layout.carryOffset[k], carry[k]);
  packed[layout.held] = 1;
  const args = [...s.carryIn.map((v) => atomIn(target, v))];
  if (body.nx > 0) for (let j = i; j < stop; j++) for (const v of s.x(j)) args.push(atomIn(target, v));
  args.push(...pAtoms);
  const params: ScanParams = {
    body,
    n,
    start: i,
    layout,
    reportTies: target.settings.ties !== "ignore",
    checkpoint,
    caller: r.caller,
    ...(r.nested ? { nestsOnly: true } : {}),
    stash: null,
    carries: null,
  };
  const scanVar = target.tape.appendComputed(codes.scan, args, params, [layout.length], packed);
  const tape = body.term.tape;
  // the outputs the loop makes visible: one variable each, per iteration
  const at = (r: number, s: number): number => r * layout.width + layout.obsOffset[s];
  const projections: Leaf[][] = [];
  for (let r = 0; r < n && obs.length > 0; r++) {
    const row: Leaf[] = [];
    obs.forEach((v, s) => {
      const dims = tape.dims(v);
      row.push(
        body.literalOnly[v]
          ? literalValue(dims.length === 0 ? packed[at(r, s)] : packed.slice(at(r, s), at(r, s) + size(dims)), dims)
          : wrap(target, target.recordOp(codes.scanOut, [scanVar], { offset: at(r, s), dims, held: false })),
      );
    });
    projections.push(row);
  }
  const value = (v: number, r: number): Leaf => {
    const s = obs.indexOf(v);
    if (s >= 0) return projections[r][s];
    return literalValue(tape.value(v), tape.dims(v));
  };
  const ys = body.yShape === null ? null : Array.from({ length: n }, (_, k) => yAt(s, k, value, pValues));
  const after = s.carryIn.map((start, k) => {
    const kind = body.carryKind[k];
    if (kind === "identity") return start;
    const v = body.carryOut[k];
    if (obs.includes(v)) return value(v, n - 1);
    const dims = body.inputDims[k];
    const off = layout.carryOffset[k];
    if (kind === "literal") {
      return tape.op[v] === CONST
        ? literalValue(tape.value(v), dims)
        : literalValue(dims.length === 0 ? packed[off] : packed.slice(off, off + size(dims)), dims);
    }
    return wrap(target, target.recordOp(codes.scanOut, [scanVar], { offset: off, dims, held: false }));
  });
  if (target.keepsGuards && body.decides(params.reportTies)) {
    // the body's decisions, for a replay at another point (compileGrad): one flag for all
    // (a body that decides nothing holds everywhere: no flag, so a replay that reads none of
    // the run's values, a jitted gradient, does not run the loop for it)
    const held = target.recordOp(codes.scanOut, [scanVar], { offset: layout.held, dims: [], held: true });
    target.guards.push({ pred: "eq", a: held, b: target.constant(1), outcome: true, distinct: false });
  }
  return { scanVar, carry: after, ys };
}

/** y at iteration from + r of a run, from the body's variables' values there (`value(v, r)`). */
export function yAt(s: RunStart, r: number, value: (v: number, r: number) => Leaf, pValues: readonly Operand[]): unknown {
  const { body } = s;
  if (body.yShape === null) return undefined;
  const out = body.yOut;
  const leaves = body.ySource.map((src, j): Leaf => {
    switch (src.kind) {
      case "var":
        return value(out[j], r);
      case "const":
        return src.value;
      case "carry":
        if (r === 0 || body.carryKind[src.k] === "identity") return s.carryIn[src.k];
        return value(body.carryOut[src.k], r - 1);
      case "x":
        return s.x(s.from + r)[src.l];
      case "p":
        return pValues[src.q];
    }
  });
  return unflatten(body.yShape, leaves);
}

/**
 * One iteration as the loop records it: the body's term placed at that iteration's
 * variables, through the trace's own checks (kinks, tensor ties, length); the
 * decisions' ties reported as `decide` reports them.
 */
export function placeIteration(tb: TracedBody, target: Trace, carry: readonly Leaf[], x: readonly Leaf[]): { carry: Leaf[]; y: unknown } {
  const { body } = tb;
  const tape = body.term.tape;
  const { op, a, b } = tape;
  const map = new Int32Array(tape.length);
  const inputs = [...carry.map((v) => atomIn(target, v)), ...x.map((v) => atomIn(target, v)), ...tb.pAtoms];
  const byLast = new Map<number, typeof body.guards[number][]>();
  for (const g of body.guards) {
    const last = Math.max(g.a, g.b);
    let list = byLast.get(last);
    if (list === undefined) byLast.set(last, (list = []));
    list.push(g);
  }
  const t = target.tape;
  for (let v = 0; v < tape.length; v++) {
    const code = op[v];
    if (code === INPUT) map[v] = inputs[a[v]];
    else if (code === CONST) map[v] = tape.x[v] === 0 ? target.constant(tape.val[v]) : t.tensorConstant(ownedCopy({ dims: tape.dims(v), data: tape.buf(v) }));
    else if (code >= FIRST_PRIMITIVE) {
      map[v] = IS_TENSOR_OP[code]
        ? target.recordOp(code, tape.args(v).map((u) => map[u]), tape.params(v))
        : tape.x[v] === 0
          ? target.record(code, map[a[v]], map[b[v]])
          : target.record(code, map[tape.args(v)[0]], map[tape.args(v)[1] ?? 0]);
    }
    for (const g of byLast.get(v) ?? []) {
      const ga = map[g.a];
      const gb = map[g.b];
      const va = t.val[ga];
      const vb = t.val[gb];
      const distinct = g.distinct && ga !== gb;
      if (va === vb && distinct && !(t.op[ga] === CONST && t.op[gb] === CONST)) {
        target.tie(
          `${g.pred}(${va}, ${vb}) was decided at a tie (both sides equal), ` +
            `taking the branch where ${va} ${PREDICATE_SYMBOL[g.pred]} ${vb} is ${g.outcome}`,
        );
      }
      if (target.keepsGuards && !(t.op[ga] === CONST && t.op[gb] === CONST)) target.guards.push({ pred: g.pred, a: ga, b: gb, outcome: g.outcome, distinct });
    }
  }
  if (body.opaque) target.opaque = true;
  const out = body.term.output.atoms;
  return {
    carry: out.slice(0, body.nc).map((v) => userValue(target, map[v])),
    y: body.yShape === null ? undefined : unflatten(body.yShape, out.slice(body.nc).map((v) => userValue(target, map[v]))),
  };
}

/** A leaf's variable in trace t (a number or an untraced tensor: a literal there). */
export const atomIn = (t: Trace, v: Leaf): number => atomOf(t, v);

/** A variable of trace t as the loop written out gives it: a literal as a number (or ndarray), else a traced value. */
function userValue(t: Trace, v: number): Leaf {
  if (t.tape.op[v] !== CONST) return wrap(t, v);
  return t.tape.isTensor(v) ? (fromDense({ dims: t.tape.dims(v), data: t.tape.buf(v) }, "ndarray") as Leaf) : t.tape.val[v];
}

/** The value of a literal computed by the body (a number or an ndarray). */
export function literalValue(b: Buf, dims: Dims): Leaf {
  return typeof b === "number" ? b : (fromDense({ dims, data: b }, "ndarray", false) as Leaf);
}

const PREDICATE_SYMBOL = { lt: "<", le: "<=", gt: ">", ge: ">=", eq: "=", ne: "!=" } as const;

/** A leaf's concrete value: a number or a buffer (read, not copied). */
export function primal(v: Leaf): Buf {
  const p = primalOf(v, "a scan's value");
  return typeof p === "number" ? p : p.data;
}

export function size(dims: Dims): number {
  let s = 1;
  for (const d of dims) s *= d;
  return s;
}

/**
 * The body variables a run writes per iteration: y's leaves computed by the body, and
 * the carries a y names (y = the carry as it came in: the previous iteration's carry′).
 */
export function observed(body: Body): Int32Array {
  const tape = body.term.tape;
  const out = body.term.output.atoms;
  const list: number[] = [];
  const add = (v: number): void => {
    if (tape.op[v] !== CONST && tape.op[v] !== INPUT && !list.includes(v)) list.push(v);
  };
  body.ySource.forEach((src, j) => {
    if (src.kind === "var") add(out[body.nc + j]);
    else if (src.kind === "carry" && body.carryKind[src.k] !== "identity") add(out[src.k]);
  });
  return Int32Array.from(list);
}

