/**
 * @file A finished trace term: its tape, its parameters, its output structure.
 *
 * `traceOf` gives the term `C` of `x:T. C`; `derivativeOf` gives `W.R_V(x:T. C)` with
 * the point and the seed as parameters `x` and `W`, so one term serves any point in
 * the region where the control flow is the same, and any seed.
 */
import { run } from "../eval/evaluate.js";
import { flattenLike, leafShapes, REAL, typeString, unflatten, type Shape } from "../structure.js";
import { concreteShape, fromDense, isConcreteTensor, toDense, type ConcreteTensor, type Dense } from "./host-tensor.js";
import { InputTypeError } from "../errors.js";
import { printTerm } from "./print.js";
import type { Tape } from "./tape.js";

export interface Param {
  readonly name: string;
  readonly shape: Shape;
  /** The `input` variables of its leaves, depth-first. */
  readonly atoms: readonly number[];
}

export interface Output {
  readonly shape: Shape;
  readonly atoms: readonly number[];
}


const isUntraced = (v: unknown): v is number | ConcreteTensor => typeof v === "number" || isConcreteTensor(v);
const untracedShape = (v: number | ConcreteTensor): Shape => (typeof v === "number" ? REAL : concreteShape(v));

/**
 * A finished trace term (the paper's C): its tape, its parameters and its output. `String(t)` prints it
 * in the paper's notation, `t.evaluate(x)` runs it again at another point.
 */
export class TraceTerm {
  constructor(
    readonly tape: Tape,
    readonly params: readonly Param[],
    readonly output: Output,
  ) {}

  /** Number of instructions (variables) in the term. */
  get length(): number {
    return this.tape.length;
  }

  /** Number of primitive instructions: the work of evaluating the term. */
  get primitives(): number {
    return this.tape.countPrimitives();
  }

  toString(): string {
    return printTerm(this);
  }

  /** Evaluate the term at new values of its parameters (in order: `x`, then `W`). */
  evaluate(...args: unknown[]): unknown {
    if (args.length !== this.params.length) {
      const names = this.params.map((p) => p.name).join(", ");
      throw new InputTypeError(`evaluate: this term takes ${this.params.length} argument(s) (${names}), got ${args.length}.`);
    }
    const inputs: (number | Dense)[] = [];
    this.params.forEach((p, i) => {
      const leaves = flattenLike(
        p.shape,
        args[i],
        p.name,
        isUntraced,
        (path, expected, actual) => new InputTypeError(`evaluate: ${path} is ${actual}, expected ${typeString(expected)}.`),
        untracedShape,
      );
      inputs.push(...leaves.map((v) => (typeof v === "number" ? v : toDense(v, `evaluate's ${p.name}`))));
    });
    const vals = new Float64Array(this.tape.length);
    const bufs: Float64Array[] = [];
    run(this.tape, vals, 0, inputs, bufs);
    const shapes = leafShapes(this.output.shape);
    return unflatten(
      this.output.shape,
      this.output.atoms.map((v, j) => {
        const s = shapes[j];
        if (s.kind !== "tensor") return vals[v];
        return fromDense({ dims: this.tape.dims(v), data: bufs[v] ?? this.tape.buf(v) }, s.container);
      }),
    );
  }
}
