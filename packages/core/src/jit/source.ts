/**
 * @file Re-rolled nodes as JavaScript source: loops whose indices are affine in the counters.
 *
 * A statement's code comes from its caller (`template`), given its indices as
 * expressions; this writes the loops around them. Inside `for (let r0 …)` an index of
 * the first repetition `14` moving by 7 becomes `14+7*r0`; nested loops add their own
 * terms. Long code is cut into several functions (chunks): V8 does not optimise a
 * function past a certain size, and a loop-free trace can be long.
 *
 * A range of `v` may be read from another array where it already is (an alias): the
 * inputs from the caller's arrays, with no copy into `v` per call; the outputs written
 * straight into the array a call returns. An access is written as the alias's wherever
 * every place it reaches (over all iterations of the loops around it) lies in the
 * alias; one reaching both sides of its edge keeps `v`, and the caller is told to keep
 * that range in `v` too (`straddled`).
 */
import type { KERNELS, KINKS } from "../trace/opcodes.js";
import type { Group, Mode, Space } from "./registers.js";
import type { Loop, Node } from "./reroll.js";

/** The place an access names: an array element (`v[3+7*r0]`) or the local holding it. */
export type At = (space: Space, slot: number, mode: Mode) => string;

/** The code of one statement of shape `sig`: `at` names the places of its accesses, `idx` its indices as expressions. */
export type Template = (sig: number, at: At, idx: readonly string[]) => string;

/** `c + Σ coef·counter`, printed as a JavaScript expression; every value it takes over the loops' iterations lies in [lo, hi]. */
interface Affine {
  readonly c: number;
  readonly terms: string;
  readonly lo: number;
  readonly hi: number;
}

const show = (x: Affine): string => (x.terms === "" ? String(x.c) : x.c === 0 ? x.terms.replace(/^\+/, "") : `${x.c}${x.terms}`);

/** x plus coef·counter, for a counter running from 0 to count − 1. */
const plus = (x: Affine, coef: number, counter: string, count: number): Affine =>
  coef === 0
    ? x
    : {
        c: x.c,
        terms: `${x.terms}${coef < 0 ? "-" : "+"}${Math.abs(coef) === 1 ? "" : `${Math.abs(coef)}*`}${counter}`,
        lo: x.lo + Math.min(0, coef * (count - 1)),
        hi: x.hi + Math.max(0, coef * (count - 1)),
      };

const shift = (x: Affine, by: number): Affine => ({ c: x.c + by, terms: x.terms, lo: x.lo + by, hi: x.hi + by });

const constant = (c: number): Affine => ({ c, terms: "", lo: c, hi: c });

/** v[start + i] read (or written) as `name[i]`, for i < length. */
export interface Alias {
  readonly start: number;
  readonly length: number;
  readonly name: string;
}

/** Statements per chunk (a loop's body counts once): well within what V8 optimises. */
export const CHUNK = 1500;

/** The local holding an index's variable, by array and slot, if one does. */
type Locals = (space: Space, slot: number) => string | undefined;

const none: Locals = () => undefined;

interface Context {
  readonly template: Template;
  readonly plans: ReadonlyMap<Loop, readonly Group[]>;
  readonly names: { next: number };
  readonly aliases: readonly Alias[];
  readonly straddled: Set<string>;
}

/** The place of `space[x]`: an alias's element where x stays inside it (the file comment). */
function element(cx: Context, space: Space, x: Affine): string {
  if (space === "v") {
    for (const a of cx.aliases) {
      if (x.hi < a.start || x.lo >= a.start + a.length) continue;
      if (x.lo >= a.start && x.hi < a.start + a.length) return `${a.name}[${show(shift(x, -a.start))}]`;
      cx.straddled.add(a.name);
      break;
    }
  }
  return `${space}[${show(x)}]`;
}

/** How chunks are written beyond their statements. */
export interface ChunkOptions {
  /** What each loop keeps in locals (registers.ts). */
  readonly plans?: ReadonlyMap<Loop, readonly Group[]>;
  /** The local holding a variable (by array and index) for statements outside loops, if one does. */
  readonly named?: (space: Space, index: number) => string | undefined;
  /** Ranges of v read and written in other arrays (the file comment). */
  readonly aliases?: readonly Alias[];
}

/** Chunks' source, and the aliases some access reached both sides of the edge of (their range must be in v as well). */
export interface Written {
  readonly sources: string[];
  readonly straddled: ReadonlySet<string>;
}

/**
 * The source of each chunk of `nodes`, in order; loops keep the variables `plans` gives
 * them in locals, and statements outside loops the variables `named` names (by array and index).
 */
export function chunkSources(
  nodes: readonly Node[],
  template: Template,
  plans: ReadonlyMap<Loop, readonly Group[]> = new Map(),
  named?: (space: Space, index: number) => string | undefined,
): string[] {
  return writeChunks(nodes, template, { plans, named }).sources;
}

/** chunkSources with aliases: the chunks, and which aliases an access straddled. */
export function writeChunks(nodes: readonly Node[], template: Template, options: ChunkOptions = {}): Written {
  const { plans = new Map(), named, aliases = [] } = options;
  const chunks: string[] = [];
  let lines: string[] = [];
  let size = 0;
  const cx: Context = { template, plans, names: { next: 0 }, aliases, straddled: new Set() };
  for (const node of nodes) {
    const outer: Locals = named !== undefined && node.kind === "stmt" ? (space, slot) => named(space, node.idx[slot]) : none;
    const code = nodeSource(node, node.idx.map(constant), cx, 0, outer);
    lines.push(code.text);
    size += code.size;
    if (size >= CHUNK) {
      chunks.push(lines.join("\n"));
      lines = [];
      size = 0;
    }
  }
  if (lines.length > 0) chunks.push(lines.join("\n"));
  return { sources: chunks, straddled: cx.straddled };
}

/**
 * One node's code and its size in statements (recursive in the loop nesting only, which
 * is shallow). `outer` names the locals loops around this node keep its variables in.
 */
function nodeSource(node: Node, idx: readonly Affine[], cx: Context, depth: number, outer: Locals): { text: string; size: number } {
  if (node.kind === "stmt") {
    const at: At = (space, slot) => outer(space, slot) ?? element(cx, space, idx[slot]);
    return { text: cx.template(node.sig, at, idx.map(show)), size: 1 };
  }
  const r = `r${depth}`;
  const groups = cx.plans.get(node) ?? [];
  const mine = new Map<string, string>();
  const before: string[] = []; // declarations, and loads of what the first iteration finds in locals
  const first: string[] = []; // at the start of each iteration: loads
  const last: string[] = []; // at its end: stores, and the shift of each group's locals
  const after: string[] = []; // stores of what code after the loop reads
  for (const g of groups) {
    const reg = Array.from({ length: g.top + 1 }, () => `p${cx.names.next++}`);
    for (const m of g.members) for (const s of m.slots) mine.set(`${g.space}:${s}`, reg[m.u]);
    // y(q): the variable member u reaches in iteration q − u
    const y0 = idx[g.members.find((m) => m.u === 0)!.slots[0]];
    const y = (q: number): string => element(cx, g.space, shift(y0, g.step * q));
    if (g.step === 0) {
      before.push(`let ${reg[0]} = ${g.load ? y(0) : "0"};`);
      if (g.storeAfter) after.push(`${y(0)} = ${reg[0]};`);
      continue;
    }
    before.push(`let ${reg.map((p, u) => `${p} = ${u < g.top ? y(u) : "0"}`).join(", ")};`);
    if (g.load) first.push(`${reg[g.top]} = ${element(cx, g.space, plus(shift(y0, g.step * g.top), g.step, r, node.count))};`);
    if (g.storeEach) last.push(`${element(cx, g.space, plus(y0, g.step, r, node.count))} = ${reg[0]};`);
    for (let u = 0; u < g.top; u++) last.push(`${reg[u]} = ${reg[u + 1]};`);
    if (g.storeAfter) for (let u = 0; u < g.top; u++) after.push(`${y(node.count + u)} = ${reg[u]};`);
  }
  const locals: Locals = (space, slot) => mine.get(`${space}:${slot}`) ?? outer(space, slot);
  const inner = idx.map((x, k) => plus(x, node.step[k], r, node.count));
  const lines: string[] = [...first];
  let size = 0;
  let f = 0;
  for (const x of node.body) {
    const from = f;
    const code = nodeSource(x, inner.slice(f, f + x.idx.length), cx, depth + 1, (space, slot) => locals(space, from + slot));
    f += x.idx.length;
    lines.push(code.text);
    size += code.size;
  }
  lines.push(...last);
  const loop = `for (let ${r} = 0; ${r} < ${node.count}; ${r}++) {\n${lines.join("\n")}\n}`;
  if (groups.length === 0) return { text: loop, size };
  return { text: `{\n${[...before, loop, ...after].join("\n")}\n}`, size };
}

/**
 * A chunk's source, run once with `live` = 0 before use: every statement outside the loops
 * runs (guards and kinks do not leave) and no loop does. V8 compiles a long loop of the
 * first real call on the stack (on-stack replacement) before the code after it has run;
 * that code then had no type feedback, and the compiled loop was left at its end on every
 * later call ("insufficient type feedback"), running the rest unoptimised, so that a
 * replay's time varied from run to run. After this call, it has feedback.
 */
export function warmable(source: string): string {
  return source.replace(/(for \(let r\d+ = 0; r\d+ < )(\d+);/g, "$1$2 * live;").replace(/return false;/g, "if (live) return false;");
}

/** A compiled forward chunk: false where a guard or kink does not hold. `x`: the inputs, where the chunk reads them through an alias named so. */
export type ForwardChunk = (v: Float64Array, K: typeof KERNELS, KINK: typeof KINKS, live: number, x?: ArrayLike<number>) => boolean;

/** A forward chunk's source as a function (warmable: run once with live = 0 before use). */
export function forwardChunk(source: string): ForwardChunk {
  return new Function("v", "K", "KINK", "live", "x", `${warmable(source)}\nreturn true;`) as ForwardChunk;
}
