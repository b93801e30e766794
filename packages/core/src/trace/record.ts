/**
 * @file Recording: a primitive applied to operands, recorded in the innermost trace
 * among them (or computed at once when none is traced), and decisions on their values.
 */
import ndarray from "ndarray";
import { broadcastDims, kernels, predicates, showDims, type Dims, type PredicateName } from "@wengert/ops";
import { WengertError } from "../errors.js";
import { describe } from "../structure.js";
import { atCallSite, MADE_BY_WENGERT, shapeError } from "./callsite.js";
import { ARITY, CODE, CONST, IS_TENSOR_OP, KERNELS, KINKS, primitiveOf, tensorSpec } from "./opcodes.js";
import { applyLifted, Lifted, liftedPrimal } from "./lifted.js";
import { compute } from "./tape.js";
import { denseNdarray, isConcreteTensor, plainDense, toDense, type ConcreteTensor, type Dense } from "./host-tensor.js";
import { atomOf, isOperand, isScalar, live, Real, Tensor, valueOf, type Operand, type Scalar } from "./traced.js";
import { recorder, type Trace } from "./tracer.js";
import { mayMakeCode } from "../jit/javascript.js";

function checkArg(x: unknown, name: string, position: number): asserts x is Scalar {
  if (!isScalar(x)) throw new WengertError(`${name}: argument ${position} is ${describe(x)}; expected a number or a traced real.`);
}

/** The innermost live trace among the traced arguments, or null if none is traced. */
function innermost(code: number | PredicateName, a: Scalar, b: Scalar): Trace | null {
  const ta = typeof a === "number" ? null : a.trace.closed ? live(a, nameOf(code)) : a.trace;
  const tb = typeof b === "number" ? null : b.trace.closed ? live(b, nameOf(code)) : b.trace;
  if (ta === null) return recorder(tb);
  if (tb === null) return recorder(ta);
  return recorder(ta.level >= tb.level ? ta : tb);
}

const nameOf = (code: number | PredicateName): string => (typeof code === "number" ? primitiveOf(code).name : code);

/** Apply the primitive `name` to scalars: a number if none is traced, else a traced real. */
export function applyUnary(code: number, x: Scalar): Scalar;
export function applyUnary(code: number, x: unknown): Operand;
export function applyUnary(code: number, x: unknown): Operand {
  // the common case first: a real of an open trace without checks
  if (x instanceof Real && x.trace.fast && KINKS[code] === undefined) return new Real(x.trace, x.trace.tape.append(code, x.atom));
  const p = primitiveOf(code);
  if (typeof x === "number") return (p.spec.forward as (x: number) => number)(x);
  if (x instanceof Real) {
    const t = recorder(live(x, p.name));
    return new Real(t, t.record(code, atomOf(t, x)));
  }
  // a user rule's real under another emitter (lifted.ts)
  if (x instanceof Lifted) return applyLifted(code, p.name, [x]) as unknown as Scalar;
  return applyGeneric(code, [x], undefined);
}

export function applyBinary(code: number, a: Scalar, b: Scalar): Scalar;
export function applyBinary(code: number, a: unknown, b: unknown): Operand;
export function applyBinary(code: number, a: unknown, b: unknown): Operand {
  // the common cases first: reals of one open trace without checks (binary
  // primitives have no kinks), or one of them and a number
  if (a instanceof Real) {
    const t = a.trace;
    if (t.fast) {
      if (b instanceof Real && b.trace === t) return new Real(t, t.tape.append(code, a.atom, b.atom));
      if (typeof b === "number") return new Real(t, t.tape.appendWithLiteral(code, a.atom, b, false));
    }
  } else if (typeof a === "number" && b instanceof Real && b.trace.fast) {
    const t = b.trace;
    return new Real(t, t.tape.appendWithLiteral(code, b.atom, a, true));
  }
  if ((a instanceof Real || typeof a === "number") && (b instanceof Real || typeof b === "number")) {
    const t = innermost(code, a, b);
    if (t === null) return KERNELS[code](a as number, b as number);
    return new Real(t, t.record(code, atomOf(t, a), atomOf(t, b)));
  }
  if (a instanceof Lifted || b instanceof Lifted) return applyLifted(code, primitiveOf(code).name, [a, b]) as unknown as Scalar;
  return applyGeneric(code, [a, b], undefined);
}

/**
 * The user function of a primitive on reals, with the common case (a real of an open,
 * unchecked trace) written out for this primitive alone: its code a literal, its kernel
 * called at one site. Made from source so that each primitive is a function of its own:
 * closures made at one site share their type feedback, and the optimising compiler
 * then neither inlines them into the user's code (it sees many closures) nor the kernel
 * into them (it sees every kernel). Anything else goes to `applyUnary`/`applyBinary`.
 * The function the user calls holds the case of numbers alone and calls the traced case
 * (`onValues`, of the same name): small enough that the optimising compiler inlines it,
 * kernel and all, into the user's arithmetic on numbers, which then stays unboxed (lstm's
 * objective, its recurrence on numbers, took twice as long with the traced case inline).
 * Where no code may be made (mayMakeCode), `generic` is the function. Its frames are named
 * `wengert:primitive/<name>` (a sourceURL), which callsite.ts knows for wengert's.
 */
export function specialised(
  code: number,
  kernel: (a: number, b: number) => number,
  generic: (a: unknown, b: unknown) => unknown,
): (a: unknown, b: unknown) => unknown {
  if (!mayMakeCode()) return generic;
  const name = primitiveOf(code).name;
  if (ARITY[code] === 1) {
    // a kinked primitive checks its argument on every call (applyUnary)
    const traced =
      KINKS[code] !== undefined
        ? ""
        : `if (x instanceof Real) {
    const t = x.trace;
    if (t.fast) {
      const tape = t.tape;
      const a = x.atom;
      const op = tape.op;
      const val = tape.val;
      if (op[a] !== ${CONST} && tape.length < tape.ready) {
        ${appended(code, "a", "0", "kernel(val[a])")}
      }
      return new Real(t, tape.appendUnary(${code}, a, kernel(val[a])));
    }
  }`;
    const source = `const onValues = function ${name}(x) {
  ${traced}
  return applyUnary(${code}, x);
};
return function ${name}(x) {
  if (typeof x === "number") return kernel(x);
  return onValues(x);
};
//# sourceURL=${MADE_BY_WENGERT}primitive/${name}`;
    return new Function("kernel", "Real", "applyUnary", source)(kernel, Real, applyUnary);
  }
  // Two reals of one trace, the common case, alone here, written out with no call (appended); a
  // real and a number go to `others`' `withLiteral`, anything else to applyBinary. Kept apart,
  // the literal cases' code is not inlined into this function: the optimising compiler inlines
  // a function into the user's traced code within a budget of bytecode, counting what it had
  // inlined into it, and inlined the tape's columns are loaded once for several operations.
  const source = `const withLiteral = ${literalCase(code)};
const others = function ${name}(a, b) {
  if (a instanceof Real) {
    if (typeof b === "number" && a.trace.fast) return new Real(a.trace, withLiteral(a.trace.tape, a.atom, b, false));
  } else if (typeof a === "number" && b instanceof Real && b.trace.fast) return new Real(b.trace, withLiteral(b.trace.tape, b.atom, a, true));
  return applyBinary(${code}, a, b);
};
const onValues = function ${name}(a, b) {
  if (a instanceof Real && b instanceof Real) {
    const t = a.trace;
    if (b.trace === t && t.fast) {
      const tape = t.tape;
      const x = a.atom;
      const y = b.atom;
      const op = tape.op;
      const val = tape.val;
      if (op[x] !== ${CONST} && op[y] !== ${CONST} && tape.length < tape.ready) {
        ${appended(code, "x", "y", "kernel(val[x], val[y])")}
      }
      return new Real(t, tape.appendBinary(${code}, x, y, kernel(val[x], val[y])));
    }
  }
  return others(a, b);
};
return function ${name}(a, b) {
  if (typeof a === "number" && typeof b === "number") return kernel(a, b);
  return onValues(a, b);
};
//# sourceURL=${MADE_BY_WENGERT}primitive/${name}`;
  return new Function("kernel", "Real", "applyBinary", source)(kernel, Real, applyBinary);
}

/**
 * The source of the common case of a primitive on variables that are not literals, where the
 * tape has room (`Tape.ready`): the instruction written into the columns (in scope: `t`,
 * `tape`, `op`, `val`), and its traced real returned. What `Tape.appendUnary` and
 * `appendBinary` record then, with no call between the checks and the stores: called or
 * inlined, the traced case makes none (a call's columns are loaded again after it).
 */
function appended(code: number, a: string, b: string, value: string): string {
  return `const k = tape.length++;
        op[k] = ${code};
        tape.a[k] = ${a};
        tape.b[k] = ${b};
        val[k] = ${value};
        return new Real(t, k);`;
}

/**
 * The source of a binary primitive's case of a traced real and a number `c` (`first`: c is
 * the first argument): what `Tape.appendWithLiteral` records, with the folds that cannot
 * apply to this primitive left out when the source is written. Only x + (−0), x · 1 and x⁰
 * fold (tape.ts isLiteralPower, identityArgument): for add, mul and pow a literal that may
 * fold (0, 1) and a literal variable x take appendWithLiteral itself.
 */
function literalCase(code: number): string {
  const mayFold = code === CODE.add ? "c === 0" : code === CODE.mul ? "c === 1" : code === CODE.pow ? "c === 0" : "false";
  return `function withLiteral(tape, x, c, first) {
  if (${mayFold} || tape.op[x] === ${CONST}) return tape.appendWithLiteral(${code}, x, c, first);
  const k = tape.constant(c);
  return first ? tape.appendUnfolded(${code}, k, x, kernel(c, tape.val[x])) : tape.appendUnfolded(${code}, x, k, kernel(tape.val[x], c));
}`;
}

/**
 * A predicate's user function, its common case (a real of an open trace that keeps no
 * guards, against a number, not a tie) written out for it, as `specialised` does for
 * primitives; `generic` otherwise.
 */
export function specialisedPredicate(name: PredicateName, generic: (a: unknown, b: unknown) => unknown): (a: unknown, b: unknown) => unknown {
  if (!mayMakeCode()) return generic;
  const source = `return function ${name}(a, b) {
  if (a instanceof Real && typeof b === "number") {
    const t = a.trace;
    if (t.fast && !t.keepsGuards) {
      const va = t.tape.val[a.atom];
      if (va !== b) return test(va, b);
    }
  }
  return generic(a, b);
};
//# sourceURL=${MADE_BY_WENGERT}predicate/${name}`;
  return new Function("test", "Real", "generic", source)(predicates[name].test, Real, generic);
}

/** A traced value of trace t for its variable v: a traced tensor, or a traced real. */
export function wrap(t: Trace, v: number): Real | Tensor {
  return t.tape.isTensor(v) ? new Tensor(t, v) : new Real(t, v);
}

/** A value computed outside any trace, as the user gets it: a number or an ndarray. */
function concrete(y: number | Float64Array, dims: Dims): Operand {
  return typeof y === "number" ? y : denseNdarray(y, dims);
}

/** The concrete value of an operand: a number, or a tensor's dense data (read, not copied). */
export function primalOf(v: Operand, where: string): number | Dense {
  if (typeof v === "number") return v;
  if (v instanceof Real) return valueOf(v);
  if (v instanceof Tensor) return { dims: v.dims, data: v.trace.tape.buf(v.atom) };
  return toDense(v, where);
}

/** The concrete value of an operand as dense data (a real as dims []), for kernels. */
function denseOf(v: Operand, where: string): Dense {
  const p = primalOf(v, where);
  return typeof p === "number" ? { dims: [], data: Float64Array.of(p) } : p;
}

/**
 * Apply any primitive (elementwise or tensor) to operands: recorded in the innermost
 * trace among them, or computed at once when none is traced.
 */
export function applyGeneric(code: number, args: readonly unknown[], params: unknown): Operand {
  // plain loops, the name looked up only for a message: this runs once per tensor operation
  let traced = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a instanceof Tensor || a instanceof Real) traced = true;
    else if (!isOperand(a)) {
      const expected = "a number, a tensor (ndarray or Float64Array) or a traced value";
      throw new WengertError(`${primitiveOf(code).name}: argument ${i + 1} is ${describe(a)}; expected ${expected}${atCallSite()}.`);
    }
  }
  const name = primitiveOf(code).name;
  const t = traced ? innermostOf(name, args as Operand[]) : null;
  if (t !== null) {
    const atoms = new Array<number>(args.length);
    for (let i = 0; i < args.length; i++) atoms[i] = atomOf(t, args[i] as Operand);
    const v = IS_TENSOR_OP[code] ? t.recordOp(code, atoms, params) : t.record(code, atoms[0], atoms[1] ?? 0);
    return wrap(t, v);
  }
  // untraced: computed at once, on each argument's value (a number for a real) and dims
  const n = args.length;
  const values = new Array<number | Float64Array>(n);
  const argDims = new Array<Dims>(n);
  for (let i = 0; i < n; i++) {
    const a = args[i] as Operand;
    if (typeof a === "number") {
      values[i] = a;
      argDims[i] = SCALAR;
    } else {
      // (the place named for a message only when the tensor is not a common one)
      const d = (isConcreteTensor(a) ? plainDense(a) : null) ?? denseOf(a, `${name}'s argument ${i + 1}`);
      values[i] = d.dims.length === 0 ? d.data[0] : d.data;
      argDims[i] = d.dims;
    }
  }
  if (IS_TENSOR_OP[code]) {
    const dims = tensorSpec(code).shape(argDims, params);
    if (typeof dims === "string") throw shapeError(name, dims, argDims);
    return concrete(compute(code, values, argDims, params, dims), dims);
  }
  const kernel = KERNELS[code];
  // the kernel itself, as compute (tape.ts) passes it: map knows Math.tanh, exp… and runs a loop of its own
  if (n === 1) {
    const x = values[0];
    // (a 0-d ndarray's element is a number here; its result is again a 0-d ndarray)
    return concrete(kernels.map(typeof x === "number" ? Float64Array.of(x) : x, kernel as (x: number) => number), argDims[0]);
  }
  const dims = broadcastDims(argDims[0], argDims[1]);
  if (typeof dims === "string") throw shapeError(name, dims);
  return concrete(kernels.zip(values[0], argDims[0], values[1], argDims[1], dims, kernel), dims);
}

const SCALAR: Dims = [];

function innermostOf(name: string, args: readonly Operand[]): Trace | null {
  let best: Trace | null = null;
  for (const a of args) {
    if (a instanceof Real || a instanceof Tensor) {
      const t = live(a, name);
      if (best === null || t.level > best.level) best = t;
    }
  }
  return recorder(best);
}

/**
 * Decide a predicate on concrete values, reporting a tie (equal arguments) to the trace.
 * `test` is the predicate's (callers that decide often look it up once).
 */
export function decide(name: PredicateName, a: unknown, b: unknown, test = predicates[name].test): boolean {
  // the common case first: a real of an open trace that keeps no guards, against a number, not a tie
  if (a instanceof Real && typeof b === "number" && a.trace.fast && !a.trace.keepsGuards) {
    const va = a.trace.tape.val[a.atom];
    if (va !== b) return test(va, b);
  }
  if (a instanceof Lifted || b instanceof Lifted) return test(liftedPrimal(a, name), liftedPrimal(b, name));
  checkArg(a, name, 1);
  checkArg(b, name, 2);
  const t = innermost(name, a, b);
  const va = typeof a === "number" ? a : valueOf(a);
  const vb = typeof b === "number" ? b : valueOf(b);
  const outcome = test(va, vb);
  const distinct = !oneVariable(a, b);
  if (t !== null && va === vb && distinct) {
    t.tie(`${name}(${va}, ${vb}) was decided at a tie (both sides equal), taking the branch where ${va} ${predicates[name].symbol} ${vb} is ${outcome}`);
  }
  // the decision, for replaying the trace at another point (compile.ts): it must come out the same
  if (t !== null && t.keepsGuards) t.guards.push({ pred: name, a: atomOf(t, a), b: atomOf(t, b), outcome, distinct });
  return outcome;
}

/**
 * Whether a and b are one variable (x against x, or x · 1, which the tape folds to x):
 * equal at every point, so equal values there are no tie.
 */
function oneVariable(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  const traced = (a instanceof Real && b instanceof Real) || (a instanceof Tensor && b instanceof Tensor);
  return traced && a.trace === b.trace && a.atom === b.atom;
}

/**
 * A 0/1 mask `pred(a, b)` elementwise (broadcasting) from concrete values: a decision,
 * no derivative. A tie (equal elements) is reported to the innermost trace involved.
 * The mask enters the trace as a literal, which no guard checks: a trace whose values
 * decided a mask is never replayed (opaque, as when a value is read).
 */
export function decideTensor(name: PredicateName, a: unknown, b: unknown): ConcreteTensor {
  for (const [v, i] of [[a, 1], [b, 2]] as const) {
    if (!isOperand(v)) throw new WengertError(`${name}: argument ${i} is ${describe(v)}; expected a number, a tensor or a traced value${atCallSite()}.`);
  }
  const t = innermostOf(name, [a as Operand, b as Operand]);
  if (t !== null) t.opaque = true;
  const da = denseOf(a as Operand, name);
  const db = denseOf(b as Operand, name);
  const dims = broadcastDims(da.dims, db.dims);
  if (typeof dims === "string") throw shapeError(name, dims);
  const test = predicates[name].test;
  const va = da.dims.length === 0 ? da.data[0] : da.data;
  const vb = db.dims.length === 0 ? db.data[0] : db.data;
  if (t !== null && !oneVariable(a, b)) {
    const ties = kernels.zip(va, da.dims, vb, db.dims, dims, (x, y) => (x === y ? 1 : 0));
    const at = ties.indexOf(1);
    const both = at >= 0 && va instanceof Float64Array ? va[at % va.length] : va;
    if (at >= 0) t.tie(`${name} was decided at a tie (element ${at} of the mask ${showDims(dims)}: both sides ${both})`);
  }
  return ndarray(kernels.zip(va, da.dims, vb, db.dims, dims, (x, y) => (test(x, y) ? 1 : 0)), [...dims]) as ConcreteTensor;
}

/** The concrete value of a scalar (drops the derivative: use on purpose). */
export function primal(x: Scalar): number {
  if (x instanceof Lifted) return liftedPrimal(x, "primal");
  checkArg(x, "primal", 1);
  return typeof x === "number" ? x : x.value;
}
