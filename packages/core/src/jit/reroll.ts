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
 * (≥ 3) times, shapes equal and every index moving by a constant step per repetition. A
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

/** Periods longer than this are not looked for (a loop body of more nodes stays unrolled). */
export const MAX_PERIOD = 512;

/**
 * The nodes `xs` with every repeated block rolled into a loop. Periods are looked for
 * shortest first (up to 1, 2, 4, … maxPeriod nodes), each limit until nothing more
 * repeats: an inner loop is rolled before the loop around it, whose body is then short.
 */
export function reroll(xs: readonly Node[], shapes: Shapes, maxPeriod = MAX_PERIOD): Node[] {
  let nodes = xs.slice();
  for (let limit = 1; ; limit = Math.min(2 * limit, maxPeriod)) {
    for (;;) {
      const next = rollOnce(nodes, shapes, limit);
      if (next.length === nodes.length) break;
      nodes = next;
    }
    if (limit === maxPeriod) return nodes;
  }
}

/** One scan: each run starting at the scan position (shortest period first) becomes a loop. */
function rollOnce(xs: readonly Node[], shapes: Shapes, maxPeriod: number): Node[] {
  const n = xs.length;
  // nextSame[i]: the next position with the shape of i (candidate periods are only those)
  const nextSame = new Int32Array(n).fill(-1);
  const last = new Map<number, number>();
  for (let i = n - 1; i >= 0; i--) {
    nextSame[i] = last.get(xs[i].sig) ?? -1;
    last.set(xs[i].sig, i);
  }
  const out: Node[] = [];
  let s = 0;
  while (s < n) {
    const run = runAt(xs, s, nextSame, maxPeriod);
    if (run === null) {
      out.push(xs[s]);
      s++;
      continue;
    }
    const body = xs.slice(s, s + run.period);
    const idx = body.flatMap((x) => x.idx);
    const key = `L${run.count}(${body.map((x) => x.sig).join(",")}|${run.step.join(",")})`;
    out.push({ kind: "loop", sig: shapes.of(key), idx, count: run.count, body, step: run.step });
    s += run.period * run.count;
  }
  return out;
}

/** Comparisons spent looking for a run at one position before giving up there. */
const WORK_PER_POSITION = 1 << 16;

/**
 * The shortest run starting at s, of at least three repetitions (two are not worth a
 * loop), or null. A candidate period is first tested on its first node alone, three
 * copies of it, so that in code without loops a position costs little.
 */
function runAt(xs: readonly Node[], s: number, nextSame: Int32Array, maxPeriod: number): { period: number; count: number; step: number[] } | null {
  const n = xs.length;
  let work = 0;
  for (let t = nextSame[s]; t !== -1 && t - s <= maxPeriod && work < WORK_PER_POSITION; t = nextSame[t]) {
    const period = t - s;
    if (s + 3 * period > n) return null;
    if (!evenlySpaced(xs[s], xs[t], xs[t + period])) continue;
    work += period;
    const step = stepBetween(xs, s, t, period);
    if (step === null || !sameStep(xs, t, t + period, period, step)) continue;
    let count = 3;
    while (s + (count + 1) * period <= n && sameStep(xs, s + (count - 1) * period, s + count * period, period, step)) count++;
    return { period, count, step };
  }
  return null;
}

/** Whether x, y, z have one shape and y's indices lie halfway between x's and z's. */
function evenlySpaced(x: Node, y: Node, z: Node): boolean {
  if (y.sig !== x.sig || z.sig !== x.sig) return false;
  for (let k = 0; k < x.idx.length; k++) if (z.idx[k] - y.idx[k] !== y.idx[k] - x.idx[k]) return false;
  return true;
}

/** The per-index steps from block [s, s+p) to block [t, t+p), or null if their shapes differ. */
function stepBetween(xs: readonly Node[], s: number, t: number, p: number): number[] | null {
  const step: number[] = [];
  for (let j = 0; j < p; j++) {
    const x = xs[s + j];
    const y = xs[t + j];
    if (x.sig !== y.sig) return null;
    for (let k = 0; k < x.idx.length; k++) step.push(y.idx[k] - x.idx[k]);
  }
  return step;
}

/** Whether block [t, t+p) follows block [s, s+p) by exactly `step`. */
function sameStep(xs: readonly Node[], s: number, t: number, p: number, step: readonly number[]): boolean {
  let f = 0;
  for (let j = 0; j < p; j++) {
    const x = xs[s + j];
    const y = xs[t + j];
    if (x.sig !== y.sig) return false;
    for (let k = 0; k < x.idx.length; k++) if (y.idx[k] - x.idx[k] !== step[f++]) return false;
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
