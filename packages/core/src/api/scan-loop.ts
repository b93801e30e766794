/**
 * @file The loop inside a trace: runs of iterations of a body traced once, each run
 * recorded as one scan instruction (api/scan-record.ts), the body traced again where an
 * iteration's decisions come out otherwise, and iterations written out where a run cannot
 * go (inputs sharing a variable, a literal the tape would fold, a body that read a value).
 */
import type { Buf } from "@wengert/ops";
import { ShapeError } from "../errors.js";
import { flatten, unflatten, type Shape } from "../structure.js";
import type { Body } from "../trace/body.js";
import { folds } from "../trace/body.js";
import { sameType, tiesAt, traceBody, type Leaf, type TracedBody } from "../trace/trace-body.js";
import { layoutOf, scanCodes, segmentLength, writeAt, type Checkpoint, type ScanParams } from "../trace/scan-ops.js";
import { isConcreteTensor, toDense } from "../trace/host-tensor.js";
import { leafShape, Real, Tensor, type Operand } from "../trace/traced.js";
import type { Trace } from "../trace/tracer.js";
import { runForward, type RealsIO } from "../eval/scan-forward.js";
import { byStructure } from "../jit/scan-code.js";
import { giveColumn, takeColumn } from "../trace/columns.js";
import { dropCarries, keptCarries } from "../trace/scan-stash.js";
import { isLeaf, step, withLength, xAt, type ScanCall } from "./scan-call.js";
import { atomIn, literalValue, observed, placeIteration, primal, recordRun, size, yAt } from "./scan-record.js";

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

/** The loop inside a trace: runs of a traced body, and iterations written out where a run cannot go. */
export class Loop {
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
      if (this.burst > 0) {
        // runs have been short: iterations written out, as the loop written out records them
        const to = Math.min(n, i + this.burst);
        this.burst = 0;
        for (; i < to; i++) if (!this.writeOut(i)) return this.end(i);
        continue;
      }
      const x = this.xLeaves(i);
      if (sharesVariable([...this.carry, ...x.leaves])) {
        // the body sees one variable twice: only the loop itself records that
        if (!this.writeOut(i)) return this.end(i);
        i++;
        continue;
      }
      const from = i;
      const again = this.again(i);
      if (again > i) i = again;
      else {
        const traced = traceBody({
          fn: c.fn,
          caller: c.caller,
          iteration: i,
          carryShape: this.carryShape,
          carry: this.carry,
          xShape: x.shape,
          x: x.leaves,
          unflatten,
        });
        if (traced === null) return this.end(i);
        // a body of reals of a structure met before (the same loop, called again): the body made
        // then, with what was made for it (variants, plans, code); this iteration's values are tb's
        const tb = traced.body.reals ? { ...traced, body: byStructure(traced.body, "body", () => traced.body) } : traced;
        if (c.reuse !== undefined) c.reuse.body = tb.body.np === 0 && !tb.body.opaque ? tb.body : null;
        if (tb.target !== null && !tb.body.opaque) this.remember({ body: tb.body, target: tb.target, pAtoms: tb.pAtoms, pValues: tb.pValues });
        i = tb.target === null ? this.numbers(tb, i) : this.traced(tb, tb.target, i);
      }
      this.paced(i - from);
    }
    this.iterations = n;
    return [unflatten(this.carryShape, this.carry), withLength(this.ys, n)];
  }

  /** Iteration i written out (the body called on the loop's values); false where it ended the loop. */
  private writeOut(i: number): boolean {
    const out = step(this.c, i, this.carryShape, this.carry);
    if (out === null) return false;
    this.carry = out[0];
    if (out[1] !== undefined) this.ys[i] = out[1];
    return true;
  }

  /** The length of the last run tried that stopped short of its limit (null: none yet), where the next one's buffers start. */
  private lastRun: number | null = null;

  /** Short runs in a row, and the iterations to write out next time that many come. */
  private shortRuns = 0;
  private nextBurst = FIRST_BURST;
  private burst = 0;

  /**
   * After a run of `length` iterations: where the decisions change every few iterations,
   * each run costs a trace, a scan instruction and a reverse sweep of its own, many times
   * what its iterations cost written out; so once runs come short SHORT_RUNS times in a
   * row the loop writes out spans that double (to MAX_BURST), trying a run between them,
   * and goes back to runs as soon as one is long. The cost stays within a constant factor
   * of the loop written out, and of the scan where runs are long.
   */
  private paced(length: number): void {
    if (length >= SHORT) {
      this.shortRuns = 0;
      this.nextBurst = FIRST_BURST;
      return;
    }
    if (++this.shortRuns < SHORT_RUNS) return;
    this.burst = this.nextBurst;
    this.nextBurst = Math.min(2 * this.nextBurst, MAX_BURST);
    this.shortRuns = SHORT_RUNS - 1;
  }

  /** Iterations run, and whether the body ended the loop (returned DONE). */
  iterations = 0;
  done = false;

  private end(i: number): [unknown, unknown[]] {
    this.iterations = i;
    this.done = true;
    return [unflatten(this.carryShape, this.carry), this.ys];
  }

  /**
   * The bodies traced last in this loop (one per set of decisions, the latest used first),
   * with the target and captured values each was traced against: decisions that alternate
   * (A, B, A, B…) take a body traced before instead of tracing again.
   */
  private readonly recent: Traced[] = [];

  private remember(t: Traced): void {
    const k = this.recent.findIndex(
      (r) => r.body === t.body && r.target === t.target && r.pAtoms.length === t.pAtoms.length && r.pAtoms.every((a, q) => a === t.pAtoms[q]),
    );
    if (k >= 0) this.recent.splice(k, 1);
    this.recent.unshift(t);
    if (this.recent.length > RECENT) this.recent.pop();
  }

  /**
   * A run from i of a body traced before: one of this loop's recent ones (after an iteration
   * written out, the next usually fits the last once its literals are marked as they come in;
   * where decisions alternate, one traced before the last), or an earlier
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
    const candidates: Traced[] = [
      ...this.recent.filter((r) => !r.target.closed),
      ...(reused !== null && innermost !== null ? [{ body: reused, target: innermost, pAtoms: [], pValues: [] }] : []),
    ];
    for (const candidate of candidates) {
      const { body: traced0, target, pAtoms, pValues } = candidate;
      if (traced0.nc !== this.carry.length || traced0.nx !== x.length || (innermost !== null && innermost.level > target.level)) continue;
      const body = traced0.marked(literal);
      if (!body.chains || !sameType(this.carryShape, body.carryShape) || !this.fits(body, i, target, new Set())) continue;
      const atoms = [...pAtoms, ...traced.map((v) => atomIn(target, v))];
      if (new Set(atoms).size !== atoms.length) continue;
      const stop = this.run1(body, target, i, pAtoms, pValues, i);
      if (stop > i) {
        if (this.recent.includes(candidate)) this.remember(candidate);
        return stop;
      }
    }
    return i;
  }

  private readonly xs: ({ shape: Shape; leaves: Leaf[] } | undefined)[] = [];

  private xLeaves(i: number): { shape: Shape; leaves: Leaf[] } {
    if (typeof this.c.xs === "number") return NO_X;
    let x = this.xs[i];
    if (x === undefined) {
      const v = xAt(this.c, i);
      x =
        v === undefined
          ? { shape: { kind: "tuple", items: [] }, leaves: [] }
          : flatten(v, `xs[${i}]`, isLeaf, "an x", (m) => new ShapeError(`${this.c.caller}: ${m}`), leafShape);
      this.xs[i] = x;
    }
    return x;
  }

  /** The body touched nothing traced: numbers, run on while that lasts. */
  private numbers(tb: TracedBody, i: number): number {
    const { body } = tb;
    const obs = observed(body);
    const written: Buf[][] = [];
    const carry = this.carry.map((v) => primal(v));
    // in spans that double, as a traced run (run1): how far x fits is found as the run goes
    let stop = i;
    let fitTo = i + 1;
    for (let span = FIRST_SPAN; ; span *= 2) {
      const from = stop;
      const want = body.chains ? Math.min(this.n, from + span) : i + 1;
      while (fitTo < want && this.fits(body, fitTo, null, new Set())) fitTo++;
      const to = fitTo;
      stop = runForward(
        {
          body,
          x: (j) => this.xLeaves(j).leaves.map(primal),
          p: [],
          from,
          to,
          checkFrom: Math.max(i + 1, from),
          reportTies: false,
          checkFolds: false,
          obs,
          write: (j, s, v) => ((written[j - i] ??= [])[s] = typeof v === "number" ? v : v.slice()),
        },
        carry,
        false,
      );
      if (stop < to || to < want || to >= this.n) break;
    }
    for (let j = i; j < stop; j++) {
      const values = (v: number, r: number): Leaf => {
        const s = obs.indexOf(v);
        return s >= 0 ? literalValue(written[r][s], body.term.tape.dims(v)) : literalValue(body.term.tape.value(v), body.term.tape.dims(v));
      };
      if (body.yShape !== null) this.ys[j] = yAt({ body, from: i, carryIn: this.carry, x: this.xAt }, j - i, values, []);
    }
    this.carry = carry.map((b, k) => (body.carryKind[k] === "identity" ? this.carry[k] : literalValue(b, body.inputDims[k])));
    return stop;
  }

  /** Whether x at iteration j fits the body (as marked literal or not), its traced leaves new variables. */
  private fits(body: Body, j: number, target: Trace | null, taken: Set<number>): boolean {
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
        if (taken.has(atom)) return false;
        taken.add(atom);
      }
    }
    return true;
  }

  /** An iteration traced in an open trace: a run from it, or the iteration as the loop records it. */
  private traced(tb: TracedBody, target: Trace, i: number): number {
    const { body } = tb;
    const x = this.xLeaves(i).leaves;
    const taken = [...tb.pAtoms];
    const isTraced = (v: Leaf): boolean => typeof v !== "number" && !isConcreteTensor(v);
    const distinct = [...this.carry.filter((v) => isTraced(v)), ...x.filter((v) => isTraced(v))].every((v) => {
      const atom = atomIn(target, v);
      if (taken.includes(atom)) return false;
      taken.push(atom);
      return true;
    });
    const runnable = distinct && body.chains && body.folds.every((f) => !folds(f.code, tb.value(f.v) as number));
    if (!runnable) {
      // this iteration's own term, its literals put in (the loop's first iteration from literal carries, say):
      // one instruction of one iteration; else written out (inputs sharing a variable, a value read)
      // a scan's small body of reals is placed: a scan instruction of one iteration, its reverse sweep and its
      // plan cost more than its few instructions recorded and differentiated with the rest of the trace
      // (not checkpoint's, whose point is that its instructions are not kept)
      const placedHere = body.reals && body.length <= PLACED_BODY && this.c.minRun > 1;
      const own = distinct && !body.opaque && !placedHere ? body.atLiterals((k) => primal(k < body.nc ? this.carry[k] : x[k - body.nc])) : null;
      if (own !== null && own.carryKind.every((kind) => kind !== "other") && this.run1(own, target, i, tb.pAtoms, tb.pValues, i + 1, i + 1) > i) {
        for (const tie of tiesAt(body, tb.value)) target.tie(tie);
        return i + 1;
      }
      this.placed(tb, target, i);
      return i + 1;
    }
    const stop = this.run1(body, target, i, tb.pAtoms, tb.pValues, i + 1);
    if (stop === i) {
      this.placed(tb, target, i);
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
    // every traced carry leaf as it comes in (an x that is the initial carry's variable is one variable of two
    // arguments, whose cotangents the sweep would keep apart: the run stops before it)
    const kept = this.carry.filter((v) => !(typeof v === "number" || isConcreteTensor(v))).map((v) => atomIn(target, v));
    const xTaken = new Set([...pAtoms, ...kept, ...x.filter((v) => typeof v !== "number" && !isConcreteTensor(v)).map((v) => atomIn(target, v))]);
    const lengthOnly = typeof this.c.xs === "number";
    // a loop given a length has no x to fit: it runs to the limit (a body taking x cannot run on)
    const bound = lengthOnly && body.nx > 0 ? i + 1 : limit;
    const obs = observed(body);
    const carry = this.carry.map((v) => primal(v));
    const p = pAtoms.map((atom) => target.tape.value(atom));
    // the carries the reverse sweep will start from, as the checkpoint policy stores them (every one: at each iteration);
    // the policy is chosen for the most the run can be, its buffers grow with what it is
    const checkpoint = this.c.options.checkpoint ?? defaultCheckpoint(body, bound - i);
    const every = checkpoint === "every" ? 1 : segmentLength(checkpoint, bound - i);
    const buffers = new RunBuffers(body, obs, every, i);
    const keeper = keptCarries(body, target, every, i);
    const reportTies = target.settings.ties !== "ignore";
    // spans that double from the last run's length: a run that stops early has reserved at most twice
    // what it or the run before it used; the loop's first run takes all it may (one run is the common case)
    let stop = i;
    let fitTo = i + 1;
    for (let span = this.lastRun ?? bound - i; ; span *= 2) {
      const from = stop;
      const want = Math.min(bound, from + span);
      if (lengthOnly) fitTo = want;
      else while (fitTo < want && this.fits(body, fitTo, target, xTaken)) fitTo++;
      const to = fitTo;
      buffers.reserve(to - i);
      if (body.reals) buffers.fillX(from, to, (j) => this.xLeaves(j).leaves);
      const base = body.reals ? i : 0;
      const reals: RealsIO | undefined = body.reals
        ? { xs: buffers.xs, obsOut: buffers.packed, obsBase: 0, storeOut: buffers.store, storeFrom: 0, storeEvery: every }
        : undefined;
      stop =
        base +
        runForward(
          {
            body,
            x: (j) => this.xLeaves(j + base).leaves.map(primal),
            p,
            from: from - base,
            to: to - base,
            checkFrom: Math.max(checkFrom, from) - base,
            reportTies,
            obs,
            write: (j, s, v) => writeAt(buffers.packed, (j + base - i) * buffers.width + buffers.obsOffset[s], v),
            reals,
            store: keeper?.store,
            keeps: keeper?.keeps,
          },
          carry,
          from > i,
        );
      // stopped by a decision, at the end, or where x no longer fits
      if (stop < to || to < want || to >= bound) break;
    }
    // a run that went as far as it was let (one iteration's own term, say) says nothing of how long the next will be
    if (stop < limit) this.lastRun = Math.max(FIRST_SPAN, stop - i);
    // once runs have come short (see paced), a run is recorded only if it is long: a short one is written out
    const minRun = this.shortRuns >= SHORT_RUNS - 1 ? Math.max(this.c.minRun, SHORT) : this.c.minRun;
    if (stop - i < Math.min(minRun, limit - i)) {
      buffers.release();
      keeper?.release(carry);
      return i;
    }
    const run = recordRun(
      { body, from: i, carryIn: this.carry, x: this.xAt },
      { target, to: stop, obs, written: buffers.packed, carry, checkpoint, caller: this.c.caller, nested: this.c.options.nested === "scan", pAtoms, pValues },
    );
    if (run.ys !== null) run.ys.forEach((y, r) => (this.ys[i + r] = y));
    this.carry = run.carry;
    const { scanVar } = run;
    if (buffers.store !== null) {
      const params = target.tape.params(scanVar) as ScanParams;
      const values = Float64Array.from(target.tape.args(scanVar).map((v) => target.tape.val[v]));
      params.stash = { values, carries: buffers.store.subarray(0, Math.ceil((stop - i) / every) * body.nc), column: buffers.store, every };
    }
    if (keeper !== null) {
      const params = target.tape.params(scanVar) as ScanParams;
      params.carries = keeper.stash(target.tape.args(scanVar).map((v) => target.tape.value(v)), stop, carry);
      target.keptCarries!.push(() => dropCarries(params));
    }
    return stop;
  }

  /** x's leaves at iteration j. */
  private readonly xAt = (j: number): readonly Leaf[] => this.xLeaves(j).leaves;

  /** Iteration i as the loop records it (api/scan-record.ts). */
  private placed(tb: TracedBody, target: Trace, i: number): void {
    const out = placeIteration(tb, target, this.carry, this.xAt(i));
    this.carry = out.carry;
    if (tb.body.yShape !== null) this.ys[i] = out.y;
  }
}

/** A body traced in this loop, with where it was recorded and the captured values it was traced against. */
interface Traced {
  readonly body: Body;
  readonly target: Trace;
  readonly pAtoms: readonly number[];
  readonly pValues: readonly Operand[];
}

/** The bodies a loop keeps to try again (see Loop.recent). */
const RECENT = 4;

/** x when the loop is given a length: no leaves. */
const NO_X: { shape: Shape; leaves: Leaf[] } = { shape: { kind: "tuple", items: [] }, leaves: [] };


/** A body of reals with at most this many instructions is placed where a run would be one iteration of its own. */
const PLACED_BODY = 512;

/** A run shorter than this is short (see Loop.paced); SHORT_RUNS of them in a row, and iterations are written out. */
const SHORT = 64;
const SHORT_RUNS = 4;
/** The iterations written out after short runs: the first span, and the most (doubling between). */
const FIRST_BURST = 16;
const MAX_BURST = 512;

/** The buffer elements runs have reserved (see RunBuffers), for tests. */
export const runBufferStats = {
  get reserved(): number {
    return RunBuffers.reserved;
  },
};

/** The least span of a run after the first: the buffers a run reserves before it has shown it goes on. */
const FIRST_SPAN = 8;

/**
 * A run's buffers, relative to its first iteration: what it writes (per iteration, then the
 * final carry), x's values and the stored carries of a body of reals. They grow to twice
 * what the run reached, never to the rest of the loop: a loop whose decisions change every
 * few iterations makes a run per change, and buffers sized for the rest of the loop made
 * its cost grow with n² (issue 21).
 */
class RunBuffers {
  /** Elements reserved by every run's buffers since the count was reset, for the tests (issue 21: linear in the iterations). */
  static reserved = 0;

  packed = new Float64Array(0);
  xs = new Float64Array(0);
  store: Float64Array | null = null;
  readonly width: number;
  readonly obsOffset: Int32Array;
  private n = 0;

  constructor(
    private readonly body: Body,
    private readonly obs: Int32Array,
    private readonly every: number,
    private readonly from: number,
  ) {
    const layout = layoutOf(body, obs, 0);
    this.width = layout.width;
    this.obsOffset = layout.obsOffset;
  }

  /** Room for n iterations from the first. */
  reserve(n: number): void {
    if (n <= this.n) return;
    const { body } = this;
    RunBuffers.reserved += layoutOf(body, this.obs, n).length + (body.reals ? n * body.nx + Math.ceil(n / this.every) * body.nc : 0);
    const packed = new Float64Array(layoutOf(body, this.obs, n).length);
    packed.set(this.packed.subarray(0, this.n * this.width));
    this.packed = packed;
    if (body.reals) {
      const xs = new Float64Array(n * body.nx);
      xs.set(this.xs.subarray(0, this.n * body.nx));
      this.xs = xs;
      // from the pool of tape columns (and back to it once the reverse sweep has read it): a
      // million carries are 8 MB off the heap per call otherwise
      const store = takeColumn(Float64Array, Math.ceil(n / this.every) * body.nc);
      if (this.store !== null) {
        store.set(this.store.subarray(0, Math.ceil(this.n / this.every) * body.nc));
        giveColumn(this.store);
      }
      this.store = store;
    }
    this.n = n;
  }

  /** x's values for iterations [from, to). */
  fillX(from: number, to: number, x: (j: number) => readonly Leaf[]): void {
    const { nx } = this.body;
    for (let j = from; j < to && nx > 0; j++) {
      const leaves = x(j);
      for (let l = 0; l < nx; l++) this.xs[(j - this.from) * nx + l] = primal(leaves[l]) as number;
    }
  }

  /** The run recorded nothing: its stored carries go back to the pool. */
  release(): void {
    if (this.store !== null) giveColumn(this.store);
    this.store = null;
  }
}

/** The most bytes of carries the default checkpoint stores every one of. */
const STORE_ALL = 128 * 2 ** 20;

/**
 * Every carry stored when they take at most STORE_ALL bytes; every ⌈√n⌉-th otherwise. "sqrt"
 * runs the loop forward once more: a cost of about one primal, which the stored carries save
 * where they fit (GradBench ode at n = 10⁵, s = 100 stores 80 MB).
 */
function defaultCheckpoint(body: Body, n: number): Checkpoint {
  const bytes = 8 * n * body.inputDims.slice(0, body.nc).reduce((s, d) => s + size(d), 0);
  return bytes <= STORE_ALL ? "every" : "sqrt";
}
