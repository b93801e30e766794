/**
 * @file Efficient symbolic differentiation: `W.R_V(x:T. C)` by one reverse sweep.
 *
 * Computes the same term as the literal Fig. 6 rules (reference.ts) but in linear
 * time and size. Fig. 6's `let` rule, `W.R_V(x.E) + (let ȳ = W.R_y(y.E) in ȳ.R_V(x.D))`,
 * differentiates the body E twice; here each variable instead gets one cotangent,
 * accumulated with `+` (the paper's commutative monoid) over its uses, so every
 * instruction's reverse rule (the paper's `op_r`) is emitted once. Absent cotangents are
 * symbolic zeros: nothing is emitted for them, nor for variables that do not depend on
 * `x` (constants and free variables of C).
 *
 * The derivative term is emitted into a sink (place.ts): a trace extending C at the
 * outermost `rd`, where C's values are reused as they are, or the enclosing trace of a
 * nested `rd`, so that the outer differentiation differentiates the whole derivative
 * computation.
 *
 * Tensors add three things to the monoid of cotangents:
 * - a contribution shaped like a broadcast result is summed back to its argument's
 *   shape (`sumTo`, the adjoint of broadcasting);
 * - `index` and `slice` contribute pieces (zero but for one element or box); a
 *   variable's pieces are placed with one `embed` when its cotangent is needed, so n
 *   element reads cost O(n), not n dense one-hot tensors;
 * - a cotangent that `where` leaves zero outside its mask keeps that mask while it flows
 *   back through elementwise rules, which are masked in turn: a NaN or ∞ of an
 *   unselected branch (sqrt of a negative) times that exact zero is 0, as it should be.
 */
import { broadcastDims, contiguousStart, kernels, sameDims, size, sumTo, type Contribution, type Dims } from "@wengert/ops";
import { ARITY, CODE, FIRST_PRIMITIVE, INPUT, IS_TENSOR_OP, primitiveOf, scalarSpec, tensorSpec } from "../trace/opcodes.js";
import { emitterFor } from "../trace/emitter.js";
import { ownedCopy } from "../trace/host-tensor.js";
import type { Trace } from "../trace/tracer.js";
import type { TraceTerm } from "../trace/term.js";
import { activity, place, type Emitted, type Placement } from "./place.js";
import { scanSweep } from "./scan-reverse.js";
import { keepsScans, unrolled } from "./unroll.js";
import { nestable, withResiduals } from "./scan-nested.js";
import type { ScanParams } from "../trace/scan-ops.js";
import type { Mask } from "./cotangent-mask.js";

const ADD = CODE.add;
const WHERE = CODE.where;

/** A piece of a cotangent at `start`; a whole one passed between a scan's blocks carries its mask (null: every element), see Split. */
type Piece = { readonly piece: number; readonly start: readonly number[]; readonly mask?: Mask | null };
const isPiece = (c: Contribution<number>): c is Exclude<Contribution<number>, number | null> => c !== null && typeof c === "object";

/**
 * Told, while set, which instruction of C each reverse rule (Fig. 6's `op_r`) is emitted
 * for: what `sink` receives after `onRule(sink, i)` and before the next call is vi's
 * rule and the accumulation of its operands' cotangents; `i` is -1 after the last rule.
 * The term language links each `let` of a derivative term to its source by it
 * (lang/origins.ts).
 */
export type RuleListener = (sink: Trace, instruction: number) => void;
let onRule: RuleListener | null = null;

/** Run `body` with `listener` told of every rule that differentiations in it emit. */
export function listeningToRules<T>(listener: RuleListener, body: () => T): T {
  const saved = onRule;
  onRule = listener;
  try {
    return body();
  } finally {
    onRule = saved;
  }
}

/**
 * Emit `W.R_V(x. C)` into `sink`. `seeds` are the sink's variables for the leaves of W
 * (in the order of C's outputs); the results are the cotangents of C's inputs.
 */
export function differentiate(term: TraceTerm, sink: Trace, seeds: readonly number[], placement: Placement | null, split?: Split): Emitted {
  // emitted where it will be differentiated again: the loops written out (unroll.ts)
  ({ term, placement } = unrolled(term, placement, sink, nested));
  const tape = term.tape;
  const { op, a, b, x, length: n } = tape;
  const e = emitterFor(sink);
  const at = place(term, sink, placement);
  const active = activity(term, undefined, split?.inactive);
  const dimsIn = (v: number): Dims => sink.tape.dims(v);

  // ct[i]: the sink variable holding v_i's cotangent so far; -1 is the symbolic zero.
  const ct = new Int32Array(n).fill(-1);
  // for tensor variables only: pending pieces, and the mask of the cotangent (null: none)
  const pieces = new Map<number, Piece[]>();
  // by variable, in an array (a Map took an insert per tensor cotangent)
  const masks = new Array<Mask | null | undefined>(n);
  const maskAtoms = new Map<Mask, number>();
  const maskAtom = (m: Mask, dims: Dims): number => {
    let v = maskAtoms.get(m);
    // a copy the tape owns (it hands its buffers back to the pool; a mask may be a scan's, kept: cotangent-mask.ts)
    if (v === undefined) maskAtoms.set(m, (v = sink.tape.tensorConstant(ownedCopy({ dims, data: m }))));
    return v;
  };

  // where a cotangent may be nonzero, read off a constant computed like the cotangent
  // from a mask (so folded in the sink): null when that is everywhere
  // (loops: map and every with callbacks took a fifth of a scan's box plan at 10⁵ elements, box-plan.ts)
  const support = (atom: number): Mask | null => {
    const b = sink.tape.buf(atom);
    let k = 0;
    while (k < b.length && b[k] !== 0) k++;
    if (k === b.length) return null;
    const m = new Float64Array(b.length);
    for (let i = 0; i < b.length; i++) m[i] = b[i] !== 0 ? 1 : 0;
    return m;
  };

  const accumulate = (v: number, c: Contribution<number>, mask: Mask | null = null): void => {
    if (c === null || !active[v]) return;
    if (isPiece(c)) {
      let list = pieces.get(v);
      if (list === undefined) pieces.set(v, (list = []));
      list.push(c);
      return;
    }
    if (x[v] !== 0 || sink.tape.x[c] !== 0) {
      const want = tape.dims(v);
      const got = dimsIn(c);
      if (!sameDims(got, want)) {
        // summed back where v was broadcast; repeated where the contribution is smaller
        const grows = broadcastDims(got, want);
        const fit = (u: number): number => (typeof grows !== "string" && sameDims(grows, want) ? e.broadcastTo(u, want) : sumTo(e, u, want));
        c = fit(c);
        if (mask !== null) mask = support(fit(maskAtom(mask, got)));
      }
      const before = masks[v];
      masks[v] = ct[v] < 0 ? mask : before == null || mask === null ? null : union(before, mask);
    }
    ct[v] = ct[v] < 0 ? c : sink.record(ADD, ct[v], c);
  };
  // v_i's cotangent once every use has contributed: pieces placed by one embed; its mask
  // covers the pieces' boxes too
  const settle = (i: number): number => {
    const list = pieces.get(i);
    if (list === undefined) return ct[i];
    pieces.delete(i);
    const dims = tape.dims(i);
    const dense = masks[i];
    // (a dense part without a mask leaves none whatever the pieces cover: nothing to compute)
    const pm = ct[i] >= 0 && dense == null ? null : piecesMask(dims, list, sink);
    if (pm === null) masks[i] = null;
    else if (ct[i] < 0) masks[i] = pm;
    else if (dense != null) {
      const m = dense.map((t, k) => (t !== 0 || pm[k] !== 0 ? 1 : 0));
      masks[i] = m.every((t) => t !== 0) ? null : m;
    }
    const placed = e.embed(dims, list.map((p) => p.piece), list.map((p) => p.start));
    return (ct[i] = ct[i] < 0 ? placed : sink.record(ADD, ct[i], placed));
  };
  term.output.atoms.forEach((v, j) => accumulate(v, seeds[j], split?.seedMasks?.[j] ?? null));
  for (const s of split?.pieces ?? []) {
    accumulate(s.v, { piece: s.atom, start: tape.dims(s.v).map(() => 0), ...(s.mask !== undefined ? { mask: s.mask } : {}) });
  }
  // at the outermost level (or into a trace only evaluated), a scan's reverse sweep is a scan (scan-reverse.ts)
  const scans = scanSweep(term, sink, at, differentiate, keepsScans(term, sink, placement));
  const state = {
    ct,
    maskOf(v: number): Mask | null {
      return ct[v] >= 0 ? (masks[v] ?? null) : null;
    },
    piecesMask(v: number): Mask | null {
      const list = pieces.get(v);
      return list === undefined ? null : piecesMask(tape.dims(v), list, sink);
    },
    pending(v: number): number {
      const list = pieces.get(v);
      if (list === undefined) return -1;
      pieces.delete(v);
      return e.embed(tape.dims(v), list.map((p) => p.piece), list.map((p) => p.start));
    },
    replace(v: number, c: number, whole: number, mask: Mask | null = null, wholeMask: Mask | null = null): void {
      ct[v] = c;
      masks[v] = mask;
      if (whole >= 0) pieces.set(v, [{ piece: whole, start: tape.dims(v).map(() => 0), mask: wholeMask }]);
    },
  };

  for (let i = n - 1; i >= 0; i--) {
    if (op[i] < FIRST_PRIMITIVE) continue;
    if (onRule !== null) onRule(sink, i);
    if (scans !== null && scans.at(i, state)) continue;
    const c = x[i] === 0 ? ct[i] : settle(i);
    if (c < 0) continue;
    if (sink.checksNaN()) sink.context = `the reverse rule of ${primitiveOf(op[i]).name} (for v${i})`;
    if (x[i] === 0) {
      // a real instruction: the common case, kept lean
      const spec = scalarSpec(op[i]);
      if (spec.arity === 1) {
        accumulate(a[i], spec.reverse(e, at[a[i]], at[i], c));
      } else {
        if (active[a[i]]) accumulate(a[i], spec.reverse[0](e, at[a[i]], at[b[i]], at[i], c));
        if (active[b[i]]) accumulate(b[i], spec.reverse[1](e, at[a[i]], at[b[i]], at[i], c));
      }
      continue;
    }
    const args = tape.args(i);
    const ats = args.map((v) => at[v]);
    const mask = masks[i] ?? null;
    if (IS_TENSOR_OP[op[i]]) {
      const spec = tensorSpec(op[i]);
      const params = tape.params(i);
      args.forEach((v, k) => {
        if (!active[v] || spec.constantArgs?.includes(k)) return;
        const contribution = spec.reverse(e, k, ats, at[i], c, params);
        if (op[i] === WHERE && contribution !== null && !isPiece(contribution)) {
          // where: what flows to a branch is zero off its side of the mask
          const side = selectedMask(tape.buf(args[0]), tape.dims(args[0]), tape.dims(i), k === 1);
          return accumulate(v, contribution, mask === null ? side : intersect(mask, side));
        }
        if (mask === null || !STRUCTURAL.has(op[i]) || contribution === null) return accumulate(v, contribution);
        // an op that only moves, copies or adds elements: its rule applied to the mask says where
        // the contribution can be nonzero
        const moved = spec.reverse(e, k, ats, at[i], maskAtom(mask, tape.dims(i)), params);
        if (isPiece(moved) || isPiece(contribution)) {
          const pm = isPiece(moved) ? support(moved.piece) : null;
          // a piece whose own mask is partial becomes dense, so the mask can travel with it
          if (pm === null || !isPiece(contribution)) return accumulate(v, contribution);
          const placedMask = support(e.embed(tape.dims(v), [maskAtom(pm, sink.tape.dims(contribution.piece))], [contribution.start]));
          return accumulate(v, e.embed(tape.dims(v), [contribution.piece], [contribution.start]), placedMask);
        }
        accumulate(v, contribution, moved === null ? null : support(moved));
      });
      continue;
    }
    // a real primitive applied elementwise to tensors
    const spec = scalarSpec(op[i]);
    const masked = (c2: number | null): number | null => {
      if (c2 === null || mask === null) return c2;
      return e.where(maskAtom(mask, tape.dims(i)), c2, e.lit(0));
    };
    if (ARITY[op[i]] === 1) {
      if (spec.arity === 1) accumulate(a[i], masked(spec.reverse(e, at[a[i]], at[i], c)), mask);
    } else if (spec.arity === 2) {
      if (active[a[i]]) accumulate(a[i], masked(spec.reverse[0](e, at[a[i]], at[b[i]], at[i], c)), mask);
      if (active[b[i]]) accumulate(b[i], masked(spec.reverse[1](e, at[a[i]], at[b[i]], at[i], c)), mask);
    }
  }

  sink.context = "";
  if (onRule !== null) onRule(sink, -1);
  const results: number[] = [];
  const present: boolean[] = [];
  const pieceResults: number[] = [];
  const resultMasks: (Mask | null)[] = [];
  const pieceMasks: (Mask | null)[] = [];
  for (let i = 0; i < n; i++) {
    if (op[i] !== INPUT) continue;
    if (split !== undefined && x[i] !== 0) {
      // the dense sum and the pieces apart, as they are until the variable is settled, with their masks
      const list = pieces.get(i);
      pieceResults[a[i]] = list === undefined ? -1 : e.embed(tape.dims(i), list.map((p) => p.piece), list.map((p) => p.start));
      pieceMasks[a[i]] = list === undefined ? null : piecesMask(tape.dims(i), list, sink);
    }
    const c = x[i] === 0 || split !== undefined ? ct[i] : settle(i);
    results[a[i]] = c >= 0 ? c : x[i] === 0 ? sink.constant(0) : e.zeros(tape.dims(i));
    present[a[i]] = c >= 0;
    resultMasks[a[i]] = c >= 0 && x[i] !== 0 ? (masks[i] ?? null) : null;
  }
  return { outputs: term.output.atoms.map((v) => at[v]), results, present, pieceResults, resultMasks, pieceMasks };
}

/** A scan kept where its sweep will be differentiated again (scan-nested.ts), writing what its rules read; null: written out. */
const nested = (p: ScanParams): ScanParams | null => (nestable(p) ? withResiduals(p, differentiate) : null);

/**
 * A derivative computed as one block of a longer sweep (a scan's, scan-reverse.ts): tensor
 * variables start from pieces already gathered, and the inputs' dense sums and pieces
 * come back apart (`results`, `pieceResults`; -1 for no pieces). The cotangents passed
 * between blocks keep the masks the written-out sweep gives them (`seedMasks` per seed, a
 * piece's `mask`; `resultMasks`, `pieceMasks` back): a block's elementwise rules are masked
 * as the loop written out masks them (cotangent-mask.ts).
 */
export interface Split {
  readonly pieces: readonly { readonly v: number; readonly atom: number; readonly mask?: Mask | null }[];
  readonly seedMasks?: readonly (Mask | null)[];
  /** Per input index, 1 where no cotangent is wanted: the input is a constant of the block (its cotangent absent). */
  readonly inactive?: Uint8Array;
}

/** Tensor primitives whose reverse rule only moves, copies or sums elements of the cotangent. */
const STRUCTURAL = new Set(
  (["reshape", "broadcastTo", "transpose", "slice", "index", "embed", "pack", "gather", "scatterAdd", "concat", "sum"] as const).map((name) => CODE[name]),
);

/**
 * Whether pieces of a vector leave no element out (slices of x that overlap, as
 * x[0:n-1] and x[1:n]): then the cotangent may be nonzero everywhere, and no mask need
 * be made element by element. False where unknown (more than one axis).
 */
function coversAxis(dims: Dims, boxes: readonly { start: readonly number[]; dims: Dims }[]): boolean {
  if (dims.length !== 1) return false;
  const sorted = boxes.map((b) => [b.start[0], b.start[0] + b.dims[0]]).sort((p, q) => p[0] - q[0]);
  let end = 0;
  for (const [from, to] of sorted) {
    if (from > end) return false;
    end = Math.max(end, to);
  }
  return end >= dims[0];
}

/**
 * Sets 1 over the pieces' boxes (where a whole piece's own mask is 1, where it carries one)
 * in m, a mask of zeros and ones: a box of whole rows (a slice of a vector) is one range of
 * elements, filled; any other is added by addAt, and the mask made ones and zeros again.
 */
function addBoxes(m: Mask, dims: Dims, list: readonly Piece[], sink: Trace): void {
  let counted = false;
  for (const p of list) {
    if (p.mask != null) {
      const pm = p.mask;
      for (let k = 0; k < m.length; k++) if (pm[k] !== 0) m[k] = 1;
      continue;
    }
    const pd = sink.tape.dims(p.piece);
    const from = contiguousStart(dims, p.start, pd);
    if (from >= 0) m.fill(1, from, from + size(pd));
    else {
      kernels.addAt(m, dims, onesLike(pd), pd, p.start);
      counted = true;
    }
  }
  if (counted) for (let k = 0; k < m.length; k++) m[k] = m[k] !== 0 ? 1 : 0;
}

/** Where a variable's pieces may be nonzero (null: every element), as settling them would mask it. */
function piecesMask(dims: Dims, list: readonly Piece[], sink: Trace): Mask | null {
  // boxes that leave no element out, or a whole piece without a mask
  const boxes = list.filter((p) => p.mask === undefined);
  if (list.some((p) => p.mask === null) || coversAxis(dims, boxes.map((p) => ({ start: p.start, dims: sink.tape.dims(p.piece) })))) return null;
  const m = new Float64Array(size(dims));
  addBoxes(m, dims, list, sink);
  for (let k = 0; k < m.length; k++) if (m[k] === 0) return m;
  return null;
}

function onesLike(dims: Dims): number | Float64Array {
  return dims.length === 0 ? 1 : new Float64Array(size(dims)).fill(1);
}

/** The where-mask (or its complement) read at the output's dims. */
function selectedMask(m: Float64Array, md: Dims, out: Dims, selected: boolean): Mask {
  const full = sameDims(md, out) ? m : kernels.broadcastTo(m, md, out);
  const r = new Float64Array(full.length);
  for (let i = 0; i < r.length; i++) r[i] = (full[i] !== 0) === selected ? 1 : 0;
  return r;
}

function union(p: Mask, q: Mask): Mask {
  if (p === q) return p;
  const r = new Float64Array(p.length);
  for (let i = 0; i < r.length; i++) r[i] = p[i] !== 0 || q[i] !== 0 ? 1 : 0;
  return r;
}

function intersect(p: Mask, q: Mask): Mask {
  const r = new Float64Array(p.length);
  for (let i = 0; i < r.length; i++) r[i] = p[i] !== 0 && q[i] !== 0 ? 1 : 0;
  return r;
}
