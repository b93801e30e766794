/**
 * @file The plan of a scan's reverse sweep where every mask is a box (eval/box-block.ts): one
 * block derivative per run of iterations of one pattern, evaluated over windows, instead of a
 * derivative per pattern of masks (reverse-plan.ts, within MASK_BUDGET) or none (masks
 * dropped: every block over whole vectors).
 *
 * A mask moves with the cotangent it bounds: a slice shifts it, a sum unites, a `where`
 * intersects, the vector's ends clip. Box bounds so made are sums, minima and maxima of the
 * input boxes' bounds and constants: along a run where the input boxes move by a constant step
 * per iteration, each bound moves by that step or stays, and where it changes from one to the
 * other (a clip) the term changes too. The plan makes the masked block derivative at the
 * run's first iteration and its last (and its second, where the input boxes' bounds do not all
 * move by one step), and takes the run as one term whose boxes move linearly only where they
 * agree: the same term but for its masks' constants, and every box (inputs', `where`s',
 * outputs') on one line. GradBench ode's suffixes grow by four elements per step, far from
 * the vector's start: four derivatives for all the steps (the last block, the first, and a run's two ends).
 *
 * Fenced to sweeps kept as one instruction over a body of tensors with no xs and no seeded
 * written values (a carry's cotangent comes from the block after, or the final seed).
 */
import { size } from "@wengert/ops";
import type { ScanParams } from "../trace/scan-ops.js";
import { CODE, CONST, FIRST_PRIMITIVE } from "../trace/opcodes.js";
import { liveVariables } from "../eval/interpreter.js";
import { Runs } from "./runs.js";
import { BoxBlock, type BoxRun, type BoxSweep } from "../eval/box-block.js";
import { boxMask, boxOf, maskById, maskId, type Box } from "./cotangent-mask.js";
import {
  blockDerivative,
  cacheFor,
  inState,
  outState,
  PARTS,
  unneededInputs,
  type BlockDerivative,
  type Differentiate,
  type ReverseInputs,
  type ReversePlan,
  type Sources,
} from "./reverse-plan.js";

/**
 * Whether sweeps may run over boxes (benchmarks turn it off to compare with the sweeps of whole
 * blocks), and whether wherever they may (tests: the windows at small sizes, where whole blocks cost less).
 */
export const boxSweeps = { enabled: true, always: false };

/** A mask that is not one box, or a block that returns other parts than its run's: the plan gives up (planBoxes catches it). */
class NotBox extends Error {}

/** A mask id's box (null: none, every element). */
function boxOfId(id: number): Box | null {
  const m = maskById(id);
  if (m === null) return null;
  const b = boxOf(m);
  if (b === null) throw new NotBox();
  return b;
}

/** One block derivative made for an iteration: its term and every box, as BoxRun lays them out. */
interface Made {
  readonly d: BlockDerivative;
  /** The mask constants its `where`s read, in variable order. */
  readonly slots: readonly number[];
  readonly v: Int32Array;
}

/** planReverse's options a box plan takes. */
interface BoxOptions {
  readonly merge: boolean;
  readonly unneeded: boolean;
}

/**
 * The plan with each run's blocks evaluated over windows, or null where the sweep is not
 * fenced in, a run's boxes do not move linearly, or whole blocks cost less (`cheaper`).
 */
export function planBoxes(p: ScanParams, inputs: ReverseInputs, differentiate: Differentiate, options: BoxOptions): ReversePlan | null {
  const { body } = p;
  const outside = body.reals || p.stacked !== undefined || body.nx !== 0 || inputs.masks === undefined || inputs.seedObs.some((f) => f !== 0);
  if (!boxSweeps.enabled || outside) return null;
  try {
    return withBoxes(p, inputs, differentiate, options);
  } catch (e) {
    if (e instanceof NotBox) return null;
    throw e;
  }
}

function withBoxes(p: ScanParams, inputs: ReverseInputs, differentiate: Differentiate, options: BoxOptions): ReversePlan | null {
  const { body, n } = p;
  const { nc, np } = body;
  const im = inputs.masks!;
  const tape = body.term.tape;
  const { outs: o } = cacheFor(body, p.layout.obs);
  const nin = nc + body.nx + np;
  const nargs = nc + np;
  const skip = options.unneeded ? unneededInputs(p, inputs) : null;
  // the walk's states, as planReverse keeps them: which running cotangents are present, and their boxes (null: whole)
  const chainP = new Uint8Array(PARTS * nc);
  const identityP = new Uint8Array(PARTS * nc);
  const pAccP = new Uint8Array(PARTS * np);
  const chain: (Box | null)[] = new Array<Box | null>(PARTS * nc).fill(null);
  const identity: (Box | null)[] = new Array<Box | null>(PARTS * nc).fill(null);
  const pAcc: (Box | null)[] = new Array<Box | null>(PARTS * np).fill(null);
  for (let e = 0; e < PARTS * nc; e++) {
    if (body.carryKind[e >> 1] !== "identity" || body.literal[e >> 1]) continue;
    identityP[e] = inputs.acc[e];
    identity[e] = boxOfId(im.acc.get(e) ?? 0);
  }
  for (let e = 0; e < PARTS * np; e++) {
    pAccP[e] = inputs.acc[PARTS * nc + e];
    pAcc[e] = boxOfId(im.acc.get(PARTS * nc + e) ?? 0);
  }
  const present: Sources<number> = {
    chain: (k, part) => chainP[2 * k + part],
    identity: (k, part) => identityP[2 * k + part],
    p: (q, part) => pAccP[2 * q + part],
    seedObs: () => 0,
    seedFinal: (k, part) => inputs.seedFinal[2 * k + part],
    acc: (a, part) => inputs.acc[2 * a + part],
    none: 0,
  };
  const src: Sources<Box | null> = {
    chain: (k, part) => chain[2 * k + part],
    identity: (k, part) => identity[2 * k + part],
    p: (q, part) => pAcc[2 * q + part],
    seedObs: () => null,
    seedFinal: (k, part) => boxOfId(im.seedFinal.get(2 * k + part) ?? 0),
    acc: (a, part) => boxOfId(im.acc.get(2 * a + part) ?? 0),
    none: null,
  };
  const lengthOf = (v: number): number => size(tape.dims(v));
  const resultLength = (e: number): number => lengthOf(body.inputVar[e >> 1]);
  // the parts a block at r starts from (outs, then ins), and its pattern's name
  const partsAt = (r: number): { outs: number[]; ins: number[]; name: string } => {
    const outs: number[] = [];
    const ins: number[] = [];
    for (let j = 0; j < o.w.length; j++) for (let part = 0; part < PARTS; part++) if (outState(o, j, part, r, n, present)) outs.push(2 * j + part);
    for (let k = 0; k < nin; k++) {
      if (body.literal[k]) continue;
      for (let part = 0; part < PARTS; part++) if (inState(body, o, k, part, r, n, present)) ins.push(2 * k + part);
    }
    return { outs, ins, name: `${outs.join()}|${ins.join()}|${+(options.merge && r > 0)}` };
  };
  // the boxes a block at r starts from (outs, then ins) and their vectors' lengths
  const statesAt = (r: number): [Box | null, number][] => {
    const { outs, ins } = partsAt(r);
    return [
      ...outs.map((e): [Box | null, number] => [outState(o, e >> 1, e & 1, r, n, src), lengthOf(o.w[e >> 1])]),
      ...ins.map((e): [Box | null, number] => [inState(body, o, e >> 1, e & 1, r, n, src), resultLength(e)]),
    ];
  };
  const flat = (states: readonly [Box | null, number][]): number[] => states.flatMap(([b]) => (b === null ? [-1, -1] : [...b]));
  // (given: the boxes it starts from, where the walk has not been there)
  const make = (r: number, given?: readonly (Box | null)[]): Made => {
    const { outs, ins } = partsAt(r);
    const states = statesAt(r).map(([b, len], j): [Box | null, number] => [given === undefined ? b : given[j], len]);
    const masksIn = states.map(([b, len]) => (b === null ? 0 : maskId(boxMask(b, len))));
    const d = blockDerivative(body, o, outs, ins, differentiate, { masksIn, merge: options.merge && r > 0, unneeded: skip });
    const dt = d.term.tape;
    const live = liveVariables(dt, d.term.output.atoms);
    // the mask constants read by `where`s alone, as their first argument, and boxes
    const conditions = new Set<number>();
    const other = new Set<number>();
    for (let i = 0; i < dt.length; i++) {
      if (!live[i] || dt.op[i] < FIRST_PRIMITIVE || dt.x[i] === 0) continue;
      dt.args(i).forEach((u, k) => (dt.op[i] === CODE.where && k === 0 ? conditions : other).add(u));
    }
    const boxes = new Map<number, Box>();
    for (const m of conditions) {
      const b = dt.op[m] === CONST && dt.isTensor(m) && !other.has(m) ? boxOf(dt.buf(m)) : null;
      if (b !== null) boxes.set(m, b);
    }
    const slots = [...boxes.keys()].sort((x, y) => x - y);
    const whole = Array.from({ length: 2 * nin }, () => -1);
    const v = [...slots.flatMap((m) => boxes.get(m)!), ...whole, ...flat(states)];
    v.push(...d.results.flatMap((e) => boxOfId(d.masks[e]) ?? [0, resultLength(e)]));
    return { d, slots, v: Int32Array.from(v) };
  };
  // after a block: its results are the states the next one starts from
  const update = (d: BlockDerivative, v: Int32Array): void => {
    const outBoxes = v.subarray(v.length - 2 * d.results.length);
    const boxAt = (e: number): Box | null => {
      const j = d.results.indexOf(e);
      if (j < 0) return null;
      const [lo, hi] = [outBoxes[2 * j], outBoxes[2 * j + 1]];
      return lo === 0 && hi === resultLength(e) ? null : [lo, hi];
    };
    for (let part = 0; part < PARTS; part++) {
      for (let k = 0; k < nc; k++) {
        const e = 2 * k + part;
        if (body.carryKind[k] === "internal") [chainP[e], chain[e]] = [d.present[e], boxAt(e)];
        else if (body.carryKind[k] === "identity" && !body.literal[k]) [identityP[e], identity[e]] = [d.present[e], boxAt(e)];
      }
      for (let q = 0; q < np; q++) {
        const e = 2 * (nc + body.nx + q) + part;
        [pAccP[2 * q + part], pAcc[2 * q + part]] = [d.present[e], boxAt(e)];
      }
    }
  };
  const same = (a: Made, b: Made): boolean => a.slots.join() === b.slots.join() && sameTerm(a.d, b.d, new Set(a.slots));
  const runs: BoxRun[] = [];
  const patterns: BlockDerivative[] = [];
  const at = new Runs(-1);
  for (let from = n - 1; from >= 0; ) {
    const name = partsAt(from).name;
    const first = make(from);
    // the sweep's last block, its windows the narrowest as boxes grow back from the seeds: no cheaper than whole ones, no plan
    if (from === n - 1 && !boxSweeps.always && !cheaper([run(first, from, from, new Int32Array(first.v.length), nin)])) return null;
    update(first.d, first.v);
    // the run: the iterations below whose blocks start from the same parts (a steady sweep: down to 1, or 0)
    let to = from;
    const steady = from > 1 && partsAt(from - 1).name === name && partsAt(from - 2).name === name;
    const lineTo = steady ? (partsAt(0).name === name ? 0 : 1) : from;
    const common = steady && lineTo < from - 2 ? commonStep(first, flat(statesAt(from - 1)), 2 * first.slots.length + 2 * nin) : null;
    if (common !== null) {
      // the inputs' boxes move by one step (or stay): the run's first block and its last suffice (see lastOnLine)
      const found = lastOnLine(first, common, from - lineTo, (given) => make(lineTo, given), same, (k, slope) => {
        update(first.d, first.v.map((b, e) => b + k * slope[e]));
        return flat(statesAt(from - k - 1));
      });
      if (found === null) return null;
      update(found.last.d, found.last.v);
      to = lineTo;
      runs.push(run(first, from, to, found.slope, nin));
    } else if (from > 0 && partsAt(from - 1).name === name) {
      const second = make(from - 1);
      if (!same(first, second)) return null;
      const slope = second.v.map((b, e) => b - first.v[e]);
      update(second.d, second.v);
      to = from - 1;
      if (to > 0 && partsAt(to - 1).name === name) {
        to = partsAt(0).name === name ? 0 : 1;
        if (to < from - 2) {
          // the block before the last as the line has it, then the last made from it and checked against the line
          const line = (k: number): Int32Array => first.v.map((b, e) => b + k * slope[e]);
          update(first.d, line(from - to - 1));
          const last = make(to);
          const end = line(from - to);
          if (!same(first, last) || last.v.some((b, e) => b !== end[e])) return null;
          update(last.d, last.v);
        } else if (to === from - 2) {
          const last = make(to);
          if (!same(first, last) || last.v.some((b, e) => b !== first.v[e] + 2 * slope[e])) return null;
          update(last.d, last.v);
        }
      }
      runs.push(run(first, from, to, slope, nin));
    } else runs.push(run(first, from, to, new Int32Array(first.v.length), nin));
    for (let r = from; r >= to; r--) at.set(r, patterns.length);
    // the pattern's parts (the sweep reads outs, ins and results); not its term, which holds its masks'
    // constants and values at full length (~55 MB at n = 10⁵): the run's BoxBlock keeps what the windows read
    patterns.push({ ...first.d, term: body.term, interpreter: null });
    from = to - 1;
  }
  if (!boxSweeps.always && !cheaper(runs)) return null;
  // the arguments' cotangents: as planReverse gives them, with their boxes
  const argPresent = new Uint8Array(PARTS * nargs);
  const final = new Int32Array(PARTS * nargs * 2).fill(-1);
  const masks = new Int32Array(PARTS * nargs);
  const length = (e: number): number => lengthOf(body.inputVar[e >> 1]);
  for (let e = 0; e < PARTS * nargs; e++) {
    const a = e >> 1;
    const kind = a < nc ? (body.literal[a] ? "none" : body.carryKind[a]) : "captured";
    const returned = kind === "internal" ? chainP[e] : kind === "identity" ? identityP[e] : kind === "captured" ? pAccP[e - PARTS * nc] : 0;
    argPresent[e] = (returned | inputs.acc[e]) & inputs.need[a];
    if (!argPresent[e]) continue;
    let b: Box | null;
    if (returned) {
      b = kind === "internal" ? chain[e] : kind === "identity" ? identity[e] : pAcc[e - PARTS * nc];
      const [lo, hi] = b ?? [0, length(e)];
      [final[2 * e], final[2 * e + 1]] = [lo, hi];
    } else b = boxOfId(im.acc.get(e) ?? 0);
    masks[e] = b === null ? 0 : maskId(boxMask(b, length(e)));
  }
  return { patterns, at, present: argPresent, masks, boxes: { runs, final } };
}

/**
 * Where the boxes a run's first block starts from (`first`'s entries from `at`) move to the next
 * block's (`next`) by one step s for every bound that moves: that slope (the states' entries
 * set, the others to be found), else null.
 */
function commonStep(first: Made, next: readonly number[], at: number): { readonly slope: Int32Array; readonly step: number } | null {
  const slope = new Int32Array(first.v.length);
  let step = 0;
  for (let e = 0; e < next.length; e++) {
    const d = next[e] - first.v[at + e];
    if (d !== 0 && step !== 0 && d !== step) return null;
    if (d !== 0) step = d;
    slope[at + e] = d;
  }
  return { slope, step };
}

/**
 * The slope of a run of `count` blocks from its first block and its last alone, where every
 * input bound moves by one step s or stays (commonStep): each bound the masks make is then a
 * monotone function of the iteration whose step is 0 or s throughout (sums with constants,
 * minima, maxima, clips: slopes 0 or 1 in each input bound), so one that has moved by 0 or
 * (count − 1)·s between the two has moved by that step all along; any other rise is a kink,
 * and no plan. `make` makes the last block from its inputs' boxes (as the line has them),
 * `walk(k)` gives the boxes the block k + 1 after the first starts from when block k's results
 * are on the line (the outputs must carry the line on: a carry's box feeds the next block's).
 */
function lastOnLine(
  first: Made,
  common: { readonly slope: Int32Array; readonly step: number },
  steps: number,
  make: (given: readonly (Box | null)[]) => Made,
  same: (a: Made, b: Made) => boolean,
  walk: (k: number, slope: Int32Array) => number[],
): { readonly slope: Int32Array; readonly last: Made } | null {
  const { slope, step } = common;
  // the states' entries: where slope was set (commonStep), their segment's place
  const statesFrom = first.v.length - 2 * first.d.results.length - 2 * (first.d.outs.length + first.d.ins.length);
  const states = first.d.outs.length + first.d.ins.length;
  const given: (Box | null)[] = [];
  for (let j = 0; j < states; j++) {
    const e = statesFrom + 2 * j;
    const lo = first.v[e];
    given.push(lo < 0 ? null : [lo + steps * slope[e], first.v[e + 1] + steps * slope[e + 1]]);
  }
  const last = make(given);
  if (!same(first, last)) return null;
  const line = Int32Array.from(first.v);
  for (let e = 0; e < line.length; e++) {
    const rise = last.v[e] - first.v[e];
    if (rise !== 0 && rise !== steps * step) return null;
    line[e] = rise / steps;
  }
  // the results carry the line on: block 1's results on it give block 2 the states the line gives it
  const next = walk(1, line);
  for (let j = 0; j < 2 * states; j++) if (next[j] !== first.v[statesFrom + j] + 2 * line[statesFrom + j]) return null;
  return { slope: line, last };
}

/** A run's BoxRun: its first block's term over windows, the boxes at its first iteration and their step. */
function run(first: Made, from: number, to: number, slope: Int32Array, nin: number): BoxRun {
  const block = new BoxBlock(first.d.term, new Map(first.slots.map((m, k) => [m, k])));
  return { from, to, block, slots: first.slots.length, inputs: nin + first.d.outs.length + first.d.ins.length, base: first.v, slope };
}

/**
 * What a block costs, in nanoseconds, as measured on GradBench ode's Runge–Kutta steps (some
 * 120 instructions): over windows, per element of a value computed and per instruction (each
 * its own loop: ~2 ns an element, ~35 µs a block of small windows); over whole vectors, per
 * element of the vectors and per block (chain code, all the stages in one pass: ~10 ns an
 * element for all of them). At n = 1000,
 * s = 100 the windows of ~200 elements made the sweep 3× slower than whole blocks; at 10⁴ a
 * fifth faster (s = 100), 4× at s = 1 (one block: its forward values only near the seed); at
 * 10⁵ three to five times faster.
 */
const BOX_NS = { element: 2, instruction: 300 };
const WHOLE_NS = { element: 10, block: 20_000 };

/**
 * How many times cheaper the windows must be: a plan over boxes makes two or three masked block
 * derivatives at full length per run (a first call at n = 10⁵ spends ~200 ms on them), and where
 * whole blocks are chosen at a size (GradBench ode's warm-up at 2048 elements) their chain code is
 * the one made hot for every length. At 3, GradBench ode at n = 10⁴, s = 100 kept whole blocks
 * (gradient ×3.96 of its primal by the means); at 1.5 it runs over windows (×2.84).
 */
const MARGIN = 1.5;

/** Whether the runs over windows cost MARGIN times less than the same blocks over whole vectors (BOX_NS, WHOLE_NS). */
function cheaper(runs: readonly BoxRun[]): boolean {
  let box = 0;
  let whole = 0;
  for (const run of runs) {
    const { elements, instructions } = run.block.extent;
    const v = new Int32Array(run.base.length);
    const outs = 2 * (run.slots + run.inputs);
    for (let r = run.from; r >= run.to; r--) {
      for (let e = 0; e < v.length; e++) v[e] = run.base[e] + (run.from - r) * run.slope[e];
      box += BOX_NS.element * run.block.windows(v.subarray(0, 2 * run.slots), v.subarray(outs)) + BOX_NS.instruction * instructions;
      whole += WHOLE_NS.element * elements + WHOLE_NS.block;
      if (MARGIN * box > 2 * whole + 1e6) return false;
    }
  }
  return MARGIN * box < whole;
}

/** Whether two block derivatives are one term but for the data of the mask constants `masks`. */
function sameTerm(a: BlockDerivative, b: BlockDerivative, masks: ReadonlySet<number>): boolean {
  const s = a.term.tape;
  const t = b.term.tape;
  if (s.length !== t.length || a.term.output.atoms.join() !== b.term.output.atoms.join()) return false;
  const live = liveVariables(s, a.term.output.atoms);
  for (let i = 0; i < s.length; i++) {
    if (s.op[i] !== t.op[i] || s.x[i] !== t.x[i]) return false;
    if (!live[i]) continue;
    if (s.isTensor(i) !== t.isTensor(i) || s.dims(i).join() !== t.dims(i).join()) return false;
    if (s.op[i] === CONST) {
      if (!s.isTensor(i)) {
        if (!Object.is(s.val[i], t.val[i])) return false;
      } else if (!masks.has(i)) {
        const x = s.buf(i);
        const y = t.buf(i);
        for (let k = 0; k < x.length; k++) if (!Object.is(x[k], y[k])) return false;
      }
      continue;
    }
    if (s.x[i] === 0) {
      if (s.a[i] !== t.a[i] || s.b[i] !== t.b[i]) return false;
      continue;
    }
    if (s.args(i).join() !== t.args(i).join() || JSON.stringify(s.params(i) ?? null) !== JSON.stringify(t.params(i) ?? null)) return false;
  }
  return true;
}
