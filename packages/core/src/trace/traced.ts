/**
 * @file Traced values: a traced real, a traced tensor, each its trace and its variable
 * there, and the operands primitives take (numbers and tensors the user holds too).
 *
 * A traced value lives while the transformation that traced it runs (`live`); a value of
 * an enclosing trace used in an inner one is a free variable there (`atomOf`).
 */
import { showDims, type Dims } from "@wengert/ops";
import ndarray from "ndarray";
import { ClosedTraceError, TracedOperatorError } from "../errors.js";
import { REAL, type Shape } from "../structure.js";
import { concreteShape, isConcreteTensor, ownedCopy, toDense, type ConcreteTensor, type NdArray } from "./host-tensor.js";
import type { Trace } from "./tracer.js";

/** A real number being traced: its trace and its variable there. */
export class Real {
  // `declare`d and assigned in the constructor: one is made per traced operation, and class
  // field definitions would cost a define per field
  declare readonly trace: Trace;
  declare readonly atom: number;

  constructor(trace: Trace, atom: number) {
    (this as { trace: Trace }).trace = trace;
    (this as { atom: number }).atom = atom;
  }

  /**
   * The concrete value (what conditionals in user code decide on). Reading it is a
   * decision wengert cannot see, so a trace that read it is never replayed (compile.ts).
   */
  get value(): number {
    // after its rd returned, a trace's tape may have been recycled (columns.ts): the value is gone
    if (this.atom >= this.trace.tape.length) live(this, "value");
    this.trace.opaque = true;
    return this.trace.tape.val[this.atom];
  }

  /** JavaScript operators would compute with the value and silently lose the derivative. */
  [Symbol.toPrimitive](hint: string): string {
    if (hint === "string") return String(this.value);
    throw new TracedOperatorError(
      `A traced real (value ${shown(this)}) was used with a JavaScript operator such as +, *, < or Math.sin. ` +
        `That would compute with its value and silently lose the derivative. Use wengert's functions ` +
        `instead (add, mul, lt, sin, …), which work on numbers and traced reals alike; use primal(x) to read the value on purpose.`,
    );
  }

  toString(): string {
    return `Real(${shown(this)})`;
  }

  /**
   * JSON.stringify writes its value, read as String(x) reads it (so a trace that did is
   * never replayed); it walked the whole tape before: 9 MB for 10⁵ steps.
   */
  toJSON(): number {
    return this.value;
  }

  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return this.toString();
  }
}

/** A real, traced or not: what a function used both outside and inside a trace takes and returns. */
export type Scalar = number | Real;

/** A traced real's value for messages ("?" once its tape has been recycled). */
const shown = (r: Real): string => (r.atom < r.trace.tape.length ? String(valueOf(r)) : "?");

/** A traced real's value, read by wengert itself (not a decision of the user's). */
export function valueOf(r: Real): number {
  return r.trace.tape.val[r.atom];
}

/** Whether `v` is a number or a traced real. */
export function isScalar(v: unknown): v is Scalar {
  return typeof v === "number" || v instanceof Real;
}

/** Anything a primitive takes: reals and tensors, traced or not. */
export type Operand = Scalar | Tensor | ConcreteTensor;

export function isOperand(v: unknown): v is Operand {
  return typeof v === "number" || v instanceof Real || v instanceof Tensor || isConcreteTensor(v);
}

/** A traced value of either kind. */
export type TracedValue = Real | Tensor;

/** A traced tensor: its trace and its variable there. */
export class Tensor {
  /** Its dims, fixed when it was traced (kept here: they outlive a recycled tape). */
  readonly dims: Dims;

  constructor(
    readonly trace: Trace,
    readonly atom: number,
  ) {
    this.dims = trace.tape.dims(atom);
  }

  /** The dims of the tensor. */
  get shape(): number[] {
    return [...this.dims];
  }

  /**
   * Its concrete value, as an ndarray copy (what control flow may decide on). As for a
   * real's, reading it is a decision wengert cannot see: the trace is never replayed.
   */
  get value(): NdArray {
    if (this.trace.closed) {
      throw new ClosedTraceError(
        `A traced tensor (dims ${showDims(this.dims)}) was read after the ${this.trace.caller} call that traced it returned; ` +
          `return what you need from f instead.`,
      );
    }
    this.trace.opaque = true;
    return ndarray(this.trace.tape.buf(this.atom).slice(), [...this.dims]);
  }

  [Symbol.toPrimitive](hint: string): string {
    if (hint === "string") return this.toString();
    throw new TracedOperatorError(
      `A traced tensor (dims ${showDims(this.dims)}) was used with a JavaScript operator. ` +
        `Use wengert's functions (add, mul, matmul, sum, …), which work on tensors, numbers and traced values alike.`,
    );
  }

  toString(): string {
    return `Tensor${showDims(this.dims)}`;
  }

  /** JSON.stringify prints it as String does, not its trace. */
  toJSON(): string {
    return this.toString();
  }

  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return this.toString();
  }
}

export function isTensorLike(v: unknown): v is Tensor | ConcreteTensor {
  return v instanceof Tensor || isConcreteTensor(v);
}

export function live(r: Real | Tensor, where: string): Trace {
  if (r.trace.closed) {
    // a tensor keeps its dims; a real's value goes when its tape is recycled (columns.ts)
    const what = r instanceof Tensor ? `dims ${showDims(r.dims)}` : r.atom >= r.trace.tape.length ? "its value gone with its trace" : `value ${valueOf(r)}`;
    throw new ClosedTraceError(
      `${where}: a traced value (v${r.atom}, ${what}) was used after the ${r.trace.caller} call that traced it returned. ` +
        `Traced values live only while their ${r.trace.caller} runs: return what you need from f instead of keeping it outside.`,
    );
  }
  return r.trace;
}

/** The variable standing for `x` in trace `t`: a literal, a variable, or a free one. */
export function atomOf(t: Trace, x: Operand): number {
  if (typeof x === "number") return t.tape.constant(x);
  if (x instanceof Real || x instanceof Tensor) {
    if (x.trace === t) return x.atom;
    t.freeVariables ??= new Map();
    let v = t.freeVariables.get(x);
    if (v === undefined) {
      // a value of an enclosing trace, free here; one of a trace that has returned is dead
      // (its value may be gone with its tape: NaN, silently, as f's output)
      live(x, t.caller);
      const from = x.trace.tape;
      v = x instanceof Real ? t.tape.free(x, valueOf(x)) : t.tape.freeTensor(x, { dims: from.dims(x.atom), data: from.buf(x.atom) });
      t.freeVariables.set(x, v);
    }
    return v;
  }
  // a tensor the user holds (data, a closure's constant): a literal, copied once per trace
  t.constants ??= new Map();
  let v = t.constants.get(x);
  if (v === undefined) {
    const d = toDense(x, "a tensor argument");
    v = t.tape.tensorConstant(ownedCopy(d));
    t.constants.set(x, v);
  }
  return v;
}

/** The structure of a leaf: a real, or a tensor with its dims and container (the user's, kept for what is given back). */
export function leafShape(v: Operand): Shape {
  if (typeof v === "number" || v instanceof Real) return REAL;
  if (v instanceof Tensor) return { kind: "tensor", dims: v.dims, container: "ndarray" };
  return concreteShape(v);
}
