/**
 * @file Pullbacks, Jacobians and Hessians, from one trace each.
 *
 * Results keep the structure of `x` and `f(x)`: a Jacobian is shaped like `f(x)`, each
 * of its leaves holding a value shaped like `x` (the derivatives of that output).
 */
import { differentiate } from "../diff/differentiate.js";
import { replay } from "../diff/place.js";
import { pushforward } from "../diff/pushforward.js";
import { run } from "../eval/evaluate.js";
import { ClosedTraceError } from "../errors.js";
import { countLeaves, unflatten, type Shape } from "../structure.js";
import type { Tape } from "../trace/tape.js";
import type { TraceTerm } from "../trace/term.js";
import { primal, Real, type Scalar } from "../trace/tracer.js";
import { grad } from "./rd.js";
import { jvpAs } from "./forward.js";
import { apply, isOutermost, leavesLike, trace, type Fn, type RdOptions, type TracedFn, type Traced } from "./transform.js";

const caller = (traced: TracedFn): string => traced.trace.caller;
const oneHot = (shape: Shape, i: number): unknown => unflatten(shape, Array.from({ length: countLeaves(shape) }, (_, j) => (j === i ? 1 : 0)));

/** Every traced value the trace depends on must still be live when it is transformed again. */
function checkLive(caller: string, traced: TracedFn): void {
  for (const v of [...traced.point, ...traced.term.tape.frees]) {
    if (v instanceof Real && v.trace.closed) {
      throw new ClosedTraceError(`${caller}: the value x (or a value f used) was traced by a ${v.trace.caller} call that has returned; call ${caller} again inside it.`);
    }
  }
}

/**
 * `[f(x), pullback]`: the pullback maps a seed shaped like `f(x)` to `rd(f, x, seed)`
 * without tracing `f` again. At the outermost level the derivative term is built once
 * and re-evaluated for each seed.
 */
export function vjp<const X>(f: (x: Traced<X>) => unknown, x: X, options?: RdOptions): [unknown, (seed: unknown) => Traced<X>] {
  const traced = trace("vjp", f as Fn, x, options);
  const { term } = traced;
  const out = term.output.shape;
  const xs = term.params[0].shape;
  let built: TraceTerm | null = null;
  const pullback = (seed: unknown): Traced<X> => {
    checkLive("vjp's pullback", traced);
    const leaves = leavesLike("vjp's pullback", "seed", out, seed, "f(x)");
    if (built !== null && leaves.every((s) => typeof s === "number") && traced.point.every((p) => typeof p === "number")) {
      // re-evaluate W.R_V(x. C) at the new seed, on a copy of its buffer
      const tape: Tape = built.tape;
      const vals = tape.val.slice(0, tape.length);
      run(tape, vals, term.tape.length, [...traced.point.map(primal), ...(leaves as number[])]);
      return unflatten(xs, built.output.atoms.map((v) => vals[v])) as Traced<X>;
    }
    const applied = apply(traced, differentiate, { name: "W", shape: out, leaves }, xs);
    if (applied.term !== null && term.tape.frees.length === 0) built = applied.term;
    return unflatten(xs, applied.results) as Traced<X>;
  };
  // f(x): the recorded values at the outermost level, else replayed into the enclosing trace
  const value = isOutermost(traced, [])
    ? term.output.atoms.map((v) => term.tape.val[v])
    : apply(traced, replay, { name: "*", shape: { kind: "tuple", items: [] }, leaves: [] }, out).outputs;
  return [unflatten(out, value), pullback];
}

/** The Jacobian by reverse mode: one pullback per output leaf, one trace in all. */
export function jacrev<const X>(f: (x: Traced<X>) => unknown, x: X, options?: RdOptions): unknown {
  return byReverse(trace("jacrev", f as Fn, x, options));
}

/** The Jacobian by forward mode: one jvp per input leaf, one trace in all. */
export function jacfwd<const X>(f: (x: Traced<X>) => unknown, x: X, options?: RdOptions): unknown {
  return byForward(trace("jacfwd", f as Fn, x, options));
}

function byReverse(traced: TracedFn): unknown {
  const out = traced.term.output.shape;
  const xs = traced.term.params[0].shape;
  const rows = Array.from({ length: countLeaves(out) }, (_, j) => {
    const seed = leavesLike(caller(traced), "seed", out, oneHot(out, j), "f(x)");
    return unflatten(xs, apply(traced, differentiate, { name: "W", shape: out, leaves: seed }, xs).results);
  });
  return unflatten(out, rows);
}

function byForward(traced: TracedFn): unknown {
  const out = traced.term.output.shape;
  const xs = traced.term.params[0].shape;
  const columns: Scalar[][] = Array.from({ length: countLeaves(xs) }, (_, i) => {
    const v = leavesLike(caller(traced), "v", xs, oneHot(xs, i), "x");
    return apply(traced, pushforward, { name: "v", shape: xs, leaves: v }, out).results;
  });
  const rows = Array.from({ length: countLeaves(out) }, (_, j) => unflatten(xs, columns.map((c) => c[j])));
  return unflatten(out, rows);
}

/** The Jacobian, by whichever mode needs fewer sweeps (reverse when outputs ≤ inputs). */
export function jacobian<const X>(f: (x: Traced<X>) => unknown, x: X, options?: RdOptions): unknown {
  const traced = trace("jacobian", f as Fn, x, options);
  const m = countLeaves(traced.term.output.shape);
  const n = countLeaves(traced.term.params[0].shape);
  return m <= n ? byReverse(traced) : byForward(traced);
}

/** The Hessian of a real-valued `f`, forward over reverse: the Jacobian of `grad f` by jvps. */
export function hessian<const X>(f: (x: Traced<X>) => Scalar, x: X, options?: RdOptions): unknown {
  return byForward(trace("hessian", ((y: Traced<X>) => grad(f, y as X, options)) as Fn, x, options));
}

/** The Hessian-vector product `H·v`, forward over reverse: `jvp` of `grad f` along `v`. */
export function hvp<const X>(f: (x: Traced<X>) => Scalar, x: X, v: unknown, options?: RdOptions): Traced<X> {
  return jvpAs("hvp", ((y: Traced<X>) => grad(f, y as X, options)) as Fn, x, v, options)[1] as Traced<X>;
}
