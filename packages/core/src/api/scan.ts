/**
 * @file `scan(body, init, xs)`: a loop whose body is traced once and applied per iteration.
 *
 * `scan(body, init, xs)` computes what the loop `c = init; for i: [c, ys[i]] = body(c,
 * xs[i])` computes, and returns `[c, ys]` (as `jax.lax.scan`, with xs and ys arrays of
 * per-iteration values). Inside a traced function it does not trace every iteration: the
 * body is traced once as a term of its own (trace/body.ts), and that term is applied
 * iteration after iteration while the iteration's decisions come out as recorded (its
 * guards, the paper's region where a trace term holds); where one comes out otherwise the
 * body is traced again there. The enclosing trace gets one `scan` instruction per run of
 * iterations (trace/scan-ops.ts): a few instructions for a loop of any length, and a
 * reverse sweep that recomputes the carries from checkpoints (diff/scan-reverse.ts).
 *
 * The numbers are the loop's, to the last bit: an iteration whose term would differ from
 * the loop's trace (its inputs share a variable, a literal the tape would fold, a body
 * that read a traced value) is recorded as the loop records it, the body's term placed
 * at that iteration's variables.
 */
import type { Buf, Dims } from "@wengert/ops";
import { ShapeError, WengertError } from "../errors.js";
import { describe, flatten, typeString, unflatten, type Shape } from "../structure.js";
import { Body, carryChanged, DONE, folds, sameType, tiesAt, traceBody, type Leaf, type TracedBody } from "../trace/body.js";
import { CONST, FIRST_PRIMITIVE, INPUT, IS_TENSOR_OP } from "../trace/opcodes.js";
import { layoutOf, scanCodes, segmentLength, writeAt, type Checkpoint, type ScanParams } from "../trace/scan-ops.js";
import { fromDense, isConcreteTensor, ownedCopy, toDense } from "../trace/host-tensor.js";
import { atomOf, isOperand, Real, Tensor, type Operand } from "../trace/traced.js";
import { primalOf, wrap } from "../trace/record.js";
import { openTraces, tracing, type Trace } from "../trace/tracer.js";
import { runForward, type RealsIO } from "../eval/scan-forward.js";
import { byStructure } from "../jit/scan-code.js";
import { takeColumn } from "../trace/columns.js";
import { checkOptionKeys } from "./options.js";
import type { BodyArg, Like, Loose, Mode, ScanCarry, ScanResult } from "./types.js";

export interface ScanOptions {
  /**
   * Which carries the reverse sweep stores: every iteration's, every ⌈√n⌉-th (recomputing
   * the rest, one more forward run), or every k-th. Default: every iteration's when they
   * take at most 64 MiB, else "sqrt".
   */
  readonly checkpoint?: Checkpoint;
}

const SCAN_OPTIONS = ["checkpoint"];

/** Runs shorter than this are recorded as the loop records them (a scan instruction costs more). */
const MIN_RUN = 2;

/**
 * `[c, ys]` of the loop `c = init; for i < n: [c, ys[i]] = body(c, xs[i])`, n the length
 * of `xs` (or `xsOrLength` itself, x then being undefined). The carry keeps its type and
 * shape from one iteration to the next.
 */
export function scan<const C, Y = undefined, X = undefined>(
  body: (carry: NoInfer<BodyArg<Loose<C>, Mode<[C, X]>>>, x: NoInfer<BodyArg<X, Mode<[C, X]>>>) => readonly [NoInfer<Like<C>>, Y?],
  init: C,
  xsOrLength: readonly X[] | number,
  options: ScanOptions = {},
): [ScanCarry<C, Mode<[C, X]>>, ScanResult<Y, Mode<[C, X]>>[]] {
  return scanAs({ caller: "scan", fn: body as never, init, xs: xsOrLength as readonly unknown[] | number, options, minRun: MIN_RUN }) as never;
}

export interface ScanCall {
  readonly caller: string;
  readonly fn: (carry: never, x: never) => unknown;
  readonly init: unknown;
  readonly xs: readonly unknown[] | number;
  readonly options: ScanOptions;
  /** The shortest run recorded as a scan instruction (checkpoint: 1). */
  readonly minRun: number;
  /**
   * A body traced by an earlier call, tried before tracing (checkpoint's calls); kept when
   * it captures nothing (a captured value is bound to its trace).
   */
  readonly reuse?: { body: Body | null };
  /** The body may return DONE: the loop ends there (its carry as it came in). */
  readonly untilDone?: boolean;
}

/** Where a loop that may end early ended. */
export interface Ended {
  readonly carry: unknown;
  /** Iterations run before the body returned DONE (or all of them). */
  readonly iterations: number;
  readonly done: boolean;
}

/**
 * The loop `c = init; while body(c) is not DONE: [c] = body(c)`, at most `length`
 * iterations, as a scan inside a trace (the body traced once, the iteration that returns
 * DONE found where the run's decisions change): the term language's tail loops.
 */
export function loopUntilDone(c: Omit<ScanCall, "untilDone">): Ended {
  const call = { ...c, untilDone: true };
  const n = checkCall(call);
  const init = flatten(c.init, "init", isLeaf, "the carry", (m) => new ShapeError(`${c.caller}: ${m}`), leafShape);
  if (!tracing() || openTraces().some((t) => t.checksNaN())) {
    let carry = init.leaves;
    for (let i = 0; i < n; i++) {
      const next = step(call, i, init.shape, carry);
      if (next === null) return { carry: unflatten(init.shape, carry), iterations: i, done: true };
      carry = next[0];
    }
    return { carry: unflatten(init.shape, carry), iterations: n, done: false };
  }
  const loop = new Loop(call, n, init.shape, init.leaves);
  const [carry] = loop.run();
  return { carry, iterations: loop.iterations, done: loop.done };
}

const isLeaf = (v: unknown): v is Operand => isOperand(v);
const leafShape = (v: Operand): Shape =>
  typeof v === "number" || v instanceof Real ? { kind: "real" } : v instanceof Tensor ? { kind: "tensor", dims: v.dims, container: "ndarray" } : { kind: "tensor", dims: toDense(v as never, "a leaf").dims, container: v instanceof Float64Array ? "float64array" : "ndarray" };

function checkCall(c: ScanCall): number {
  if (typeof c.fn !== "function") throw new WengertError(`${c.caller}: the body is ${describe(c.fn)}; expected a function (carry, x) => [carry, y].`);
  checkOptionKeys(c.caller, c.options, SCAN_OPTIONS);
  const cp = c.options.checkpoint;
  if (cp !== undefined && cp !== "every" && cp !== "sqrt" && !(typeof cp === "number" && Number.isInteger(cp) && cp >= 1)) {
    throw new WengertError(`${c.caller}: options.checkpoint is ${JSON.stringify(cp)}; expected "every", "sqrt" or a positive integer (store every k-th carry).`);
  }
  if (typeof c.xs === "number") {
    if (!Number.isInteger(c.xs) || c.xs < 0) throw new WengertError(`${c.caller}: the length is ${c.xs}; expected a non-negative integer (or an array of xs).`);
    return c.xs;
  }
  if (!Array.isArray(c.xs)) throw new WengertError(`${c.caller}: xs is ${describe(c.xs)}; expected an array of per-iteration values or a length.`);
  return c.xs.length;
}

/** The loop (scan's or checkpoint's). */
export function scanAs(c: ScanCall): [unknown, unknown[]] {
  const n = checkCall(c);
  const init = flatten(c.init, "init", isLeaf, "the carry", (m) => new ShapeError(`${c.caller}: ${m}`), leafShape);
  // outside any trace, or under checkNaN (which checks every primitive as it is recorded): the loop itself
  if (!tracing() || openTraces().some((t) => t.checksNaN())) return plainLoop(c, n, init.shape, init.leaves);
  return new Loop(c, n, init.shape, init.leaves).run();
}

const xAt = (c: ScanCall, i: number): unknown => (typeof c.xs === "number" ? undefined : c.xs[i]);

/** One iteration as the loop written out: the body called, its carry checked (null: it returned DONE). */
function step(c: ScanCall, i: number, carryShape: Shape, carry: readonly Leaf[]): [Leaf[], unknown] | null {
  const out = c.fn(unflatten(carryShape, carry) as never, xAt(c, i) as never);
  if (c.untilDone === true && out === DONE) return null;
  checkReturned(c.caller, out, i);
  const next = flatten(out[0], "carry", isLeaf, "the carry", (m) => new ShapeError(`${c.caller}: at iteration ${i}, ${m}`), leafShape);
  if (!sameType(next.shape, carryShape)) throw carryChanged(c.caller, i, next.shape, carryShape);
  return [next.leaves, out[1]];
}

function plainLoop(c: ScanCall, n: number, carryShape: Shape, carry: Leaf[]): [unknown, unknown[]] {
  const ys: unknown[] = [];
  for (let i = 0; i < n; i++) {
    const [next, y] = step(c, i, carryShape, carry)!;
    carry = next;
    if (y !== undefined) ys[i] = y;
  }
  return [unflatten(carryShape, carry), withLength(ys, n)];
}

/** ys as the loop made them: n of them, or none when no iteration returned a y. */
function withLength(ys: unknown[], n: number): unknown[] {
  if (ys.length > 0) ys.length = n;
  return ys;
}

/** What a body returns: [carry, y], or [carry] (no y: ys holds undefined). */
export function checkReturned(caller: string, out: unknown, i: number): asserts out is [unknown, unknown] {
  if (!Array.isArray(out) || out.length < 1 || out.length > 2) {
    throw new WengertError(`${caller}: the body returned ${Array.isArray(out) ? `an array of length ${out.length}` : describe(out)} at iteration ${i}; it must return [carry, y] (or [carry]).`);
  }
}

/** A leaf's variable in trace t (a number or an untraced tensor: a literal there). */
const atomIn = (t: Trace, v: Leaf): number => atomOf(t, v);

/** Whether two traced leaves are one variable (of one trace). */
function sharesVariable(leaves: readonly Leaf[]): boolean {
  const seen = new Map<Trace, Set<number>>();
  for (const v of leaves) {
    if (!(v instanceof Real || v instanceof Tensor)) continue;
    let s = seen.get(v.trace);
    if (s === undefined) seen.set(v.trace, (s = new Set()));
    if (s.has(v.atom)) return true;
    s.add(v.atom);
  }
  return false;
}

/** A variable of trace t as the loop written out gives it: a literal as a number (or ndarray), else a traced value. */
function userValue(t: Trace, v: number): Leaf {
  if (t.tape.op[v] !== CONST) return wrap(t, v);
  return t.tape.isTensor(v) ? (fromDense({ dims: t.tape.dims(v), data: t.tape.buf(v) }, "ndarray") as Leaf) : t.tape.val[v];
}

/** The value of a literal computed by the body (a number or an ndarray). */
function literalValue(b: Buf, dims: Dims): Leaf {
  return typeof b === "number" ? b : (fromDense({ dims, data: b }, "ndarray", false) as Leaf);
}

/** The loop inside a trace: runs of a traced body, and iterations written out where a run cannot go. */
class Loop {
  /** ys[i] where the body returned one (none at all: ys is empty). */
  private readonly ys: unknown[] = [];
  private carry: Leaf[];
  private readonly codes = scanCodes();

  constructor(
    private readonly c: ScanCall,
    private readonly n: number,
    private readonly carryShape: Shape,
    init: Leaf[],
  ) {
    this.carry = init;
  }

  run(): [unknown, unknown[]] {
    const { c, n } = this;
    let i = 0;
    while (i < n) {
      const x = this.xLeaves(i);
      if (sharesVariable([...this.carry, ...x.leaves])) {
        // the body sees one variable twice: only the loop itself records that
        const out = step(c, i, this.carryShape, this.carry);
        if (out === null) return this.end(i);
        this.carry = out[0];
        if (out[1] !== undefined) this.ys[i] = out[1];
        i++;
        continue;
      }
      const again = this.again(i);
      if (again > i) {
        i = again;
        continue;
      }
      const traced = traceBody({ fn: c.fn, caller: c.caller, iteration: i, carryShape: this.carryShape, carry: this.carry, xShape: x.shape, x: x.leaves, unflatten });
      if (traced === null) return this.end(i);
      // a body of reals of a structure met before (the same loop, called again): the body made
      // then, with what was made for it (variants, plans, code); this iteration's values are tb's
      const tb = traced.body.reals ? { ...traced, body: byStructure(traced.body, "body", () => traced.body) } : traced;
      if (c.reuse !== undefined) c.reuse.body = tb.body.np === 0 && !tb.body.opaque ? tb.body : null;
      this.last = tb.target !== null && !tb.body.opaque ? { body: tb.body, target: tb.target, pAtoms: tb.pAtoms, pValues: tb.pValues } : null;
      i = tb.target === null ? this.numbers(tb, i) : this.traced(tb, tb.target, i);
    }
    this.iterations = n;
    return [unflatten(this.carryShape, this.carry), withLength(this.ys, n)];
  }

  /** Iterations run, and whether the body ended the loop (returned DONE). */
  iterations = 0;
  done = false;

  private end(i: number): [unknown, unknown[]] {
    this.iterations = i;
    this.done = true;
    return [unflatten(this.carryShape, this.carry), this.ys];
  }

  /** The body traced last in this loop, with the target and captured values it was traced against. */
  private last: { readonly body: Body; readonly target: Trace; readonly pAtoms: readonly number[]; readonly pValues: readonly Operand[] } | null = null;

  /**
   * A run from i of a body traced before: this loop's last (after an iteration written out,
   * the next usually fits it once its literals are marked as they come in), or an earlier
   * call's (checkpoint's, when it captures nothing). Every decision is checked, the first
   * iteration's too. Returns where the run stopped (i: none).
   */
  private again(i: number): number {
    const x = this.xLeaves(i).leaves;
    const leaves = [...this.carry, ...x];
    const literal = Uint8Array.from(leaves, (v) => (typeof v === "number" || isConcreteTensor(v) ? 1 : 0));
    const traced = leaves.filter((v): v is Real | Tensor => v instanceof Real || v instanceof Tensor);
    if (traced.some((v) => v.trace.closed)) return i;
    let innermost: Trace | null = null;
    for (const v of traced) if (innermost === null || v.trace.level > innermost.level) innermost = v.trace;
    const reused = this.c.reuse?.body ?? null;
    const candidates = [
      ...(this.last !== null && !this.last.target.closed ? [this.last] : []),
      ...(reused !== null && innermost !== null ? [{ body: reused, target: innermost, pAtoms: [], pValues: [] }] : []),
    ];
    for (const { body: traced0, target, pAtoms, pValues } of candidates) {
      if (traced0.nc !== this.carry.length || traced0.nx !== x.length || (innermost !== null && innermost.level > target.level)) continue;
      const body = traced0.marked(literal);
      if (!body.chains || !sameType(this.carryShape, body.carryShape) || !this.fits(body, i, target, [])) continue;
      const atoms = [...pAtoms, ...traced.map((v) => atomIn(target, v))];
      if (new Set(atoms).size !== atoms.length) continue;
      const stop = this.run1(body, target, i, pAtoms, pValues, i);
      if (stop > i) return stop;
    }
    return i;
  }

  private readonly xs: ({ shape: Shape; leaves: Leaf[] } | undefined)[] = [];

  private xLeaves(i: number): { shape: Shape; leaves: Leaf[] } {
    if (typeof this.c.xs === "number") return NO_X;
    let x = this.xs[i];
    if (x === undefined) {
      const v = xAt(this.c, i);
      x = v === undefined ? { shape: { kind: "tuple", items: [] }, leaves: [] } : flatten(v, `xs[${i}]`, isLeaf, "an x", (m) => new ShapeError(`${this.c.caller}: ${m}`), leafShape);
      this.xs[i] = x;
    }
    return x;
  }

  /** The body touched nothing traced: numbers, run on while that lasts. */
  private numbers(tb: TracedBody, i: number): number {
    const { body } = tb;
    const obs = observed(body);
    let to = i + 1;
    if (body.chains) while (to < this.n && this.fits(body, to, null, [])) to++;
    const written: Buf[][] = [];
    const carry = this.carry.map((v) => primal(v));
    const stop = runForward(
      {
        body,
        x: (j) => this.xLeaves(j).leaves.map(primal),
        p: [],
        from: i,
        to,
        checkFrom: i + 1,
        reportTies: false,
        checkFolds: false,
        obs,
        write: (j, s, v) => ((written[j - i] ??= [])[s] = typeof v === "number" ? v : v.slice()),
      },
      carry,
      false,
    );
    for (let j = i; j < stop; j++) {
      const values = (v: number, r: number): Leaf => {
        const s = obs.indexOf(v);
        return s >= 0 ? literalValue(written[r][s], body.term.tape.dims(v)) : literalValue(body.term.tape.value(v), body.term.tape.dims(v));
      };
      if (body.yShape !== null) this.ys[j] = this.yOf(body, j - i, i, values, []);
    }
    this.carry = carry.map((b, k) => (body.carryKind[k] === "identity" ? this.carry[k] : literalValue(b, body.inputDims[k])));
    return stop;
  }

  /** Whether x at iteration j fits the body (as marked literal or not), its traced leaves new variables. */
  private fits(body: Body, j: number, target: Trace | null, taken: number[]): boolean {
    if (typeof this.c.xs === "number") return body.nx === 0;
    const x = this.xLeaves(j);
    if (x.leaves.length !== body.nx) return false;
    for (let l = 0; l < body.nx; l++) {
      const leaf = x.leaves[l];
      const literal = typeof leaf === "number" || isConcreteTensor(leaf);
      if (literal !== (body.literal[body.nc + l] === 1)) return false;
      const dims = body.inputDims[body.nc + l];
      const d = typeof leaf === "number" || leaf instanceof Real ? [] : leaf instanceof Tensor ? leaf.dims : toDense(leaf as never, "x").dims;
      if (d.length !== dims.length || d.some((e, k) => e !== dims[k])) return false;
      if (!literal && target !== null) {
        if (leaf instanceof Real || leaf instanceof Tensor) {
          if (leaf.trace.closed) return false;
        }
        const atom = atomIn(target, leaf);
        if (taken.includes(atom)) return false;
        taken.push(atom);
      }
    }
    return true;
  }

  /** An iteration traced in an open trace: a run from it, or the iteration as the loop records it. */
  private traced(tb: TracedBody, target: Trace, i: number): number {
    const { body } = tb;
    const x = this.xLeaves(i).leaves;
    const taken = [...tb.pAtoms];
    const distinct = [...this.carry.filter((v) => typeof v !== "number" && !isConcreteTensor(v)), ...x.filter((v) => typeof v !== "number" && !isConcreteTensor(v))].every((v) => {
      const atom = atomIn(target, v);
      if (taken.includes(atom)) return false;
      taken.push(atom);
      return true;
    });
    const runnable = distinct && body.chains && body.folds.every((f) => !folds(f.code, tb.value(f.v) as number));
    if (!runnable) {
      // this iteration's own term, its literals put in (the loop's first iteration from literal carries, say):
      // one instruction of one iteration; else written out (inputs sharing a variable, a value read)
      const own = distinct && !body.opaque ? body.atLiterals((k) => primal(k < body.nc ? this.carry[k] : x[k - body.nc])) : null;
      if (own !== null && own.carryKind.every((kind) => kind !== "other") && this.run1(own, target, i, tb.pAtoms, tb.pValues, i + 1, i + 1) > i) {
        for (const tie of tiesAt(body, tb.value)) target.tie(tie);
        return i + 1;
      }
      this.place(tb, target, i);
      return i + 1;
    }
    const stop = this.run1(body, target, i, tb.pAtoms, tb.pValues, i + 1);
    if (stop === i) {
      this.place(tb, target, i);
      return i + 1;
    }
    // the traced iteration's ties, as tracing it in the loop would report them (a placed one reports its own)
    for (const tie of tiesAt(body, tb.value)) target.tie(tie);
    return stop;
  }

  /**
   * Run the body from i, its decisions checked from `checkFrom` on, and record the run as
   * one scan instruction if it is long enough; returns where it stopped (i: nothing recorded).
   */
  private run1(body: Body, target: Trace, i: number, pAtoms: readonly number[], pValues: readonly Operand[], checkFrom: number, limit = this.n): number {
    // a loop of unknown length runs in spans that double (its length is a bound, maybe far off)
    if (this.c.untilDone === true) limit = Math.min(limit, i + Math.max(1024, i));
    // how far x fits the term (identity carries keep their variables through the run)
    const x = this.xLeaves(i).leaves;
    const kept = this.carry.filter((v, k) => body.carryKind[k] === "identity" && !(typeof v === "number" || isConcreteTensor(v))).map((v) => atomIn(target, v));
    const xTaken = [...pAtoms, ...kept, ...x.filter((v) => typeof v !== "number" && !isConcreteTensor(v)).map((v) => atomIn(target, v))];
    let to = i + 1;
    if (typeof this.c.xs === "number") to = body.nx === 0 ? limit : to;
    else while (to < limit && this.fits(body, to, target, xTaken)) to++;
    const obs = observed(body);
    const layout = layoutOf(body, obs, to - i);
    const packed = new Float64Array(layout.length);
    const carry = this.carry.map((v) => primal(v));
    const p = pAtoms.map((atom) => target.tape.value(atom));
    let reals: RealsIO | undefined;
    // the carries the reverse sweep will start from, as the checkpoint policy stores them (every one: at each iteration)
    const checkpoint = this.c.options.checkpoint ?? defaultCheckpoint(body, to - i);
    const every = checkpoint === "every" ? 1 : segmentLength(checkpoint, to - i);
    if (body.reals) {
      const xs = new Float64Array(to * body.nx);
      for (let j = i; j < to && body.nx > 0; j++) {
        const leaves = this.xLeaves(j).leaves;
        for (let l = 0; l < body.nx; l++) xs[j * body.nx + l] = primal(leaves[l]) as number;
      }
      // from the pool of tape columns (and back to it once the reverse sweep has read it): a
      // million carries are 8 MB off the heap per call otherwise
      const storeOut = takeColumn(Float64Array, Math.ceil((to - i) / every) * body.nc);
      reals = { xs, obsOut: packed, obsBase: i, storeOut, storeFrom: i, storeEvery: every };
    }
    const stop = runForward(
      {
        body,
        x: (j) => this.xLeaves(j).leaves.map(primal),
        p,
        from: i,
        to,
        checkFrom,
        reportTies: target.settings.ties !== "ignore",
        obs,
        write: (j, s, v) => writeAt(packed, (j - i) * layout.width + layout.obsOffset[s], v),
        reals,
      },
      carry,
      false,
    );
    if (stop - i < Math.min(this.c.minRun, limit - i)) return i;
    const scanVar = this.emit(body, pAtoms, pValues, target, i, stop, obs, packed, carry, checkpoint);
    if (reals?.storeOut) {
      const params = target.tape.params(scanVar) as ScanParams;
      const values = Float64Array.from(target.tape.args(scanVar).map((v) => target.tape.val[v]));
      params.stash = { values, carries: reals.storeOut.subarray(0, Math.ceil((stop - i) / every) * body.nc), column: reals.storeOut, every };
    }
    return stop;
  }

  /** Record a run [i, stop) as one scan instruction, and read its outputs. */
  private emit(body: Body, pAtoms: readonly number[], pValues: readonly Operand[], target: Trace, i: number, stop: number, obs: Int32Array, written: Float64Array, carry: Buf[], checkpoint: Checkpoint): number {
    const n = stop - i;
    const layout = layoutOf(body, obs, n);
    const packed = new Float64Array(layout.length);
    packed.set(written.subarray(0, n * layout.width));
    for (let k = 0; k < body.nc; k++) writeAt(packed, layout.carryOffset[k], carry[k]);
    packed[layout.held] = 1;
    const args = [...this.carry.map((v) => atomIn(target, v))];
    if (body.nx > 0) for (let j = i; j < stop; j++) for (const v of this.xLeaves(j).leaves) args.push(atomIn(target, v));
    args.push(...pAtoms);
    const params: ScanParams = {
      body,
      n,
      start: i,
      layout,
      reportTies: target.settings.ties !== "ignore",
      checkpoint,
      caller: this.c.caller,
      stash: null,
    };
    const scanVar = target.tape.appendComputed(this.codes.scan, args, params, [layout.length], packed);
    const tape = body.term.tape;
    // the outputs the loop makes visible: one variable each, per iteration
    const at = (r: number, s: number): number => r * layout.width + layout.obsOffset[s];
    const projections: Leaf[][] = [];
    for (let r = 0; r < n && obs.length > 0; r++) {
      const row: Leaf[] = [];
      obs.forEach((v, s) => {
        const dims = tape.dims(v);
        row.push(body.literalOnly[v] ? literalValue(dims.length === 0 ? packed[at(r, s)] : packed.slice(at(r, s), at(r, s) + size(dims)), dims) : wrap(target, target.recordOp(this.codes.scanOut, [scanVar], { offset: at(r, s), dims, held: false })));
      });
      projections.push(row);
    }
    const value = (v: number, r: number): Leaf => {
      const s = obs.indexOf(v);
      if (s >= 0) return projections[r][s];
      return literalValue(tape.value(v), tape.dims(v));
    };
    if (body.yShape !== null) for (let r = 0; r < n; r++) this.ys[i + r] = this.yOf(body, r, i, value, pValues);
    this.carry = this.carry.map((start, k) => {
      const kind = body.carryKind[k];
      if (kind === "identity") return start;
      const v = body.carryOut[k];
      if (obs.includes(v)) return value(v, n - 1);
      const dims = body.inputDims[k];
      const off = layout.carryOffset[k];
      if (kind === "literal") return tape.op[v] === CONST ? literalValue(tape.value(v), dims) : literalValue(dims.length === 0 ? packed[off] : packed.slice(off, off + size(dims)), dims);
      return wrap(target, target.recordOp(this.codes.scanOut, [scanVar], { offset: off, dims, held: false }));
    });
    if (target.keepsGuards) {
      // the body's decisions, for a replay at another point (compileGrad): one flag for all
      const held = target.recordOp(this.codes.scanOut, [scanVar], { offset: layout.held, dims: [], held: true });
      target.guards.push({ pred: "eq", a: held, b: target.constant(1), outcome: true, distinct: false });
    }
    return scanVar;
  }

  /** y at iteration i + r of a run starting at i, from the body's variables' values there. */
  private yOf(body: Body, r: number, i: number, value: (v: number, r: number) => Leaf, pValues: readonly Operand[]): unknown {
    if (body.yShape === null) return undefined;
    const out = body.yOut;
    const leaves = body.ySource.map((src, j): Leaf => {
      switch (src.kind) {
        case "var":
          return value(out[j], r);
        case "const":
          return src.value;
        case "carry":
          if (r === 0 || body.carryKind[src.k] === "identity") return this.carry[src.k];
          return value(body.carryOut[src.k], r - 1);
        case "x":
          return this.xLeaves(i + r).leaves[src.l];
        case "p":
          return pValues[src.q];
      }
    });
    return unflatten(body.yShape, leaves);
  }

  /**
   * Iteration i as the loop records it: the body's term placed at that iteration's
   * variables, through the trace's own checks (kinks, tensor ties, length); the
   * decisions' ties reported as `decide` reports them.
   */
  private place(tb: TracedBody, target: Trace, i: number): void {
    const { body } = tb;
    const tape = body.term.tape;
    const { op, a, b } = tape;
    const x = this.xLeaves(i).leaves;
    const map = new Int32Array(tape.length);
    const inputs = [...this.carry.map((v) => atomIn(target, v)), ...x.map((v) => atomIn(target, v)), ...tb.pAtoms];
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
        map[v] = IS_TENSOR_OP[code] ? target.recordOp(code, tape.args(v).map((u) => map[u]), tape.params(v)) : tape.x[v] === 0 ? target.record(code, map[a[v]], map[b[v]]) : target.record(code, map[tape.args(v)[0]], map[tape.args(v)[1] ?? 0]);
      }
      for (const g of byLast.get(v) ?? []) {
        const ga = map[g.a];
        const gb = map[g.b];
        const va = t.val[ga];
        const vb = t.val[gb];
        const distinct = g.distinct && ga !== gb;
        if (va === vb && distinct && !(t.op[ga] === CONST && t.op[gb] === CONST)) {
          target.tie(`${g.pred}(${va}, ${vb}) was decided at a tie (both sides equal), taking the branch where ${va} ${PREDICATE_SYMBOL[g.pred]} ${vb} is ${g.outcome}`);
        }
        if (target.keepsGuards && !(t.op[ga] === CONST && t.op[gb] === CONST)) target.guards.push({ pred: g.pred, a: ga, b: gb, outcome: g.outcome, distinct });
      }
    }
    if (body.opaque) target.opaque = true;
    const out = body.term.output.atoms;
    this.carry = out.slice(0, body.nc).map((v) => userValue(target, map[v]));
    if (body.yShape !== null) this.ys[i] = unflatten(body.yShape, out.slice(body.nc).map((v) => userValue(target, map[v])));
  }
}

/** x when the loop is given a length: no leaves. */
const NO_X: { shape: Shape; leaves: Leaf[] } = { shape: { kind: "tuple", items: [] }, leaves: [] };

const PREDICATE_SYMBOL = { lt: "<", le: "<=", gt: ">", ge: ">=", eq: "=", ne: "!=" } as const;

/** A leaf's concrete value: a number or a buffer (read, not copied). */
function primal(v: Leaf): Buf {
  const p = primalOf(v, "a scan's value");
  return typeof p === "number" ? p : p.data;
}

function size(dims: Dims): number {
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

/** Every carry stored when they take at most 64 MiB; every ⌈√n⌉-th otherwise. */
function defaultCheckpoint(body: Body, n: number): Checkpoint {
  const bytes = 8 * n * body.inputDims.slice(0, body.nc).reduce((s, d) => s + size(d), 0);
  return bytes <= 64 * 2 ** 20 ? "every" : "sqrt";
}

export type { Body };
