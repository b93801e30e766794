/**
 * @file A loop body traced at one iteration: the term a scan applies per iteration
 * (trace/body.ts), where it goes, and the ties and kinks it meets.
 *
 * The body `(carry, x) ↦ [carry′, y]` is traced at one iteration as a term of its own
 * (the paper's Sec. 3: a trace term `c, x. C`), one level deeper than every open trace,
 * which it captures while it runs (tracer.ts `captureOuter`): every operation of the body
 * is in its term, an operation on outer values alone included, exactly as in the loop
 * written out. The outer traced values it uses become inputs of their own (closure
 * conversion), so the term is closed: inputs are the carry's leaves, then x's, then the
 * captured values (`p`). Leaves that are numbers are inputs marked literal (body.ts).
 */
import { predicates, showDims, type UnaryOp } from "@wengert/ops";
import { ShapeError, WengertError } from "../errors.js";
import { flatten, typeString, type Shape } from "../structure.js";
import { FREE, INPUT, KINKS, primitiveOf, tensorSpec } from "./opcodes.js";
import { Tape } from "./tape.js";
import { TraceTerm } from "./term.js";
import { isConcreteTensor, ownedCopy } from "./host-tensor.js";
import { atomOf, isOperand, leafShape, live, Real, Tensor, type Operand } from "./traced.js";
import { primalOf } from "./record.js";
import { captureOuter, closeTrace, inheritedTies, openTrace, openTraces, type Guard, type Trace } from "./tracer.js";
import { Body } from "./body.js";
import { copyInstruction } from "./copy-instruction.js";

/** The ties and kinks met at the values `val` (of the body's tape), described as tracing describes them. */
export function tiesAt(body: Body, value: (v: number) => number | Float64Array): string[] {
  const tape = body.term.tape;
  const lit = body.literalOnly;
  const found: { at: number; what: string }[] = [];
  for (const g of body.guards) {
    const va = value(g.a) as number;
    const vb = value(g.b) as number;
    if (va !== vb || !g.distinct || (lit[g.a] && lit[g.b])) continue;
    const outcome = predicates[g.pred].test(va, vb);
    found.push({
      at: Math.max(g.a, g.b),
      what:
        `${g.pred}(${va}, ${vb}) was decided at a tie (both sides equal), ` +
        `taking the branch where ${va} ${predicates[g.pred].symbol} ${vb} is ${outcome}`,
    });
  }
  for (const i of body.kinked) {
    const p = primitiveOf(tape.op[i]);
    const kink = KINKS[tape.op[i]]!;
    const arg = value(tape.a[i]);
    const atKink = (p.spec as UnaryOp).kink!.convention;
    if (typeof arg === "number") {
      if (kink(arg)) found.push({ at: i, what: `${p.name}(${arg}) was evaluated at its kink; wengert uses ${atKink}` });
    } else {
      const at = arg.findIndex((t) => kink(t));
      if (at >= 0) {
        found.push({
          at: i,
          what:
            `${p.name} was evaluated at its kink (element ${at} of a tensor ${showDims(tape.dims(tape.a[i]))} is ${arg[at]}); ` +
            `wengert uses ${atKink}`,
        });
      }
    }
  }
  for (const i of body.tensorTies) {
    const args = tape.args(i);
    const tie = tensorSpec(tape.op[i]).tie!(args.map(value), args.map((v) => tape.dims(v)), tape.params(i), value(i));
    if (tie !== null) found.push({ at: i, what: tie });
  }
  return found.sort((p, q) => p.at - q.at).map((f) => f.what);
}

/** The body traced at one iteration, and where its term goes. */
export interface TracedBody {
  readonly body: Body;
  /**
   * The innermost open trace among the carry, x and the captured values: where the loop
   * written out would be recorded. Null when the body touched nothing traced.
   */
  readonly target: Trace | null;
  /** The captured values' variables in the target, by slot. */
  readonly pAtoms: readonly number[];
  /** The captured values themselves (traced values of open traces), by slot. */
  readonly pValues: readonly Operand[];
  /** The values the body computed at this iteration, by variable of its tape. */
  readonly value: (v: number) => number | Float64Array;
}

/** A leaf of a carry, x or y: a number, a tensor, or a traced value. */
export type Leaf = Operand;


/** The error for a carry whose type changed at iteration i. */
export function carryChanged(caller: string, i: number, got: Shape, want: Shape): ShapeError {
  return new ShapeError(
    `${caller}: the body returned a carry of type ${typeString(got)} at iteration ${i}, but it came in as ${typeString(want)}; ` +
      "a carry keeps its type and shape from one iteration to the next.",
  );
}

/** Whether two shapes are the same type (tensor containers aside). */
export function sameType(p: Shape, q: Shape): boolean {
  return typeString(p) === typeString(q);
}

export interface BodyCall {
  readonly fn: (carry: never, x: never) => unknown;
  readonly caller: string;
  /** The iteration traced, for messages. */
  readonly iteration: number;
  readonly carryShape: Shape;
  readonly carry: readonly Leaf[];
  readonly xShape: Shape;
  readonly x: readonly Leaf[];
  /** Rebuild a value of `shape` from leaves (structure.unflatten). */
  readonly unflatten: (shape: Shape, leaves: readonly unknown[]) => unknown;
}

/** What a body returns to end a loop of unknown length at this iteration (api/scan.ts `loopUntilDone`). */
export const DONE: unique symbol = Symbol("wengert: the loop is done");

/** Trace the body at one iteration (see the file's comment); null where it returned DONE. */
export function traceBody(call: BodyCall): TracedBody | null {
  const { fn, caller, iteration, carryShape, carry, xShape, x } = call;
  const open = openTraces();
  const maxLength = open.length > 0 ? open[open.length - 1].settings.maxLength : Infinity;
  // ties are reported by the caller (tiesAt), which knows what is a literal in the loop written out
  const t = openTrace({ ties: "ignore", tiesInside: inheritedTies(), checkNaN: false, maxLength, replayable: true }, caller);
  const nc = carry.length;
  const leaves = [...carry, ...x];
  const literal = new Uint8Array(leaves.length);
  let out: unknown;
  try {
    const inputs = leaves.map((leaf, k) => {
      if (leaf instanceof Real || leaf instanceof Tensor) live(leaf, caller);
      literal[k] = typeof leaf === "number" || isConcreteTensor(leaf) ? 1 : 0;
      const p = primalOf(leaf, `${caller}'s ${k < nc ? "carry" : "x"}`);
      return typeof p === "number" ? new Real(t, t.tape.input(k, p)) : new Tensor(t, t.tape.tensorInput(k, ownedCopy(p)));
    });
    const restore = captureOuter(t);
    try {
      out = fn(call.unflatten(carryShape, inputs.slice(0, nc)) as never, call.unflatten(xShape, inputs.slice(nc)) as never);
    } finally {
      restore();
    }
  } catch (e) {
    closeTrace(t, true);
    throw e;
  }
  if (out === DONE) {
    closeTrace(t, true);
    return null;
  }
  let atoms: number[];
  let yShape: Shape | null;
  try {
    if (!Array.isArray(out) || out.length < 1 || out.length > 2) {
      throw new WengertError(
        `${caller}: the body returned ${Array.isArray(out) ? `an array of length ${out.length}` : typeof out} at iteration ${iteration}; ` +
          "it must return [carry, y] (or [carry]).",
      );
    }
    const c = flatten(out[0], "carry", isOperand, "the carry", (m) => new ShapeError(`${caller}: at iteration ${iteration}, ${m}`), leafShape);
    if (!sameType(c.shape, carryShape)) {
      throw carryChanged(caller, iteration, c.shape, carryShape);
    }
    const y =
      out[1] === undefined
        ? { shape: null, leaves: [] }
        : flatten(out[1], "y", isOperand, "y", (m) => new ShapeError(`${caller}: at iteration ${iteration}, ${m}`), leafShape);
    yShape = y.shape;
    atoms = [...c.leaves, ...y.leaves].map((leaf) => atomOf(t, leaf));
  } catch (e) {
    closeTrace(t, true);
    throw e;
  }
  closeTrace(t);
  return closeConvert(t, { nc, nx: x.length, literal, carryShape, xShape, yShape, atoms, leaves });
}

/** The body's trace with its free variables made inputs (deduplicated by their variable in the target). */
function closeConvert(
  t: Trace,
  s: { nc: number; nx: number; literal: Uint8Array; carryShape: Shape; xShape: Shape; yShape: Shape | null; atoms: number[]; leaves: readonly Leaf[] },
): TracedBody {
  const tape = t.tape;
  const { op, a, length: n } = tape;
  // the target: the innermost live trace among the leaves and the captured values
  let target: Trace | null = null;
  for (const v of [...s.leaves, ...tape.frees]) {
    if ((v instanceof Real || v instanceof Tensor) && !v.trace.closed && (target === null || v.trace.level > target.level)) target = v.trace;
  }
  const slots = new Map<number, number>();
  const pAtoms: number[] = [];
  const pValues: Operand[] = [];
  const slotOf = new Int32Array(n).fill(-1);
  let shared = false;
  for (let i = 0; i < n; i++) {
    if (op[i] !== FREE) continue;
    const atom = atomOf(target!, tape.frees[a[i]] as Operand);
    let q = slots.get(atom);
    if (q === undefined) {
      slots.set(atom, (q = pAtoms.length));
      pAtoms.push(atom);
      pValues.push(tape.frees[a[i]] as Operand);
    } else shared = true;
    slotOf[i] = q;
  }
  const base = s.nc + s.nx;
  const values = tape.val.slice(0, n);
  const buffers = (v: number): number | Float64Array => (tape.x[v] !== 0 && tape.isTensor(v) ? tape.buf(v) : values[v]);
  let term: TraceTerm;
  let atoms = s.atoms;
  let guards = t.guards as Guard[];
  if (!shared) {
    // a free variable becomes an input where it stands
    for (let i = 0; i < n; i++) {
      if (slotOf[i] < 0) continue;
      op[i] = INPUT;
      a[i] = base + slotOf[i];
    }
    term = new TraceTerm(tape, [{ name: "in", shape: { kind: "tuple", items: [] }, atoms: [] }], { shape: { kind: "tuple", items: [] }, atoms });
  } else {
    // two free variables of the body are one variable of the target: one input for both
    const map = new Int32Array(n);
    const copy = new Tape();
    const made = new Map<number, number>();
    for (let i = 0; i < n; i++) {
      if (slotOf[i] >= 0) {
        const q = slotOf[i];
        let v = made.get(q);
        if (v === undefined) {
          v = tape.x[i] === 0 ? copy.input(base + q, values[i]) : copy.tensorInput(base + q, { dims: tape.dims(i), data: tape.buf(i) });
          made.set(q, v);
        }
        map[i] = v;
      } else map[i] = copyInstruction(tape, i, copy, map);
    }
    atoms = atoms.map((v) => map[v]);
    guards = guards.map((g) => ({ ...g, a: map[g.a], b: map[g.b] }));
    term = new TraceTerm(copy, [{ name: "in", shape: { kind: "tuple", items: [] }, atoms: [] }], { shape: { kind: "tuple", items: [] }, atoms });
    const old = buffers;
    return finish(term, s, pAtoms, pValues, target, guards, t.opaque, (v) => old(map.indexOf(v)));
  }
  return finish(term, s, pAtoms, pValues, target, guards, t.opaque, buffers);
}

function finish(
  term: TraceTerm,
  s: { nc: number; nx: number; literal: Uint8Array; carryShape: Shape; xShape: Shape; yShape: Shape | null },
  pAtoms: number[],
  pValues: Operand[],
  target: Trace | null,
  guards: readonly Guard[],
  opaque: boolean,
  value: (v: number) => number | Float64Array,
): TracedBody {
  const literal = new Uint8Array(s.nc + s.nx + pAtoms.length);
  literal.set(s.literal);
  const body = new Body(term, s.nc, s.nx, pAtoms.length, literal, s.carryShape, s.xShape, s.yShape, guards, opaque);
  return { body, target, pAtoms, pValues, value };
}
