/**
 * @file Dual numbers in columns, and every scalar primitive on them: the emitter that
 * hvp-sweep.ts runs the reverse rules with.
 *
 * A dual number is a value with its tangent along a direction v (or the symbolic zero
 * tangent). A reverse rule run on duals gives a cotangent contribution together with its
 * derivative along v, which is what the outer forward sweep of `jvp(grad f)` computes
 * for the instructions that rule emits into the outer trace. Nothing here is written per
 * primitive: a primitive's value is its kernel, its tangent that of tangents.ts
 * (`scalarTangent`: the spec's tangent rule, or its reverse rules), exactly the numbers
 * the outer forward sweep would compute for the emitted instruction.
 *
 * Duals live in slots of three columns, not in objects: a sweep makes a few per
 * instruction, and a rule's temporaries are dropped (`reset`) as soon as its result
 * has been read, so the columns stay small and nothing is allocated per operation.
 */
import { BINARY_NAMES, UNARY_NAMES } from "@wengert/ops";
import type { CodeEmitter } from "../trace/lifted.js";
import { ARITY, CODE, KERNELS } from "../trace/opcodes.js";
import { giveColumn, takeColumn } from "../trace/columns.js";
import { binaryKernel, identityArgument, isLiteralPower } from "../trace/tape.js";
import { scalarTangent } from "./tangents.js";

/**
 * What a slot holds. A literal is a constant of the term (a CONST instruction): the
 * tape folds operations on literals and `x + 0`, `x · 1` (tape.ts `apply`), and so does
 * this emitter, so that its numbers are those of the term built and swept, to the bit
 * (`x + 0` is `x`, not `x + 0`, which differs at −0). A plain value is not a literal
 * but has a zero tangent (it does not depend on v).
 */
export const LITERAL = 0;
export const PLAIN = 1;
export const DUAL = 2;

export class DualColumns {
  val: Float64Array;
  tan: Float64Array;
  kind: Uint8Array;
  /** The next free slot; slots from `base` on are a rule's temporaries. Slots hold nothing until written. */
  top: number;

  constructor(
    /** Slots below it are the caller's, kept across `reset`. */
    readonly base: number,
  ) {
    // from the pool of tape columns: an hvp's are as long as its trace, every call
    const capacity = base + 64;
    this.val = takeColumn(Float64Array, capacity);
    this.tan = takeColumn(Float64Array, capacity);
    this.kind = takeColumn(Uint8Array, capacity);
    this.top = base;
  }

  /** Hand the columns back to the pool, once nothing will read them again. */
  recycle(): void {
    for (const c of [this.val, this.tan, this.kind]) giveColumn(c);
  }

  push(value: number, tangent: number, kind: number): number {
    if (this.top === this.val.length) this.grow();
    const s = this.top++;
    this.val[s] = value;
    this.tan[s] = tangent;
    this.kind[s] = kind;
    return s;
  }

  /** Drop every temporary. */
  reset(): void {
    this.top = this.base;
  }

  private grow(): void {
    const capacity = this.val.length * 2;
    const val = new Float64Array(capacity);
    const tan = new Float64Array(capacity);
    const kind = new Uint8Array(capacity);
    val.set(this.val);
    tan.set(this.tan);
    kind.set(this.kind);
    this.val = val;
    this.tan = tan;
    this.kind = kind;
  }
}

/**
 * The result of `unaryDual` and `binaryDual`: a dual in three numbers rather than a slot
 * (value, tangent, kind), so that hvp-sweep.ts's written-out rules need no slot for a
 * temporary. The emitter below computes through the same two functions.
 */
export const held = { v: 0, t: 0, k: LITERAL };

function hold(v: number, t: number | null, k: number): void {
  held.v = v;
  held.t = t === null ? 0 : t;
  held.k = t === null && k === DUAL ? PLAIN : k;
}

/** Unary primitive `code` of the dual (vx, tx, kx), into `held`. */
export function unaryDual(code: number, vx: number, tx: number, kx: number): void {
  const y = KERNELS[code](vx, 0);
  if (kx !== DUAL) hold(y, 0, kx);
  else hold(y, scalarTangent(code, vx, 0, y, tx, null), DUAL);
}

/**
 * Binary primitive `code` of the duals a and b, folded as the tape folds: 0 or 1 when
 * the result is argument a or b itself (`x + (−0)`, `x · 1`), else -1 with it in `held`
 * (a literal where the tape makes one: both arguments literals, or `x⁰`).
 */
export function binaryDual(code: number, va: number, ta: number, ka: number, vb: number, tb: number, kb: number): -1 | 0 | 1 {
  const y = binaryKernel(code, va, vb);
  if ((ka === LITERAL && kb === LITERAL) || isLiteralPower(code, vb, kb === LITERAL)) {
    hold(y, 0, LITERAL);
    return -1;
  }
  const same = identityArgument(code, va, vb, ka === LITERAL, kb === LITERAL);
  if (same >= 0) return same;
  if (ka !== DUAL && kb !== DUAL) hold(y, 0, PLAIN);
  else hold(y, scalarTangent(code, va, vb, y, ka === DUAL ? ta : null, kb === DUAL ? tb : null), DUAL);
  return -1;
}

/** `binaryDual` with the result in `held` also where it folds to an argument (a copy of it). */
export function binaryHeld(code: number, va: number, ta: number, ka: number, vb: number, tb: number, kb: number): void {
  const same = binaryDual(code, va, ta, ka, vb, tb, kb);
  if (same === 0) hold(va, ta, ka);
  else if (same === 1) hold(vb, tb, kb);
}

/** Primitives as methods on the slots of `d`; each result is a new slot (or an argument's, where the tape folds). */
export function dualEmitter(d: DualColumns): CodeEmitter<number> {
  const unary = (code: number) => (x: number): number => {
    unaryDual(code, d.val[x], d.tan[x], d.kind[x]);
    return d.push(held.v, held.t, held.k);
  };
  const binary = (code: number) => (a: number, b: number): number => {
    const same = binaryDual(code, d.val[a], d.tan[a], d.kind[a], d.val[b], d.tan[b], d.kind[b]);
    return same === 0 ? a : same === 1 ? b : d.push(held.v, held.t, held.k);
  };
  const byCode: ((a: number, b: number) => number)[] = [];
  const apply = (code: number, a: number, b: number): number => (byCode[code] ??= ARITY[code] === 1 ? unary(code) : binary(code))(a, b);
  const e: Record<string, unknown> = { lit: (c: number) => d.push(c, 0, LITERAL), apply, primal: (s: number) => d.val[s], context: "hvp's sweep" };
  for (const name of UNARY_NAMES) e[name] = unary(CODE[name]);
  for (const name of BINARY_NAMES) e[name] = binary(CODE[name]);
  return e as CodeEmitter<number>;
}
