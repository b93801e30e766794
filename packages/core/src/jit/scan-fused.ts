/**
 * @file A loop body's term on tensors as JavaScript loops, chains of elementwise
 * operations fused into one loop: what a scan runs per iteration (eval/scan-forward.ts,
 * eval/scan-reverse-run.ts) in place of the interpreter, where every instruction it needs
 * is one it can write.
 *
 * The interpreter calls a kernel per instruction and takes a buffer from the pool for
 * each: on vectors of a few thousand elements that fixed cost is most of a step (GradBench's
 * ode: about 25 operations per Runge–Kutta step). Here a tensor value used once, by an
 * elementwise operation or a slice, is not stored: its consumer computes it in place from
 * its own arguments at the same index (a slice reads its argument at an index moved by
 * its start, when the box is a contiguous range: whole rows of the last axes). A value is
 * stored, in a buffer of its own kept from run to run, where it is read more than once,
 * read after the run (kept), or made of pieces (concat, and embed, the adjoint of slice:
 * zeros with the pieces added). `where` picks as kernels.select does.
 *
 * The arithmetic is the interpreter's: every element is the same primitive applied to
 * the same operands (the javascript emitter, whose operations are the kernels'), an
 * embed's elements are 0 + piece as addAt makes them: the same numbers, to the bit.
 * Anything else (reductions, matmul, broadcasting other than a real against a tensor, a
 * box that is not contiguous) leaves the body to the interpreter.
 */
import { alloc, sameDims, size, type Buf, type Dims } from "@wengert/ops";
import { Interpreter, liveVariables, type TermRunner } from "../eval/interpreter.js";
import { CODE, CONST, FIRST_PRIMITIVE, FREE, INPUT, IS_TENSOR_OP, KERNELS } from "../trace/opcodes.js";
import type { Tape } from "../trace/tape.js";
import { codeCache, javascript, literal, mayMakeCode } from "./javascript.js";

/** Whether bodies on tensors run compiled (tests turn it off to compare with the interpreter). */
export const fusedCode = { enabled: mayMakeCode() };

/** Runs of compiled terms (tests check that a body took this path). */
export const fusedStats = { runs: 0 };

/** The compiled term of `tape` for the variables `keep`, or the interpreter where it cannot be written. */
export function termRunner(tape: Tape, keep: Iterable<number>): TermRunner {
  const kept = [...keep];
  return (fusedCode.enabled && FusedTerm.of(tape, kept)) || new Interpreter(tape, kept);
}

type Run = (I: ArrayLike<Buf>, B: (Float64Array | null)[], V: Float64Array, K: typeof KERNELS) => void;

/** Generated functions by source: a body traced again by a later call has the same code. */
const compiled = codeCache<Run>();

/**
 * The flat offset of a box starting at `starts` in dims `d`, when the box spans whole rows
 * (axes past the first start at 0 with d's extent `inner`); else -1.
 */
function contiguousStart(d: Dims, starts: readonly number[], inner: Dims): number {
  for (let i = 1; i < d.length; i++) if (starts[i] !== 0 || inner[i] !== d[i]) return -1;
  return d.length === 0 ? 0 : starts[0] * size(d.slice(1));
}

/** The part of a stored value at elements [from, to): element i is `expr` there. */
interface Piece {
  readonly from: number;
  readonly to: number;
  readonly expr: string;
}

/** A stored value computed by the term: its pieces (an embed's are added to 0), the stored values they read at which offsets. */
interface Made {
  readonly v: number;
  readonly size: number;
  readonly sum: boolean;
  readonly pieces: readonly Piece[];
  readonly reads: readonly (readonly [number, number])[];
  /** Whether it lives in a buffer (read outside its loop, or kept); else in registers alone. */
  array?: boolean;
}

/**
 * The loops computing the stored values, in order: consecutive values go into one loop
 * while each reads the others of the loop only at elements the loop has made already:
 * offsets ≤ 0 for a loop running up, ≥ 0 for one running down (a reverse sweep reads
 * its cotangents shifted the other way). The loop runs over the largest of its values,
 * cut where a piece starts or ends and where a value ends, so that in each segment each
 * value is one expression or nothing, without a branch. Within its loop a value lives in
 * registers r0 … rL (its element i, i ∓ 1, …, shifted each iteration), and in its buffer
 * only if read elsewhere or kept: a Runge–Kutta step's stages, each read one element back
 * by the next, become one pass over the vectors.
 */
function fuse(loops: Made[], kept: Uint8Array): string[] {
  const lines: string[] = [];
  const groupOf = new Map<number, number>();
  const groups: { members: Made[]; down: boolean }[] = [];
  for (let k = 0; k < loops.length; ) {
    const members = [loops[k]];
    const inGroup = new Set<number>([loops[k].v]);
    // 0: no shifted read inside yet; -1 up; 1 down
    let way = 0;
    let e = k + 1;
    for (; e < loops.length; e++) {
      const offsets = loops[e].reads.filter(([u]) => inGroup.has(u)).map(([, d]) => Math.sign(d));
      const w = offsets.includes(-1) ? -1 : offsets.includes(1) ? 1 : 0;
      if ((w !== 0 && way !== 0 && w !== way) || (offsets.includes(-1) && offsets.includes(1))) break;
      if (w !== 0) way = w;
      members.push(loops[e]);
      inGroup.add(loops[e].v);
    }
    for (const m of members) groupOf.set(m.v, groups.length);
    groups.push({ members, down: way === 1 });
    k = e;
  }
  // how far each value is read from its element in its own loop; whether anything outside reads it
  const lag = new Map<number, number>();
  const outside = new Set<number>();
  loops.forEach((m) => {
    for (const [u, d] of m.reads) {
      if (groupOf.get(u) === groupOf.get(m.v)) lag.set(u, Math.max(lag.get(u) ?? 0, Math.abs(d)));
      else outside.add(u);
    }
  });
  for (const m of loops) m.array = kept[m.v] === 1 || outside.has(m.v);
  groups.forEach(({ members, down }, g) => {
    const n = Math.max(...members.map((m) => m.size));
    const cuts = new Set<number>([0, n]);
    const clip = (x: number): number => Math.max(0, Math.min(x, n));
    for (const m of members) {
      cuts.add(m.size);
      for (const p of m.pieces) cuts.add(clip(p.from)).add(clip(p.to));
    }
    const bounds = [...cuts].sort((x, y) => x - y);
    const regs = (m: Made): number => lag.get(m.v) ?? 0;
    for (const m of members) lines.push(`let ${Array.from({ length: regs(m) + 1 }, (_, r) => `r${m.v}_${r} = 0`).join(", ")};`);
    const token = (text: string): string =>
      text.replace(/\u0001(\d+):(-?\d+)\u0002/g, (_, u: string, ds: string) => {
        const d = Number(ds);
        if (groupOf.get(Number(u)) === g) return `r${u}_${Math.abs(d)}`;
        return `b${u}[${d === 0 ? "i" : d > 0 ? `i+${d}` : `i-${-d}`}]`;
      });
    const segments: string[] = [];
    for (let s = 0; s + 1 < bounds.length; s++) {
      const [lo, hi] = [bounds[s], bounds[s + 1]];
      const body: string[] = [];
      for (const m of members) {
        if (hi > m.size) continue;
        const inside = m.pieces.filter((p) => p.from <= lo && hi <= p.to);
        const expr = m.sum ? inside.reduce((acc, p) => `(${acc} + ${p.expr})`, "0") : inside[0].expr;
        body.push(`r${m.v}_0 = ${token(expr)};`);
        if (m.array) body.push(`b${m.v}[i] = r${m.v}_0;`);
      }
      for (const m of members) for (let r = regs(m); r > 0; r--) body.push(`r${m.v}_${r} = r${m.v}_${r - 1};`);
      const loop = down ? `for (let i = ${hi - 1}; i >= ${lo}; i--)` : `for (let i = ${lo}; i < ${hi}; i++)`;
      segments.push(`${loop} {\n  ${body.join("\n  ")}\n}`);
    }
    lines.push(...(down ? segments.reverse() : segments));
  });
  return lines;
}

class FusedTerm implements TermRunner {
  private readonly B: (Float64Array | null)[];
  private readonly V: Float64Array;

  private constructor(
    private readonly tape: Tape,
    private readonly code: Run,
    /** Stored values computed by the term: their sizes (a buffer is made again once taken). */
    private readonly made: readonly (readonly [number, number])[],
    private readonly inputs: readonly number[],
  ) {
    this.B = new Array<Float64Array | null>(tape.length).fill(null);
    this.V = new Float64Array(tape.length);
    for (let v = 0; v < tape.length; v++) {
      if (tape.op[v] !== CONST && tape.op[v] !== FREE) continue;
      if (tape.isTensor(v)) this.B[v] = tape.buf(v);
      else this.V[v] = tape.val[v];
    }
  }

  static of(tape: Tape, keep: readonly number[]): FusedTerm | null {
    const { op, a } = tape;
    const n = tape.length;
    const live = liveVariables(tape, keep);
    const kept = new Uint8Array(n);
    for (const v of keep) kept[v] = 1;
    const tensor = (v: number): boolean => tape.isTensor(v);
    const uses = new Int32Array(n);
    let any = false;
    for (let v = 0; v < n; v++) {
      if (!live[v]) continue;
      if (tensor(v) && tape.dims(v).length === 0) return null;
      if (op[v] < FIRST_PRIMITIVE) continue;
      const code = op[v];
      const args = tape.args(v);
      const d = tape.dims(v);
      for (const u of args) uses[u]++;
      if (!IS_TENSOR_OP[code]) {
        if (!tensor(v)) {
          if (tape.x[v] !== 0) return null;
          continue;
        }
        any = true;
        if (!args.every((u) => !tensor(u) || sameDims(tape.dims(u), d))) return null;
        continue;
      }
      any = true;
      if (code === CODE.where) {
        // mask ? a : b, the mask a tensor of v's dims, a and b reals or tensors of v's dims
        if (!tensor(v) || !tensor(args[0]) || !args.every((u) => !tensor(u) || sameDims(tape.dims(u), d))) return null;
        continue;
      }
      if (!tensor(v) || (code !== CODE.embed && !args.every(tensor))) return null;
      const p = tape.params(v) as Record<string, unknown>;
      if (code === CODE.slice) {
        if (contiguousStart(tape.dims(args[0]), p.starts as number[], tape.dims(args[0]).map((m, i) => (i === 0 ? 0 : d[i]))) < 0) return null;
      } else if (code === CODE.concat) {
        if (p.axis !== 0) return null;
      } else if (code === CODE.embed) {
        const starts = p.starts as number[][];
        for (let k = 0; k < args.length; k++) {
          if (tensor(args[k]) && contiguousStart(d, starts[k], tape.dims(args[k])) < 0) return null;
          if (!tensor(args[k]) && tape.dims(args[k]).length !== 0) return null;
        }
      } else return null;
    }
    if (!any) return null;
    // stored: read more than once, after the run, or made of pieces; the rest are computed where they are read
    // (a slice is an offset: read again, never copied)
    const stored = (v: number): boolean =>
      op[v] < FIRST_PRIMITIVE || kept[v] === 1 || (uses[v] > 1 && op[v] !== CODE.slice) || op[v] === CODE.concat || op[v] === CODE.embed;
    const real = (v: number): string => (op[v] === CONST || op[v] === FREE ? literal(tape.val[v]) : `s${v}`);
    // v's element i + d, as an expression; a stored value's element is a token (a register
    // or an array element, decided with the loops), and goes to `reads`
    let reads: [number, number][] = [];
    const at = (v: number, d: number): string => {
      if (!tensor(v)) return real(v);
      if (stored(v)) {
        reads.push([v, d]);
        return `\u0001${v}:${d}\u0002`;
      }
      return node(v, d);
    };
    const node = (v: number, d: number): string => {
      const code = op[v];
      if (code === CODE.slice) {
        const x = tape.args(v)[0];
        return at(x, d + contiguousStart(tape.dims(x), (tape.params(v) as { starts: number[] }).starts, tape.dims(x)));
      }
      const args = tape.args(v);
      // as kernels.select
      if (code === CODE.where) return `(${at(args[0], d)} !== 0 ? ${at(args[1], d)} : ${at(args[2], d)})`;
      return javascript.apply(code, at(args[0], d), args.length > 1 ? at(args[1], d) : at(args[0], d));
    };
    const head: string[] = [];
    const inputs: number[] = [];
    const loops: Made[] = [];
    for (let v = 0; v < n; v++) {
      if (!live[v]) continue;
      const code = op[v];
      if (code === INPUT) {
        inputs.push(v);
        head.push(tensor(v) ? `const b${v} = B[${v}] = I[${a[v]}];` : `const s${v} = V[${v}] = I[${a[v]}];`);
        continue;
      }
      if (code === CONST || code === FREE) {
        if (tensor(v)) head.push(`const b${v} = B[${v}];`);
        continue;
      }
      // reals read reals only (a tensor operation with a real result leaves the body to the interpreter): all first
      if (!tensor(v)) {
        const args = tape.args(v);
        head.push(`const s${v} = ${javascript.apply(code, real(args[0]), real(args.length > 1 ? args[1] : args[0]))};`);
        if (kept[v]) head.push(`V[${v}] = s${v};`);
        continue;
      }
      if (!stored(v)) continue;
      const d = tape.dims(v);
      const args = tape.args(v);
      reads = [];
      // the pieces: element i of v in [from, to) is `expr` (elementwise: one piece, all of v)
      let pieces: Piece[];
      if (code === CODE.concat) {
        let off = 0;
        pieces = args.map((u) => {
          const m = size(tape.dims(u));
          off += m;
          return { from: off - m, to: off, expr: at(u, m - off) };
        });
      } else if (code === CODE.embed) {
        const starts = (tape.params(v) as { starts: number[][] }).starts;
        pieces = args.map((u, k) => {
          if (!tensor(u)) {
            const pos = starts[k].reduce((s, st, j) => s + st * size(d.slice(j + 1)), 0);
            return { from: pos, to: pos + 1, expr: real(u) };
          }
          const off = contiguousStart(d, starts[k], tape.dims(u));
          return { from: off, to: off + size(tape.dims(u)), expr: at(u, -off) };
        });
      } else pieces = [{ from: 0, to: size(d), expr: node(v, 0) }];
      loops.push({ v, size: size(d), sum: code === CODE.embed, pieces, reads });
    }
    const body = fuse(loops, kept);
    const made = loops.filter((m) => m.array).map((m): [number, number] => [m.v, m.size]);
    const lines = [...head, ...made.map(([v]) => `const b${v} = B[${v}];`), ...body];
    const source = `"use strict";\nreturn function fused(I, B, V, K) {\n${lines.join("\n")}\n};`;
    const code = compiled(source, () => new Function(source)() as Run);
    return new FusedTerm(tape, code, made, inputs);
  }

  run(inputs: ArrayLike<Buf>): void {
    const B = this.B;
    for (const [v, m] of this.made) if (B[v] === null) B[v] = alloc(m, true);
    this.code(inputs, B, this.V, KERNELS);
    fusedStats.runs++;
  }

  value(v: number): Buf {
    return this.tape.isTensor(v) ? this.B[v]! : this.V[v];
  }

  /** A computed buffer is handed over (another is made for the next run); an input's or a literal's is copied. */
  take(v: number): Buf {
    if (!this.tape.isTensor(v)) return this.V[v];
    const buf = this.B[v]!;
    if (this.tape.op[v] < FIRST_PRIMITIVE) return buf.slice();
    this.B[v] = null;
    return buf;
  }

  /** The inputs' buffers are the caller's: not held past the run. Computed ones stay for the next. */
  clear(): void {
    for (const v of this.inputs) this.B[v] = null;
  }
}
