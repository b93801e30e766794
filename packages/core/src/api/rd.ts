/**
 * @file `rd` and the functions defined from it: the public differentiation API.
 *
 * `rd(f, x, seed)` is the paper's `W.rd_V(x:T. N)` with `N` the body of `f`, `V = x`
 * and `W = seed`, evaluated as Fig. 2 prescribes: symbolically evaluate (trace) `f` at
 * `x` to a trace term `C`, symbolically differentiate `C` (Fig. 6, differentiate.ts),
 * evaluate the result. When an enclosing `rd` is tracing something the derivative
 * depends on, the derivative term is emitted into that enclosing trace instead (Fig. 4's
 * rule for `W.rd_V(x:T.N) ⇝ W.R_V(x:T.C)`), so the enclosing `rd` differentiates it.
 */
import { differentiate, type Derivative } from "../diff/differentiate.js";
import { run } from "../eval/evaluate.js";
import { OutputTypeError, SeedMismatchError, WengertError } from "../errors.js";
import { flatten, flattenLike, typeString, unflatten, type Shape } from "../structure.js";
import { TraceTerm } from "../trace/term.js";
import type { Tape } from "../trace/tape.js";
import { closeTrace, isScalar, live, openTrace, primal, Real, TIE_MODES, type Scalar, type Trace, type TieMode } from "../trace/tracer.js";

export interface RdOptions {
  /**
   * What to do when a predicate is decided at a tie or a kinked primitive is evaluated
   * at its kink while tracing (where the derivative is not defined): warn once per
   * call (default), throw a TieError, or say nothing.
   */
  readonly ties?: TieMode;
}

/** A value as `f` receives it: numbers become scalars that may be traced. */
export type Traced<X> = X extends number
  ? Scalar
  : X extends Scalar
    ? Scalar
    : X extends readonly unknown[]
      ? { -readonly [K in keyof X]: Traced<X[K]> }
      : X extends object
        ? { -readonly [K in keyof X]: Traced<X[K]> }
        : never;

interface Traced1 {
  readonly trace: Trace;
  readonly term: TraceTerm;
  /** The leaves of `x` as given (numbers, or traced reals of enclosing traces). */
  readonly point: Scalar[];
}

function checkOptions(caller: string, options: RdOptions): TieMode {
  const ties = options.ties ?? "warn";
  if (!TIE_MODES.includes(ties)) {
    throw new WengertError(`${caller}: options.ties is ${JSON.stringify(ties)}; expected one of ${TIE_MODES.map((m) => `"${m}"`).join(", ")}.`);
  }
  return ties;
}

/** Symbolic evaluation of `f` at `x`: the trace term `C` of `x:T. C`. */
function trace(caller: string, f: (x: never) => unknown, x: unknown, options: RdOptions): Traced1 {
  if (typeof f !== "function") throw new WengertError(`${caller}: f is ${typeof f}; expected the function to differentiate.`);
  const tieMode = checkOptions(caller, options);
  const { shape, leaves } = flatten(x, "x", isScalar, `${caller}'s input`);
  for (const leaf of leaves) if (leaf instanceof Real) live(leaf, caller);
  const t = openTrace(tieMode, caller);
  let term: TraceTerm;
  try {
    const inputs = leaves.map((leaf, k) => new Real(t, t.tape.input(k, primal(leaf))));
    const y = f(unflatten(shape, inputs) as never);
    const out = flatten(y, "f(x)", isScalar, "the output of f", (m) => new OutputTypeError(`${caller}: ${m}`));
    const outAtoms = out.leaves.map((leaf) => t.atomOf(leaf));
    term = new TraceTerm(t.tape, [{ name: "x", shape, atoms: inputs.map((r) => r.atom) }], { shape: out.shape, atoms: outAtoms });
  } finally {
    closeTrace(t);
  }
  if (t.ties.length > 0 && tieMode === "warn") {
    const more = t.ties.length > 1 ? ` (and ${t.ties.length - 1} more)` : "";
    console.warn(
      `wengert: ${caller}: ${t.ties[0]}${more}. The derivative is not defined there; the result uses wengert's convention. ` +
        `Set ties to "error" to stop instead, or "ignore" to silence this (option ties, CLI --ties).`,
    );
  }
  return { trace: t, term, point: leaves };
}

function seedLeaves(caller: string, term: TraceTerm, seed: unknown): Scalar[] {
  const out = term.output.shape;
  return flattenLike(out, seed, "seed", isScalar, (path, expected, actual) =>
    new SeedMismatchError(
      `${caller}: ${path} has type ${actual}, expected ${typeString(expected)}` +
        (path === "seed" ? "" : ` (f(x) has type ${typeString(out)})`) +
        `. Pass a seed shaped like f(x).`,
    ),
  );
}

/** `W.R_V(x. C)` as a term of its own, with the point `x` and seed `W` as parameters. */
function derivativeTerm(term: TraceTerm, seeds: readonly number[]): { tape: Tape; d: Derivative; term: TraceTerm } {
  const D = term.tape.extend();
  const nx = term.params[0].atoms.length;
  const W = seeds.map((s, j) => D.input(nx + j, s));
  const d = differentiate(term, D, W, null);
  const x = term.params[0];
  const dterm = new TraceTerm(D, [x, { name: "W", shape: term.output.shape, atoms: W }], { shape: x.shape, atoms: d.cotangents });
  return { tape: D, d, term: dterm };
}

/** The innermost live trace that the derivative depends on, or null. */
function enclosing(traced: Traced1, seed: readonly Scalar[]): Trace | null {
  let target: Trace | null = null;
  const consider = (v: unknown): void => {
    if (v instanceof Real && !v.trace.closed && (target === null || v.trace.level > target.level)) target = v.trace;
  };
  traced.term.tape.frees.forEach(consider);
  traced.point.forEach(consider);
  seed.forEach(consider);
  return target;
}

/** Called at an outermost `rd` with its trace term and derivative term (for the CLI's --trace). */
export type Inspect = (trace: TraceTerm, derivative: TraceTerm) => void;

/** `rd` with the primal value as well; the seed is chosen once the output type is known. */
export function rdWithValue(
  caller: string,
  f: (x: never) => unknown,
  x: unknown,
  seedFor: (out: Shape) => unknown,
  options: RdOptions = {},
  inspect?: Inspect,
): [unknown, unknown] {
  const traced = trace(caller, f, x, options);
  const { term } = traced;
  const seed = seedLeaves(caller, term, seedFor(term.output.shape));
  for (const s of seed) if (s instanceof Real) live(s, caller);
  const xShape = term.params[0].shape;
  const target = enclosing(traced, seed);
  if (target === null) {
    // Outermost: evaluate the derivative term on the buffer that already holds C's values.
    const { tape, d, term: dterm } = derivativeTerm(term, seed.map(primal));
    run(tape, tape.val, term.tape.length);
    inspect?.(term, dterm);
    return [unflatten(term.output.shape, d.outputs.map((v) => tape.val[v])), unflatten(xShape, d.cotangents.map((v) => tape.val[v]))];
  }
  // Nested: the derivative term becomes part of the enclosing trace.
  const t: Trace = target;
  const d = differentiate(term, t, seed.map((s) => t.atomOf(s)), {
    inputs: traced.point.map((p) => t.atomOf(p)),
    free: (v) => t.atomOf(v as Real),
  });
  const wrap = (v: number): Real => new Real(t, v);
  return [unflatten(term.output.shape, d.outputs.map(wrap)), unflatten(xShape, d.cotangents.map(wrap))];
}

/**
 * `W.rd_V(x:T. N)`: the reverse derivative of `f` at `x`, applied to `seed` (shaped
 * like `f(x)`). The result is shaped like `x`.
 */
export function rd<const X>(f: (x: Traced<X>) => unknown, x: X, seed: unknown, options?: RdOptions): Traced<X> {
  return rdWithValue("rd", f as (x: never) => unknown, x, () => seed, options)[1] as Traced<X>;
}

const realSeed = (caller: string) => (out: Shape) => {
  if (out.kind !== "real") {
    throw new OutputTypeError(
      `${caller}: f returned ${typeString(out)} at x; ${caller} needs f to return a real. ` +
        `Use rd(f, x, seed) with a seed shaped like f(x).`,
    );
  }
  return 1;
};

/** The gradient `1.rd_x(x. f(x))` of a real-valued `f`. */
export function grad<const X>(f: (x: Traced<X>) => Scalar, x: X, options?: RdOptions): Traced<X> {
  return rdWithValue("grad", f as (x: never) => unknown, x, realSeed("grad"), options)[1] as Traced<X>;
}

/** `[f(x), grad(f, x)]` from one trace. */
export function valueAndGrad<const X>(f: (x: Traced<X>) => Scalar, x: X, options?: RdOptions): [Scalar, Traced<X>] {
  return rdWithValue("valueAndGrad", f as (x: never) => unknown, x, realSeed("valueAndGrad"), options) as [Scalar, Traced<X>];
}

/**
 * The forward derivative `J·v`, defined as the paper defines `fd` (Sec. 2, after
 * Christianson): `v.fd_x(x. N) = v.rd_0(u. u.rd_x(x. N))`. The inner `rd` is linear in
 * its seed `u`; differentiating it with respect to `u` transposes it back.
 */
export function fd<const X>(f: (x: Traced<X>) => unknown, x: X, v: X | Traced<X>, options?: RdOptions): unknown {
  const out = flatten(f(x as Traced<X>), "f(x)", isScalar, "the output of f", (m) => new OutputTypeError(`fd: ${m}`));
  const zero = unflatten(out.shape, out.leaves.map(() => 0));
  return rdWithValue("fd", (u: unknown) => rdWithValue("fd", f as (x: never) => unknown, x, () => u, options)[1], zero, () => v, options)[1];
}

/** The trace term `C` of `f` at `x` (printable with `String(term)`, evaluable at other points). */
export function traceOf<const X>(f: (x: Traced<X>) => unknown, x: X, options?: RdOptions): TraceTerm {
  return trace("traceOf", f as (x: never) => unknown, x, options ?? {}).term;
}

/** The derivative term `W.R_V(x. C)`, with `x` and `W` as its parameters. */
export function derivativeOf<const X>(f: (x: Traced<X>) => unknown, x: X, seed: unknown, options?: RdOptions): TraceTerm {
  const { term } = trace("derivativeOf", f as (x: never) => unknown, x, options ?? {});
  return derivativeTerm(term, seedLeaves("derivativeOf", term, seed).map(primal)).term;
}
