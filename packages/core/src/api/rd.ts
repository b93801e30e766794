/**
 * @file `rd` and the functions defined from it.
 *
 * `rd(f, x, seed)` is the paper's `W.rd_V(x:T. N)` with `N` the body of `f`, `V = x`
 * and `W = seed`, evaluated as Fig. 2 prescribes: symbolically evaluate (trace) `f` at
 * `x` to a trace term `C`, symbolically differentiate `C` (Fig. 6, differentiate.ts),
 * evaluate the result; inside an enclosing `rd`, contribute it to the enclosing trace.
 */
import { size } from "@wengert/ops";
import { differentiate } from "../diff/differentiate.js";
import { reverseSweep } from "../diff/sweep.js";
import { OutputTypeError } from "../errors.js";
import { leafShapes, typeString, unflatten, type Shape } from "../structure.js";
import { fromDense } from "../trace/host-tensor.js";
import type { TraceTerm } from "../trace/term.js";
import { primal } from "../trace/record.js";
import type { Scalar } from "../trace/traced.js";
import { checkOptionKeys, type RdOptions } from "./options.js";
import { leavesLike, trace, type Fn, type TracedFn } from "./tracing.js";
import { emitTransformed, isOutermost, type Inspect } from "./transform.js";
import type { Cotangent, Like, Mode, Output, RealIn, Traced } from "./types.js";

export type { RdOptions } from "./options.js";
export type { Traced, Cotangent } from "./types.js";

/** `rd` with the primal value as well; the seed is chosen once the output type is known. */
export function rdWithValue(
  caller: string,
  f: Fn,
  x: unknown,
  seedFor: (out: Shape) => unknown,
  options: RdOptions = {},
  inspect?: Inspect,
): [unknown, unknown] {
  return rdOfTrace(caller, trace(caller, f, x, options, inspect === undefined ? "gradient" : "transform"), seedFor, inspect);
}

/** The second half of `rdWithValue`, once f is traced: differentiate and evaluate (the term language traces on its trampoline). */
export function rdOfTrace(caller: string, traced: TracedFn, seedFor: (out: Shape) => unknown, inspect?: Inspect): [unknown, unknown] {
  const { term } = traced;
  const out = term.output.shape;
  // f's values deferred while it was traced ("gradient"): computed with the derivative, by emitTransformed
  const seed = leavesLike(caller, "seed", out, seedFor(out), "f(x)");
  if (inspect === undefined && term.tape.tensorCount === 0 && isOutermost(traced, seed)) {
    // nothing will look at the derivative term: evaluate it without building it
    const cotangents = reverseSweep(term, (seed as Scalar[]).map(primal), traced.trace.settings.checkNaN ? { caller } : null);
    const value = unflatten(out, term.output.atoms.map((v) => term.tape.val[v]));
    term.tape.recycle(); // nobody holds the term: its columns serve the next trace
    return [value, unflatten(term.params[0].shape, cotangents)];
  }
  const { outputs, results } = emitTransformed(traced, differentiate, {
    extra: { name: "W", shape: out, leaves: seed },
    resultShape: traced.term.params[0].shape,
    inspect,
    keep: inspect === undefined ? "neither" : "both",
  });
  return [unflatten(out, outputs), unflatten(traced.term.params[0].shape, results)];
}

/**
 * `W.rd_V(x:T. N)`: the reverse derivative of `f` at `x`, applied to `seed` (shaped
 * like `f(x)`). The result is shaped like `x`.
 */
export function rd<const X, Y, const S extends Like<Y>>(f: (x: Traced<X>) => Y, x: X, seed: S, options?: RdOptions): Cotangent<X, S> {
  return rdWithValue("rd", f as Fn, x, () => seed, options)[1] as Cotangent<X, S>;
}

export const realSeed = (caller: string) => (out: Shape) => {
  if (out.kind !== "real") {
    throw new OutputTypeError(
      `${caller}: f returned ${typeString(out)} at x; ${caller} needs f to return a real. ` +
        `Use rd(f, x, seed) with a seed shaped like f(x).`,
    );
  }
  return 1;
};

/** The gradient `1.rd_x(x. f(x))` of a real-valued `f`. */
export function grad<const X>(f: (x: Traced<X>) => Scalar, x: X, options?: RdOptions): Cotangent<X> {
  return rdWithValue("grad", f as Fn, x, realSeed("grad"), options)[1] as Cotangent<X>;
}

/** `[f(x), grad(f, x)]` from one trace. */
export function valueAndGrad<const X>(f: (x: Traced<X>) => Scalar, x: X, options?: RdOptions): [RealIn<Mode<X>>, Cotangent<X>] {
  return rdWithValue("valueAndGrad", f as Fn, x, realSeed("valueAndGrad"), options) as [RealIn<Mode<X>>, Cotangent<X>];
}

/**
 * The forward derivative `J·v`, defined as the paper defines `fd` (Sec. 2, after
 * Christianson): `v.fd_x(x. N) = v.rd_0(u. u.rd_x(x. N))`. The inner `rd` is linear in
 * its seed `u`; differentiating it with respect to `u` transposes it back.
 */
export function fd<const X, Y, const V extends Like<X>>(f: (x: Traced<X>) => Y, x: X, v: V, options?: RdOptions): Output<Y, Mode<[X, V]>> {
  // the point u = 0 is shaped like f(x): learnt from a trace of f, under the caller's
  // options (maxTraceLength, checkNaN; ties are reported by the trace that follows)
  if (options !== undefined) checkOptionKeys("fd", options);
  const { term } = trace("fd", f as Fn, x, { ...options, ties: "ignore" });
  const out = term.output;
  // v is checked here, against x: below it is the outer rd's seed, which would be described as one shaped like f(x)
  leavesLike("fd", "v", term.params[0].shape, v, "x");
  term.tape.releaseBuffers();
  term.tape.recycle();
  const zeroLeaf = (s: Shape): unknown =>
    s.kind === "tensor" ? fromDense({ dims: s.dims, data: new Float64Array(size(s.dims)) }, s.container) : 0;
  const zero = unflatten(out.shape, leafShapes(out.shape).map(zeroLeaf));
  return rdWithValue("fd", (u: unknown) => rdWithValue("fd", f as Fn, x, () => u, options)[1], zero, () => v, options)[1] as Output<Y, Mode<[X, V]>>;
}

/** The trace term `C` of `f` at `x` (printable with `String(term)`, evaluable at other points). */
export function traceOf<const X>(f: (x: Traced<X>) => unknown, x: X, options?: RdOptions): TraceTerm {
  return trace("traceOf", f as Fn, x, options).term;
}

/** The derivative term `W.R_V(x. C)`, with `x` and `W` as its parameters. */
export function derivativeOf<const X, Y, const S extends Like<Y>>(f: (x: Traced<X>) => Y, x: X, seed: S, options?: RdOptions): TraceTerm {
  const traced = trace("derivativeOf", f as Fn, x, options);
  const out = traced.term.output.shape;
  const seedLeaves = leavesLike("derivativeOf", "seed", out, seed, "f(x)");
  // Built as at the outermost level even inside an rd: the term is for inspection.
  return emitTransformed(traced, differentiate, {
    extra: { name: "W", shape: out, leaves: seedLeaves },
    resultShape: traced.term.params[0].shape,
    outermost: true,
  }).term!;
}
