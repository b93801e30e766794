/**
 * @file `defineOp`: a user primitive that works everywhere a built-in one does.
 *
 * The user writes the reverse rule (and optionally the tangent rule) with wengert's
 * public functions, as `([x], y, ct) => [mul(ct, cos(x))]`. defineOp turns the spec into
 * the declaration a built-in primitive has (ops/scalar.ts: kernel, reverse rule as
 * `(e, x, y, ct) => …` over any emitter, tangent rule, Taylor rule derived from the
 * reverse one) and registers it as the built-ins are (trace/opcodes.ts). Its rules then
 * run under every emitter: on numbers (an outermost sweep); on traced reals of the trace
 * a derivative is emitted into, so that what they compute is recorded there and is
 * differentiated again (to any order); and on the values of Taylor mode, hvp's sweep,
 * compiled code and the Fig. 6 reference (trace/lifted.ts). It prints by its name, and
 * the term language calls it by its name.
 */
import type { BinaryOp, Emitter, ScalarOp, TangentRule, UnaryOp } from "@wengert/ops";
import { numeric, PREDICATE_NAMES } from "@wengert/ops";
import { DefineOpError, NaNError, WengertError } from "../errors.js";
import { describe } from "../structure.js";
import { Lifted, type CodeEmitter } from "../trace/lifted.js";
import { codeOf, registerPrimitive } from "../trace/opcodes.js";
import { applyBinary, applyUnary } from "../trace/record.js";
import { atomOf, isScalar, live, Real, type Scalar } from "../trace/traced.js";
import type { Trace } from "../trace/tracer.js";

/** What `defineOp` takes: a scalar primitive's name, kernel and rules (docs/define-op.md). */
export interface OpSpec {
  /** The name it prints with and is called by in the term language. */
  readonly name: string;
  /** The kernel on numbers; its number of parameters (1 or 2) is the primitive's arity. */
  readonly forward: (...args: number[]) => number;
  /** Cotangents of the arguments, from the arguments, the output y and its cotangent. */
  readonly reverse: (args: Scalar[], y: Scalar, ct: Scalar) => Scalar[];
  /** The output's tangent from the arguments' tangents (optional: derived from `reverse`). */
  readonly tangent?: (args: Scalar[], tangents: Scalar[], y: Scalar) => Scalar;
}


const KEYWORDS = new Set(["let", "letrec", "in", "if", "then", "else", "true", "false", "real", "unit", "fst", "snd", "grad"]);

function validate(spec: OpSpec): 1 | 2 {
  const fail = (what: string): never => {
    throw new DefineOpError(`defineOp${typeof spec?.name === "string" && spec.name !== "" ? ` ${spec.name}` : ""}: ${what}`);
  };
  if (typeof spec !== "object" || spec === null) fail(`the spec is ${describe(spec)}; expected { name, forward, reverse }.`);
  if (typeof spec.name !== "string" || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(spec.name)) {
    fail(`name is ${describe(spec.name)}; expected an identifier such as "cube" (it is how the term language calls it).`);
  }
  if (KEYWORDS.has(spec.name) || (PREDICATE_NAMES as readonly string[]).includes(spec.name) || /^(rd|fd|grad)_/.test(spec.name)) {
    fail(`${spec.name} is a keyword or predicate of the term language; choose another name.`);
  }
  if (codeOf(spec.name) !== undefined) fail(`a primitive named ${spec.name} exists already.`);
  if (spec.forward === undefined) fail("forward is missing: the kernel on numbers, e.g. forward: (x) => x * x * x.");
  if (typeof spec.forward !== "function") fail(`forward is ${describe(spec.forward)}; expected the kernel on numbers, e.g. forward: (x) => x * x * x.`);
  if (spec.forward.length !== 1 && spec.forward.length !== 2) {
    fail(`forward takes ${spec.forward.length} parameters; a primitive takes 1 or 2 reals.`);
  }
  if (spec.reverse === undefined) {
    fail("reverse is missing: the reverse rule ([x], y, ct) => [cotangent of x], written with wengert's functions (mul, cos, …).");
  }
  if (typeof spec.reverse !== "function") fail(`reverse is ${describe(spec.reverse)}; expected the reverse rule ([x], y, ct) => [cotangent of x].`);
  if (spec.tangent !== undefined && typeof spec.tangent !== "function") fail(`tangent is ${describe(spec.tangent)}; expected a function or nothing.`);
  return spec.forward.length as 1 | 2;
}

/** The trace a symbolic emitter emits into (see emitterFor), or undefined for another emitter. */
const sinkOf = <A>(e: Emitter<A>): Trace | undefined => (e as unknown as { sink?: Trace }).sink;

/** The emitter as one that applies primitives by code (lifted.ts), as every emitter but the numeric one and a trace's is. */
function codeEmitter<A>(e: Emitter<A>, name: string): CodeEmitter<A> {
  if ("apply" in e) return e as CodeEmitter<A>;
  throw new DefineOpError(`${name}: its rules were run by an emitter that applies no primitive by code; every emitter of wengert's does (an internal error).`);
}

/**
 * Run a user rule under a CodeEmitter: its reals are Lifted values of that emitter, its
 * results (numbers, or what it computed from its arguments) the emitter's values.
 */
function runLifted<A>(name: string, which: string, e: CodeEmitter<A>, count: number, run: (lift: (v: A) => Scalar) => unknown): A[] {
  const rule = `the ${which} rule of ${name}`;
  const lift = (v: A): Scalar => new Lifted(e as CodeEmitter<unknown>, v, rule) as unknown as Scalar;
  return checkResults(name, which, run(lift), count).map((r: unknown, i) => {
    if (typeof r === "number") return e.lit(r);
    if (r instanceof Lifted && r.e === (e as CodeEmitter<unknown>)) return r.v as A;
    throw new DefineOpError(
      `${name}: the ${which} rule's result ${i + 1} is ${describe(r)}, which the rule took from outside its arguments. ` +
        `A rule may compute only with its arguments (args, y, ct) and numbers.`,
    );
  });
}

/**
 * Run a user rule with the trace's NaN checks held: a rule computes every argument's
 * result, and those not needed (a constant argument's) may be infinite harmlessly.
 */
function quietly<R>(t: Trace, run: () => R): R {
  t.quiet++;
  try {
    return run();
  } finally {
    t.quiet--;
  }
}

/** With checkNaN, a needed result of a user rule must be finite. */
function checkFinite(t: Trace, atom: number, what: string): void {
  const v = t.tape.val[atom];
  if (t.checksNaN() && !Number.isFinite(v)) {
    throw new NaNError(`${t.nanCaller ?? t.caller}: checkNaN: ${what} gave ${v}.`);
  }
}

/** Check a user rule's results: `count` scalars. */
function checkResults(name: string, which: string, results: unknown, count: number): Scalar[] {
  if (!Array.isArray(results) || results.length !== count) {
    throw new DefineOpError(
      `${name}: the ${which} rule returned ${describe(results)}; ` +
        `expected an array of ${count} ${which === "tangent" ? "tangent" : "cotangent(s), one per argument"}.`,
    );
  }
  results.forEach((r, i) => {
    if (!isScalar(r) && !(r instanceof Lifted)) {
      throw new DefineOpError(`${name}: the ${which} rule's result ${i} is ${describe(r)}; expected a number or a traced real.`);
    }
  });
  return results as Scalar[];
}

/**
 * A rule run on numbers (the sweep of an outermost rd) must give numbers: a traced real
 * there is one the rule took from elsewhere, dead (ClosedTraceError) or of an enclosing rd
 * that this derivative does not reach (it was taken as a TracedOperatorError).
 */
function numbersOnly(name: string, which: string, results: Scalar[]): number[] {
  results.forEach((r, i) => {
    if (typeof r === "number") return;
    if (r instanceof Lifted) {
      throw new DefineOpError(
        `${name}: the ${which} rule's result ${i + 1} is a value of another rule's; ` +
          "a rule may compute only with its arguments (args, y, ct) and numbers.",
      );
    }
    live(r, `${name}'s ${which} rule`);
    throw new DefineOpError(
      `${name}: the ${which} rule's result ${i + 1} is a value traced by an enclosing ${r.trace.caller}, which the rule took from outside ` +
        `its arguments; here it runs on numbers. A rule may compute only with its arguments (args, y, ct) and numbers.`,
    );
  });
  return results as number[];
}

/** Run a user rule on traced reals of the sink; check and return its results as atoms. */
function runRule(name: string, which: string, t: Trace, results: unknown, count: number): number[] {
  return checkResults(name, which, results, count).map((r) => atomOf(t, r));
}

/** Calls of user primitives' reverse rules on numbers: kept results serve only the next call. */
let reverseCalls = 0;

/** A user primitive as a function: of one or two arguments, as its `forward`. */
export type UserOp = { (a: number, b?: number): number; (a: Real, b?: Scalar): Real; (a: Scalar, b: Real): Real; (a: Scalar, b?: Scalar): Scalar };

/** Define a primitive; returns the function that applies it to numbers and traced reals. */
export function defineOp(spec: OpSpec): UserOp {
  const arity = validate(spec);
  const { name } = spec;
  // The rule gives every argument's cotangent at once; the sweep asks per argument, so
  // the results are kept for the second argument of the same instruction. When a
  // derivative is emitted, the emitter is the sink's own. On numbers it is one for the
  // whole process, and results kept there served the next grad (a rule reading a changed
  // value gave the old one; −0 took +0's cotangent): there they serve only the call that
  // comes right after, for argument 2.
  let memo: { e: unknown; key: unknown[]; results: unknown[] } | null = null;
  let numericMemo: { key: number[]; results: number[]; call: number } | null = null;
  const reverseAll = <A>(e: Emitter<A>, args: A[], y: A, ct: A, k: number): A[] => {
    if (e === (numeric as unknown)) {
      // on numbers (the reverse sweep of an outermost rd) the rule computes numbers
      const key = [...(args as number[]), y as number, ct as number];
      const call = ++reverseCalls;
      const m = numericMemo;
      numericMemo = null;
      if (k === 1 && m !== null && m.call === call - 1 && m.key.every((v, i) => Object.is(v, key[i]))) return m.results as A[];
      const results = numbersOnly(name, "reverse", checkResults(name, "reverse", spec.reverse(args as number[], y as number, ct as number), arity));
      if (k === 0 && arity === 2) numericMemo = { key, results, call };
      return results as A[];
    }
    const t = sinkOf(e);
    // under another emitter, no memo: its values (a dual's slots) may be reused for others
    if (t === undefined) return runLifted(name, "reverse", codeEmitter(e, name), arity, (lift) => spec.reverse(args.map(lift), lift(y), lift(ct)));
    const key = [...args, y, ct];
    if (memo && memo.e === e && memo.key.every((v, i) => v === key[i])) return memo.results as A[];
    const wrap = (v: A) => new Real(t, v as unknown as number);
    const results = quietly(t, () => runRule(name, "reverse", t, spec.reverse(args.map(wrap), wrap(y), wrap(ct)), arity)) as unknown as A[];
    memo = { e, key, results };
    return results;
  };
  /** The cotangent of argument k, checked when the trace checks for NaN. */
  const reverseOf = <A>(e: Emitter<A>, k: number, args: A[], y: A, ct: A): A => {
    const r = reverseAll(e, args, y, ct, k)[k];
    const t = sinkOf(e);
    if (t !== undefined) checkFinite(t, r as unknown as number, `the reverse rule of ${name} for its argument ${k + 1}`);
    return r;
  };
  const userTangent = spec.tangent;
  const tangent: TangentRule | undefined = userTangent
    ? <A>(e: Emitter<A>, args: readonly A[], y: A, tangents: readonly (A | null)[]): A | null => {
        const of = (lift: (v: A) => Scalar) => [userTangent(args.map(lift), tangents.map((d) => (d === null ? 0 : lift(d))), lift(y))];
        if (e === (numeric as unknown)) {
          return numbersOnly(name, "tangent", checkResults(name, "tangent", of((v) => v as unknown as number), 1))[0] as unknown as A;
        }
        const t = sinkOf(e);
        if (t === undefined) return runLifted(name, "tangent", codeEmitter(e, name), 1, of)[0];
        const wrap = (v: A) => new Real(t, v as unknown as number);
        const r = quietly(t, () => runRule(name, "tangent", t, of(wrap), 1)[0]);
        checkFinite(t, r, `the tangent rule of ${name}`);
        return r as unknown as A;
      }
    : undefined;
  // the kernel's result is checked as the rules' are: a forgotten return gave NaN, silently
  const result = (y: unknown): number => {
    if (typeof y === "number") return y;
    throw new DefineOpError(`${name}: forward returned ${describe(y)}; expected a number (a forgotten return?).`);
  };
  const forward = spec.forward;
  const op: ScalarOp =
    arity === 1
      ? ({
          arity: 1,
          forward: (x: number) => result(forward(x)),
          reverse: (e, x, y, ct) => reverseOf(e, 0, [x], y, ct),
          tangent,
          taylor: "derived",
        } satisfies UnaryOp)
      : ({
          arity: 2,
          forward: (a: number, b: number) => result(forward(a, b)),
          reverse: [(e, a, b, y, ct) => reverseOf(e, 0, [a, b], y, ct), (e, a, b, y, ct) => reverseOf(e, 1, [a, b], y, ct)],
          tangent,
          taylor: "derived",
        } satisfies BinaryOp);
  const code = registerPrimitive(name, op);
  // on reals only: its rules are written for reals (on a tensor they would run elementwise
  // on nothing, and every derivative came out 0)
  const scalar = (v: unknown, position: number): Scalar => {
    if (isScalar(v)) return v;
    if (v instanceof Lifted) return v as unknown as Scalar;
    throw new WengertError(
      `${name}: argument ${position} is ${describe(v)}; a user primitive (defineOp) applies to numbers and traced reals. ` +
        `On a tensor, write it with wengert's tensor operations, or apply it to each element (index).`,
    );
  };
  const fn = arity === 1 ? (x: Scalar) => applyUnary(code, scalar(x, 1)) : (a: Scalar, b: Scalar) => applyBinary(code, scalar(a, 1), scalar(b, 2));
  Object.defineProperty(fn, "name", { value: name });
  return fn as UserOp;
}
