/**
 * @file Plans of chains (jit/chains.ts) kept by the structure of the tape they were made
 * for, so that a term traced again by a later call (an uncached grad traces f anew every
 * time) runs the steps planned for an earlier one instead of writing and compiling them
 * again: planning W1's derivative cost more than running it.
 *
 * A plan is a function of each instruction's code, arguments, dims and whether its value
 * is a tensor; of the static parameters of those a chain's code reads them for (slices,
 * concatenations, embeds: the kernels read the others' from the tape when they run); of
 * the literals and free variables among the reals (chain code writes their values in);
 * and of which instructions are live and kept. The key is those numbers in a typed array
 * and the parameters as JSON, with a hash, as jit/term-key.ts keys a term of reals; a plan
 * holds variable numbers and compiled code, nothing of the tape it was made for.
 */
import { CODE, CONST, FIRST_PRIMITIVE, FREE } from "../trace/opcodes.js";
import type { Tape } from "../trace/tape.js";
import { planChains, type PlanInput } from "./chains.js";
import type { Step } from "./chain-code.js";
import { hashWords, structureCache } from "./structure-cache.js";
import { sameKey } from "./term-key.js";

/** Longer tapes are planned afresh: their key would cost what the plan saves. */
const MAX_KEYED = 4096;
/** Plans by their key's structure (a loop of grad calls needs one or two). */
const plans = structureCache<PlanKey, { readonly key: PlanKey; readonly steps: Step[] }>(samePlan);

/** Plans made and plans found (tests check that a repeated call finds its plan). */
export const planStats = { made: 0, found: 0 };

/** `planChains`, or the plan made for a tape of the same structure. */
export function cachedPlan(tape: Tape, input: PlanInput): Step[] {
  if (tape.length > MAX_KEYED || input.interpret !== undefined) return planChains(tape, input);
  const key = planKey(tape, input);
  const found = plans.find(key);
  if (found !== undefined) {
    planStats.found++;
    return found.steps;
  }
  planStats.made++;
  return plans.add({ key, steps: planChains(tape, input) }).steps;
}

/** A plan's key: numbers (compared by their bits: −0 apart from 0), the parameters of slices, concatenations, embeds, gathers and scatters, and a hash. */
interface PlanKey {
  readonly words: Int32Array;
  readonly params: string;
  readonly hash: number;
}

/** Instructions whose parameters a chain's code reads (jit/chains.ts `fusable`, jit/chain-code.ts). */
const PARAMETERISED = new Set<number>([CODE.slice, CODE.concat, CODE.embed, CODE.gatherAt, CODE.scatterAddAt]);

/** The structure a plan of `tape` is a function of (see the file's comment). */
function planKey(tape: Tape, { live, kept }: PlanInput): PlanKey {
  const { op, a, b, x, val, length: n } = tape;
  const k: number[] = [n];
  const params: string[] = [];
  for (let i = 0; i < n; i++) {
    const code = op[i];
    k.push(code * 4 + live[i] * 2 + kept[i]);
    const real = x[i] === 0 || !tape.isTensor(i);
    // a literal's (a free variable's) value: written into the code
    if (real && (code === CONST || code === FREE)) k.push(val[i]);
    if (x[i] === 0) {
      if (code >= FIRST_PRIMITIVE) k.push(a[i], b[i]);
      continue;
    }
    const dims = tape.dims(i);
    const args = tape.args(i);
    k.push(+!real, dims.length, ...dims, args.length, ...args);
    if (PARAMETERISED.has(code)) params.push(`${i}:${JSON.stringify(tape.params(i))}`);
  }
  const words = new Int32Array(Float64Array.from(k).buffer);
  const p = params.join(" ");
  return { words, params: p, hash: hashWords(words, p) };
}

/** Whether two keys are of the same structure: their words (jit/term-key.ts) and parameters. */
function samePlan(p: PlanKey, q: PlanKey): boolean {
  return p.params === q.params && sameKey(p, q);
}
