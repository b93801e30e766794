/**
 * @file The structure of a trace term of reals as a key: what its compiled code is a
 * function of, so that a term traced again (an uncached vmap traces f anew at every call)
 * finds the code made for an earlier one instead of generating and compiling it again.
 *
 * Code compiled from a term (forward.ts) reads its inputs and recomputes every primitive;
 * what it is made from is the term's shape: each instruction's code and operands, the
 * literals (and the values of free variables, constants to it) that it writes in or
 * reads, the guards' predicates, operands and outcomes, its inputs and outputs. Two terms
 * with the same key compile to the same code; their traced values (recomputed at every
 * lane) may differ. A term with tensor or parameterised instructions has no key (null):
 * its code is made afresh, as before.
 *
 * The key is those numbers in a typed array (a literal by its bits: −0 apart from 0), and
 * a hash of them: made and compared at a few nanoseconds an instruction, where a string of
 * them cost more than a short trace's evaluation at a lane.
 */
import type { PredicateName } from "@wengert/ops";
import { ARITY, FIRST_PRIMITIVE, INPUT } from "../trace/opcodes.js";
import type { TraceTerm } from "../trace/term.js";
import type { Guard } from "../trace/tracer.js";
import { hashWords } from "./structure-cache.js";

export interface TermKey {
  /** The numbers, two 32-bit words each (compared word for word). */
  readonly words: Int32Array;
  readonly hash: number;
}

/** Longer terms are not keyed: their key would be as long as the code it saves making. */
export const MAX_KEYED = 1 << 16;

const PREDICATE: { readonly [K in PredicateName]: number } = { lt: 0, le: 1, gt: 2, ge: 3, eq: 4, ne: 5 };

/** The key of `term` with `guards`, after `context` (what else its code depends on); null where it has none. */
export function termKey(term: TraceTerm, guards: readonly Guard[], context: readonly number[]): TermKey | null {
  const { op, a, b, x, val, length: n } = term.tape;
  if (n > MAX_KEYED) return null;
  const atoms = [...term.params.map((p) => p.atoms), term.output.atoms];
  const k = new Float64Array(context.length + 1 + 3 * n + 4 * guards.length + atoms.reduce((s, l) => s + 1 + l.length, 0));
  let at = 0;
  for (const c of context) k[at++] = c;
  k[at++] = n;
  for (let i = 0; i < n; i++, at += 3) {
    if (x[i] !== 0) return null;
    const code = op[i];
    k[at] = code;
    if (code >= FIRST_PRIMITIVE) {
      k[at + 1] = a[i];
      k[at + 2] = ARITY[code] === 2 ? b[i] : -1;
    } else if (code === INPUT) k[at + 1] = a[i];
    // a literal or a free variable: a constant of the code
    else k[at + 1] = val[i];
  }
  for (const g of guards) {
    k[at++] = PREDICATE[g.pred];
    k[at++] = g.a;
    k[at++] = g.b;
    k[at++] = 2 * +g.outcome + +g.distinct;
  }
  for (const list of atoms) {
    k[at++] = list.length;
    for (const v of list) k[at++] = v;
  }
  const words = new Int32Array(k.buffer);
  return { words, hash: hashWords(words) };
}

/** Whether two keys are of the same structure. */
export function sameKey(p: TermKey, q: TermKey): boolean {
  if (p.hash !== q.hash || p.words.length !== q.words.length) return false;
  for (let w = 0; w < p.words.length; w++) if (p.words[w] !== q.words[w]) return false;
  return true;
}
