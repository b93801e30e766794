/**
 * @file The reverse sweep on numbers: `W.R_V(x. C)` evaluated without being built.
 *
 * At the outermost `rd`, when nothing will inspect the derivative term, building it
 * only to evaluate it at once is wasted work. This runs the same rules in the same
 * order as differentiate.ts, with the numeric emitter (kernels on numbers) in place of
 * a symbolic one, over the values recorded while tracing: the derivative term's value,
 * with no instruction emitted. Tests hold it equal to evaluating the built term.
 * For terms of reals only (`tape.tensorCount === 0`); tensors go through
 * differentiate.ts, whose sink evaluates as it emits.
 */
import { numeric } from "@wengert/ops";
import { NaNError } from "../errors.js";
import { ARITY, CODE, FIRST_PRIMITIVE, INPUT, primitiveOf, scalarSpec } from "../trace/opcodes.js";
import type { TraceTerm } from "../trace/term.js";
import { giveColumn, takeColumn } from "../trace/columns.js";
import { activity } from "./place.js";


/**
 * The cotangents of C's inputs for output cotangents `seeds`, as numbers. With
 * `checkNaN`, the first rule whose contribution is NaN or infinite is named. `val`:
 * the variables' values (those recorded while tracing, or a replay's at a new point).
 */
export function reverseSweep(
  term: TraceTerm,
  seeds: readonly number[],
  checkNaN: { caller: string } | null,
  val: Float64Array = term.tape.val,
  scratch?: Scratch,
): number[] {
  // without a caller's scratch, the buffers come from the pool of tape columns and go back
  // to it: an outermost grad of a long trace would otherwise allocate megabytes off the
  // heap per call, which sets off full collections in a process with a large heap
  const own = scratch ?? pooledScratch(term);
  try {
    return sweep(term, seeds, checkNaN, val, own);
  } finally {
    if (scratch === undefined) for (const c of [own.active, own.ct, own.has]) giveColumn(c);
  }
}

function sweep(term: TraceTerm, seeds: readonly number[], checkNaN: { caller: string } | null, val: Float64Array, scratch: Scratch): number[] {
  const { op, a, b, length: n } = term.tape;
  const { active, ct, has } = scratch;
  ct.fill(0, 0, n);
  has.fill(0, 0, n);
  const accumulate = (v: number, c: number | null, i: number): void => {
    if (c === null || !active[v]) return;
    if (checkNaN && !Number.isFinite(c)) {
      throw new NaNError(
        `${checkNaN.caller}: checkNaN: the reverse rule of ${primitiveOf(op[i]).name} (for v${i}) gave ${c} for its argument v${v} ` +
          `(argument values ${[val[a[i]], val[b[i]]].slice(0, ARITY[op[i]]).join(", ")}; inputs: real).`,
      );
    }
    if (has[v]) ct[v] += c;
    else {
      ct[v] = c;
      has[v] = 1;
    }
  };
  term.output.atoms.forEach((v, j) => accumulate(v, seeds[j], v));
  if (checkNaN === null) inlined(term, active, ct, has, val);
  for (let i = n - 1; i >= 0; i--) {
    if (has[i] !== 1 || op[i] < FIRST_PRIMITIVE) continue;
    const spec = scalarSpec(op[i]);
    const c = ct[i];
    if (spec.arity === 1) {
      accumulate(a[i], spec.reverse(numeric, val[a[i]], val[i], c), i);
    } else {
      if (active[a[i]]) accumulate(a[i], spec.reverse[0](numeric, val[a[i]], val[b[i]], val[i], c), i);
      if (active[b[i]]) accumulate(b[i], spec.reverse[1](numeric, val[a[i]], val[b[i]], val[i], c), i);
    }
  }
  const results: number[] = [];
  for (const v of term.params[0].atoms) results.push(has[v] ? ct[v] : 0);
  return results;
}

/** Buffers of one sweep over a term; a replay reuses them call after call (compile.ts). */
export interface Scratch {
  readonly active: Uint8Array;
  readonly ct: Float64Array;
  readonly has: Uint8Array;
}

export function newScratch(term: TraceTerm): Scratch {
  const n = term.tape.length;
  return { active: activity(term), ct: new Float64Array(n), has: new Uint8Array(n) };
}

/** Scratch from the column pool, as long as the tape's columns (a length the pool keeps). */
function pooledScratch(term: TraceTerm): Scratch {
  const length = Math.max(term.tape.length, term.tape.op.length);
  return { active: activity(term, takeColumn(Uint8Array, length)), ct: takeColumn(Float64Array, length), has: takeColumn(Uint8Array, length) };
}

const { add: ADD, sub: SUB, mul: MUL, div: DIV, neg: NEG, exp: EXP, log: LOG, sin: SIN, cos: COS, tanh: TANH, sqrt: SQRT, square: SQUARE, sigmoid: SIGMOID } = CODE;

/**
 * The sweep for the most common primitives with their rules written out on numbers, in
 * the same operations and order as scalar.ts's rules (so the results are the same
 * numbers): a switch in one loop instead of a call to a rule through the numeric
 * emitter per instruction. It stops at the first other instruction, leaving it (and the
 * rest) to the general loop. Tests hold both loops equal to the symbolic sweep.
 */
function inlined(term: TraceTerm, active: Uint8Array, ct: Float64Array, has: Uint8Array, val: Float64Array): void {
  const { op, a, b, length: n } = term.tape;
  const add = (v: number, c: number): void => {
    if (!active[v]) return;
    if (has[v]) ct[v] += c;
    else {
      ct[v] = c;
      has[v] = 1;
    }
  };
  for (let i = n - 1; i >= 0; i--) {
    if (!has[i] || op[i] < FIRST_PRIMITIVE) continue;
    const c = ct[i];
    const x = a[i];
    const y = b[i];
    switch (op[i]) {
      case ADD:
        add(x, c);
        add(y, c);
        break;
      case SUB:
        add(x, c);
        add(y, -c);
        break;
      case MUL:
        add(x, c * val[y]);
        add(y, c * val[x]);
        break;
      case DIV:
        add(x, c / val[y]);
        if (active[y]) add(y, -((c * val[i]) / val[y]));
        break;
      case NEG:
        add(x, -c);
        break;
      case EXP:
        add(x, c * val[i]);
        break;
      case LOG:
        add(x, c / val[x]);
        break;
      case SIN:
        add(x, c * Math.cos(val[x]));
        break;
      case COS:
        add(x, -(c * Math.sin(val[x])));
        break;
      case TANH:
        add(x, c * (1 - val[i] * val[i]));
        break;
      case SQRT:
        add(x, c / (2 * val[i]));
        break;
      case SQUARE:
        add(x, c * (2 * val[x]));
        break;
      case SIGMOID:
        add(x, c * (val[i] * (1 - val[i])));
        break;
      default:
        // the general loop takes over from here (it skips what is marked done, 2)
        return;
    }
    has[i] = 2;
  }
}
