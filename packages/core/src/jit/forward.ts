/**
 * @file A cached trace of reals compiled to JavaScript, forward only: its values at a new
 * point, every recorded decision (guard) and kink checked right after its arguments are
 * computed (jit's hot path, api/jit.ts).
 *
 * A jitted function's trace already holds the derivatives it computes (an `rd` inside a
 * trace emits its derivative term there, Fig. 4), so evaluating it forward is all a
 * replay does: the statements are program.ts's forward code for the outputs, re-rolled
 * into loops (reroll.ts), their short-lived variables planned into locals (registers.ts),
 * and written out in chunks (source.ts), as gradient.ts does for compileGrad's sweep.
 * The same kernels and rules as JavaScript source (javascript.ts): the interpreter's
 * numbers, to the bit. Code of one chunk reads the caller's arrays of inputs where they
 * are and writes flat outputs into the array it returns, or (`jit(f).into`) each output
 * that is there once into its place in the caller's array (aliases of v, source.ts): no
 * copy in or out per call.
 */
import { DefineOpError } from "../errors.js";
import { CONST, INPUT, KERNELS, KINKS } from "../trace/opcodes.js";
import type { TraceTerm } from "../trace/term.js";
import type { Guard } from "../trace/tracer.js";
import { MAX_STATEMENTS } from "./gradient.js";
import { LITERAL_IDS, Program } from "./program.js";
import { codeSize, reroll, type Node, type Statements } from "./reroll.js";
import { Accesses, planRegisters, type UsesOf } from "./registers.js";
import { chunkSources, forwardChunk, warmable, writeChunks, type Alias, type ForwardChunk, type Written } from "./source.js";
import { mayMakeCode } from "./javascript.js";

/**
 * The values of the outputs at new inputs, laid out as compileForward was asked (Layout),
 * or null where the trace does not hold there (a guard comes out otherwise, a tie, a
 * kink). The inputs come in parts, in order: numbers, and arrays of numbers standing for
 * their elements; `dest` is the caller's array for the layout "into".
 */
export type ForwardReplay = (parts: readonly (number | ArrayLike<number>)[], dest?: Float64Array) => number[] | number[][] | Float64Array | null;

/**
 * How a compiled forward replay gives its outputs: a fresh array by output ("flat"),
 * fresh rows of them ("rows": a Hessian's, a Jacobian's), or written in order into the
 * caller's Float64Array ("into": `jit(f).into`; `rows` the outputs' rows where they are
 * rows, for the copy's plan).
 */
export type Layout =
  | { readonly kind: "flat" }
  | { readonly kind: "rows"; readonly rows: readonly number[] }
  | { readonly kind: "into"; readonly rows: readonly number[] | null };

const FLAT: Layout = { kind: "flat" };

export interface CompiledForward {
  readonly replay: ForwardReplay;
  /** Statements of the re-rolled code, and groups of variables its loops keep in locals. */
  readonly stats: { readonly forward: number; readonly locals: number };
  readonly source: readonly string[];
  /** How many outputs are read out of v one by one after the code, per call (not those it writes in place, nor rows' grounds). */
  readonly copied: number;
}

type Run = (
  v: Float64Array,
  K: typeof KERNELS,
  KINK: typeof KINKS,
  chunks: ForwardChunk[],
  at: Int32Array,
  to: Int32Array,
  results: unknown[],
  parts: readonly (number | ArrayLike<number>)[],
  live: number,
  dest: Float64Array | undefined,
) => number[] | null;

/** A trace's forward code: its chunks' source, where its outputs are, and the array's first values. */
export interface ForwardCode {
  /** One function body per chunk, over `v` (input k is v[k]), `K` and `KINK`; `return false` where the trace does not hold. */
  readonly source: readonly string[];
  /** Where output j is in v. */
  readonly outs: Int32Array;
  /** Where the block of the outputs `placed` starts in v (the last places), or -1. */
  readonly block: number;
  /** v as the code expects it: the tape's values (literals among them) in their places. */
  readonly values: Float64Array;
  readonly stats: CompiledForward["stats"];
  /** Which variables (by place in v) a loop of the code may touch: the others can live in locals of a function holding all of it. */
  readonly inLoops: Uint8Array;
  /** The chunks' source with the variables `named` names (outside loops) in those locals. */
  write(named: (index: number) => string | undefined): string[];
  /** As `write`, ranges of v read and written in other arrays where every access stays inside one (source.ts). */
  writeAliased(named: (index: number) => string | undefined, aliases: readonly Alias[]): Written;
}

/**
 * The forward code of `term` (a trace of reals) under its guards, computing `outputs`
 * (variables of the term), or null if it would be too large to be worth compiling, or
 * code may not be made here (mayMakeCode), or a user primitive's rule cannot be written
 * as code for every point (DefineOpError, trace/lifted.ts); the interpreter runs those.
 */
export function forwardCode(
  term: TraceTerm,
  guards: readonly Guard[],
  reportTies: boolean,
  outputs: readonly number[],
  /** Per output j, its offset in a block of outputs.length places at the end of v, or -1 (numbered as any other output). */
  placed?: Int32Array,
): ForwardCode | null {
  if (!mayMakeCode()) return null;
  try {
    return writeForward(term, guards, reportTies, outputs, placed);
  } catch (e) {
    if (e instanceof DefineOpError) return null;
    throw e;
  }
}

function writeForward(term: TraceTerm, guards: readonly Guard[], reportTies: boolean, outputs: readonly number[], placed?: Int32Array): ForwardCode | null {
  const tape = term.tape;
  const n = tape.length;
  if (n >= LITERAL_IDS) return null;
  const program = new Program(term, guards, reportTies, { reverse: false, outputs });
  const { usesOf, template } = program;
  const plan = (code: readonly Node[], statements: Statements, outs: readonly number[], size: number) =>
    planRegisters([code], usesOf, new Accesses(size, [statements], usesOf, outs.map((x) => ({ space: "v" as const, x }))));

  // which variables the code still touches in the array, or null if it is too large
  const first = program.statements(null).forward;
  const code1 = reroll(first, program.shapes);
  if (codeSize(code1) > MAX_STATEMENTS) return null;
  const inMemory = plan(code1, first, outputs, n).inMemory;
  // numbered again as gradient.ts does: the inputs first (input k is v[k]), then the outputs (so
  // that they are copied out in order), then what stays in the array; last, the outputs
  // `placed`, each at its offset in a block as long as the outputs (the places of the others
  // in it unused): where the code writes them into the caller's array, v ends before it
  const order = new Int32Array(n).fill(-1);
  let next = 0;
  for (const x of term.params[0].atoms) order[x] = next++;
  const last = -2;
  if (placed !== undefined) outputs.forEach((x, j) => placed[j] >= 0 && order[x] === -1 && (order[x] = last));
  for (const x of outputs) if (order[x] === -1) order[x] = next++;
  for (const resident of [1, 0]) for (let x = 0; x < n; x++) if (order[x] === -1 && inMemory[x] === resident) order[x] = next++;
  const block = placed === undefined ? -1 : next;
  if (placed !== undefined) {
    outputs.forEach((x, j) => order[x] === last && (order[x] = block + placed[j]));
    next += outputs.length;
  }
  const places = next;
  const second = program.statements(order).forward;
  const code = reroll(second, program.shapes);
  const outs = Int32Array.from(outputs, (x) => order[x]);
  const { groups } = plan(code, second, [...outs], places);
  const values = new Float64Array(places);
  for (let x = 0; x < n; x++) values[order[x]] = tape.val[x];
  return {
    source: chunkSources(code, template, groups),
    outs,
    values,
    block,
    stats: { forward: codeSize(code), locals: [...groups.values()].reduce((k, gs) => k + gs.length, 0) },
    inLoops: touchedByLoops(code, usesOf, places),
    write: (named) => chunkSources(code, template, groups, (space, index) => (space === "v" ? named(index) : undefined)),
    writeAliased: (named, aliases) =>
      writeChunks(code, template, { plans: groups, named: (space, index) => (space === "v" ? named(index) : undefined), aliases }),
  };
}

/**
 * The places of v that some loop of `code` may read or write: for each access of a loop's
 * body, every index between its first and its last iteration's (and its inner loops'),
 * a range that holds them all. Recursive in the loop nesting only.
 */
function touchedByLoops(code: readonly Node[], usesOf: UsesOf, n: number): Uint8Array {
  const touched = new Uint8Array(n);
  const mark = (node: Node, lo: readonly number[], hi: readonly number[]): void => {
    if (node.kind === "stmt") {
      for (const u of usesOf(node.sig)) if (u.space === "v") touched.fill(1, Math.max(0, lo[u.slot]), Math.min(n, hi[u.slot] + 1));
      return;
    }
    // this loop's movement on top of the loops around it
    const span = node.step.map((s) => s * (node.count - 1));
    const inLo = lo.map((x, k) => x + Math.min(0, span[k]));
    const inHi = hi.map((x, k) => x + Math.max(0, span[k]));
    let f = 0;
    for (const x of node.body) {
      mark(x, inLo.slice(f, f + x.idx.length), inHi.slice(f, f + x.idx.length));
      f += x.idx.length;
    }
  };
  for (const node of code) if (node.kind === "loop") mark(node, node.idx, node.idx);
  return touched;
}

/**
 * The compiled forward replay of `term` (a trace of reals) under its guards, computing
 * `outputs` (variables of the term), or null if its code would be too large to be worth it.
 */
export function compileForward(
  term: TraceTerm,
  guards: readonly Guard[],
  reportTies: boolean,
  outputs: readonly number[],
  /** Inputs as the replay will be given them: their layout (numbers, arrays of a length) is the code's. */
  parts: readonly (number | ArrayLike<number>)[],
  layout: Layout = FLAT,
): CompiledForward | null {
  // into the caller's array: each computed output that is there once is placed at its index there
  const placed = layout.kind === "into" ? placedOnce(term, outputs) : undefined;
  const made = forwardCode(term, guards, reportTies, outputs, placed);
  if (made === null) return null;
  const { source, outs, stats } = made;
  const nIn = term.params[0].atoms.length;
  const inline = source.length === 1;
  // one chunk: inline, what it computes outside loops in locals (but inputs and outputs),
  // the inputs read from the caller's arrays in place, and the outputs written straight
  // into the array returned (flat outputs, where they are a block after the inputs) or
  // into the caller's (those placed); more: each a function
  const kept = new Set(outs);
  const locals = new Set<number>();
  const named = (x: number): string | undefined => (made.inLoops[x] || x < nIn || kept.has(x) ? undefined : (locals.add(x), `t${x}`));
  const inputs = inline ? inputAliases(parts) : [];
  const target = layout.kind === "into" ? "dest" : "out";
  let direct = inline && (layout.kind === "into" ? placed!.some((d) => d >= 0) : layout.kind === "flat" && outs.every((x, j) => x === nIn + j));
  const start = layout.kind === "into" ? made.block : nIn;
  let written = inline ? made.writeAliased(named, [...inputs, ...(direct ? [{ start, length: outs.length, name: target }] : [])]) : null;
  if (written?.straddled.has(target)) {
    // an access reaching both an output and something else: the outputs copied out of v after all
    direct = false;
    locals.clear();
    written = made.writeAliased(named, inputs);
  }
  // the block written into the caller's array is not kept in v (the last places: v ends before it)
  const v = direct && layout.kind === "into" ? made.values.slice(0, made.block) : made.values;
  const { results, at, to, source: copyOut, before = "" }: OutputCopy =
    layout.kind === "into"
      ? intoCopy(term, outputs, outs, layout.rows ?? [outputs.length], direct ? placed! : undefined)
      : direct
        ? { ...outputCopy(term, outputs, outs), source: "return out;", before: "const out = results.slice();" }
        : layout.kind === "flat"
          ? outputCopy(term, outputs, outs)
          : rowsCopy(term, outputs, outs, layout.rows);
  const code = written
    ? warmable(written.sources[0]).replace(/return false;/g, "return null;")
    : "for (let c = 0; c < chunks.length; c++) if (!chunks[c](v, K, KINK, live)) return null;";
  const chunks = inline ? [] : source.map(forwardChunk);
  // the inputs copied in (input k is variable k) but those only aliases read (an output may
  // be an input, copied out of v), the code, the outputs copied out
  const inV = (a: Alias): boolean => written!.straddled.has(a.name) || outs.some((x) => x >= a.start && x < a.start + a.length);
  const aliased = new Set(inputs.filter((a) => !inV(a)).map((a) => a.name));
  const run = new Function(
    "v", "K", "KINK", "chunks", "at", "to", "results", "parts", "live", "dest",
    `${locals.size > 0 ? `let ${[...locals].map((x) => `t${x} = 0`).join(", ")};` : ""}
${inputs.map((a) => `const ${a.name} = parts[${a.name.slice(1)}];`).join("\n")}
${before}
${copyIn(parts, aliased)}
${code}
${copyOut}`,
  ) as Run;
  run(v, KERNELS, KINKS, chunks, at, to, results, parts, 0, layout.kind === "into" ? new Float64Array(outputs.length) : undefined);
  const replay: ForwardReplay = (parts, dest) => run(v, KERNELS, KINKS, chunks, at, to, results, parts, 1, dest);
  return { replay, stats, source, copied: direct && layout.kind === "flat" ? 0 : at.length };
}

/**
 * How the outputs leave v: `source` after the code (reading `at`, `to` and `results`),
 * `before` ahead of it where the code writes outputs in place.
 */
interface OutputCopy {
  readonly results: unknown[];
  readonly at: Int32Array;
  readonly to: Int32Array;
  readonly source: string;
  readonly before?: string;
}

/** The arrays among `parts` as aliases of their places in v (input k is v[k]): `x${i}` for parts[i]. */
function inputAliases(parts: readonly (number | ArrayLike<number>)[]): Alias[] {
  const aliases: Alias[] = [];
  let k = 0;
  parts.forEach((p, i) => {
    if (typeof p === "number") k++;
    else {
      if (p.length > 0) aliases.push({ start: k, length: p.length, name: `x${i}` });
      k += p.length;
    }
  });
  return aliases;
}

/**
 * The copy of the outputs out of v: a copy of `results`, which holds the literals among
 * them already (a Hessian's are mostly the literal 0: its structural zeros cost nothing
 * per call), then output `to[k]` from v[at[k]] for the others (`to` empty: output k from
 * at[k], all of them).
 */
function outputCopy(term: TraceTerm, outputs: readonly number[], places: Int32Array): { results: number[]; at: Int32Array; to: Int32Array; source: string } {
  const { op, val } = term.tape;
  // an array of doubles to copy for the results (a copy keeps its kind: no transition per call)
  const results: number[] = Array.from(outputs, () => 0.5).fill(0);
  const literal = outputs.map((x) => op[x] === CONST);
  outputs.forEach((x, j) => literal[j] && (results[j] = val[x]));
  if (literal.every((l) => !l)) {
    // the outputs are numbered in order after the inputs, but for inputs and repeats among them
    const contiguous = places.length > 0 && places.every((x, j) => x === places[0] + j);
    const copy = contiguous
      ? `for (let j = 0; j < ${places.length}; j++) out[j] = v[${places[0]} + j];`
      : "for (let j = 0; j < at.length; j++) out[j] = v[at[j]];";
    return { results, at: places, to: new Int32Array(0), source: `const out = results.slice();\n${copy}\nreturn out;` };
  }
  const computed = outputs.flatMap((_, j) => (literal[j] ? [] : [j]));
  return {
    results,
    at: Int32Array.from(computed, (j) => places[j]),
    to: Int32Array.from(computed),
    source: "const out = results.slice();\nfor (let k = 0; k < at.length; k++) out[to[k]] = v[at[k]];\nreturn out;",
  };
}

/**
 * The outputs copied out of v as rows of the given lengths. A Hessian's rows are mostly
 * one value each (basis-columns.ts: the entries no input reaches are the sweep along 0's,
 * ±0 as a rule): each row is a copy of a template holding its literals and, where that
 * value (`ground`) is ±0, the zero of its sign; otherwise its places are written. Then
 * the other outputs, output k into row to[2k] at to[2k + 1] from v[at[k]]. Rows of a few
 * hundred are cheap to copy, where one array of n² numbers (sliced into rows after) was not.
 */
function rowsCopy(
  term: TraceTerm,
  outputs: readonly number[],
  places: Int32Array,
  rows: readonly number[],
): { results: unknown[]; at: Int32Array; to: Int32Array; source: string } {
  // arrays of doubles (a copy keeps its kind)
  const positive = rows.map((length): number[] => Array.from({ length }, () => 0.5).fill(0));
  const negative = positive.map((row) => row.slice());
  const at: number[] = [];
  const to: number[] = [];
  const { ground, spots, from } = planRows(term, outputs, places, rows, {
    literal: (r, c, value) => (positive[r][c] = negative[r][c] = value),
    spot: (r, c) => (negative[r][c] = -0),
    other: (r, c, place) => (at.push(place), to.push(r, c)),
  });
  const results = [positive, negative, ground, spots, from];
  return {
    results,
    at: Int32Array.from(at),
    to: Int32Array.from(to),
    source: `const [positive, negative, ground, spots, from] = results;
const out = [];
for (let r = 0; r < ${rows.length}; r++) {
  const g = ground[r];
  const d = g < 0 ? 0 : v[g];
  if (d === 0) { out.push((1 / d > 0 ? positive : negative)[r].slice()); continue; }
  const row = positive[r].slice();
  for (let k = from[r]; k < from[r + 1]; k++) row[spots[k]] = d;
  out.push(row);
}
for (let k = 0; k < at.length; k++) out[to[2 * k]][to[2 * k + 1]] = v[at[k]];
return out;`,
  };
}

/** What planRows does with each output (r, c: its row and column). */
interface RowVisitor {
  literal(r: number, c: number, value: number): void;
  /** A place of its row's ground. */
  spot(r: number, c: number): void;
  other(r: number, c: number, place: number): void;
}

/**
 * The outputs as rows of the given lengths, each visited as a literal, a place of its
 * row's `ground` (the place in v of its commonest computed output, if it is there more
 * than once, else -1: a Hessian's structural zeros, the sweep along 0's), or another
 * computed output. `spots`: the columns of the ground's places (the flat index where
 * `flat`), row r's from from[r] to from[r + 1].
 */
function planRows(
  term: TraceTerm,
  outputs: readonly number[],
  places: Int32Array,
  rows: readonly number[],
  visit: RowVisitor,
  flat = false,
): { ground: Int32Array; spots: Int32Array; from: Int32Array } {
  const { op, val } = term.tape;
  const ground: number[] = [];
  const spots: number[] = [];
  const from = [0];
  let j = 0;
  rows.forEach((length, r) => {
    const seen = new Map<number, number>();
    for (let c = 0; c < length; c++) if (op[outputs[j + c]] !== CONST) seen.set(places[j + c], (seen.get(places[j + c]) ?? 0) + 1);
    let g = -1;
    for (const [x, k] of seen) if (k > 1 && (g < 0 || k > seen.get(g)!)) g = x;
    ground.push(g);
    for (let c = 0; c < length; c++, j++) {
      const x = outputs[j];
      if (op[x] === CONST) visit.literal(r, c, val[x]);
      else if (places[j] === g) spots.push(flat ? j : c), visit.spot(r, c);
      else visit.other(r, c, places[j]);
    }
    from.push(spots.length);
  });
  return { ground: Int32Array.from(ground), spots: Int32Array.from(spots), from: Int32Array.from(from) };
}

/**
 * Per output, its own index where it is a computed variable (no literal, no input) that no
 * other output repeats, else -1: the code computing it can write it straight into the
 * caller's array, and no copy reads it. (A Hessian's entries but its rows' structural zeros.)
 */
function placedOnce(term: TraceTerm, outputs: readonly number[]): Int32Array {
  const { op } = term.tape;
  const count = new Map<number, number>();
  for (const x of outputs) count.set(x, (count.get(x) ?? 0) + 1);
  return Int32Array.from(outputs, (x, j) => (op[x] !== CONST && op[x] !== INPUT && count.get(x) === 1 ? j : -1));
}

/**
 * The outputs written into the caller's array `dest`, in order: before the code, a copy of
 * a template holding the literals among them (+0 elsewhere; a fill and the few others,
 * where they are few), and the code writes the outputs `placed` (placedOnce) there itself;
 * after it, per row, its ground (planRows: a Hessian's structural zeros) at its places
 * unless it is +0, which the template holds already; then the others, output k at to[k]
 * from v[at[k]]. The copy of the template costs what the hand-written Hessian's fill(0) does.
 */
function intoCopy(
  term: TraceTerm,
  outputs: readonly number[],
  places: Int32Array,
  rows: readonly number[],
  placed?: Int32Array,
): Required<OutputCopy> {
  const template = new Float64Array(outputs.length);
  const at: number[] = [];
  const to: number[] = [];
  // the flat index of row r's column c
  const start = [0];
  for (const length of rows) start.push(start[start.length - 1] + length);
  const { ground, spots, from } = planRows(
    term,
    outputs,
    places,
    rows,
    {
      literal: (r, c, value) => (template[start[r] + c] = value),
      spot: () => {},
      other: (r, c, place) => placed?.[start[r] + c] === start[r] + c || (at.push(place), to.push(start[r] + c)),
    },
    true,
  );
  // few literals other than +0 (none, in a Hessian): a fill, as the hand-written one's, then those
  const marked: number[] = [];
  template.forEach((c, k) => Object.is(c, 0) || marked.push(k));
  const sparse = marked.length <= template.length / 4;
  return {
    results: [template, ground, spots, from, Int32Array.from(marked)],
    at: Int32Array.from(at),
    to: Int32Array.from(to),
    before: `const [template, ground, spots, from, marked] = results;
${sparse ? "dest.fill(0);\nfor (let k = 0; k < marked.length; k++) dest[marked[k]] = template[marked[k]];" : "dest.set(template);"}`,
    source: `for (let r = 0; r < ${rows.length}; r++) {
  const g = ground[r];
  if (g < 0) continue;
  const d = v[g];
  if (d === 0 && 1 / d > 0) continue;
  for (let k = from[r]; k < from[r + 1]; k++) dest[spots[k]] = d;
}
for (let k = 0; k < at.length; k++) dest[to[k]] = v[at[k]];
return dest;`,
  };
}

/**
 * The copy of inputs laid out as `parts` into v[0], v[1]…, but the arrays `aliased`
 * names (`x${i}` for parts[i], read in place): a loop per array, one per run
 * of numbers, each reading one kind of array. (One loop over every part, or v.set(part),
 * would read arrays of doubles and of small integers at one place, which V8 then
 * optimises for one kind, or for neither, depending on what ran before.)
 */
function copyIn(parts: readonly (number | ArrayLike<number>)[], aliased: ReadonlySet<string>): string {
  const lines: string[] = [];
  let k = 0;
  for (let i = 0; i < parts.length; ) {
    const p = parts[i];
    if (typeof p === "number") {
      let j = i;
      while (j < parts.length && typeof parts[j] === "number") j++;
      lines.push(`for (let j = ${i}; j < ${j}; j++) v[${k - i} + j] = parts[j];`);
      k += j - i;
      i = j;
    } else {
      if (!aliased.has(`x${i}`)) lines.push(`{ const p = parts[${i}]; for (let j = 0; j < ${p.length}; j++) v[${k} + j] = p[j]; }`);
      k += p.length;
      i++;
    }
  }
  return lines.join("\n");
}
