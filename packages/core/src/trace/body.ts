/**
 * @file A loop body traced once: the trace term that a scan applies per iteration.
 *
 * The body `(carry, x) ↦ [carry′, y]` is traced at one iteration as a term of its own
 * (the paper's Sec. 3: a trace term `c, x. C`), one level deeper than every open trace,
 * which it captures while it runs (tracer.ts `captureOuter`): every operation of the body
 * is in its term, an operation on outer values alone included, exactly as in the loop
 * written out. The outer traced values it uses become inputs of their own (closure
 * conversion), so the term is closed: inputs are the carry's leaves, then x's, then the
 * captured values (`p`).
 *
 * A leaf that is a number (a literal carry such as a time counter, a data point of xs) is
 * an input too, marked literal: the loop written out computes with it as a literal, so
 * what depends on literals alone is a literal there (no derivative, no tie, no kink), and
 * the tape folds `x + (−0)`, `x · 1` and `x⁰` when such a value is −0, 1 or 0. Those
 * values are decisions as much as predicates are: a run of iterations applying this term
 * holds only where they do not occur (`folds`), as it holds only where the guards do.
 */
import { predicates, showDims, type Dims, type UnaryOp } from "@wengert/ops";
import { ShapeError, WengertError } from "../errors.js";
import { flatten, typeString, type Shape } from "../structure.js";
import { ARITY, CODE, CONST, FIRST_PRIMITIVE, FREE, INPUT, IS_TENSOR_OP, KINKS, primitiveOf, tensorSpec } from "./opcodes.js";
import { Tape } from "./tape.js";
import { TraceTerm } from "./term.js";
import { isConcreteTensor, ownedCopy, toDense } from "./host-tensor.js";
import { atomOf, isOperand, live, Real, Tensor, type Operand } from "./traced.js";
import { primalOf } from "./record.js";
import { captureOuter, closeTrace, openTrace, openTraces, type Guard, type Trace } from "./tracer.js";

/** What a carry leaf becomes after one iteration. */
export type CarryKind =
  /** computed by the body from traced values: a new variable per iteration */
  | "internal"
  /** the carry-in leaf itself (c′ = c): one variable through the loop */
  | "identity"
  /** a literal (computed from literals alone, or a constant): a number */
  | "literal"
  /** anything else (another input, a duplicate): the loop is written out there */
  | "other";

/** Where a leaf of y comes from. */
export type YSource =
  | { readonly kind: "var" } // a variable of the body (computed, or a literal computed from literals)
  | { readonly kind: "const"; readonly value: number } // a real constant of the body
  | { readonly kind: "carry"; readonly k: number } // the carry-in leaf k
  | { readonly kind: "x"; readonly l: number } // x's leaf l
  | { readonly kind: "p"; readonly q: number }; // a captured value

/** `v` must not be −0 (an addition folds it), 1 (a product) or 0 (an exponent). */
export interface Fold {
  readonly v: number;
  readonly code: number;
}

export class Body {
  /** Input k's variable: carry leaves, then x's, then the captured values. */
  readonly inputVar: Int32Array;
  /** Per input: a literal in the loop written out (carry and x leaves that were numbers or untraced tensors). */
  readonly literal: Uint8Array;
  /** Per variable: computed from literals alone (a literal in the loop written out). */
  readonly literalOnly: Uint8Array;
  readonly carryKind: CarryKind[];
  readonly ySource: YSource[];
  readonly folds: Fold[];
  /** Kinked primitives whose argument is not a literal (a tie at their kink). */
  readonly kinked: Int32Array;
  /** Tensor primitives with a tie rule whose result is not a literal. */
  readonly tensorTies: Int32Array;
  /** Whether the term is of reals only (compiled to JavaScript) or holds tensors (interpreted). */
  readonly reals: boolean;
  /** The dims of each input (`[]` for a real). */
  readonly inputDims: Dims[];

  constructor(
    /** The term: parameter `in` (all inputs, in order), output ⟨carry′ leaves, y leaves⟩. */
    readonly term: TraceTerm,
    readonly nc: number,
    readonly nx: number,
    readonly np: number,
    literal: Uint8Array,
    readonly carryShape: Shape,
    readonly xShape: Shape,
    /** y's type; null when the body returns no y. */
    readonly yShape: Shape | null,
    readonly guards: readonly Guard[],
    /** The body read a traced value or decided a mask on one: no guard records that decision. */
    readonly opaque: boolean,
  ) {
    const tape = term.tape;
    const n = tape.length;
    const { op, a } = tape;
    this.literal = literal;
    this.inputVar = new Int32Array(nc + nx + np).fill(-1);
    for (let i = 0; i < n; i++) if (op[i] === INPUT) this.inputVar[a[i]] = i;
    this.inputDims = Array.from(this.inputVar, (v) => tape.dims(v));
    // literal-only: literal inputs, constants, and what is computed from them alone
    const lit = (this.literalOnly = new Uint8Array(n));
    for (let i = 0; i < n; i++) {
      if (op[i] === INPUT) lit[i] = literal[a[i]];
      else if (op[i] === CONST) lit[i] = 1;
      else if (op[i] < FIRST_PRIMITIVE) continue;
      else if (tape.x[i] === 0) lit[i] = lit[a[i]] & (ARITY[op[i]] === 2 ? lit[tape.b[i]] : 1);
      else lit[i] = tape.args(i).every((v) => lit[v] === 1) ? 1 : 0;
    }
    this.reals = tape.tensorCount === 0;
    this.folds = foldsOf(tape, lit);
    const kinked: number[] = [];
    const tensorTies: number[] = [];
    for (let i = 0; i < n; i++) {
      if (op[i] < FIRST_PRIMITIVE || lit[i]) continue;
      if (IS_TENSOR_OP[op[i]]) {
        if (tensorSpec(op[i]).tie !== undefined) tensorTies.push(i);
      } else if (KINKS[op[i]] !== undefined && !lit[a[i]]) kinked.push(i);
    }
    this.kinked = Int32Array.from(kinked);
    this.tensorTies = Int32Array.from(tensorTies);
    const out = term.output.atoms;
    const inputOf = (v: number): number => (op[v] === INPUT ? a[v] : -1);
    this.carryKind = Array.from({ length: nc }, (_, k): CarryKind => {
      const v = out[k];
      const dup = out.slice(0, nc).indexOf(v) !== k;
      if (inputOf(v) === k) return "identity";
      if (lit[v]) return "literal";
      if (op[v] >= FIRST_PRIMITIVE && !dup) return "internal";
      return "other";
    });
    this.ySource = out.slice(nc).map((v): YSource => {
      const k = inputOf(v);
      if (k < 0) return op[v] === CONST && tape.x[v] === 0 ? { kind: "const", value: tape.val[v] } : { kind: "var" };
      if (k < nc) return { kind: "carry", k };
      if (k < nc + nx) return { kind: "x", l: k - nc };
      return { kind: "p", q: k - nc - nx };
    });
  }

  get length(): number {
    return this.term.tape.length;
  }

  /** The carry′ leaves' variables. */
  get carryOut(): readonly number[] {
    return this.term.output.atoms.slice(0, this.nc);
  }

  /** y's leaves' variables. */
  get yOut(): readonly number[] {
    return this.term.output.atoms.slice(this.nc);
  }

  /**
   * Whether the next iteration can apply this term too: every carry leaf is computed,
   * passed on, or a literal, and is a literal exactly where it came in as one (so the
   * next iteration's inputs are marked as this one's were).
   */
  get chains(): boolean {
    if (this.opaque) return false;
    return this.carryKind.every((kind, k) => kind === "identity" || (kind === "literal" && this.literal[k] === 1) || (kind === "internal" && this.literal[k] === 0));
  }

  /** This term with inputs marked literal as `literal` says (the same instructions: literal inputs are inputs too). */
  marked(literal: Uint8Array): Body {
    const mask = new Uint8Array(this.literal.length);
    mask.set(literal.subarray(0, this.nc + this.nx));
    if (mask.every((l, k) => l === this.literal[k])) return this;
    const key = mask.join("");
    let b = this.remarked.get(key);
    if (b === undefined) this.remarked.set(key, (b = new Body(this.term, this.nc, this.nx, this.np, mask, this.carryShape, this.xShape, this.yShape, this.guards, this.opaque)));
    return b;
  }

  private readonly remarked = new Map<string, Body>();

  /**
   * This term at one iteration whose literal inputs have the values `value(k)`: each put in
   * as a literal, the tape folding what it folds (x · 1, x + (−0), x⁰, operations on
   * literals), as the loop written out records that iteration. For that iteration only.
   */
  atLiterals(value: (k: number) => number | Float64Array): Body {
    // the same literal values again (the first iteration of a loop run call after call): the same term
    const values = Array.from(this.literal, (l, k) => (l ? value(k) : 0));
    const key = this.reals ? values.map((v) => (Object.is(v, -0) ? "-0" : String(v))).join(",") : null;
    const known = key === null ? undefined : this.literalTerms.get(key);
    if (known !== undefined) return known;
    const made = this.atValues((k) => values[k]);
    if (key !== null && this.literalTerms.size < 16) this.literalTerms.set(key, made);
    return made;
  }

  private readonly literalTerms = new Map<string, Body>();

  /** Plans made for this body's runs (diff/reverse-plan.ts), by what they were made for. */
  readonly plans = new Map<string, unknown>();

  private atValues(value: (k: number) => number | Float64Array): Body {
    const from = this.term.tape;
    const to = new Tape();
    const map = new Int32Array(from.length);
    for (let k = 0; k < this.inputVar.length; k++) {
      // every input keeps its place (an input now unused too)
      const v = this.inputVar[k];
      const inputAtom = from.x[v] === 0 ? to.input(k, from.val[v]) : to.tensorInput(k, { dims: from.dims(v), data: from.buf(v) });
      if (!this.literal[k]) map[v] = inputAtom;
      else {
        const c = value(k);
        map[v] = typeof c === "number" ? to.constant(c) : to.tensorConstant(ownedCopy({ dims: from.dims(v), data: c }));
      }
    }
    for (let i = 0; i < from.length; i++) if (from.op[i] !== INPUT) map[i] = copyInstruction(from, i, to, map);
    const guards = this.guards.flatMap((g) => (to.op[map[g.a]] === CONST && to.op[map[g.b]] === CONST ? [] : [{ ...g, a: map[g.a], b: map[g.b], distinct: g.distinct && map[g.a] !== map[g.b] }]));
    const term = new TraceTerm(to, this.term.params, { shape: this.term.output.shape, atoms: this.term.output.atoms.map((v) => map[v]) });
    return new Body(term, this.nc, this.nx, this.np, this.literal, this.carryShape, this.xShape, this.yShape, guards, this.opaque);
  }

  private hashMemo = -1;

  /**
   * A hash of the term's structure (instructions, literals, guards, inputs marked literal,
   * outputs): terms of equal structure (`sameAs`) compute the same function, so code
   * compiled for one serves the other. A number, not a string: a body is traced per call.
   */
  get hash(): number {
    if (this.hashMemo >= 0) return this.hashMemo;
    const t = this.term.tape;
    let h = mix(mix(mix(FNV, this.nc), this.nx), this.np);
    for (const l of this.literal) h = mix(h, l);
    for (let i = 0; i < t.length; i++) {
      const code = t.op[i];
      h = mix(h, code);
      if (code === CONST) h = t.x[i] === 0 ? mixNumber(h, t.val[i]) : t.buf(i).reduce(mixNumber, h);
      else if (code === INPUT) h = mix(h, t.a[i]);
      else if (t.x[i] === 0) h = mix(mix(h, t.a[i]), ARITY[code] === 2 ? t.b[i] : 0);
      else {
        for (const v of t.args(i)) h = mix(h, v);
        for (const d of t.dims(i)) h = mix(h, d);
        const p = t.params(i) as { body?: Body } | undefined;
        h = p !== undefined && p !== null && p.body instanceof Body ? mix(h, p.body.hash) : mix(h, stringHash(JSON.stringify(p ?? null)));
      }
    }
    for (const v of this.term.output.atoms) h = mix(h, v);
    for (const g of this.guards) h = mix(mix(mix(mix(h, g.a), g.b), g.outcome ? 1 : 2), g.distinct ? 1 : 2);
    return (this.hashMemo = h >>> 1);
  }

  /** Whether `o` is this term's structure (see `hash`). */
  sameAs(o: Body): boolean {
    if (o === this) return true;
    const t = this.term.tape;
    const u = o.term.tape;
    if (o.hash !== this.hash || o.nc !== this.nc || o.nx !== this.nx || o.np !== this.np || t.length !== u.length || o.guards.length !== this.guards.length) return false;
    // the structures of the values around the leaves, and whether a value was read (no guard records that)
    if (o.opaque || this.opaque || !sameShape(this.carryShape, o.carryShape) || !sameShape(this.xShape, o.xShape) || (this.yShape === null) !== (o.yShape === null) || (this.yShape !== null && !sameShape(this.yShape, o.yShape!))) return false;
    if (!this.literal.every((l, k) => l === o.literal[k])) return false;
    const out = this.term.output.atoms;
    if (out.length !== o.term.output.atoms.length || !out.every((v, j) => v === o.term.output.atoms[j])) return false;
    for (let i = 0; i < t.length; i++) {
      const code = t.op[i];
      if (u.op[i] !== code || u.x[i] !== t.x[i]) return false;
      if (code === CONST) {
        if (t.x[i] === 0 ? !Object.is(t.val[i], u.val[i]) : !sameBuffer(t.buf(i), u.buf(i))) return false;
      } else if (code === INPUT) {
        if (t.a[i] !== u.a[i] || !sameList(t.dims(i), u.dims(i))) return false;
      } else if (t.x[i] === 0) {
        if (t.a[i] !== u.a[i] || (ARITY[code] === 2 && t.b[i] !== u.b[i])) return false;
      } else {
        if (!sameList(t.args(i), u.args(i)) || !sameList(t.dims(i), u.dims(i))) return false;
        const p = t.params(i) as { body?: Body } | undefined;
        const q = u.params(i) as { body?: Body } | undefined;
        if (p !== undefined && p !== null && p.body instanceof Body) {
          const { body: pb, ...prest } = p as { body: Body } & Record<string, unknown>;
          const { body: qb, ...qrest } = q as { body: Body } & Record<string, unknown>;
          if (!(qb instanceof Body) || !pb.sameAs(qb) || JSON.stringify(prest, omitStash) !== JSON.stringify(qrest, omitStash)) return false;
        } else if (JSON.stringify(p ?? null) !== JSON.stringify(q ?? null)) return false;
      }
    }
    return this.guards.every((g, j) => {
      const h = o.guards[j];
      return g.pred === h.pred && g.a === h.a && g.b === h.b && g.outcome === h.outcome && g.distinct === h.distinct;
    });
  }
}

const FNV = 0x811c9dc5;
const mix = (h: number, v: number): number => Math.imul(h ^ (v | 0), 0x01000193) >>> 0;
const scratch = new Float64Array(1);
const words = new Int32Array(scratch.buffer);
/** A number's bits (−0 apart from 0, every NaN alike). */
function mixNumber(h: number, v: number): number {
  scratch[0] = v;
  return mix(mix(h, words[0]), words[1]);
}
function stringHash(s: string): number {
  let h = FNV;
  for (let i = 0; i < s.length; i++) h = mix(h, s.charCodeAt(i));
  return h;
}
const sameShape = (p: Shape, q: Shape): boolean => p === q || JSON.stringify(p) === JSON.stringify(q);
const sameList = (p: readonly number[], q: readonly number[]): boolean => p.length === q.length && p.every((v, i) => v === q[i]);
const sameBuffer = (p: Float64Array, q: Float64Array): boolean => p.length === q.length && p.every((v, i) => Object.is(v, q[i]));
/** A scan's params compared without what its traced run stored (its stash). */
const omitStash = (k: string, v: unknown): unknown => (k === "stash" ? undefined : v);

/** Additions, products and powers that the tape folds when an argument that is a literal here is −0, 1 or 0. */
function foldsOf(tape: Tape, lit: Uint8Array): Fold[] {
  const { op, a, b, x, length } = tape;
  const folds: Fold[] = [];
  const scalarLiteral = (v: number): boolean => lit[v] === 1 && op[v] !== CONST && x[v] === 0;
  for (let i = 0; i < length; i++) {
    const code = op[i];
    if (code < FIRST_PRIMITIVE || IS_TENSOR_OP[code] || ARITY[code] !== 2 || lit[i]) continue;
    if (code === CODE.add || code === CODE.mul) {
      if (scalarLiteral(a[i])) folds.push({ v: a[i], code });
      if (scalarLiteral(b[i])) folds.push({ v: b[i], code });
    } else if (code === CODE.pow && scalarLiteral(b[i])) folds.push({ v: b[i], code });
  }
  return folds;
}

/** Whether a value that is a literal here would make the tape fold (see Fold). */
export function folds(code: number, value: number): boolean {
  return code === CODE.add ? Object.is(value, -0) : code === CODE.mul ? value === 1 : value === 0;
}

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
    found.push({ at: Math.max(g.a, g.b), what: `${g.pred}(${va}, ${vb}) was decided at a tie (both sides equal), taking the branch where ${va} ${predicates[g.pred].symbol} ${vb} is ${outcome}` });
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
      if (at >= 0) found.push({ at: i, what: `${p.name} was evaluated at its kink (element ${at} of a tensor ${showDims(tape.dims(tape.a[i]))} is ${arg[at]}); wengert uses ${atKink}` });
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

const leafShape = (v: Operand): Shape =>
  typeof v === "number" || v instanceof Real ? { kind: "real" } : v instanceof Tensor ? { kind: "tensor", dims: v.dims, container: "ndarray" } : { kind: "tensor", dims: toDense(v as never, "a leaf").dims, container: "ndarray" };

/** The error for a carry whose type changed at iteration i. */
export function carryChanged(caller: string, i: number, got: Shape, want: Shape): ShapeError {
  return new ShapeError(`${caller}: the body returned a carry of type ${typeString(got)} at iteration ${i}, but it came in as ${typeString(want)}; a carry keeps its type and shape from one iteration to the next.`);
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
  const t = openTrace({ ties: "ignore", checkNaN: false, maxLength, replayable: true }, caller);
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
      throw new WengertError(`${caller}: the body returned ${Array.isArray(out) ? `an array of length ${out.length}` : typeof out} at iteration ${iteration}; it must return [carry, y] (or [carry]).`);
    }
    const c = flatten(out[0], "carry", isOperand, "the carry", (m) => new ShapeError(`${caller}: at iteration ${iteration}, ${m}`), leafShape);
    if (!sameType(c.shape, carryShape)) {
      throw carryChanged(caller, iteration, c.shape, carryShape);
    }
    const y = out[1] === undefined ? { shape: null, leaves: [] } : flatten(out[1], "y", isOperand, "y", (m) => new ShapeError(`${caller}: at iteration ${iteration}, ${m}`), leafShape);
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

/** Copy instruction i of `from` into `to`, its arguments through `map`; returns its variable there. */
export function copyInstruction(from: Tape, i: number, to: Tape, map: Int32Array): number {
  const code = from.op[i];
  if (code === CONST) return from.x[i] === 0 ? to.constant(from.val[i]) : to.tensorConstant(ownedCopy({ dims: from.dims(i), data: from.buf(i) }));
  if (code === INPUT) return from.x[i] === 0 ? to.input(from.a[i], from.val[i]) : to.tensorInput(from.a[i], { dims: from.dims(i), data: from.buf(i) });
  if (code === FREE) throw new WengertError("internal: a free variable left in a closed term");
  if (from.x[i] === 0) return to.append(code, map[from.a[i]], map[from.b[i]]);
  const args = from.args(i).map((v) => map[v]);
  if (IS_TENSOR_OP[code]) return to.appendOp(code, args, from.params(i), from.dims(i));
  return to.applyElementwise(code, args[0], args[1] ?? 0, from.dims(i));
}
