/**
 * @file A cached trace of reals compiled to JavaScript: its replay at a new point and
 * its reverse sweep, as loops over Float64Arrays (compileGrad's hot path).
 *
 * The forward code recomputes the values the gradient needs, checks every recorded
 * decision (guard) and kink right after its arguments are computed, and reports
 * whether the trace holds at the new point. The reverse code is diff/sweep.ts's sweep
 * specialised to this trace: which instructions carry a cotangent, which arguments are
 * active and which contribution reaches a variable first are known before it runs, so
 * each contribution is a plain `ct[a] = …` (first) or `ct[a] += …` (later; an input's
 * goes straight into `g`, the gradient array the call returns), in the same
 * order with the same rules (javascript.ts): the same numbers as the sweep, to the bit.
 * The statements come from program.ts; both are re-rolled into loops (reroll.ts), the
 * loops' short-lived variables planned into locals (registers.ts), and the source
 * written (source.ts), reading the inputs from the caller's array where they are.
 */
import { DefineOpError } from "../errors.js";
import { KERNELS, KINKS } from "../trace/opcodes.js";
import type { TraceTerm } from "../trace/term.js";
import type { Guard } from "../trace/tracer.js";
import { LITERAL_IDS, Program } from "./program.js";
import { codeSize, reroll, type Node, type Statements } from "./reroll.js";
import { Accesses, planRegisters } from "./registers.js";
import { forwardChunk, warmable, writeChunks } from "./source.js";
import { mayMakeCode } from "./javascript.js";

/** Value and gradient at new inputs (the value NaN where it was not asked for), or null where the trace does not hold there. */
export type Replay = (inputs: ArrayLike<number>) => [number, number[]] | null;

/** What the compiled code computes besides the gradient, the guards and the kinks. */
export interface ReplayOptions {
  /**
   * The output's value (default true). Without it, the forward code computes only what
   * the guards, the kinks and the reverse rules read: a gradient alone, as `grad`'s
   * callers ask for it, does not pay for the value's own chain (a sum over the whole
   * trace, in W1), nor for storing what only that chain read.
   */
  readonly value?: boolean;
}

/**
 * What the compiled code holds: how many statements its loops and straight code have,
 * and how many groups of variables its loops keep in locals (registers.ts).
 */
export interface CompiledStats {
  readonly forward: number;
  readonly reverse: number;
  readonly locals: number;
}

/** The compiled replay, what its code holds, and its source (one function per chunk). */
export interface Compiled {
  readonly replay: Replay;
  readonly stats: CompiledStats;
  readonly source: { readonly forward: readonly string[]; readonly reverse: readonly string[] };
}

/** Traces whose re-rolled code is larger than this are replayed by the interpreter. */
export const MAX_STATEMENTS = 40000;

type Reverse = (v: Float64Array, ct: Float64Array, g: number[], K: typeof KERNELS, live: number, x: ArrayLike<number>) => void;

/**
 * The compiled replay of `term` (a real-valued trace of reals) under its guards, or
 * null if its code would be too large to be worth it, or may not be made here, or if a
 * user primitive's rule cannot be written as code for every point (it decides on values
 * or reads them: DefineOpError, trace/lifted.ts); the interpreter replays those.
 */
export function compileReplay(term: TraceTerm, guards: readonly Guard[], reportTies: boolean, options: ReplayOptions = {}): Compiled | null {
  try {
    return compile(term, guards, reportTies, options.value !== false);
  } catch (e) {
    if (e instanceof DefineOpError) return null;
    throw e;
  }
}

function compile(term: TraceTerm, guards: readonly Guard[], reportTies: boolean, value: boolean): Compiled | null {
  const tape = term.tape;
  const n = tape.length;
  if (n >= LITERAL_IDS || !mayMakeCode()) return null;
  const out = term.output.atoms[0];
  const program = new Program(term, guards, reportTies, { outputs: value ? [out] : [] });
  const { usesOf, template, has } = program;

  // the inputs' variables, or -1 for an input no contribution reaches (its gradient is 0)
  const params = Int32Array.from(term.params[0].atoms, (p) => (has[p] ? p : -1));
  // what each loop keeps in locals: the replay reads the value and the gradient after it
  const plan = (fwd: Statements, rev: Statements, code: readonly (readonly Node[])[], outVar: number, inputs: Int32Array) => {
    const gradient = [...inputs].filter((p) => p >= 0).map((x) => ({ space: "g" as const, x }));
    const liveOut = value ? [{ space: "v" as const, x: outVar }, ...gradient] : gradient;
    return planRegisters(code, usesOf, new Accesses(n, [fwd, rev], usesOf, liveOut));
  };
  // which variables the code still touches in the arrays, or null if it is too large
  const firstPass = (): Uint8Array | null => {
    const { forward, reverse } = program.statements(null);
    const code = [reroll(forward, program.shapes), reroll(reverse, program.shapes)];
    if (codeSize(code[0]) + codeSize(code[1]) > MAX_STATEMENTS) return null;
    return plan(forward, reverse, code, out, params).inMemory;
  };
  const inMemory = firstPass();
  if (inMemory === null) return null;
  // Then the variables are numbered again: the inputs first (input k is variable k, its
  // cotangent g[k]), then those still in the arrays: they share cache lines instead of
  // lying scattered among the ones that live in locals (a loop's stored values 4 apart,
  // say). A renaming, so nothing else changes; the statements are built again under it
  // (the first pass's are garbage by then: on a long trace they are most of the memory)
  // and re-rolled and planned again (the same loops, the indices' steps shrunk).
  const order = new Int32Array(n).fill(-1);
  let next = 0;
  for (const x of term.params[0].atoms) order[x] = next++;
  for (const resident of [1, 0]) for (let x = 0; x < n; x++) if (order[x] < 0 && inMemory[x] === resident) order[x] = next++;
  const second = program.statements(order);
  const code = [reroll(second.forward, program.shapes), reroll(second.reverse, program.shapes)];
  const params2 = params.map((p) => (p < 0 ? -1 : order[p]));
  const out2 = order[out];
  const { groups } = plan(second.forward, second.reverse, code, out2, params2);
  const stats = { forward: codeSize(code[0]), reverse: codeSize(code[1]), locals: [...groups.values()].reduce((k, gs) => k + gs.length, 0) };
  // the inputs read in place, from the caller's array (x): no copy into v per call, unless
  // an access reaches both an input and another variable, or the value is an input (then v
  // holds them too)
  const aliases = [{ start: 0, length: params2.length, name: "x" }];
  const written = [writeChunks(code[0], template, { plans: groups, aliases }), writeChunks(code[1], template, { plans: groups, aliases })];
  const copyIn = (value && out2 < params2.length) || written.some((w) => w.straddled.size > 0);
  const source = { forward: written[0].sources, reverse: written[1].sources };
  const forwards = source.forward.map(forwardChunk);
  const reverses = source.reverse.map((s) => new Function("v", "ct", "g", "K", "live", "x", `let c = 0;\n${warmable(s)}`) as Reverse);

  const v = new Float64Array(n);
  for (let x = 0; x < n; x++) v[order[x]] = tape.val[x]; // the tape's values, literals among them
  const ct = new Float64Array(n);
  // the gradient starts as a copy of zeros held as doubles (an input no contribution
  // reaches keeps its 0), so the reverse code's writes need no change of element kind
  const zeros: number[] = [];
  for (let k = 0; k < params2.length; k++) zeros.push(0.5);
  zeros.fill(0);
  // once with no loop run, for type feedback (warmable, source.ts), at the traced point
  const at = Array.from(term.params[0].atoms, (p) => tape.val[p]);
  for (const f of forwards) f(v, KERNELS, KINKS, 0, at);
  for (const f of reverses) f(v, ct, zeros.slice(), KERNELS, 0, at);
  const replay: Replay = (inputs) => {
    // input k is variable k, read from `inputs` where it is
    if (copyIn) v.set(inputs);
    for (const f of forwards) if (!f(v, KERNELS, KINKS, 1, inputs)) return null;
    const g = zeros.slice();
    for (const f of reverses) f(v, ct, g, KERNELS, 1, inputs);
    return [value ? v[out2] : NaN, g];
  };
  return { replay, stats, source };
}
