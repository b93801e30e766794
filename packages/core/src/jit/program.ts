/**
 * @file The replay of a trace as statements, before any loop: the forward code (the
 * values the gradient needs, every guard and kink right after its arguments) and the
 * reverse sweep decided ahead (which contribution reaches a variable first), each
 * statement a shape and its indices. gradient.ts rolls them into loops and compiles them.
 * In forward code alone (jit's), a statement reading a cheap function of one input (x²,
 * 1 − x, 2x: CHEAP) computes it again from the input instead of loading it: one loop
 * then does not store for the next what the next can make from what it reads anyway.
 * In a reverse sweep, a unary rule reading a few cheap operations on at most two inputs
 * computes them again too (reverseRemat), and the forward code computes only what the
 * guards, the kinks, the rules and the outputs asked for read: for W1's gradient alone,
 * nothing at all.
 */
import type { PredicateName } from "@wengert/ops";
import { activity } from "../diff/place.js";
import { ARITY, CODE, CONST, FIRST_PRIMITIVE, INPUT, KINKS, scalarSpec } from "../trace/opcodes.js";
import type { TraceTerm } from "../trace/term.js";
import type { Guard } from "../trace/tracer.js";
import { COMPARISON, javascript, literal } from "./javascript.js";
import { Shapes, Statements } from "./reroll.js";
import { sinkSingleUses } from "./schedule.js";
import type { Space, Use, UsesOf } from "./registers.js";
import type { At, Template } from "./source.js";

/** A statement shape's code, given the places its accesses name and its indices. */
type Form = (at: At, idx: readonly string[]) => string;

/** Literals are told apart by their variable (the tape keeps one per value): below this many. */
export const LITERAL_IDS = 2 ** 26;

/**
 * Primitives whose value is computed again where it is read, when they apply to one
 * input (and literals): one operation on an input the code reads anyway costs less than
 * its store and load (rematerialisation). The same operation on the same double: the
 * same number.
 */
const CHEAP: ReadonlySet<number> = new Set([CODE.add, CODE.sub, CODE.mul, CODE.neg, CODE.square]);

/** Primitives in an expression a reverse rule computes again (Program.reverseRemat): a few operations cost less than a store and a load. */
const REMAT_NODES = 3;

/** A remat expression: its form's id and its inputs (one or two variables). */
interface Remat {
  readonly id: number;
  readonly inputs: readonly number[];
}

/**
 * What a program computes besides its guards and kinks: by default the output's value and
 * the reverse sweep (compileGrad's); `reverse: false` the forward code alone, for the
 * values of `outputs` (a jitted function's, jit/forward.ts).
 */
export interface ProgramOptions {
  readonly reverse?: boolean;
  readonly outputs?: readonly number[];
}

/**
 * The replay of one trace as statements: the forward code (values, guards, kinks) and
 * the reverse sweep decided ahead, each statement a shape and its indices. Shapes are
 * interned once per kind of statement (a number built from the primitive, the literals
 * and the sweep's decisions), so that a long trace builds no string per statement.
 */
export class Program {
  readonly shapes = new Shapes();
  private readonly forms: Form[] = [];
  private readonly sigs = new Map<number, Map<number, number>>();
  private readonly remats = new Map<number, Map<number, Map<number, Map<number, number>>>>();
  readonly template: Template = (sig, at, idx) => this.forms[sig](at, idx);
  readonly usesOf: UsesOf;
  /** Which variables a contribution reaches (the reverse sweep's `has`, decided ahead). */
  readonly has: Uint8Array;
  /** Per instruction i and argument k, at 2i + k: 0 no contribution, 1 the first (=), 2 a later one (+=). */
  private readonly how: Uint8Array;
  private readonly active: Uint8Array;
  private readonly need: Uint8Array;
  private readonly guardsAt = new Map<number, Guard[]>();
  /** The order of the forward statements' instructions (schedule.ts), or null for index order. */
  private readonly schedule: Int32Array | null;
  private readonly rematIdsByKey = new Map<string, number>();

  constructor(
    private readonly term: TraceTerm,
    guards: readonly Guard[],
    private readonly reportTies: boolean,
    private readonly options: ProgramOptions = {},
  ) {
    const { op, a, b, length: n } = term.tape;
    const out = term.output.atoms[0];
    this.usesOf = recordUses(this.forms);
    this.active = activity(term);
    const has = (this.has = new Uint8Array(n));
    const how = (this.how = new Uint8Array(2 * n));
    // the reverse sweep once, for which contribution reaches a variable first: an argument
    // gets one where it is active and the rule is not a symbolic zero
    if (this.active[out] && options.reverse !== false) has[out] = 1;
    for (let i = n - 1; i >= 0; i--) {
      if (!has[i] || op[i] < FIRST_PRIMITIVE) continue;
      for (let k = 0; k < ARITY[op[i]]; k++) {
        const v = k === 0 ? a[i] : b[i];
        if (!this.active[v] || zeroRule(op[i], k)) continue;
        how[2 * i + k] = has[v] ? 2 : 1;
        has[v] = 1;
      }
    }
    // the forward values needed: the output, guards, kinks, and what the rules read
    const need = (this.need = new Uint8Array(n));
    for (const v of options.outputs ?? [out]) need[v] = 1;
    for (const g of guards) need[g.a] = need[g.b] = 1;
    for (let i = 0; i < n; i++) {
      if (this.kinked(i)) need[a[i]] = 1;
      if (!(this.has[i] && op[i] >= FIRST_PRIMITIVE)) continue;
      // what the rules of the contributions made read (x + y's read nothing: W1's sum is not needed)
      for (let k = 0; k < ARITY[op[i]]; k++) {
        if (how[2 * i + k] === 0) continue;
        const r = ruleReads(op[i], k);
        if (r & READS_A && this.reverseRemat(i) === null) need[a[i]] = 1;
        if (r & READS_B) need[b[i]] = 1;
        if (r & READS_OUT) need[i] = 1;
      }
    }
    // … and what the forward statements read, but what they compute again from an input
    for (let i = n - 1; i >= 0; i--) {
      if (!need[i] || op[i] < FIRST_PRIMITIVE) continue;
      const [, , ra, rb] = this.rematIds(i);
      if (ra < 0) need[a[i]] = 1;
      if (ARITY[op[i]] === 2 && rb < 0) need[b[i]] = 1;
    }
    // a guard is checked once its later argument is computed (literals are always there)
    for (const g of guards) {
      const at = Math.max(op[g.a] === CONST ? -1 : g.a, op[g.b] === CONST ? -1 : g.b);
      if (at < 0) continue; // decided on literals: it comes out the same everywhere
      if (!this.guardsAt.has(at)) this.guardsAt.set(at, []);
      this.guardsAt.get(at)!.push(g);
    }
    // forward code alone (jit's): each value read once is computed where it is read. Beside
    // a reverse sweep (compileGrad's) the forward values are kept for the rules: no use.
    this.schedule = options.reverse === false ? this.sunk(guards) : null;
  }

  /** The forward statements' order with each value read by one statement sunk to it (schedule.ts). */
  private sunk(guards: readonly Guard[]): Int32Array {
    const { op, a, b, length: n } = this.term.tape;
    const emitted = new Uint8Array(n);
    const reads = new Int32Array(2 * n).fill(-1);
    const pinned = new Uint8Array(n);
    for (const g of guards) pinned[g.a] = pinned[g.b] = 1;
    for (let i = 0; i < n; i++) {
      const kinked = this.kinked(i);
      if (this.need[i] && op[i] >= FIRST_PRIMITIVE) {
        // what its statement reads: not a literal, nor what it computes again from an input
        const [la, lb, ra, rb] = this.rematIds(i);
        if (la < 0 && ra < 0) reads[2 * i] = a[i];
        if (ARITY[op[i]] === 2 && lb < 0 && rb < 0) reads[2 * i + 1] = b[i];
      } else if (!kinked && !this.guardsAt.has(i)) continue;
      // a kink check reads its argument where it is stored, even where the statement computes it again
      if (kinked) reads[2 * i] = a[i];
      emitted[i] = 1;
    }
    return sinkSingleUses({ emitted, reads, pinned });
  }

  private kinked(i: number): boolean {
    const op = this.term.tape.op;
    return this.reportTies && op[i] >= FIRST_PRIMITIVE && KINKS[op[i]] !== undefined;
  }

  /** The literal a variable is, as an id (its variable), or -1. */
  private literalId(v: number): number {
    return this.term.tape.op[v] === CONST ? v : -1;
  }

  /** Literals are written into the code (their values are part of a statement's shape). */
  private literalAt(v: number): string | null {
    const tape = this.term.tape;
    return tape.op[v] === CONST ? literal(tape.val[v]) : null;
  }

  /**
   * The shape for (kind, la, lb, ra, rb): `kind` a small number naming everything but the
   * literals and what is computed again, la and lb literal ids or -1, ra and rb rematId's
   * or -1; `make` gives the key and form the first time.
   */
  private sig(kind: number, la: number, lb: number, make: () => [string, Form], ra = -1, rb = -1): number {
    let byLiterals = this.sigs.get(kind);
    if (byLiterals === undefined) this.sigs.set(kind, (byLiterals = new Map()));
    const k = (la + 1) * LITERAL_IDS + (lb + 1);
    const byRemat = ra < 0 && rb < 0 ? byLiterals : inner(inner(inner(this.remats, kind), k), ra);
    const key = ra < 0 && rb < 0 ? k : rb;
    let id = byRemat.get(key);
    if (id === undefined) {
      const [name, form] = make();
      id = this.shapes.of(name);
      this.forms[id] = form;
      byRemat.set(key, id);
    }
    return id;
  }

  /**
   * What y's value is computed again from where a statement reads it, instead of loaded:
   * -1 unless y is a CHEAP primitive of one input (its other argument a literal, or the
   * same input); else a number naming its form (the primitive, where the input is, the literal).
   */
  private rematId(y: number): number {
    const { op, a, b } = this.term.tape;
    const code = op[y];
    if (!CHEAP.has(code) || this.literalId(y) >= 0) return -1;
    if (ARITY[code] === 1) return op[a[y]] === INPUT ? code * 4 * LITERAL_IDS : -1;
    const [ka, kb] = [op[a[y]], op[b[y]]];
    if (ka === INPUT && kb === CONST) return (code * 4 + 1) * LITERAL_IDS + b[y] + 1;
    if (ka === CONST && kb === INPUT) return (code * 4 + 2) * LITERAL_IDS + a[y] + 1;
    if (ka === INPUT && a[y] === b[y]) return (code * 4 + 3) * LITERAL_IDS;
    return -1;
  }

  /**
   * Unary instruction i's argument as an expression computed again where its reverse rule
   * reads it, or null: CHEAP primitives over literals and at most two inputs, at most
   * REMAT_NODES of them (W1's 2(1 − x) and 2(x' − x²) from x and x', which the reverse
   * loop reads anyway, instead of loading 1 − x and x' − x², which the forward code then
   * neither computes nor stores). Its id names its form (the same primitives over the
   * same literals); its inputs go in the statement's third and fourth slots (a binary
   * primitive's slots are all taken by its arguments' cotangents).
   */
  private reverseRemat(i: number): Remat | null {
    const { op, a } = this.term.tape;
    if (ARITY[op[i]] !== 1 || !CHEAP.has(op[a[i]])) return null;
    const inputs: number[] = [];
    const key = this.rematKey(a[i], inputs, { nodes: 0 });
    if (key === null) return null;
    let id = this.rematIdsByKey.get(key);
    if (id === undefined) this.rematIdsByKey.set(key, (id = this.rematIdsByKey.size));
    return { id, inputs };
  }

  /**
   * The form of y as a remat expression (inputs numbered in order of first reading, pushed
   * on `inputs`), or null. Recursive in the expression's size, at most REMAT_NODES.
   */
  private rematKey(y: number, inputs: number[], count: { nodes: number }): string | null {
    const { op, a, b } = this.term.tape;
    if (op[y] === CONST) return `#${y}`;
    if (op[y] === INPUT) {
      let k = inputs.indexOf(y);
      if (k < 0) {
        if (inputs.length === 2) return null;
        k = inputs.push(y) - 1;
      }
      return `@${k}`;
    }
    if (!CHEAP.has(op[y]) || ++count.nodes > REMAT_NODES) return null;
    const ka = this.rematKey(a[y], inputs, count);
    if (ka === null) return null;
    if (ARITY[op[y]] === 1) return `${op[y]}(${ka})`;
    const kb = this.rematKey(b[y], inputs, count);
    return kb === null ? null : `${op[y]}(${ka},${kb})`;
  }

  /** y's remat expression over the places of its inputs (in rematKey's order). */
  private rematCode(y: number, places: readonly string[], inputs: number[]): string {
    const { op, a, b } = this.term.tape;
    if (op[y] === CONST) return literal(this.term.tape.val[y]);
    if (op[y] === INPUT) {
      let k = inputs.indexOf(y);
      if (k < 0) k = inputs.push(y) - 1;
      return places[k];
    }
    const x = this.rematCode(a[y], places, inputs);
    return kernelSource(op[y], x, ARITY[op[y]] === 1 ? x : this.rematCode(b[y], places, inputs));
  }

  /**
   * Forward instruction i's arguments' literal ids and rematId's: -1 for a literal's, for
   * b of a unary primitive, under a square (whose code squares a place by a product, an
   * expression by a call: SIMPLE in javascript.ts), and in a program with a reverse sweep
   * (whose rules read the forward values: they are computed and kept anyway).
   */
  private rematIds(i: number): [number, number, number, number] {
    const { op, a, b } = this.term.tape;
    const [la, lb] = [this.literalId(a[i]), this.literalId(b[i])];
    if (op[i] === CODE.square || this.options.reverse !== false) return [la, lb, -1, -1];
    return [la, lb, la < 0 ? this.rematId(a[i]) : -1, ARITY[op[i]] === 2 && lb < 0 ? this.rematId(b[i]) : -1];
  }

  /**
   * A forward statement's arguments (variables ya, yb) as expressions: a literal, or the
   * place slot 1 (2) names, or, where rematerialised, the expression computing it from the
   * input that slot names.
   */
  private arguments(at: At, sa: string | null, sb: string | null, [ya, yb]: [number, number], [ra, rb]: [number, number]): [string, string] {
    const x = sa ?? (ra >= 0 ? this.rematSource(ya, at("v", 1, "read")) : at("v", 1, "read"));
    const y = sb ?? (rb >= 0 ? this.rematSource(yb, at("v", 2, "read")) : at("v", 2, "read"));
    return [x, y];
  }

  /** The input a rematerialised y is computed from. */
  private rematInput(y: number): number {
    const { op, a, b } = this.term.tape;
    return op[a[y]] === INPUT ? a[y] : b[y];
  }

  /** y's expression over the place of its input (its other argument a literal, or the same input). */
  private rematSource(y: number, input: string): string {
    const { op, a, b } = this.term.tape;
    return kernelSource(op[y], this.literalAt(a[y]) ?? input, ARITY[op[y]] === 1 ? input : (this.literalAt(b[y]) ?? input));
  }

  /** The statements, indices renamed by `order` if given (the slots that name variables). */
  statements(order: Int32Array | null): { forward: Statements; reverse: Statements } {
    const { op, a, b, length: n } = this.term.tape;
    const usesOf = this.usesOf;
    const named: boolean[][] = []; // per shape, per slot: whether it names a variable (not an input's place in x)
    const idx = [[0], [0, 0], [0, 0, 0], [0, 0, 0, 0]];
    /** Append statement `sig` with the first `width` of the indices (i, j, k, l), renamed. */
    const stmt = (into: Statements, sig: number, width: number, i: number, j = 0, k = 0, l = 0): void => {
      const given = idx[width - 1];
      given[0] = i;
      if (width > 1) given[1] = j;
      if (width > 2) given[2] = k;
      if (width > 3) given[3] = l;
      if (order !== null) {
        const slots = (named[sig] ??= given.map((_, slot) => usesOf(sig).some((u) => u.slot === slot)));
        for (let slot = 0; slot < width; slot++) if (slots[slot]) given[slot] = order[given[slot]];
      }
      into.push(sig, given);
    };
    const out = this.term.output.atoms[0];
    // cotangents of inputs are written straight into the gradient `g` (by input index, after
    // the renumbering), the array the call returns; the others into ct
    const cotangent = (x: number): Space => (op[x] === INPUT ? "g" : "ct");

    const reverse = new Statements();
    if (this.active[out] && this.options.reverse !== false) {
      const into = cotangent(out);
      stmt(reverse, this.sig(into === "g" ? -1 : -2, -1, -1, () => [`seed:${into}`, (at) => `${at(into, 0, "write")} = 1;`]), 1, out);
    }
    for (let i = n - 1; i >= 0; i--) {
      if (!this.has[i] || op[i] < FIRST_PRIMITIVE) continue;
      const code = op[i];
      // per argument: how its contribution is made, and into which array
      const how = [this.how[2 * i], this.how[2 * i + 1]];
      const into: Space[] = ARITY[code] === 1 ? [cotangent(a[i]), "ct"] : [cotangent(a[i]), cotangent(b[i])];
      const kind = ((code * 3 + how[0]) * 3 + how[1]) * 4 + (into[0] === "g" ? 2 : 0) + (into[1] === "g" ? 1 : 0);
      const remat = this.reverseRemat(i);
      const ra = remat === null ? -1 : remat.id;
      const make = (): [string, Form] => {
        const [sa, sb] = [this.literalAt(a[i]), this.literalAt(b[i])];
        const ya = a[i];
        const form: Form = (at) => {
          const lines = [`c = ${at("ct", 0, "read")};`];
          const x = sa ?? (remat !== null ? this.rematCode(ya, [at("v", 2, "read"), at("v", 3, "read")], []) : at("v", 1, "read"));
          how.forEach((h, k) => {
            if (h === 0) return;
            const rule = ruleSource(code, k, x, sb ?? at("v", 2, "read"), at("v", 0, "read"), "c")!;
            lines.push(`${at(into[k], k + 1, h === 1 ? "write" : "update")} ${h === 1 ? "=" : "+="} ${rule};`);
          });
          return lines.join(" ");
        };
        return [`r${code}:${how.join("")}:${sa}:${sb}:${into.join("")}:${ra}`, form];
      };
      const sig = this.sig(2 * kind, this.literalId(a[i]), this.literalId(b[i]), make, ra);
      // a rematerialised argument's inputs in the third and fourth slots
      if (remat === null) stmt(reverse, sig, 3, i, a[i], b[i]);
      else stmt(reverse, sig, 4, i, a[i], remat.inputs[0], remat.inputs[remat.inputs.length - 1]);
    }

    const forward = new Statements();
    const need = this.need;
    const schedule = this.schedule;
    for (let s = 0, end = schedule === null ? n : schedule.length; s < end; s++) {
      const i = schedule === null ? s : schedule[s];
      if (need[i] && op[i] >= FIRST_PRIMITIVE) {
        const code = op[i];
        const [la, lb, ra, rb] = this.rematIds(i);
        const sig = this.sig(
          2 * code + 1,
          la,
          lb,
          () => {
            const [sa, sb] = [this.literalAt(a[i]), this.literalAt(b[i])];
            const [ya, yb] = [a[i], b[i]];
            const form: Form = (at) => {
              const [x, y] = this.arguments(at, sa, sb, [ya, yb], [ra, rb]);
              return `${at("v", 0, "write")} = ${kernelSource(code, x, y)};`;
            };
            return [`f${code}:${sa}:${sb}:${ra}:${rb}`, form];
          },
          ra,
          rb,
        );
        // a rematerialised argument's slot names its input
        stmt(forward, sig, 3, i, ra >= 0 ? this.rematInput(a[i]) : a[i], rb >= 0 ? this.rematInput(b[i]) : b[i]);
      }
      if (this.kinked(i)) {
        const code = op[i];
        stmt(forward, this.sig(-4 - code, -1, -1, () => [`k${code}`, (at) => `if (KINK[${code}](${at("v", 0, "read")})) return false;`]), 1, a[i]);
      }
      for (const g of this.guardsAt.get(i) ?? []) {
        const tie = this.reportTies && g.distinct;
        const [sa, sb] = [this.literalAt(g.a), this.literalAt(g.b)];
        // guards are few (one per decision): their key is written out
        const key = `g${g.pred}:${g.outcome}:${tie}:${sa}:${sb}`;
        const sig = this.shapes.of(key);
        this.forms[sig] ??= (at) => guardSource(g.pred, g.outcome, tie, sa ?? at("v", 0, "read"), sb ?? at("v", 1, "read"));
        stmt(forward, sig, 2, g.a, g.b);
      }
    }
    return { forward, reverse };
  }
}

/** The map under `key` in m, made if there is none. */
function inner<T>(m: Map<number, Map<number, T>>, key: number): Map<number, T> {
  let x = m.get(key);
  if (x === undefined) m.set(key, (x = new Map()));
  return x;
}

/** The source of primitive `code`'s kernel applied to the expressions x, y. */
function kernelSource(code: number, x: string, y: string): string {
  return javascript.apply(code, x, y);
}

/** Whether the reverse rule of `code` for argument k is a symbolic zero (asked once per primitive and argument). */
function zeroRule(code: number, k: number): boolean {
  return (zeroRules[2 * code + k] ??= ruleSource(code, k, "0", "0", "0", "c") === null);
}
const zeroRules: boolean[] = [];

const READS_A = 1;
const READS_B = 2;
const READS_OUT = 4;

/** Which forward values the reverse rule of `code` for argument k reads (READS_A | READS_B | READS_OUT), asked once per primitive and argument. */
function ruleReads(code: number, k: number): number {
  if (readsOf[2 * code + k] === undefined) {
    const source = ruleSource(code, k, "$a", "$b", "$out", "c") ?? "";
    readsOf[2 * code + k] = (source.includes("$a") ? READS_A : 0) | (source.includes("$b") ? READS_B : 0) | (source.includes("$out") ? READS_OUT : 0);
  }
  return readsOf[2 * code + k];
}
const readsOf: number[] = [];

/** The source of the reverse rule of `code` for argument k, or null for a symbolic zero. */
function ruleSource(code: number, k: number, x: string, y: string, out: string, ct: string): string | null {
  const spec = scalarSpec(code);
  return spec.arity === 1 ? spec.reverse(javascript, x, out, ct) : spec.reverse[k](javascript, x, y, out, ct);
}

/** `return false` unless `pred(x, y)` comes out `outcome` (and, with tie, x ≠ y). */
function guardSource(pred: PredicateName, outcome: boolean, tie: boolean, x: string, y: string): string {
  const test = `${x} ${COMPARISON[pred]} ${y}`;
  const fails = outcome ? `!(${test})` : `(${test})`;
  return `if (${tie ? `${x} === ${y} || ` : ""}${fails}) return false;`;
}

/**
 * Each shape's accesses, in order: its code written once with a marker for each place,
 * keeping those the code uses (a rule may not read every argument).
 */
function recordUses(forms: readonly Form[]): UsesOf {
  const memo: (readonly Use[])[] = [];
  return (sig) => {
    if (memo[sig] === undefined) {
      const made: { use: Use; mark: string }[] = [];
      const at: At = (space, slot, mode) => {
        const mark = `@${made.length}@`;
        made.push({ use: { space, slot, mode }, mark });
        return mark;
      };
      const code = forms[sig](at, ["0", "0", "0"]);
      memo[sig] = made.filter((m) => code.includes(m.mark)).map((m) => m.use);
    }
    return memo[sig];
  };
}
