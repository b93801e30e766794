/**
 * @file A trace of reals compiled to run at many lanes: jit(vmap(f))'s hot path.
 *
 * The trace's forward code (forward.ts: re-rolled loops, locals) is the body of a loop
 * over a run of lanes: each lane's inputs are read from the batch's columns into the
 * array, the body runs, and its outputs are written into the output columns at that
 * lane. At the first lane where a guard or kink does not hold the loop stops, and says
 * where: vmap tries its other traces there, or traces f. The inputs that do not vary are set once, before the loop. The
 * same statements as the forward replay: per lane, its numbers to the bit.
 *
 * Code is kept by the structure of its term (term-key.ts): an uncached vmap traces f
 * anew at every call, and its traces have the structures of the last call's; they run
 * the code made then. Generating and compiling code costs as much as evaluating a few
 * thousand lanes by columns, so a structure is compiled when asked to (`now`: a batch
 * large enough, or jit(vmap(f)), which keeps its traces) or when seen a second time.
 */
import { Indexed } from "../api/indexed.js";
import type { LaneInput } from "../eval/lanes.js";
import { KERNELS, KINKS } from "../trace/opcodes.js";
import type { TraceTerm } from "../trace/term.js";
import type { Guard } from "../trace/tracer.js";
import { forwardCode } from "./forward.js";
import { forwardChunk, warmable, type ForwardChunk } from "./source.js";
import { structureCache } from "./structure-cache.js";
import { sameKey, termKey, type TermKey } from "./term-key.js";

/**
 * The term's outputs at lanes `from` … `to` − 1 of the batch, written into `outs` at each
 * lane, up to the first lane where the term does not hold: its index, or `to`.
 */
export type LaneRun = (inputs: readonly LaneInput[], from: number, to: number, outs: readonly Float64Array[]) => number;

/** The lanes' function (a LaneRun, and `live` 0 for its warm-up run: warmable), made from code given v, the kernels and chunks. */
type Run = (inputs: readonly LaneInput[], from: number, to: number, O: readonly Float64Array[], live?: number) => number;
type MakeRun = (v: Float64Array, K: typeof KERNELS, KINK: typeof KINKS, chunks: ForwardChunk[]) => Run;

/**
 * The lanes of `term`, a trace of reals whose inputs `batched` marks, compiled; null if
 * its code would be too large.
 */
export function compileLanes(
  term: TraceTerm,
  guards: readonly Guard[],
  reportTies: boolean,
  batched: readonly boolean[],
  indexed: readonly number[],
): LaneRun | null {
  const outputs = term.output.atoms;
  const made = forwardCode(term, guards, reportTies, outputs);
  if (made === null) return null;
  const { source, outs, values: v } = made;
  const nIn = term.params[0].atoms.length;
  // one chunk: the whole code in the lane loop, and what it computes outside loops in locals
  // (V8 keeps locals in registers, where an element of v is loaded and stored at each use)
  const inline = source.length === 1;
  const locals = new Set<number>();
  const named = (index: number): string | undefined => {
    if (!inline || made.inLoops[index]) return undefined;
    locals.add(index);
    return `t${index}`;
  };
  const body = inline ? made.write(named)[0] : "";
  const place = (index: number): string => named(index) ?? `v[${index}]`;
  const lines: string[] = [];
  for (let k = 0; k < nIn; k++) {
    const row = indexed[k];
    if (!batched[k]) lines.push(`${place(k)} = inputs[${k}].values[0];`);
    else if (row === k) lines.push(`const I${k} = inputs[${k}].values, { index: X${k}, stride: S${k}, offset: F${k} } = inputs[${k}].indexed;`);
    else if (row >= 0) lines.push(`const F${k} = inputs[${k}].indexed.offset;`);
    else lines.push(`const I${k} = inputs[${k}].values;`);
  }
  outs.forEach((_, j) => lines.push(`const O${j} = O[${j}];`));
  lines.push("for (let l = from; l < to; l++) {");
  // an indexed batch read from its table where the lane needs it (api/indexed.ts), not
  // gathered first; the inputs reading one row (vmap-plan.ts, tableReads) find it once
  for (let k = 0; k < nIn; k++) if (batched[k] && indexed[k] === k) lines.push(`const R${k} = X${k}[l] * S${k};`);
  for (let k = 0; k < nIn; k++) {
    const row = indexed[k];
    if (batched[k]) lines.push(row >= 0 ? `${place(k)} = I${row}[R${row} + F${k}];` : `${place(k)} = I${k}[l];`);
  }
  // one chunk inline, its guards leaving at the lane; more, each a function
  if (inline) lines.push(warmable(body).replace(/return false;/g, "return l;"));
  else source.forEach((_, c) => lines.push(`if (!chunks[${c}](v, K, KINK, live)) return l;`));
  outs.forEach((at, j) => lines.push(`O${j}[l] = ${place(at)};`));
  lines.push("}", "return to;");
  // each local starts at its value in v: one the code never assigns (an output that is a
  // literal, f's gradient of x ↦ x) is read as that
  if (locals.size > 0) lines.unshift(`let ${[...locals].map((x) => `t${x} = v[${x}]`).join(", ")};`);
  const chunks = source.length === 1 ? [] : source.map(forwardChunk);
  // the LaneRun itself, a function of this code alone: called through a wrapper shared by
  // every code (one closure site), V8 inlined one code's loop into the wrapper and
  // deoptimized it at the next, for a few hundred calls of vmap
  const make = new Function("v", "K", "KINK", "chunks", `return function lanes(inputs, from, to, O, live = 1) {\n${lines.join("\n")}\n};`) as MakeRun;
  const run = make(v, KERNELS, KINKS, chunks);
  // once on one lane with no loop run, for type feedback (warmable, source.ts)
  const scratch = Array.from({ length: nIn }, (_, k): LaneInput => {
    const values = new Float64Array(1);
    return { values, batched: true, width: 1, indexed: indexed[k] >= 0 ? new Indexed(values, new Int32Array(1), 1, 0) : undefined };
  });
  run(scratch, 0, 1, Array.from(outs, () => new Float64Array(1)), 0);
  return run;
}

/** Per structure: its key, and its code once made (null: too large to make). */
interface Kept {
  readonly key: TermKey;
  run: LaneRun | null | undefined;
}

/** Structures seen, by their key's structure (bounded: jit/structure-cache.ts). */
const byStructure = structureCache<TermKey, Kept>(sameKey);

/** The kept entry of `key`'s structure: found, or made (`first`: it was not seen before). */
function keptOf(key: TermKey): { kept: Kept; first: boolean } {
  const found = byStructure.find(key);
  if (found !== undefined) return { kept: found, first: false };
  return { kept: byStructure.add({ key, run: undefined }), first: true };
}

/** Counters for tests: lane code compiled, and found made for an earlier term of the same structure. */
export const laneCodeStats = { compiled: 0, reused: 0 };

/** compileLanes, counted. */
function compiled(term: TraceTerm, guards: readonly Guard[], reportTies: boolean, batched: readonly boolean[], indexed: readonly number[]): LaneRun | null {
  laneCodeStats.compiled++;
  return compileLanes(term, guards, reportTies, batched, indexed);
}

/**
 * The compiled lanes of `term` (as compileLanes), kept by its structure: made when `now`
 * or when its structure was seen before; null where it is not made (yet), or cannot be.
 */
export function laneCode(
  term: TraceTerm,
  guards: readonly Guard[],
  reportTies: boolean,
  batched: readonly boolean[],
  indexed: readonly number[],
  now: boolean,
): LaneRun | null {
  if (term.tape.tensorCount !== 0) return null;
  // per input 0 (one value), 1 (batched) or 2 + r (batched, read through an index at input r's row): the code reads each its way
  const key = termKey(term, guards, [+reportTies, ...batched.map((b, k) => (!b ? 0 : indexed[k] < 0 ? 1 : 2 + indexed[k]))]);
  if (key === null) return now ? compiled(term, guards, reportTies, batched, indexed) : null;
  const { kept, first } = keptOf(key);
  if (kept.run !== undefined) {
    laneCodeStats.reused++;
    return kept.run;
  }
  // seen for the first time and not asked for now: made at the next sight
  if (first && !now) return null;
  return (kept.run = compiled(term, guards, reportTies, batched, indexed));
}
