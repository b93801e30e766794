/**
 * @file A loop body's term: the trace term that a scan applies per iteration, and what it
 * says about one iteration (what each carry leaf becomes, where y's leaves come from,
 * which literal values the tape would fold), and its structure (hash, sameAs).
 *
 * The term is the body traced at one iteration (trace/trace-body.ts): inputs are the
 * carry's leaves, then x's, then the values it captured (`p`), its output ⟨carry′, y⟩.
 * A leaf that is a number (a literal carry such as a time counter, a data point of xs) is
 * an input too, marked literal: the loop written out computes with it as a literal, so
 * what depends on literals alone is a literal there (no derivative, no tie, no kink), and
 * the tape folds `x + (−0)`, `x · 1` and `x⁰` when such a value is −0, 1 or 0. Those
 * values are decisions as much as predicates are: a run of iterations applying this term
 * holds only where they do not occur (`folds`), as it holds only where the guards do.
 */
import type { Dims } from "@wengert/ops";
import type { Shape } from "../structure.js";
import { ARITY, CODE, CONST, FIRST_PRIMITIVE, INPUT, IS_TENSOR_OP, KINKS, tensorSpec } from "./opcodes.js";
import { Tape } from "./tape.js";
import { TraceTerm } from "./term.js";
import { ownedCopy } from "./host-tensor.js";
import { copyInstruction } from "./copy-instruction.js";
import type { Guard } from "./tracer.js";

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
    return this.carryKind.every(
      (kind, k) => kind === "identity" || (kind === "literal" && this.literal[k] === 1) || (kind === "internal" && this.literal[k] === 0),
    );
  }

  /**
   * Whether a run of the body can stop at a decision (eval/scan-forward.ts `holds`): a guard,
   * a value marked literal that the tape would fold, or, when ties are reported, a kink or a
   * tensor primitive's tie. A body with none holds at every point: a run of it is a function
   * of its arguments alone.
   */
  decides(reportTies: boolean): boolean {
    return this.guards.length > 0 || this.folds.length > 0 || (reportTies && (this.kinked.length > 0 || this.tensorTies.length > 0));
  }

  /** This term with inputs marked literal as `literal` says (the same instructions: literal inputs are inputs too). */
  marked(literal: Uint8Array): Body {
    const mask = new Uint8Array(this.literal.length);
    mask.set(literal.subarray(0, this.nc + this.nx));
    if (mask.every((l, k) => l === this.literal[k])) return this;
    const key = mask.join("");
    let b = this.remarked.get(key);
    if (b === undefined) {
      b = new Body(this.term, this.nc, this.nx, this.np, mask, this.carryShape, this.xShape, this.yShape, this.guards, this.opaque);
      this.remarked.set(key, b);
    }
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
    const guards = this.guards.flatMap((g) => {
      const bothConstant = to.op[map[g.a]] === CONST && to.op[map[g.b]] === CONST;
      return bothConstant ? [] : [{ ...g, a: map[g.a], b: map[g.b], distinct: g.distinct && map[g.a] !== map[g.b] }];
    });
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
    if (o.hash !== this.hash || o.nc !== this.nc || o.nx !== this.nx || o.np !== this.np) return false;
    if (t.length !== u.length || o.guards.length !== this.guards.length) return false;
    // the structures of the values around the leaves, and whether a value was read (no guard records that)
    if (o.opaque || this.opaque || !sameShape(this.carryShape, o.carryShape) || !sameShape(this.xShape, o.xShape)) return false;
    if ((this.yShape === null) !== (o.yShape === null) || (this.yShape !== null && !sameShape(this.yShape, o.yShape!))) return false;
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
