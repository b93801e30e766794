/**
 * @file Loop re-rolling: a straight-line program (a trace) written as loops again.
 *
 * Tracing a loop unrolls it: the tape repeats one block of instructions, each copy's
 * variable indices moved by the same amounts as the last copy's (`v[14] = v[7] * v[1]`,
 * `v[21] = v[14] * v[2]`, …: strides 7, 7, 1). Straight-line JavaScript for a long
 * trace is too big for V8 to optimise, so before code is generated (gradient.ts) the
 * statements are rolled back into loops whose indices are affine in the loop counters.
 *
 * The statements are opaque here: a shape id (`sig`: equal ids, same code up to the
 * indices) and a list of indices. A run is a block of `period` nodes repeated `count`
 * (≥ MIN_COUNT) times, shapes equal and every index moving by a constant step per repetition. A
 * scan takes, at each position, the shortest period that repeats; a run becomes one
 * `Loop` node, and scanning again over the shorter list finds loops of loops (an
 * outer loop whose body holds an inner one), until nothing repeats.
 *
 * `unroll` is the inverse, and the specification: unroll(reroll(xs)) = xs (tested).
 */

export interface Stmt {
  readonly kind: "stmt";
  readonly sig: number;
  readonly idx: readonly number[];
}

/**
 * `count` repetitions of `body`; `idx` holds the body's indices in the first
 * repetition (its nodes' idx, concatenated), `step` what each of them moves per repetition.
 */
export interface Loop {
  readonly kind: "loop";
  readonly sig: number;
  readonly idx: readonly number[];
  readonly count: number;
  readonly body: readonly Node[];
  readonly step: readonly number[];
}

export type Node = Stmt | Loop;

/**
 * Interned shape ids: statements' (named by their caller) and loops' (by their structure).
 * A statement's sig must come from the Shapes given to reroll, so that no loop shares it.
 */
export class Shapes {
  private readonly ids = new Map<string, number>();

  of(key: string): number {
    let id = this.ids.get(key);
    if (id === undefined) {
      id = this.ids.size;
      this.ids.set(key, id);
    }
    return id;
  }
}

/** Indices a statement in Statements may have. */
export const MAX_WIDTH = 4;

/**
 * Statements in columns, as a long trace's replay is first written down: a shape and up
 * to MAX_WIDTH indices each, no object per statement (millions of them would be most of the
 * memory, and of the time, of compiling). Re-rolling makes objects only of what it keeps.
 */
export class Statements {
  private sigs = new Int32Array(64);
  private idxs = new Int32Array(MAX_WIDTH * 64);
  private widths = new Uint8Array(64);
  length = 0;

  static of(stmts: readonly Stmt[]): Statements {
    const s = new Statements();
    for (const x of stmts) s.push(x.sig, x.idx);
    return s;
  }

  push(sig: number, idx: readonly number[]): void {
    if (this.length === this.sigs.length) {
      const grow = <T extends Int32Array | Uint8Array>(old: T, make: (n: number) => T): T => {
        const next = make(2 * old.length);
        next.set(old);
        return next;
      };
      this.sigs = grow(this.sigs, (n) => new Int32Array(n));
      this.idxs = grow(this.idxs, (n) => new Int32Array(n));
      this.widths = grow(this.widths, (n) => new Uint8Array(n));
    }
    const i = this.length++;
    this.sigs[i] = sig;
    this.widths[i] = idx.length;
    for (let k = 0; k < idx.length; k++) this.idxs[MAX_WIDTH * i + k] = idx[k];
  }

  sig(i: number): number {
    return this.sigs[i];
  }

  width(i: number): number {
    return this.widths[i];
  }

  index(i: number, k: number): number {
    return this.idxs[MAX_WIDTH * i + k];
  }

  node(i: number): Stmt {
    const idx: number[] = [];
    for (let k = 0; k < this.widths[i]; k++) idx.push(this.idxs[MAX_WIDTH * i + k]);
    return { kind: "stmt", sig: this.sigs[i], idx };
  }
}

/** What a scan reads of a list of nodes, by position: Statements, or nodes in an array. */
interface Seq {
  readonly length: number;
  sig(i: number): number;
  width(i: number): number;
  index(i: number, k: number): number;
  node(i: number): Node;
}

class NodeSeq implements Seq {
  constructor(readonly nodes: readonly Node[]) {}

  get length(): number {
    return this.nodes.length;
  }

  sig(i: number): number {
    return this.nodes[i].sig;
  }

  width(i: number): number {
    return this.nodes[i].idx.length;
  }

  index(i: number, k: number): number {
    return this.nodes[i].idx[k];
  }

  node(i: number): Node {
    return this.nodes[i];
  }
}

/** Periods longer than this are not looked for (a loop body of more nodes stays unrolled). */
export const MAX_PERIOD = 512;

/**
 * The nodes `xs` with every repeated block rolled into a loop. Periods are looked for
 * shortest first (up to 1, 2, 4, … maxPeriod nodes), each limit until nothing more
 * repeats: an inner loop is rolled before the loop around it, whose body is then short.
 */
export function reroll(xs: readonly Node[] | Statements, shapes: Shapes, maxPeriod = MAX_PERIOD): Node[] {
  let nodes: Seq = xs instanceof Statements ? xs : new NodeSeq(xs);
  for (let limit = 1; ; limit = Math.min(2 * limit, maxPeriod)) {
    for (;;) {
      const next = rollOnce(nodes, shapes, limit);
      if (next === null) break;
      nodes = new NodeSeq(next);
    }
    if (limit === maxPeriod) return nodes instanceof NodeSeq ? nodes.nodes.slice() : Array.from({ length: nodes.length }, (_, i) => nodes.node(i));
  }
}

/** One scan: each run starting at the scan position (shortest period first) becomes a loop; null if none does. */
function rollOnce(xs: Seq, shapes: Shapes, maxPeriod: number): Node[] | null {
  const n = xs.length;
  // nextSame[i]: the next position with the shape of i (candidate periods are only those)
  const nextSame = new Int32Array(n);
  let shapesSeen = 0;
  for (let i = 0; i < n; i++) shapesSeen = Math.max(shapesSeen, xs.sig(i) + 1);
  const last = new Int32Array(shapesSeen).fill(-1); // shape ids are small and dense (Shapes)
  for (let i = n - 1; i >= 0; i--) {
    const sig = xs.sig(i);
    nextSame[i] = last[sig];
    last[sig] = i;
  }
  // the runs first, so that a scan finding none makes nothing
  const runs: { start: number; period: number; count: number; step: number[] }[] = [];
  for (let s = 0; s < n; ) {
    const run = runAt(xs, s, nextSame, maxPeriod);
    if (run === null) s++;
    else {
      runs.push({ start: s, ...run });
      s += run.period * run.count;
    }
  }
  if (runs.length === 0) return null;
  const out: Node[] = [];
  let s = 0;
  for (const run of runs) {
    while (s < run.start) out.push(xs.node(s++));
    const body = Array.from({ length: run.period }, (_, j) => xs.node(s + j));
    const idx = body.flatMap((x) => x.idx);
    const key = `L${run.count}(${body.map((x) => x.sig).join(",")}|${run.step.join(",")})`;
    out.push({ kind: "loop", sig: shapes.of(key), idx, count: run.count, body, step: run.step });
    s += run.period * run.count;
  }
  while (s < n) out.push(xs.node(s++));
  return out;
}

/** Comparisons spent looking for a run at one position before giving up there. */
const WORK_PER_POSITION = 1 << 16;

/**
 * Repetitions a run needs to become a loop. Fewer are cheaper written out: a loop's
 * entry and exit (its locals loaded and stored around it, its counter) cost more than a
 * few copies of its body (three iterations of Newton's method per element are faster as
 * straight code inside the loop over elements than as a loop of their own).
 */
export const MIN_COUNT = 4;

/**
 * The shortest run starting at s, of at least MIN_COUNT repetitions, or null. A
 * candidate period is first tested on its first node alone, three copies of it, so that
 * in code without loops a position costs little.
 */
function runAt(xs: Seq, s: number, nextSame: Int32Array, maxPeriod: number): { period: number; count: number; step: number[] } | null {
  const n = xs.length;
  let work = 0;
  for (let t = nextSame[s]; t !== -1 && t - s <= maxPeriod && work < WORK_PER_POSITION; t = nextSame[t]) {
    const period = t - s;
    if (s + MIN_COUNT * period > n) return null;
    if (!evenlySpaced(xs, s, t, t + period)) continue;
    work += period;
    const step = stepBetween(xs, s, t, period);
    if (step === null) continue;
    // blocks 0 and 1 are `step` apart by construction; then as many as follow by it
    let count = 2;
    while (s + (count + 1) * period <= n && sameStep(xs, s + (count - 1) * period, s + count * period, period, step)) count++;
    if (count >= MIN_COUNT) return { period, count, step };
  }
  return null;
}

/** Whether nodes x, y, z have one shape and y's indices lie halfway between x's and z's. */
function evenlySpaced(xs: Seq, x: number, y: number, z: number): boolean {
  if (xs.sig(y) !== xs.sig(x) || xs.sig(z) !== xs.sig(x)) return false;
  for (let k = 0; k < xs.width(x); k++) if (xs.index(z, k) - xs.index(y, k) !== xs.index(y, k) - xs.index(x, k)) return false;
  return true;
}

/** The per-index steps from block [s, s+p) to block [t, t+p), or null if their shapes differ. */
function stepBetween(xs: Seq, s: number, t: number, p: number): number[] | null {
  const step: number[] = [];
  for (let j = 0; j < p; j++) {
    if (xs.sig(s + j) !== xs.sig(t + j)) return null;
    for (let k = 0; k < xs.width(s + j); k++) step.push(xs.index(t + j, k) - xs.index(s + j, k));
  }
  return step;
}

/** Whether block [t, t+p) follows block [s, s+p) by exactly `step`. */
function sameStep(xs: Seq, s: number, t: number, p: number, step: readonly number[]): boolean {
  let f = 0;
  for (let j = 0; j < p; j++) {
    if (xs.sig(s + j) !== xs.sig(t + j)) return false;
    for (let k = 0; k < xs.width(s + j); k++) if (xs.index(t + j, k) - xs.index(s + j, k) !== step[f++]) return false;
  }
  return true;
}

/** The statements the nodes stand for, in order (the inverse of reroll). */
export function unroll(nodes: readonly Node[]): Stmt[] {
  const out: Stmt[] = [];
  // an explicit stack of (node, offsets to add to its indices): no recursion
  const stack: { node: Node; shift: readonly number[] }[] = [];
  for (let i = nodes.length - 1; i >= 0; i--) stack.push({ node: nodes[i], shift: nodes[i].idx.map(() => 0) });
  while (stack.length > 0) {
    const { node, shift } = stack.pop()!;
    if (node.kind === "stmt") {
      out.push({ kind: "stmt", sig: node.sig, idx: node.idx.map((v, k) => v + shift[k]) });
      continue;
    }
    const items: { node: Node; shift: readonly number[] }[] = [];
    for (let r = 0; r < node.count; r++) {
      let f = 0;
      for (const x of node.body) {
        items.push({ node: x, shift: x.idx.map(() => shift[f] + r * node.step[f++]) });
      }
    }
    for (let i = items.length - 1; i >= 0; i--) stack.push(items[i]);
  }
  return out;
}

/** How many statements the code for these nodes holds (a loop's body counts once). */
export function codeSize(nodes: readonly Node[]): number {
  let n = 0;
  const stack = [...nodes];
  while (stack.length > 0) {
    const x = stack.pop()!;
    if (x.kind === "stmt") n++;
    else stack.push(...x.body);
  }
  return n;
}
