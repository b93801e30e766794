/**
 * @file Forward mode and Taylor mode on the trace term.
 */
import { series, type Series } from "@wengert/ops";
import { pushforward } from "../diff/pushforward.js";
import { seriesEmitter } from "../diff/series.js";
import { ArgumentError, NaNError, WengertError } from "../errors.js";
import { showValue, unflatten } from "../structure.js";
import { atCallSite } from "../trace/callsite.js";
import { ARITY, primitiveOf } from "../trace/opcodes.js";
import { scansOfReals, seriesOf } from "../diff/series-term.js";
import { primal } from "../trace/record.js";
import { Real, type Scalar } from "../trace/traced.js";
import { tangentSweep } from "../diff/tangents.js";
import { writeOut } from "../diff/unroll.js";
import { hasScans } from "../trace/scan-ops.js";
import type { RdOptions } from "./options.js";
import { leavesLike, trace, type Fn } from "./tracing.js";
import { emitTransformed, isOutermost } from "./transform.js";
import type { Like, Mode, Output, Traced } from "./types.js";

/**
 * `[f(x), J·v]` by one forward sweep over the trace of `f` at `x`. `v` is shaped like
 * `x`; `J·v` like `f(x)`. Nests with `rd` in both directions (hvp is `jvp` of `grad`).
 */
export function jvp<const X, Y, const V extends Like<X>>(
  f: (x: Traced<X>) => Y,
  x: X,
  v: V,
  options?: RdOptions,
): [Output<Y, Mode<[X, V]>>, Output<Y, Mode<[X, V]>>] {
  return jvpAs("jvp", f as Fn, x, v, options) as [Output<Y, Mode<[X, V]>>, Output<Y, Mode<[X, V]>>];
}

/** jvp, named `caller` in messages (hvp is one). */
export function jvpAs(caller: string, f: Fn, x: unknown, v: unknown, options?: RdOptions): [unknown, unknown] {
  const traced = trace(caller, f, x, options);
  const xs = traced.term.params[0].shape;
  const out = traced.term.output.shape;
  const tangents = leavesLike(caller, "v", xs, v, "x");
  const { term } = traced;
  if (term.tape.tensorCount === 0 && !traced.trace.settings.checkNaN && isOutermost(traced, tangents)) {
    // nothing will look at the tangent term: evaluate it without building it
    const dt = tangentSweep(term, (tangents as Scalar[]).map(primal));
    const value = unflatten(out, term.output.atoms.map((a) => term.tape.val[a]));
    term.tape.recycle(); // nobody holds the term: its columns serve the next trace
    return [value, unflatten(out, dt)];
  }
  // nobody keeps the term either: its columns (and at the outermost level its buffers) are recycled
  const { outputs, results } = emitTransformed(traced, pushforward, { extra: { name: "v", shape: xs, leaves: tangents }, resultShape: out, keep: "neither" });
  return [unflatten(out, outputs), unflatten(out, results)];
}

/**
 * The highest order taylor computes: 170! is the last factorial finite in float64. The
 * series holds dj / j!, so past 170 every derivative would be ±Infinity, or 0 where the
 * coefficient underflows (sin's from order 178 on): wrong, not just large. The work is
 * O(k²) per primitive (the Cauchy products of the series), and a trace keeps k + 1
 * numbers per instruction.
 */
export const MAX_TAYLOR_ORDER = 170;

function checkOrder(k: unknown): void {
  if (Number.isInteger(k) && (k as number) >= 0 && (k as number) <= MAX_TAYLOR_ORDER) return;
  const high = Number.isInteger(k) && (k as number) > MAX_TAYLOR_ORDER;
  const why = high ? `: j! overflows float64 past j = ${MAX_TAYLOR_ORDER}, where every derivative would be ±Infinity or a wrong 0` : "";
  const fix = high ? `Ask for at most ${MAX_TAYLOR_ORDER} orders` : "Pass the highest order wanted, a whole number: taylor(f, x, v, 3) gives [f, d1, d2, d3]";
  throw new ArgumentError(`taylor: the order k is ${showValue(k)}; expected an integer from 0 to ${MAX_TAYLOR_ORDER}${why}${atCallSite()}. ${fix}.`);
}

/**
 * The derivatives of `t ↦ f(x + t·v)` at 0 up to order `k`: `[f(x), d1, …, dk]`, each
 * shaped like `f(x)`. One pass over the trace with truncated Taylor series in place of
 * numbers (univariate Taylor arithmetic, papers/002), O(k²) work per primitive.
 */
export function taylor<const X, Y, const V extends Like<X>>(f: (x: Traced<X>) => Y, x: X, v: V, k: number, options?: RdOptions): Output<Y, "host">[] {
  checkOrder(k);
  const traced = trace("taylor", f as Fn, x, options);
  // Taylor arithmetic runs over a term of reals, its scans as scans of series (diff/series-term.ts)
  // where their bodies are reals, else written out (diff/unroll.ts)
  const term = scansOfReals(traced.term.tape) || !hasScans(traced.term.tape) ? traced.term : writeOut(traced.term).term;
  if (!scansOfReals(term.tape)) {
    throw new WengertError(
      "taylor: f computes with tensors; Taylor mode covers reals only so far. " +
        "Use nested jvp for higher directional derivatives of tensor programs.",
    );
  }
  const tangents = leavesLike("taylor", "v", term.params[0].shape, v, "x") as Scalar[];
  const outer = [...traced.point, ...tangents, ...term.tape.frees].find((s) => s instanceof Real && !s.trace.closed);
  if (outer) {
    throw new WengertError(
      "taylor: x, v or a value f uses is traced by an enclosing rd; taylor computes numbers and cannot be differentiated. " +
        "Use nested jvp or rd inside rd for derivatives of derivatives.",
    );
  }
  const K = k + 1;
  const e = seriesEmitter(K);
  // j! for j ≤ k (finite: k ≤ MAX_TAYLOR_ORDER)
  const factorials = [1];
  for (let j = 1; j < K; j++) factorials.push(factorials[j - 1] * j);
  const derivative = (c: Series, j: number): number => c[j] * factorials[j];
  const out = term.output;
  const tape = term.tape;
  // order 0 alone: the values recorded (and checked while tracing)
  if (K === 1) return [unflatten(out.shape, out.atoms.map((v) => tape.val[v]))] as Output<Y, "host">[];
  const check = (c: Series, v: number): void => {
    for (let j = 1; j < K; j++) {
      if (Number.isFinite(c[j])) continue;
      const args = [tape.val[tape.a[v]], tape.val[tape.b[v]]].slice(0, ARITY[tape.op[v]]).join(", ");
      throw new NaNError(
        `taylor: checkNaN: the derivative of order ${j} of ${primitiveOf(tape.op[v]).name} (for v${v}) along v is ${derivative(c, j)} ` +
          `(argument values ${args}).`,
      );
    }
  };
  const s = seriesOf(
    tape,
    (k, v) => {
      const c = series.constant(tape.val[v], K);
      c[1] = primal(tangents[k]);
      return c;
    },
    { e, K, check: traced.trace.settings.checkNaN ? check : null },
  );
  const derivatives: unknown[] = [];
  for (let j = 0; j < K; j++) derivatives.push(unflatten(out.shape, out.atoms.map((v) => derivative(s[v], j))));
  return derivatives as Output<Y, "host">[];
}
