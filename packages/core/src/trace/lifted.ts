/**
 * @file The reals of a user rule run by an emitter whose values are neither numbers nor
 * traced reals: series (taylor), dual numbers (hvp), JavaScript source (compiled code),
 * trees (the Fig. 6 reference).
 *
 * A built-in rule calls primitives as methods of the emitter it is given. A user rule
 * (defineOp) calls the public functions (`mul`, `cos`, `lt`), which work on numbers and
 * traced reals; under any other emitter each value the rule sees is a `Lifted`, and a
 * public function given one applies its primitive through that emitter, by code. So a
 * user primitive's rules run wherever a built-in's do, and the built-ins and the user's
 * primitives are one kind of declaration (opcodes.ts registers both).
 */
import type { Emitter } from "@wengert/ops";
import { DefineOpError, TracedOperatorError } from "../errors.js";
import { describe } from "../structure.js";

/** An emitter that applies any primitive by its code, as a user rule needs (its own primitive has no method). */
export type CodeEmitter<A> = Emitter<A> & {
  /** Primitive `code` on `a` (and `b`, for a binary one). */
  readonly apply: (code: number, a: A, b: A) => A;
  /** The value a decision reads, where the values have one (a series' first coefficient, a dual's value). */
  readonly primal?: (a: A) => number;
  /** What runs the rule, for messages ("taylor", "compiled code (compileGrad)", …). */
  readonly context: string;
};

/** One real of a user rule under a CodeEmitter: its value there, and the rule, for messages. */
export class Lifted {
  constructor(
    readonly e: CodeEmitter<unknown>,
    readonly v: unknown,
    /** "the reverse rule of cube". */
    readonly rule: string,
  ) {}

  [Symbol.toPrimitive](): never {
    throw new TracedOperatorError(
      `${this.rule} used a JavaScript operator (+, *, <, Math.sin …) on one of its values, which here (${this.e.context}) is not a number. ` +
        `Write the rule with wengert's functions (add, mul, lt, sin, …).`,
    );
  }
}

/** Primitive `code` (named `name`) of a rule's arguments, one of them at least a Lifted: applied through their emitter. */
export function applyLifted(code: number, name: string, args: readonly unknown[]): Lifted {
  const first = args.find((v): v is Lifted => v instanceof Lifted)!;
  const e = first.e;
  const vs = args.map((v, i) => {
    if (typeof v === "number") return e.lit(v);
    if (v instanceof Lifted && v.e === e) return v.v;
    throw new DefineOpError(
      `${first.rule}: argument ${i + 1} of ${name} is ${describe(v)}, which the rule took from outside its arguments. ` +
        `A rule may compute only with its arguments (args, y, ct) and numbers.`,
    );
  });
  return new Lifted(e, e.apply(code, vs[0], vs[vs.length - 1]), first.rule);
}

/** The value `what` (a predicate, primal) reads of a rule's real: a number, or a Lifted whose emitter has values. */
export function liftedPrimal(v: unknown, what: string): number {
  if (typeof v === "number") return v;
  if (!(v instanceof Lifted)) throw new DefineOpError(`${what}: ${describe(v)} mixed with the values of a rule it did not come from.`);
  if (v.e.primal !== undefined) return v.e.primal(v.v);
  throw new DefineOpError(
    `${v.rule}: ${what} reads a value, and in ${v.e.context} the rule runs on none (it is turned into a term once for every point). ` +
      `Write the rule without decisions and without primal().`,
  );
}
