/**
 * @file One chain of elementwise operations on tensors written as JavaScript loops: the
 * code of a step of a planned term (jit/chains.ts plans; eval/interpreter.ts runs).
 *
 * The interpreter calls a kernel per instruction and takes a buffer from the pool for
 * each: one pass over memory per operation. Here a tensor value of the chain used once,
 * by an elementwise operation or a slice of the same chain, is not stored: its consumer
 * computes it in place from its own arguments at the same index (a slice reads its
 * argument at an index moved by its start, when the box is a contiguous range: whole rows
 * of the last axes). A value is stored, in a buffer from the pool, where it is read more
 * than once, read outside the chain (by a kernel, a later chain, or after the run), or
 * made of pieces (concat, and embed, the adjoint of slice: zeros with the pieces added).
 * `where` picks as kernels.select does. A gather of rows at traced positions (gatherAt
 * along axis 0) reads its source's element at the row the positions name, for each
 * element of the chain: the gather's values are never stored (kmeans' sub → square → sum
 * of points less their centroids reads each centroid where the kernel copied it first).
 * The positions are checked as the kernel checks them, before the loops; where every gather
 * and scatter of a loop reads element i, the loop runs by rows (rowLoop). Its adjoint,
 * scatterAddAt, is a sink: each value is added into its row of a copy of the tensor as the
 * loop makes it, element after element as the kernel adds them. A sum of all of a tensor's elements is a sink:
 * accumulated in the loop that computes them, from 0 in memory order, as the sum kernel
 * folds a run (ops/tensor/reduce.ts sumRun): the same additions in the same order.
 *
 * The arithmetic is the interpreter's: every element is the same primitive applied to
 * the same operands (the javascript emitter, whose operations are the kernels'), an
 * embed's elements are 0 + piece as addAt makes them: the same numbers, to the bit.
 */
import { contiguousStart, indexVector, size, type Dims } from "@wengert/ops";
import { CODE, CONST, FREE, KERNELS } from "../trace/opcodes.js";
import type { Tape } from "../trace/tape.js";
import { codeCache, javascript, literal } from "./javascript.js";

/** A chain's compiled loops: B the buffers by variable (read and written), V the reals. */
export type ChainRun = (B: (Float64Array | null)[], V: Float64Array, K: typeof KERNELS) => void;

/**
 * Loop bounds up to this (in size) are written into the code: the few iterations peeled at
 * either end of a stencil's loops and the start of a loop over a whole vector, where V8 then
 * knows the counter's range (the loops of GradBench ode's steps with all their bounds as
 * parameters ran 1–8 % slower; with these literal, as fast as with all literal). A bound
 * near a vector's end is a parameter (fuse): such code is shared by every length past it.
 */
const LITERAL_BOUND = 64;

/** The code of a chain's loops, shared by chains that differ in their bounds alone: E the bounds (fuse). */
type BoundedRun = (B: (Float64Array | null)[], V: Float64Array, K: typeof KERNELS, E: Int32Array) => void;

/** The code of a chain and what its runner provides and keeps. */
export interface ChainCode {
  readonly run: ChainRun;
  /** Values written to buffers (the runner takes them from the pool before the run): variable and length. */
  readonly made: readonly (readonly [number, number])[];
  /** Tensors computed before the chain that it reads. */
  readonly reads: readonly number[];
  /** The loops' source (tests read what the code reads). */
  readonly source: string;
}

/**
 * A step of a planned term (eval/interpreter.ts runs them in order): an instruction the
 * kernels compute (its number), or a chain's compiled loops.
 */
export type Step = number | ChainCode;

/** What the chain's plan says of its values. */
export interface ChainContext {
  /** Readers of each variable (instructions), over the whole term. */
  readonly uses: Int32Array;
  /** 1 where a variable is read outside its chain or after the run. */
  readonly needed: Uint8Array;
}

/**
 * The real that broadcastTo instruction v repeats (its argument, or the argument of its
 * argument, a reshape of a real to one element), else null.
 */
export function broadcastReal(tape: Tape, v: number): number | null {
  const u = tape.args(v)[0];
  if (!tape.isTensor(u)) return u;
  if (tape.op[u] !== CODE.reshape) return null;
  const w = tape.args(u)[0];
  return tape.isTensor(w) ? null : w;
}

/** The part of a stored value at elements [from, to): element i is `expr` there. */
interface Piece {
  readonly from: number;
  readonly to: number;
  readonly expr: string;
}

/** A stored value computed by the chain: its pieces (an embed's are added to 0), the stored values they read at which offsets. */
interface Made {
  readonly v: number;
  readonly size: number;
  /** An embed: its pieces added to 0. */
  readonly sum: boolean;
  /** A sum of all elements (a real), or a scatterAddAt (`scatter`), accumulated in its loop. */
  readonly sink: boolean;
  /** A scatterAddAt: its elements added into its buffer (of `size` elements) at rows g (checked positions, the name) of `inner` elements. */
  readonly scatter?: { readonly g: string; readonly inner: number; readonly size: number };
  readonly pieces: readonly Piece[];
  readonly reads: readonly (readonly [number, number])[];
  /** The constant masks its `where`s read (token `$k<u>_<d>`, mask u at element i + d): decided per segment. */
  readonly masks: readonly Mask[];
  /** Whether it lives in a buffer (read outside its loop, or needed); else in registers alone. */
  array?: boolean;
}

/** A `where`'s constant mask read at element i + d, and the elements where it changes (changes). */
interface Mask {
  readonly u: number;
  readonly d: number;
  readonly data: Float64Array;
  readonly at: readonly number[];
}

/** The elements where a mask changes from selecting to not (or back). */
function changes(data: Float64Array): number[] {
  const at: number[] = [];
  for (let k = 1; k < data.length; k++) if ((data[k] !== 0) !== (data[k - 1] !== 0)) at.push(k);
  return at;
}

/** Whether mask elements [from, to) all select (1), none does (0), or some do and some not (-1). */
function uniform(k: Mask, from: number, to: number): number {
  if (k.at.some((c) => from < c && c < to)) return -1;
  return k.data[from] !== 0 ? 1 : 0;
}

/**
 * Iterations a loop body runs at once where values are read from earlier iterations: each
 * such value is shifted through its registers once per block instead of once per
 * iteration (a Runge–Kutta derivative's loop holds some 25 of those registers).
 */
const UNROLL = 4;

/** Loops of more values than this are not unrolled (their code would be UNROLL times larger). */
const MAX_UNROLLED = 64;

/**
 * How far ahead of its loop's counter a value may be computed (its lead): each lead
 * costs registers (a value read L elements away lives in L + 1 of them).
 */
const MAX_LEAD = 8;

/**
 * How many iterations back a value may be read from its registers (its lag): one read
 * further back reads its buffer (written that many iterations before). The adjoint of d
 * slices of one value (GradBench gmm's coordinates, rows j·k … of one product) embeds one
 * cotangent at d offsets k·c apart, which registers would hold by the k·c.
 */
const MAX_LAG = 16;

/**
 * The leads of a loop's values, or null past MAX_LEAD. At iteration t a value with lead L
 * computes its element t + L; one that reads u at element j + d needs u's element made by
 * then: L(u) ≥ L + d. Each value's lead is the least that its readers (later values)
 * allow, so a loop holds reads both ways: a Runge–Kutta step's derivative reads its
 * stages one element back and its cotangents one element ahead.
 */
function leadsOf(members: readonly Made[]): Map<number, number> | null {
  const lead = new Map<number, number>(members.map((m) => [m.v, 0]));
  for (let k = members.length - 1; k >= 0; k--) {
    const m = members[k];
    const l = lead.get(m.v)!;
    if (l > MAX_LEAD) return null;
    for (const [u, d] of m.reads) {
      const lu = lead.get(u);
      if (lu !== undefined && l + d > lu) lead.set(u, l + d);
    }
  }
  return lead;
}

/**
 * The loops computing the stored values, in order: consecutive values go into one loop
 * while their leads (leadsOf) stay within MAX_LEAD; a loop runs up, as the sum kernel adds
 * (a sink accumulates its elements from the first). Its counter runs over the values'
 * elements shifted by their leads, cut where a piece starts or ends and where a value
 * starts or ends, so that in each segment each value is one expression or nothing,
 * without a branch. Within its loop a value lives in registers r0 … rK (the element made
 * K iterations before, shifted each iteration), and in its buffer only if read elsewhere
 * or needed: a Runge–Kutta step's stages, each read one element back by the next, and
 * its derivative's, read one element ahead, become one pass.
 *
 * The loops' bounds past LITERAL_BOUND are not written into the code: each is a parameter
 * `e<k>`, its value pushed to `bounds`. Only they depend on the vectors' length, so a chain
 * of the same instructions on longer vectors has the same code, compiled and optimised
 * already (a GradBench eval's sizes one after another: a first call at n = 10⁵ ran fresh
 * loops unoptimised for most of its time).
 */
function fuse(loops: Made[], needed: Uint8Array, bounds: number[]): string[] {
  const lines: string[] = [];
  const bound = (x: number): string => {
    if (Math.abs(x) <= LITERAL_BOUND) return String(x);
    let k = bounds.indexOf(x);
    if (k < 0) k = bounds.push(x) - 1;
    return `e${k}`;
  };
  const groupOf = new Map<number, number>();
  const groups: { members: Made[]; lead: Map<number, number> }[] = [];
  for (let k = 0; k < loops.length; ) {
    let members = [loops[k]];
    let lead = leadsOf(members)!;
    let e = k + 1;
    for (; e < loops.length; e++) {
      const more = [...members, loops[e]];
      const l = leadsOf(more);
      if (l === null) break;
      members = more;
      lead = l;
    }
    for (const m of members) groupOf.set(m.v, groups.length);
    groups.push({ members, lead });
    k = e;
  }
  // how many iterations back each value is read in its own loop; whether anything outside reads it
  const lag = new Map<number, number>();
  const outside = new Set<number>();
  // (a read past MAX_LAG reads the buffer, so its value is stored)
  const far = (u: number, m: Made, d: number): boolean => groups[groupOf.get(u)!].lead.get(u)! - groups[groupOf.get(m.v)!].lead.get(m.v)! - d > MAX_LAG;
  loops.forEach((m) => {
    const g = groupOf.get(m.v)!;
    for (const [u, d] of m.reads) {
      if (groupOf.get(u) === g && !far(u, m, d)) {
        const { lead } = groups[g];
        lag.set(u, Math.max(lag.get(u) ?? 0, lead.get(u)! - lead.get(m.v)! - d));
      } else outside.add(u);
    }
  });
  for (const m of loops) m.array = !m.sink && (needed[m.v] === 1 || outside.has(m.v));
  const index = (d: number): string => (d === 0 ? "i" : d > 0 ? `i+${d}` : `i-${-d}`);
  groups.forEach(({ members, lead }, g) => {
    const L = (m: Made): number => lead.get(m.v)!;
    // the counter t: member m makes its element t + L(m)
    const first = Math.min(...members.map((m) => -L(m)));
    const last = Math.max(...members.map((m) => m.size - L(m)));
    const cuts = new Set<number>([first, last]);
    for (const m of members) {
      const clip = (x: number): number => Math.max(0, Math.min(x, m.size)) - L(m);
      cuts.add(clip(0)).add(clip(m.size));
      for (const p of m.pieces) cuts.add(clip(p.from)).add(clip(p.to));
      // where a constant mask changes: each segment reads it all 0 or all 1, a test decided as the code is written
      for (const k of m.masks) for (const c of k.at) cuts.add(clip(c - k.d));
    }
    const bounds = [...cuts].sort((x, y) => x - y);
    const regs = (m: Made): number => lag.get(m.v) ?? 0;
    for (const m of members) lines.push(`let ${Array.from({ length: regs(m) + 1 }, (_, r) => `r${m.v}_${r} = 0`).join(", ")};`);
    const shifts = members.some((m) => regs(m) > 0);
    for (let s = 0; s + 1 < bounds.length; s++) {
      const [lo, hi] = [bounds[s], bounds[s + 1]];
      const active = members.filter((m) => lo + L(m) >= 0 && hi + L(m) <= m.size);
      // iteration i + j's statements; j null: one iteration (the values in r<v>_0), else the j-th of UNROLL
      // (the values in t<v>_<j>, a value made k iterations back a t of this block or a register)
      // by rows (rowLoop): each gathered or scattered row's start once per row, not per element
      const rows = shifts ? null : rowLoop(active, L, lo, hi);
      const iteration = (j: number | null): string[] => {
        const at = j ?? 0;
        const name = (u: number, k: number): string => (j === null ? `r${u}_${k}` : j - k >= 0 ? `t${u}_${j - k}` : `r${u}_${k - j}`);
        const body: string[] = [];
        for (const m of active) {
          const l = L(m);
          const token = (text: string): string =>
            text
              .replace(TOKEN, (_, u: string, minus: string, ds: string) => {
                const d = minus === "" ? Number(ds) : -Number(ds);
                if (groupOf.get(Number(u)) === g && lead.get(Number(u))! - l - d <= MAX_LAG) return name(Number(u), lead.get(Number(u))! - l - d);
                return `b${u}[${index(l + d + at)}]`;
              })
              .replace(GATHER, (_, x: string, g: string, inner: string, minus: string, ds: string) =>
                rows !== null ? `b${x}[o${g} + i]` : `b${x}[${rowElement(`g${g}`, Number(inner), index(l + (minus === "" ? Number(ds) : -Number(ds)) + at))}]`,
              )
              .replace(MASK, (_, u: string, minus: string, ds: string) => {
                const d = minus === "" ? Number(ds) : -Number(ds);
                const k = m.masks.find((q) => q.u === Number(u) && q.d === d)!;
                const same = uniform(k, lo + l + d, hi + l + d);
                return same === 1 ? "true" : same === 0 ? "false" : `(b${u}[${index(l + d + at)}] !== 0)`;
              });
          const inside = m.pieces.filter((p) => p.from <= lo + l && hi + l <= p.to);
          const expr = m.sum ? inside.reduce((acc, p) => `(${acc} + ${p.expr})`, "0") : inside[0].expr;
          // a sink adds as sumRun does: acc += x[i], from 0
          if (m.scatter !== undefined) {
            const { g, inner } = m.scatter;
            body.push(`b${m.v}[${rows !== null ? `o${g.slice(1)} + i` : rowElement(g, inner, index(l + at))}] += ${token(expr)};`);
          }
          else if (m.sink) body.push(`r${m.v}_0 += ${token(expr)};`);
          else body.push(j === null ? `r${m.v}_0 = ${token(expr)};` : `const t${m.v}_${j} = ${token(expr)};`);
          if (m.array) body.push(`b${m.v}[${index(l + at)}] = ${name(m.v, 0)};`);
        }
        return body;
      };
      // (a segment where nothing is made still shifts the registers: a value read k iterations back is k shifts back)
      // (after a block, by UNROLL: the values it made are its t's)
      const shift = (block: boolean): string[] => {
        const by = block ? UNROLL : 1;
        const moves: string[] = [];
        for (const m of members) {
          const made = block && active.includes(m) && !m.sink;
          for (let r = regs(m); r > 0; r--) {
            const from = r - by > 0 || !made ? `r${m.v}_${Math.max(0, r - by)}` : `t${m.v}_${by - r}`;
            moves.push(`r${m.v}_${r} = ${from};`);
          }
        }
        return moves;
      };
      if (rows !== null) {
        // row w's elements [i, i + inner): o<g> + i is element i's place in its source row
        const starts = [...rows.names].map((g) => `const o${g.slice(1)} = ${g}[w] * ${rows.inner} - i;`);
        const inner = `for (const e = i + ${rows.inner}; i < e; i++) {\n  ${iteration(null).join("\n  ")}\n}`;
        lines.push(`{\nlet i = ${lo};\nfor (let w = ${lo / rows.inner}; i < ${hi}; w++) {\n${[...starts, inner].join("\n")}\n}\n}`);
        continue;
      }
      const one = `for (; i < ${bound(hi)}; i++) {\n  ${[...iteration(null), ...shift(false)].join("\n  ")}\n}`;
      if (!shifts || hi - lo < 4 * UNROLL || members.length > MAX_UNROLLED) {
        lines.push(`{\nlet i = ${bound(lo)};\n${one}\n}`);
        continue;
      }
      // UNROLL iterations at once: the registers shift once per block, not per iteration
      const block = Array.from({ length: UNROLL }, (_, j) => iteration(j)).flat();
      const blocks = `for (; i + ${UNROLL} <= ${bound(hi)}; i += ${UNROLL}) {\n  ${[...block, ...shift(true)].join("\n  ")}\n}`;
      lines.push(`{\nlet i = ${bound(lo)};\n${blocks}\n${one}\n}`);
    }
    for (const m of members) if (m.sink && m.scatter === undefined) lines.push(`V[${m.v}] = r${m.v}_0;`);
  });
  return lines;
}

/**
 * Whether a segment [lo, hi) of a loop without registers runs by rows: when every gather
 * and scatter its members make reads or adds element i (no lead, no offset) of rows of one
 * width `inner`, and the segment is whole rows. Then an outer loop runs over the rows and
 * an inner one over their elements, in the same order of i (a sink's additions, a
 * scatter's, are the same in the same order): each row's place in its source is found
 * once, not by a shift and a mask (a division where inner is no power of two) per element
 * and per gather (kmeans' direction reads the assignment four times an element). Null
 * where the segment has no gather or scatter, or reads one otherwise.
 */
function rowLoop(active: readonly Made[], L: (m: Made) => number, lo: number, hi: number): { inner: number; names: Set<string> } | null {
  const names = new Set<string>();
  let inner = 0;
  let fits = true;
  const row = (g: string, width: number, offset: number): void => {
    if (inner !== 0 && width !== inner) fits = false;
    inner = width;
    if (offset !== 0) fits = false;
    names.add(g);
  };
  for (const m of active) {
    if (m.scatter !== undefined) row(m.scatter.g, m.scatter.inner, L(m));
    for (const p of m.pieces) {
      if (!(p.from <= lo + L(m) && hi + L(m) <= p.to)) continue;
      for (const [, , g, width, minus, ds] of p.expr.matchAll(GATHER)) row(`g${g}`, Number(width), L(m) + (minus === "" ? Number(ds) : -Number(ds)));
    }
  }
  if (!fits || names.size === 0 || lo % inner !== 0 || hi % inner !== 0 || hi <= lo) return null;
  return { inner, names };
}

/**
 * Stored value u's element i + d in an expression, until the loops decide where it lives:
 * `$u_d` (`$u_nd` for −d), an identifier, so that the emitter writes square(x) as x * x
 * on it as on any plain operand (nothing else generated has a `$`).
 */
const TOKEN = /\$(\d+)_(n?)(\d+)/g;

/**
 * Where element e of rows of `inner` elements at positions `g` lies in their source: row
 * g[e / inner], column e % inner. A power of two (kmeans' d = 8, 16) by shifts and masks:
 * a division per element cost more than the copy a gather kernel makes.
 */
function rowElement(g: string, inner: number, e: string): string {
  const shift = Math.log2(inner);
  if (Number.isInteger(shift)) return `(${g}[(${e}) >> ${shift}] << ${shift}) + ((${e}) & ${inner - 1})`;
  return `${g}[(${e}) / ${inner} | 0] * ${inner} + (${e}) % ${inner}`;
}

/**
 * A gather's element i + d (`$g<x>_<p>_<rows>_<inner>_<d>`, as TOKEN): source x's element at
 * row g<p>_<rows>[(i + d) / inner] (positions p, checked), column (i + d) % inner.
 */
const GATHER = /\$g(\d+)_(\d+_\d+)_(\d+)_(n?)(\d+)/g;

/** A constant mask's test at element i + d (`$k<u>_<d>`, as TOKEN), decided per segment by the loops. */
const MASK = /\$k(\d+)_(n?)(\d+)/g;

/** Constant masks with more runs than this are read element by element (each change cuts the loops). */
const MAX_MASK_RUNS = 8;

/** A name (a value's token, a real): repeated in an expression, it is not computed twice. */
const NAME = /^[A-Za-z_$][\w$]*$/;

/** How deep a chain's expressions nest (values read once written inside their reader's) before one is stored. */
const MAX_NESTING = 24;

/** Generated functions by source: a term traced again by a later call has the same code. */
const compiled = codeCache<BoundedRun>();

/** Chain functions made from new source (tests: code found again for longer vectors is not made again). */
export const chainCodeStats = { made: 0 };

/**
 * The code of the chain `members` (instructions of `tape` in order, each one that
 * jit/chains.ts's `fusable` accepts; a sink's result read by none of them).
 */
export function chainCode(tape: Tape, members: readonly number[], context: ChainContext): ChainCode {
  const { op } = tape;
  const { uses, needed } = context;
  const inChain = new Set(members);
  const tensor = (v: number): boolean => tape.isTensor(v);
  // reads of each value, a slice's counted as its own readers' (a slice is an offset, so a value
  // read once by a slice read twice is computed twice if not stored: a Runge–Kutta stage's
  // y + h/2·k, read by the step and by its derivative)
  const readers = new Map<number, number>();
  for (let k = members.length - 1; k >= 0; k--) {
    const v = members[k];
    if (op[v] !== CODE.slice) continue;
    const u = tape.args(v)[0];
    readers.set(u, (readers.get(u) ?? uses[u]) - 1 + (readers.get(v) ?? uses[v]));
  }
  // stored: outside the chain, read more than once, read outside it or after the run, or made of
  // pieces; the rest are computed where they are read (a slice is an offset: read again, never copied)
  const storedFor = (v: number): boolean =>
    !inChain.has(v) || needed[v] === 1 || ((readers.get(v) ?? uses[v]) > 1 && op[v] !== CODE.slice) || op[v] === CODE.concat || op[v] === CODE.embed;
  // a value whose expression would nest deeper than MAX_NESTING is stored too: expressions
  // are written recursively, and a long chain (sin of sin of …) is cut into short ones
  const deep = new Set<number>();
  const nesting = new Map<number, number>();
  for (const v of members) {
    let n = 0;
    for (const u of tape.args(v)) if (inChain.has(u) && !storedFor(u) && !deep.has(u)) n = Math.max(n, nesting.get(u)!);
    nesting.set(v, n + 1);
    if (n + 1 >= MAX_NESTING) deep.add(v);
  }
  const stored = (v: number): boolean => storedFor(v) || deep.has(v);
  const realsRead = new Set<number>();
  const temporaries = new Set<string>();
  const tensorsRead = new Set<number>();
  const real = (v: number): string => {
    if (op[v] === CONST || op[v] === FREE) return literal(tape.val[v]);
    realsRead.add(v);
    return `s${v}`;
  };
  // v's element i + d, as an expression; a stored value's element is a token (a register
  // or an array element, decided with the loops: TOKEN), and goes to `reads`
  let reads: [number, number][] = [];
  let masks: Mask[] = [];
  const at = (v: number, d: number): string => {
    if (!tensor(v)) return real(v);
    if (stored(v)) {
      if (!inChain.has(v)) tensorsRead.add(v);
      reads.push([v, d]);
      return `$${v}_${d < 0 ? `n${-d}` : d}`;
    }
    return node(v, d);
  };
  const changed = new Map<number, number[]>();
  const changesOf = (u: number, data: Float64Array): number[] => {
    let at = changed.get(u);
    if (at === undefined) changed.set(u, (at = changes(data)));
    return at;
  };
  // a where's mask: a constant that changes a few times is decided per segment (MASK), any other read as an element
  const test = (u: number, d: number): string => {
    if (op[u] === CONST && tensor(u)) {
      const data = tape.buf(u);
      const at = changesOf(u, data);
      if (at.length < MAX_MASK_RUNS) {
        tensorsRead.add(u);
        if (!masks.some((k) => k.u === u && k.d === d)) masks.push({ u, d, data, at });
        return `$k${u}_${d < 0 ? `n${-d}` : d}`;
      }
    }
    return `${at(u, d)} !== 0`;
  };
  // gathers' and scatters' positions, checked before the loops, once per vector and number of
  // rows (a direction's derivative reads one assignment four times): the name of the checked ones
  const gathers = new Map<string, string>();
  const checked = (v: number, positions: number, rows: number): string => {
    const g = `g${positions}_${rows}`;
    tensorsRead.add(positions);
    if (!gathers.has(g)) gathers.set(g, `const ${g} = positions("${op[v] === CODE.gatherAt ? "gatherAt" : "scatterAddAt"}", b${positions}, ${rows}, 0);`);
    return g;
  };
  const node = (v: number, d: number): string => {
    const code = op[v];
    const args = tape.args(v);
    if (code === CODE.gatherAt) {
      const [x, positions] = args;
      const xd = tape.dims(x);
      tensorsRead.add(x);
      const g = checked(v, positions, xd[0]);
      return `$g${x}_${g.slice(1)}_${size(xd.slice(1))}_${d < 0 ? `n${-d}` : d}`;
    }
    if (code === CODE.slice) return at(args[0], d + contiguousStart(tape.dims(args[0]), (tape.params(v) as { starts: number[] }).starts, tape.dims(args[0])));
    if (code === CODE.reshape) return real(args[0]);
    if (code === CODE.broadcastTo) return real(broadcastReal(tape, v)!);
    // as kernels.select
    if (code === CODE.where) return `(${test(args[0], d)} ? ${at(args[1], d)} : ${at(args[2], d)})`;
    if (code === CODE.square) {
      // an expression squared as x * x (the kernel's arithmetic), through a temporary: the
      // emitter repeats only a name, and calls the kernel on anything else
      const x = at(args[0], d);
      if (NAME.test(x)) return javascript.apply(code, x, x);
      const q = `q${v}_${d < 0 ? `n${-d}` : d}`;
      temporaries.add(q);
      return `(${q} = ${x}, ${q} * ${q})`;
    }
    return javascript.apply(code, at(args[0], d), args.length > 1 ? at(args[1], d) : at(args[0], d));
  };
  const loops: Made[] = [];
  // scatters' tensors copied into their buffers before the loops
  const copies: string[] = [];
  for (const v of members) {
    const code = op[v];
    const args = tape.args(v);
    if (code === CODE.scatterAddAt) {
      // a sink: its values added into a copy of its tensor (filled before the loops) at the positions' rows
      const [t, positions, values] = args;
      const td = tape.dims(t);
      reads = [];
      masks = [];
      tensorsRead.add(t);
      const g = checked(v, positions, td[0]);
      const inner = size(td.slice(1));
      const m = size(tape.dims(values));
      const scatter = { g, inner, size: size(td) };
      loops.push({ v, size: m, sum: false, sink: true, scatter, pieces: [{ from: 0, to: m, expr: at(values, 0) }], reads, masks });
      copies.push(`b${v}.set(b${t});`);
      continue;
    }
    if (!tensor(v)) {
      // a sink: the sum of all of its argument's elements
      reads = [];
      masks = [];
      const m = size(tape.dims(args[0]));
      loops.push({ v, size: m, sum: false, sink: true, pieces: [{ from: 0, to: m, expr: at(args[0], 0) }], reads, masks });
      continue;
    }
    if (!stored(v)) continue;
    const d = tape.dims(v);
    reads = [];
    masks = [];
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
    loops.push({ v, size: size(d), sum: code === CODE.embed, sink: false, pieces, reads, masks });
  }
  const bounds: number[] = [];
  const body = fuse(loops, needed, bounds);
  const made = loops.filter((m) => m.array || m.scatter !== undefined).map((m): [number, number] => [m.v, m.scatter?.size ?? m.size]);
  const head = [
    ...bounds.map((_b, k) => `const e${k} = E[${k}];`),
    ...[...temporaries].map((q) => `let ${q} = 0;`),
    ...[...realsRead].map((v) => `const s${v} = V[${v}];`),
    ...[...tensorsRead, ...made.map(([v]) => v)].map((v) => `const b${v} = B[${v}];`),
    ...gathers.values(),
    ...copies,
  ];
  const source = `"use strict";\nreturn function chain(B, V, K, E) {\n${[...head, ...body].join("\n")}\n};`;
  const loopsRun = compiled(source, () => (chainCodeStats.made++, new Function("positions", source)(indexVector) as BoundedRun));
  const E = Int32Array.from(bounds);
  return { run: (B, V, K) => loopsRun(B, V, K, E), made, reads: [...tensorsRead], source };
}
