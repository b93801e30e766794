/**
 * @file A scan's block derivative evaluated over windows (diff/box-plan.ts plans when): where
 * every mask of a block's cotangents is a box, one range [lo, hi) of elements, the masked
 * sweep (diff/differentiate.ts) leaves each cotangent exactly 0 outside its box, and its
 * elementwise rules are `where(box, rule, 0)`. A block then needs each of its values only
 * over a window: the output cotangents over their boxes, and backwards from them, each
 * instruction's arguments over the elements it reads (a slice's moved by its start, a `where`
 * on a box reads its rule inside the box alone), the body's own values recomputed only where
 * a rule reads them. GradBench ode's cotangents move one element per stage: at n = 10⁵, s = 100
 * a block's windows hold at most ~400 elements of the 10⁵.
 *
 * The term is one for every iteration of a run (the masks' constants are those of one
 * iteration); the boxes of its `where`s, inputs and outputs are given per iteration. Each
 * instruction computes its elements by the primitive the kernels apply (KERNELS, `select`'s
 * test, `addAt`'s 0 + piece): inside the windows, the masked term's numbers to the bit.
 * Outside its box, an output's elements are not written (the sweep reads a block's results
 * inside their boxes only, and fills the final cotangents' outsides with the zeros).
 */
import { alloc, contiguousStart, release, sameDims, size, type Buf, type Dims } from "@wengert/ops";
import { liveVariables } from "./interpreter.js";
import { ARITY, CODE, CONST, FIRST_PRIMITIVE, FREE, INPUT, IS_TENSOR_OP, KERNELS } from "../trace/opcodes.js";
import { binaryKernel, compute } from "../trace/tape.js";
import type { Tape } from "../trace/tape.js";
import type { TraceTerm } from "../trace/term.js";
import { broadcastReal } from "../jit/chain-code.js";

/** How an instruction is computed over a window. */
type Kind =
  | { readonly k: "input"; readonly at: number }
  | { readonly k: "const" }
  /** A real: of reals (scalar), or from tensors by its kernel. */
  | { readonly k: "real"; readonly scalar: boolean }
  | { readonly k: "elementwise"; readonly arity: number }
  /** `where(box, a, b)`, the box the constant mask's (slot: its place among the boxes given per run). */
  | { readonly k: "box"; readonly slot: number }
  | { readonly k: "where" }
  | { readonly k: "slice"; readonly start: number }
  | { readonly k: "concat"; readonly offsets: readonly number[] }
  /** Pieces at flat offsets (-1 for a real's, placed at `at`), added to 0. */
  | { readonly k: "embed"; readonly offsets: readonly number[] }
  | { readonly k: "fill"; readonly real: number }
  /** Anything else: computed whole by the kernels, its arguments whole. */
  | { readonly k: "whole" };

/**
 * A run of iterations [to, from] of a sweep whose blocks are one term evaluated over windows:
 * the boxes at iteration r are base + (from − r) · slope, laid out as the `where`s' (by slot),
 * the term's inputs' (by input index; −1: whole) and the outputs', two numbers (lo, hi) each.
 */
export interface BoxRun {
  readonly from: number;
  readonly to: number;
  readonly block: BoxBlock;
  readonly slots: number;
  readonly inputs: number;
  readonly base: Int32Array;
  readonly slope: Int32Array;
}

/** A sweep evaluated over windows: its runs from the last iteration down, and each argument part's final box (lo, hi; −1: whole). */
export interface BoxSweep {
  readonly runs: readonly BoxRun[];
  readonly final: Int32Array;
}

/** Counters for tests: elements computed by window evaluations, and their runs. */
export const boxStats = { elements: 0, runs: 0 };

const EMPTY_LO = 0x3fffffff;

/**
 * A block derivative's term evaluated over windows. `slots`: the mask constants whose `where`s
 * read boxes, by variable; `inputBoxed`: per input index of the term, whether its value is a
 * cotangent with a box (the others are whole).
 */
export class BoxBlock {
  /** What a run reads of each live instruction; the term's tape is not kept (its masks' constants and values: ~55 MB at n = 10⁵). */
  private readonly code: Int32Array;
  private readonly argsOf: (readonly number[])[];
  private readonly dimsOf: Dims[];
  private readonly paramsOf: unknown[];
  /** A live literal's value (a real, or a tensor's buffer; none for the masks read as boxes). */
  private readonly literal: (Buf | null)[];
  private readonly live: Uint8Array;
  private readonly kinds: (Kind | null)[];
  private readonly sizes: Int32Array;
  private readonly outputs: readonly number[];
  private readonly lo: Int32Array;
  private readonly hi: Int32Array;
  private readonly order: Int32Array;
  private readonly vals: Float64Array;
  private readonly bufs: (Float64Array | null)[];
  /** Per variable: the element its buffer starts at, and its own buffer (window-sized, kept from run to run). */
  private readonly base: Int32Array;
  private readonly scratch: (Float64Array | null)[];
  private readonly isOutput: Uint8Array;

  constructor(term: TraceTerm, slots: ReadonlyMap<number, number>) {
    const tape = term.tape;
    const n = tape.length;
    this.outputs = term.output.atoms;
    this.live = liveVariables(tape, this.outputs);
    this.sizes = new Int32Array(n);
    this.kinds = new Array<Kind | null>(n).fill(null);
    const order: number[] = [];
    this.code = new Int32Array(n);
    this.argsOf = new Array<readonly number[]>(n).fill([]);
    this.dimsOf = new Array<Dims>(n).fill([]);
    this.paramsOf = new Array<unknown>(n).fill(undefined);
    this.literal = new Array<Buf | null>(n).fill(null);
    for (let i = 0; i < n; i++) {
      if (!this.live[i]) continue;
      const tensor = tape.isTensor(i);
      this.sizes[i] = tensor ? size(tape.dims(i)) : 0;
      this.kinds[i] = kindOf(tape, i, slots);
      this.code[i] = tape.op[i];
      this.dimsOf[i] = tape.dims(i);
      if (tape.op[i] >= FIRST_PRIMITIVE) [this.argsOf[i], this.paramsOf[i]] = [tape.args(i), tape.params(i)];
      else if (tape.op[i] === CONST || tape.op[i] === FREE) this.literal[i] = !tensor ? tape.val[i] : slots.has(i) ? null : tape.buf(i);
      order.push(i);
    }
    this.order = Int32Array.from(order);
    this.lo = new Int32Array(n);
    this.hi = new Int32Array(n);
    this.vals = new Float64Array(n);
    this.bufs = new Array<Float64Array | null>(n).fill(null);
    this.base = new Int32Array(n);
    this.scratch = new Array<Float64Array | null>(n).fill(null);
    this.isOutput = new Uint8Array(n);
    for (const v of this.outputs) this.isOutput[v] = 1;
  }

  /**
   * The outputs' values for `inputs` (by input index), the boxes of the `where`s (`boxes`: lo, hi
   * by slot), of the inputs (`inBoxes`, by input index: lo, hi; lo = -1 for whole) and of the
   * outputs (`outBoxes`, in output order). A tensor output is a buffer for the caller.
   */
  run(inputs: ArrayLike<Buf>, boxes: Int32Array, inBoxes: Int32Array, outBoxes: Int32Array): Buf[] {
    const { kinds, sizes, lo, hi, order, vals, bufs, outputs, code, argsOf } = this;
    this.windows(boxes, outBoxes);
    // forwards: each value over its window, in a buffer of its own that starts at the window (base)
    // (an output's, a whole value's and an input's start at 0)
    const { base } = this;
    const isOutput = this.isOutput;
    const pooled: Float64Array[] = [];
    for (let k = 0; k < order.length; k++) {
      const v = order[k];
      const kind = kinds[v]!;
      const tensor = sizes[v] > 0;
      base[v] = 0;
      if (kind.k === "const") {
        const x = this.literal[v];
        if (typeof x === "number") vals[v] = x;
        else bufs[v] = x;
        continue;
      }
      if (kind.k === "real") {
        const c = code[v];
        const args = argsOf[v];
        if (kind.scalar) vals[v] = ARITY[c] === 1 ? KERNELS[c](vals[args[0]], 0) : binaryKernel(c, vals[args[0]], vals[args[1]]);
        else vals[v] = this.kernel(v) as number;
        continue;
      }
      if (kind.k === "input") {
        const x = inputs[kind.at];
        if (typeof x === "number") vals[v] = x;
        else bufs[v] = this.boxedInput(v, x, inBoxes[2 * kind.at], inBoxes[2 * kind.at + 1]);
        continue;
      }
      if (!tensor) continue;
      const a = lo[v];
      const b = hi[v];
      if (a >= b) {
        bufs[v] = null;
        continue;
      }
      if (kind.k === "whole") {
        const y = this.kernel(v) as Float64Array;
        bufs[v] = y;
        pooled.push(y);
        continue;
      }
      let out: Float64Array;
      if (isOutput[v]) out = alloc(sizes[v], true);
      else {
        base[v] = a;
        out = this.own(v, b - a);
      }
      if (isOutput[v]) pooled.push(out);
      bufs[v] = out;
      this.window(v, kind, out, a, b, boxes);
      boxStats.elements += b - a;
    }
    boxStats.runs++;
    const results = outputs.map((v): Buf => {
      if (sizes[v] === 0) return vals[v];
      const got = bufs[v];
      const at = got === null ? -1 : pooled.indexOf(got);
      if (at >= 0) {
        pooled[at] = pooled[pooled.length - 1];
        pooled.pop();
        return got!;
      }
      // an input's or a constant's buffer (or none: an empty box) is copied
      return got === null ? alloc(sizes[v]) : got.slice();
    });
    for (const m of pooled) release(m);
    for (let k = 0; k < order.length; k++) bufs[order[k]] = null;
    return results;
  }

  /**
   * Each value's window (lo, hi: empty where lo ≥ hi), backwards from the outputs' boxes; the
   * elements the run computes (a plan's estimate of its work: diff/box-plan.ts).
   */
  windows(boxes: Int32Array, outBoxes: Int32Array): number {
    const { kinds, sizes, lo, hi, order, outputs, argsOf } = this;
    for (let k = 0; k < order.length; k++) {
      lo[order[k]] = EMPTY_LO;
      hi[order[k]] = 0;
    }
    for (let j = 0; j < outputs.length; j++) this.need(outputs[j], outBoxes[2 * j], outBoxes[2 * j + 1]);
    let elements = 0;
    for (let k = order.length - 1; k >= 0; k--) {
      const v = order[k];
      const kind = kinds[v]!;
      const args = argsOf[v];
      // a real computed from tensors (a sum) reads them whole
      if (kind.k === "real" && !kind.scalar) for (const u of args) this.need(u, 0, sizes[u]);
      if (sizes[v] === 0 || lo[v] >= hi[v]) continue;
      const a = lo[v];
      const b = hi[v];
      if (kind.k !== "input" && kind.k !== "const") elements += kind.k === "whole" ? sizes[v] : b - a;
      switch (kind.k) {
        case "elementwise":
        case "where":
          for (const u of args) this.need(u, a, b);
          break;
        case "box": {
          const bl = boxes[2 * kind.slot];
          const bh = boxes[2 * kind.slot + 1];
          this.need(args[1], Math.max(a, bl), Math.min(b, bh));
          if (a < bl) this.need(args[2], a, b);
          else if (b > bh) this.need(args[2], Math.max(a, bh), b);
          break;
        }
        case "slice":
          this.need(args[0], a + kind.start, b + kind.start);
          break;
        case "concat":
        case "embed":
          for (let j = 0; j < args.length; j++) if (kind.offsets[j] >= 0) this.need(args[j], a - kind.offsets[j], b - kind.offsets[j]);
          break;
        case "whole":
          lo[v] = 0;
          hi[v] = sizes[v];
          for (const u of args) this.need(u, 0, sizes[u]);
          break;
        default:
          break;
      }
    }
    return elements;
  }

  /** Value v is read over [a, b) (clipped to its elements): its window covers it. */
  private need(v: number, a: number, b: number): void {
    const n = this.sizes[v];
    if (n === 0) return;
    if (a < 0) a = 0;
    if (b > n) b = n;
    if (a >= b) return;
    if (a < this.lo[v]) this.lo[v] = a;
    if (b > this.hi[v]) this.hi[v] = b;
  }

  /** The largest tensor's elements and the instructions: what a block of whole vectors costs (diff/box-plan.ts). */
  get extent(): { readonly elements: number; readonly instructions: number } {
    let elements = 0;
    for (const v of this.order) elements = Math.max(elements, this.sizes[v]);
    return { elements, instructions: this.order.length };
  }

  /** v's own buffer of at least `length` elements (grown to twice its length: windows grow step by step). */
  private own(v: number, length: number): Float64Array {
    const had = this.scratch[v];
    if (had !== null && had.length >= length) return had;
    return (this.scratch[v] = new Float64Array(Math.max(length, 2 * (had?.length ?? 0))));
  }

  /** Instruction v by its kernel, from its arguments' values: reals, and tensors whole (their windows are). */
  private kernel(v: number): Buf {
    const args = this.argsOf[v];
    const values = args.map((u) => (this.sizes[u] > 0 ? this.bufs[u]! : this.vals[u]));
    return compute(this.code[v], values, args.map((u) => this.dimsOf[u]), this.paramsOf[v], this.dimsOf[v]);
  }

  /** Input v read over its window: its buffer, or a copy with zeros outside its box [bl, bh) where the window reaches past it. */
  private boxedInput(v: number, x: Float64Array, bl: number, bh: number): Float64Array {
    const a = this.lo[v];
    const b = this.hi[v];
    if (bl < 0 || a >= b || (bl <= a && b <= bh)) return x;
    const out = this.own(v, b - a);
    this.base[v] = a;
    for (let i = a; i < b; i++) out[i - a] = i >= bl && i < bh ? x[i] : 0;
    return out;
  }

  /** Elements [a, b) of instruction v into `out` (from its base), each argument read from its own. */
  private window(v: number, kind: Kind, out: Float64Array, a: number, b: number, boxes: Int32Array): void {
    const { bufs, vals, sizes, base } = this;
    const args = this.argsOf[v];
    const code = this.code[v];
    const o = base[v];
    switch (kind.k) {
      case "elementwise": {
        const x = args[0];
        const X = sizes[x] > 0 ? bufs[x]! : null;
        const sx = vals[x];
        const ox = base[x];
        if (kind.arity === 1) {
          const f = KERNELS[code];
          if (X === null) out.fill(f(sx, 0), a - o, b - o);
          else for (let i = a; i < b; i++) out[i - o] = f(X[i - ox], 0);
          return;
        }
        const y = args[1];
        const Y = sizes[y] > 0 ? bufs[y]! : null;
        const sy = vals[y];
        const oy = base[y];
        if (X !== null && Y !== null) {
          if (code === CODE.add) for (let i = a; i < b; i++) out[i - o] = X[i - ox] + Y[i - oy];
          else if (code === CODE.mul) for (let i = a; i < b; i++) out[i - o] = X[i - ox] * Y[i - oy];
          else if (code === CODE.sub) for (let i = a; i < b; i++) out[i - o] = X[i - ox] - Y[i - oy];
          else for (let i = a; i < b; i++) out[i - o] = binaryKernel(code, X[i - ox], Y[i - oy]);
        } else if (X !== null) {
          if (code === CODE.mul) for (let i = a; i < b; i++) out[i - o] = X[i - ox] * sy;
          else if (code === CODE.div) for (let i = a; i < b; i++) out[i - o] = X[i - ox] / sy;
          else for (let i = a; i < b; i++) out[i - o] = binaryKernel(code, X[i - ox], sy);
        } else if (Y !== null) {
          if (code === CODE.mul) for (let i = a; i < b; i++) out[i - o] = sx * Y[i - oy];
          else for (let i = a; i < b; i++) out[i - o] = binaryKernel(code, sx, Y[i - oy]);
        } else out.fill(binaryKernel(code, sx, sy), a - o, b - o);
        return;
      }
      case "box": {
        const [, x, y] = args;
        const bl = Math.min(b, Math.max(a, boxes[2 * kind.slot]));
        const bh = Math.max(bl, Math.min(b, boxes[2 * kind.slot + 1]));
        const Y = sizes[y] > 0 ? bufs[y] : null;
        const sy = vals[y];
        const oy = base[y];
        for (let i = a; i < bl; i++) out[i - o] = Y === null ? sy : Y[i - oy];
        if (bl < bh) {
          const X = sizes[x] > 0 ? bufs[x]! : null;
          const ox = base[x];
          if (X === null) out.fill(vals[x], bl - o, bh - o);
          else for (let i = bl; i < bh; i++) out[i - o] = X[i - ox];
        }
        for (let i = bh; i < b; i++) out[i - o] = Y === null ? sy : Y[i - oy];
        return;
      }
      case "where": {
        const [m, x, y] = args;
        const M = bufs[m]!;
        const X = sizes[x] > 0 ? bufs[x]! : null;
        const Y = sizes[y] > 0 ? bufs[y]! : null;
        const [om, ox, oy] = [base[m], base[x], base[y]];
        for (let i = a; i < b; i++) out[i - o] = M[i - om] !== 0 ? (X === null ? vals[x] : X[i - ox]) : Y === null ? vals[y] : Y[i - oy];
        return;
      }
      case "slice": {
        const X = bufs[args[0]]!;
        const s = kind.start - base[args[0]];
        for (let i = a; i < b; i++) out[i - o] = X[i + s];
        return;
      }
      case "concat":
        args.forEach((u, j) => {
          const off = kind.offsets[j];
          const U = bufs[u];
          const from = Math.max(a, off);
          const to = Math.min(b, off + sizes[u]);
          const ou = off + base[u];
          for (let i = from; i < to; i++) out[i - o] = U![i - ou];
        });
        return;
      case "embed":
        out.fill(0, a - o, b - o);
        args.forEach((u, j) => {
          const off = kind.offsets[j];
          if (off < 0) {
            const at = -1 - off;
            if (a <= at && at < b) out[at - o] += vals[u];
            return;
          }
          const U = bufs[u];
          const from = Math.max(a, off);
          const to = Math.min(b, off + sizes[u]);
          const ou = off + base[u];
          for (let i = from; i < to; i++) out[i - o] += U![i - ou];
        });
        return;
      case "fill":
        out.fill(vals[kind.real], a - o, b - o);
        return;
      default:
        return;
    }
  }
}

/** How instruction i of a block derivative is computed over a window (see Kind). */
function kindOf(tape: Tape, i: number, slots: ReadonlyMap<number, number>): Kind {
  const code = tape.op[i];
  if (code === INPUT) return { k: "input", at: tape.a[i] };
  if (code === CONST || code === FREE) return { k: "const" };
  if (code < FIRST_PRIMITIVE) return { k: "whole" };
  if (!tape.isTensor(i)) return { k: "real", scalar: tape.x[i] === 0 };
  const d = tape.dims(i);
  const args = tape.args(i);
  const real = (u: number): boolean => !tape.isTensor(u);
  const alike = (u: number): boolean => real(u) || sameDims(tape.dims(u), d);
  if (d.length === 0) return { k: "whole" };
  if (!IS_TENSOR_OP[code]) return args.every(alike) ? { k: "elementwise", arity: ARITY[code] } : { k: "whole" };
  if (code === CODE.where) {
    const slot = slots.get(args[0]);
    if (slot !== undefined && args.every(alike)) return { k: "box", slot };
    return !real(args[0]) && args.every(alike) ? { k: "where" } : { k: "whole" };
  }
  if (code === CODE.reshape || code === CODE.broadcastTo) {
    const r = code === CODE.reshape ? (real(args[0]) ? args[0] : null) : broadcastReal(tape, i);
    return r === null ? { k: "whole" } : { k: "fill", real: r };
  }
  if (d.length !== 1) return { k: "whole" };
  const p = tape.params(i) as Record<string, unknown>;
  if (code === CODE.slice && !real(args[0]) && tape.dims(args[0]).length === 1) return { k: "slice", start: (p.starts as number[])[0] };
  if (code === CODE.concat && p.axis === 0 && args.every((u) => !real(u) && tape.dims(u).length === 1)) {
    let off = 0;
    return { k: "concat", offsets: args.map((u) => (off += size(tape.dims(u))) - size(tape.dims(u))) };
  }
  if (code === CODE.embed) {
    const starts = p.starts as number[][];
    const offsets = args.map((u, k) => (real(u) ? -1 - starts[k][0] : contiguousStart(d, starts[k], tape.dims(u))));
    if (offsets.every((o, k) => o >= 0 || real(args[k])) && args.every((u) => real(u) || tape.dims(u).length === 1)) return { k: "embed", offsets };
  }
  return { k: "whole" };
}
