/**
 * @file Lane plans (lane-plan.ts) kept by the structure of the term they were made for, so
 * that a term traced again by a later call (jacfwd traces f and emits its tangent term
 * at every call; an uncached vmap traces f anew) runs the plan of an earlier one instead
 * of making it again: over GradBench ht's Jacobian's tangent term, making it cost a tenth
 * of the call and most of what the call allocated.
 *
 * A plan is a function of each instruction's code and arguments, of which are tensors and
 * their dims; of the parameters planning reads: a gather's axis and indices (a chain's
 * loads read them) and a transpose's permutation (an output written permuted); of the
 * guards' operands, the outputs, which inputs are batched, and the options. The key is
 * those numbers in a typed array with a hash, as jit/chain-plans.ts keys its plans; a
 * gather's indices by identity (the api keeps one copy of a vector its caller passes
 * again unchanged, api/index-copies.ts), a new vector making a new plan. A plan holds variable
 * numbers, compiled chains and the indices, nothing of the tape it was made for.
 */
import { ARITY, CODE, FIRST_PRIMITIVE, INPUT } from "../trace/opcodes.js";
import type { TraceTerm } from "../trace/term.js";
import type { Guard } from "../trace/tracer.js";
import { hashWords, structureCache } from "../jit/structure-cache.js";
import { sameKey } from "../jit/term-key.js";
import { planLanes, type LanePlan, type LanePlanOptions } from "./lane-plan.js";

interface LanePlanKey {
  readonly words: Int32Array;
  readonly hash: number;
}

/** Plans by their key's structure (a loop of jacfwd or vmap calls needs one or two). */
const plans = structureCache<LanePlanKey, { readonly key: LanePlanKey; readonly plan: LanePlan }>(sameKey, 64);

/** Plans made and plans found (tests check that a repeated call finds its plan); `enabled` false: every plan made afresh (tests compare). */
export const lanePlanStats = { made: 0, found: 0, enabled: true };

/** `planLanes`, or the plan made for a term of the same structure. */
export function cachedLanePlan(term: TraceTerm, guards: readonly Guard[], options: LanePlanOptions, batchedInputs: readonly boolean[]): LanePlan {
  if (!lanePlanStats.enabled) return planLanes(term, guards, options, batchedInputs);
  const key = lanePlanKey(term, guards, options, batchedInputs);
  const found = plans.find(key);
  if (found !== undefined) {
    lanePlanStats.found++;
    return found.plan;
  }
  lanePlanStats.made++;
  return plans.add({ key, plan: planLanes(term, guards, options, batchedInputs) }).plan;
}

const { gather: GATHER, transpose: TRANSPOSE } = CODE;

/** A number per index vector, for as long as it lives: its identity in a key. */
const vectorIds = new WeakMap<Int32Array, number>();
let nextVectorId = 1;
const vectorId = (v: Int32Array): number => {
  let id = vectorIds.get(v);
  if (id === undefined) vectorIds.set(v, (id = nextVectorId++));
  return id;
};

/** The structure a plan of `term` is a function of (see the file's comment). */
function lanePlanKey(term: TraceTerm, guards: readonly Guard[], options: LanePlanOptions, batchedInputs: readonly boolean[]): LanePlanKey {
  const tape = term.tape;
  const { op, a, b, x, length: n } = tape;
  const k = new Words(8 * n + 2 * guards.length + term.output.atoms.length + batchedInputs.length + 16);
  k.push(+options.reportTies);
  k.push(+options.checkNaN);
  k.push(+(options.elementMajor ?? false));
  k.list(batchedInputs.map((batched) => +batched));
  k.push(n);
  for (let i = 0; i < n; i++) {
    const code = op[i];
    k.push(code);
    if (x[i] === 0) {
      if (code >= FIRST_PRIMITIVE) {
        k.push(a[i]);
        k.push(ARITY[code] === 2 ? b[i] : -1);
      } else if (code === INPUT) k.push(a[i]);
      continue;
    }
    k.push(+tape.isTensor(i));
    k.list(tape.dims(i));
    k.list(tape.args(i));
    if (code === INPUT) k.push(a[i]);
    else if (code === GATHER) {
      const { indices, axis } = tape.params(i) as { indices: Int32Array; axis: number };
      k.push(axis);
      k.push(vectorId(indices));
    } else if (code === TRANSPOSE) k.list((tape.params(i) as { perm: readonly number[] }).perm);
  }
  k.push(guards.length);
  for (const g of guards) {
    k.push(g.a);
    k.push(g.b);
  }
  k.list(term.output.atoms);
  const words = k.words();
  return { words, hash: hashWords(words) };
}

/** Integers appended to a typed array that grows as needed (a key of tens of thousands of them, made at every call). */
class Words {
  private w: Int32Array;
  private at = 0;
  constructor(capacity: number) {
    this.w = new Int32Array(capacity);
  }
  push(v: number): void {
    if (this.at === this.w.length) {
      const grown = new Int32Array(2 * this.w.length);
      grown.set(this.w);
      this.w = grown;
    }
    this.w[this.at++] = v;
  }
  /** Its length, then its entries. */
  list(vs: ArrayLike<number>): void {
    this.push(vs.length);
    for (let j = 0; j < vs.length; j++) this.push(vs[j]);
  }
  words(): Int32Array {
    return this.w.subarray(0, this.at);
  }
}
