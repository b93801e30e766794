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
import { Real, Tensor, type Operand } from "../trace/traced.js";
import type { Trace } from "../trace/tracer.js";
import { runForward, type RealsIO } from "../eval/scan-forward.js";
import { byStructure } from "../jit/scan-code.js";
import { takeColumn } from "../trace/columns.js";
import { isLeaf, leafShape, step, withLength, xAt, type ScanCall } from "./scan-call.js";
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
      if (body.yShape !== null) this.ys[j] = yAt({ body, from: i, carryIn: this.carry, x: this.xAt }, j - i, values, []);
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
    const run = recordRun({ body, from: i, carryIn: this.carry, x: this.xAt }, { target, to: stop, obs, written: packed, carry, checkpoint, caller: this.c.caller, pAtoms, pValues });
    if (run.ys !== null) run.ys.forEach((y, r) => (this.ys[i + r] = y));
    this.carry = run.carry;
    const { scanVar } = run;
    if (reals?.storeOut) {
      const params = target.tape.params(scanVar) as ScanParams;
      const values = Float64Array.from(target.tape.args(scanVar).map((v) => target.tape.val[v]));
      params.stash = { values, carries: reals.storeOut.subarray(0, Math.ceil((stop - i) / every) * body.nc), column: reals.storeOut, every };
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

/** x when the loop is given a length: no leaves. */
const NO_X: { shape: Shape; leaves: Leaf[] } = { shape: { kind: "tuple", items: [] }, leaves: [] };


/** Every carry stored when they take at most 64 MiB; every ⌈√n⌉-th otherwise. */
function defaultCheckpoint(body: Body, n: number): Checkpoint {
  const bytes = 8 * n * body.inputDims.slice(0, body.nc).reduce((s, d) => s + size(d), 0);
  return bytes <= 64 * 2 ** 20 ? "every" : "sqrt";
}
