/**
 * @file A term's scan instructions written out: the loop as tracing it would have
 * recorded it, iteration by iteration.
 *
 * A transformation emitting into an enclosing trace (a derivative that will be
 * differentiated again) places the term there first (place.ts); where the term holds scan
 * instructions it is this written-out term that is placed and transformed, so the
 * enclosing trace holds exactly what the loop written out would give it, and higher
 * derivatives are those of the loop, bit for bit. (The outermost transformation keeps
 * the scan instructions: diff/scan-reverse.ts and diff/scan-tangent.ts.)
 */
import type { Dims } from "@wengert/ops";
import { WengertError } from "../errors.js";
import type { Body } from "../trace/body.js";
import { copyInstruction } from "../trace/copy-instruction.js";
import { CONST, FREE, INPUT } from "../trace/opcodes.js";
import { hasScans, isScanCode, scanCodes, xArgCount, type ScanOutParams, type ScanParams } from "../trace/scan-ops.js";
import { Tape } from "../trace/tape.js";
import { TraceTerm } from "../trace/term.js";
import type { Guard, Trace } from "../trace/tracer.js";
import { ownedCopy } from "../trace/host-tensor.js";
import { tracedXElements } from "./scan-x-elements.js";
import { refuseWriteOut, SHORT_LOOP } from "./scan-written-out.js";

/**
 * Whether a transformation of `term` emitting into `sink` keeps its scans as single
 * instructions (their sweeps scanGrad and scanTangent): at the outermost level, and into a
 * trace that is only evaluated (jit's, vmap's: Trace.evaluatedOnly), where no
 * transformation will take those instructions apart, when the loops written out would be
 * long (a short one runs faster written out, as compiled code, and costs little memory).
 * Anywhere else the loop is written out. The numbers are the same either way.
 */
export function keepsScans(term: TraceTerm, sink: Trace, placement: object | null): boolean {
  if (placement === null) return true;
  if (!sink.evaluatedOnly) return false;
  const { instructions, iterations, runs } = writtenOut(term);
  return instructions >= KEEP_FROM && iterations >= MIN_MEAN_RUN * runs;
}

/**
 * Instructions of written-out loops from which a trace only evaluated keeps the scans:
 * below it, jit(grad) of a chain of a few instructions per iteration replays faster
 * written out (compiled as one function), above it the scan's sweeps do, and keep the
 * memory of a few instructions.
 */
const KEEP_FROM = 1 << 15;

/**
 * Iterations per scan instruction, on average, below which the loops are written out: a
 * body whose decisions change every few iterations makes a run (and a reverse sweep with
 * its fixed cost) per few iterations, slower than the loop written out.
 */
const MIN_MEAN_RUN = 256;

/**
 * What the term's scans would be written out: instructions (their bodies', per iteration,
 * a tensor's counted once per element), iterations (each weighted by its body's elements
 * per instruction), scan instructions. A body on tensors written out is replayed
 * instruction by instruction, each on all its elements, not compiled into one function:
 * its loop pays per element what a body of reals pays per instruction.
 */
function writtenOut(term: TraceTerm): { instructions: number; iterations: number; runs: number } {
  const tape = term.tape;
  const code = scanCodes().scan;
  let instructions = 0;
  let iterations = 0;
  let runs = 0;
  for (let i = 0; i < tape.length; i++) {
    if (tape.op[i] !== code) continue;
    const p = tape.params(i) as ScanParams;
    const elements = elementsOf(p.body);
    instructions += p.n * elements;
    iterations += (p.n * elements) / Math.max(1, p.body.length);
    runs++;
  }
  return { instructions, iterations, runs };
}

const elementCounts = new WeakMap<Body, number>();

/** The elements a body's instructions make per iteration (a real's one). */
function elementsOf(body: Body): number {
  let e = elementCounts.get(body);
  if (e === undefined) {
    const tape = body.term.tape;
    e = 0;
    for (let v = 0; v < tape.length; v++) e += tape.dims(v).reduce((m, d) => m * d, 1);
    elementCounts.set(body, e);
  }
  return e;
}

/**
 * The term with its scans written out where the sink does not keep them (always, placed,
 * when `sink` is null: a transformation that has no rule for a scan instruction), and its
 * placement (place.ts's, generic here: place.ts calls this) with the guards moved along
 * (unchanged when there is no scan). A reverse sweep emitted where it will be differentiated
 * again keeps the scans it can emit as scans (`nest`, differentiate.ts's: scan-nested.ts), each
 * with the params `nest` gives it (writing the values its derivative's rules read).
 */
export function unrolled<P extends { readonly guards: readonly Guard[] }>(
  term: TraceTerm,
  placement: P | null,
  sink: Trace | null,
  nest?: (p: ScanParams) => ScanParams | null,
): { term: TraceTerm; placement: P | null } {
  const kept = placement === null || (sink !== null && keepsScans(term, sink, placement));
  if (kept || !hasScans(term.tape)) return { term, placement };
  // into a trace only evaluated a loop is written out because it is short (keepsScans): not a derivative's fallback
  const fallback = sink === null || !sink.evaluatedOnly;
  const { term: out, map, guards } = writeOut(term, nest === undefined || !fallback ? null : nest, fallback);
  const moved: Guard[] = [];
  for (const g of placement.guards) if (map[g.a] >= 0 && map[g.b] >= 0) moved.push({ ...g, a: map[g.a], b: map[g.b] });
  return { term: out, placement: { ...placement, guards: [...moved, ...guards] } };
}

/**
 * The term written out; `map[v]` is v's variable there (-1 for a scan's packed value and its
 * flag). `keep` gives the params of a scan kept as one instruction (null: written out).
 * `fallback`: the term is written out for a transformation that will be transformed again, where a
 * scan given options.nested "scan" throws rather than be written out (scan-written-out.ts).
 */
export function writeOut(
  term: TraceTerm,
  keep: ((p: ScanParams) => ScanParams | null) | null = null,
  fallback = false,
): { term: TraceTerm; map: Int32Array; guards: Guard[] } {
  const from = term.tape;
  const to = new Tape();
  const map = new Int32Array(from.length);
  const w = new Writer(to, keep, fallback);
  for (let i = 0; i < from.length; i++) map[i] = w.copy(from, i, map);
  const written = new TraceTerm(
    to,
    term.params.map((p) => ({ ...p, atoms: p.atoms.map((v) => map[v]) })),
    { shape: term.output.shape, atoms: term.output.atoms.map((v) => map[v]) },
  );
  return { term: written, map, guards: w.guards };
}

/** Copies instructions into a tape, scans written out (nested ones too: the depth is the program's nesting, not a trace's length). */
class Writer {
  readonly guards: Guard[] = [];
  private readonly codes = scanCodes();
  /** Per tape and scan instruction: the variables of its outputs, by offset in its packed value. */
  private readonly outputs = new Map<Tape, Map<number, Map<number, number>>>();
  /** A kept scan's variable (in `to`): its params before and after, and the outputs read so far by offset (one variable each). */
  private readonly kept = new Map<number, { readonly was: ScanParams; readonly now: ScanParams; readonly reads: Map<number, number> }>();

  constructor(
    private readonly to: Tape,
    private readonly keep: ((p: ScanParams) => ScanParams | null) | null,
    private readonly fallback = false,
  ) {}

  /** Instruction i of `from` copied (its arguments through `map`); its variable, or -1 for a scan's own. */
  copy(from: Tape, i: number, map: Int32Array): number {
    const code = from.op[i];
    const to = this.to;
    if (code === FREE) {
      const outer = from.frees[from.a[i]];
      return from.x[i] === 0 ? to.free(outer, from.val[i]) : to.freeTensor(outer, { dims: from.dims(i), data: from.buf(i) });
    }
    if (code === this.codes.scan) {
      const p = from.params(i) as ScanParams;
      const args = from.args(i).map((v) => map[v]);
      const now = p.stacked === undefined ? (this.keep?.(p) ?? null) : null;
      if (now !== null) {
        const v = to.appendOp(code, args, now, [now.layout.length]);
        this.kept.set(v, { was: p, now, reads: new Map() });
        return v;
      }
      if (this.fallback && p.nestsOnly === true && p.n >= SHORT_LOOP) refuseWriteOut(p, this.keep === null);
      let byTape = this.outputs.get(from);
      if (byTape === undefined) this.outputs.set(from, (byTape = new Map()));
      const source = p.stacked === undefined ? null : this.source(from, from.args(i)[p.body.nc], args[p.body.nc]);
      byTape.set(i, this.unrollScan(p, args, source));
      return -1;
    }
    if (code === this.codes.scanOut) {
      const p = from.params(i) as ScanOutParams;
      const s = from.args(i)[0];
      const k = this.kept.get(map[s]);
      if (k !== undefined) return this.read(map[s], moved(k.was, k.now, p.offset), p);
      return p.held ? -1 : this.outputs.get(from)!.get(s)!.get(p.offset)!;
    }
    if (isScanCode(code)) {
      throw new WengertError(
        "internal: a derivative of a scan (scanGrad, scanTangent) in a term to transform again; those are emitted at the outermost level only.",
      );
    }
    return copyInstruction(from, i, to, map);
  }

  /** A kept scan's output at `offset` (of its layout now), one variable per offset. */
  private read(scanVar: number, offset: number, p: ScanOutParams): number {
    const reads = this.kept.get(scanVar)!.reads;
    let v = reads.get(offset);
    if (v === undefined) reads.set(offset, (v = this.to.appendOp(this.codes.scanOut, [scanVar], { ...p, offset }, p.dims)));
    return v;
  }

  /** Where a stacked scan reads its xs: the outputs of the scan written out before it, or reads of one kept. */
  private source(from: Tape, fromVar: number, toVar: number): (offset: number, dims: Dims) => number {
    const written = this.outputs.get(from)?.get(fromVar);
    if (written !== undefined) return (offset) => written.get(offset)!;
    const kept = this.kept.get(toVar);
    if (kept === undefined) throw new WengertError("internal: a stacked scan reads a value that is no scan's.");
    // a traced x written by the kept scan is its argument (scan-x-elements.ts)
    const xs = tracedXElements(kept.now, this.to.args(toVar));
    return (offset, dims) => xs.get(offset) ?? this.read(toVar, offset, { offset, dims, held: false });
  }

  /**
   * The iterations of one scan instruction, each the body's term placed at that
   * iteration's variables (the tape folds literals as tracing would). Returns its outputs'
   * variables by offset; its decisions go to `guards`.
   */
  private unrollScan(p: ScanParams, args: readonly number[], source: ((offset: number, dims: Dims) => number) | null): Map<number, number> {
    const { body, n, layout } = p;
    const tape = body.term.tape;
    const out = body.term.output.atoms;
    const to = this.to;
    const carry = args.slice(0, body.nc);
    const pAtoms = args.slice(body.nc + xArgCount(p));
    const stacked = p.stacked;
    const at = new Int32Array(tape.length);
    const literals = new Map<number, number>();
    const result = new Map<number, number>();
    for (let r = 0; r < n; r++) {
      const xs =
        stacked === undefined || source === null
          ? args.slice(body.nc + r * body.nx, body.nc + (r + 1) * body.nx)
          : Array.from(stacked.at, (o, l) => source(o + r * stacked.step, body.inputDims[body.nc + l]));
      const inputs = [...carry, ...xs, ...pAtoms];
      for (let v = 0; v < tape.length; v++) {
        const code = tape.op[v];
        if (code === INPUT) at[v] = inputs[tape.a[v]];
        else if (code === CONST && tape.x[v] !== 0) {
          // one literal tensor for every iteration (as a captured array is one literal of the loop's trace)
          let c = literals.get(v);
          if (c === undefined) literals.set(v, (c = to.tensorConstant(ownedCopy({ dims: tape.dims(v), data: tape.buf(v) }))));
          at[v] = c;
        } else at[v] = this.copy(tape, v, at);
      }
      for (const g of body.guards) {
        const ga = at[g.a];
        const gb = at[g.b];
        // a decision on literals alone is no decision of the loop's trace
        if (to.op[ga] === CONST && to.op[gb] === CONST) continue;
        this.guards.push({ ...g, a: ga, b: gb, distinct: g.distinct && ga !== gb });
      }
      layout.obs.forEach((v, s) => result.set(r * layout.width + layout.obsOffset[s], at[v]));
      for (let k = 0; k < body.nc; k++) if (body.carryKind[k] !== "identity") carry[k] = at[out[k]];
    }
    for (let k = 0; k < body.nc; k++) result.set(layout.carryOffset[k], carry[k]);
    return result;
  }
}

/**
 * An offset of a scan's packed value as laid out by `was`, as laid out by `now` (the same
 * body and run, more variables written per iteration). The final carry of a leaf now written
 * per iteration is read where the last iteration wrote it, as a run records it
 * (api/scan-record.ts): one variable, whose cotangent the sweep seeds once.
 */
function moved(was: ScanParams, now: ScanParams, offset: number): number {
  const [a, b] = [was.layout, now.layout];
  if (offset === a.held) return b.held;
  const k = a.carryOffset.indexOf(offset);
  if (k < 0) {
    const r = Math.floor(offset / a.width);
    return r * b.width + (offset - r * a.width);
  }
  const s = b.obs.indexOf(now.body.carryOut[k]);
  return s < 0 ? b.carryOffset[k] : (now.n - 1) * b.width + b.obsOffset[s];
}

export type { Body };
