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
import { BINARY_NAMES, UNARY_NAMES, type Emitter } from "@wengert/ops";
import { CODE, KERNELS, scalarSpec } from "../trace/opcodes.js";
import { binaryKernel, identityArgument } from "../trace/tape.js";
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
  /** The next free slot; slots from `base` on are a rule's temporaries. */
  top: number;

  constructor(
    /** Slots below it are the caller's, kept across `reset`. */
    readonly base: number,
  ) {
    const capacity = base + 64;
    this.val = new Float64Array(capacity);
    this.tan = new Float64Array(capacity);
    this.kind = new Uint8Array(capacity);
    this.top = base;
  }

  push(value: number, tangent: number, kind: number): number {
    if (this.top === this.val.length) this.grow();
    const s = this.top++;
    this.val[s] = value;
    this.tan[s] = tangent;
    this.kind[s] = kind;
    return s;
  }

  /** A value with its tangent (null: the symbolic zero). */
  pushTangent(value: number, tangent: number | null): number {
    return tangent === null ? this.push(value, 0, PLAIN) : this.push(value, tangent, DUAL);
  }

  copy(from: number, to: number): void {
    this.val[to] = this.val[from];
    this.tan[to] = this.tan[from];
    this.kind[to] = this.kind[from];
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

/** Primitives as methods on the slots of `d`; each result is a new slot (or an argument's, where the tape folds). */
export function dualEmitter(d: DualColumns): Emitter<number> {
  const e: Record<string, unknown> = { lit: (c: number) => d.push(c, 0, LITERAL) };
  for (const name of UNARY_NAMES) {
    const code = CODE[name];
    const spec = scalarSpec(code);
    const kernel = KERNELS[code];
    e[name] = (x: number): number => {
      const vx = d.val[x];
      const y = kernel(vx, 0);
      const kx = d.kind[x];
      if (kx !== DUAL) return d.push(y, 0, kx);
      return d.pushTangent(y, scalarTangent(spec, vx, 0, y, d.tan[x], null));
    };
  }
  for (const name of BINARY_NAMES) {
    const code = CODE[name];
    const spec = scalarSpec(code);
    e[name] = (a: number, b: number): number => {
      const va = d.val[a];
      const vb = d.val[b];
      const ka = d.kind[a];
      const kb = d.kind[b];
      const y = binaryKernel(code, va, vb);
      if (ka === LITERAL && kb === LITERAL) return d.push(y, 0, LITERAL);
      const same = identityArgument(code, va, vb, ka === LITERAL, kb === LITERAL);
      if (same >= 0) return same === 0 ? a : b;
      if (ka !== DUAL && kb !== DUAL) return d.push(y, 0, PLAIN);
      return d.pushTangent(y, scalarTangent(spec, va, vb, y, ka === DUAL ? d.tan[a] : null, kb === DUAL ? d.tan[b] : null));
    };
  }
  return e as Emitter<number>;
}
