/**
 * @file Forward mode and Taylor mode on the trace term.
 */
import { seriesEmitter, type Emitter, type Series } from "@wengert/ops";
import { pushforward } from "../diff/pushforward.js";
import { NaNError, WengertError } from "../errors.js";
import { unflatten } from "../structure.js";
import { ARITY, CONST, FIRST_PRIMITIVE, FREE, INPUT, primitiveOf } from "../trace/opcodes.js";
import { primal, Real, type Scalar } from "../trace/tracer.js";
import { tangentSweep } from "../diff/tangents.js";
import { writeOut } from "../diff/unroll.js";
import { hasScans } from "../trace/scan-ops.js";
import type { TraceTerm } from "../trace/term.js";
import { apply, isOutermost, leavesLike, trace, type Fn, type RdOptions, type Traced } from "./transform.js";

/**
 * `[f(x), J·v]` by one forward sweep over the trace of `f` at `x`. `v` is shaped like
 * `x`; `J·v` like `f(x)`. Nests with `rd` in both directions (hvp is `jvp` of `grad`).
 */
export function jvp<const X>(f: (x: Traced<X>) => unknown, x: X, v: unknown, options?: RdOptions): [unknown, unknown] {
  return jvpAs("jvp", f as Fn, x, v, options);
}

/** jvp, named `caller` in messages (hvp is one). */
export function jvpAs(caller: string, f: Fn, x: unknown, v: unknown, options?: RdOptions): [unknown, unknown] {
  const traced = trace(caller, f, x, options);
  const xs = traced.term.params[0].shape;
  const out = traced.term.output.shape;
  const tangents = leavesLike(caller, "v", xs, v, "x");
  const { term } = traced;
  if (term.tape.tensorCount === 0 && !traced.trace.settings.checkNaN && !usesUserOps(term) && isOutermost(traced, tangents)) {
    // nothing will look at the tangent term: evaluate it without building it
    const dt = tangentSweep(term, (tangents as Scalar[]).map(primal));
    const value = unflatten(out, term.output.atoms.map((a) => term.tape.val[a]));
    term.tape.recycle(); // nobody holds the term: its columns serve the next trace
    return [value, unflatten(out, dt)];
  }
  // nobody keeps the term either: its columns (and at the outermost level its buffers) are recycled
  const { outputs, results } = apply(traced, pushforward, { name: "v", shape: xs, leaves: tangents }, out, undefined, false, "neither");
  return [unflatten(out, outputs), unflatten(out, results)];
}

/** User primitives' rules run on traced reals (defineOp): they take the symbolic sweep. */
export function usesUserOps(term: TraceTerm): boolean {
  const { op, length } = term.tape;
  for (let i = 0; i < length; i++) if (op[i] >= FIRST_PRIMITIVE && primitiveOf(op[i]).user) return true;
  return false;
}

/**
 * The derivatives of `t ↦ f(x + t·v)` at 0 up to order `k`: `[f(x), d1, …, dk]`, each
 * shaped like `f(x)`. One pass over the trace with truncated Taylor series in place of
 * numbers (univariate Taylor arithmetic, papers/002), O(k²) work per primitive.
 */
export function taylor<const X>(f: (x: Traced<X>) => unknown, x: X, v: unknown, k: number, options?: RdOptions): unknown[] {
  if (!Number.isInteger(k) || k < 0) throw new WengertError(`taylor: the order k is ${k}; expected a non-negative integer.`);
  const traced = trace("taylor", f as Fn, x, options);
  // Taylor arithmetic runs over a term of reals: its scans written out (diff/unroll.ts)
  const term = hasScans(traced.term.tape) ? writeOut(traced.term).term : traced.term;
  if (term.tape.tensorCount > 0) {
    throw new WengertError("taylor: f computes with tensors; Taylor mode covers reals only so far. Use nested jvp for higher directional derivatives of tensor programs.");
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
  const e = seriesEmitter(K) as Emitter<Series> & Record<string, (a: Series, b: Series) => Series>;
  // j! for j ≤ k; a coefficient that is 0 is a derivative of 0 even where j! overflows (j > 170)
  const factorials = [1];
  for (let j = 1; j < K; j++) factorials.push(factorials[j - 1] * j);
  const derivative = (c: Series, j: number): number => (c[j] === 0 ? c[j] : c[j] * factorials[j]);
  const checkNaN = traced.trace.settings.checkNaN;
  const { op, a, b, val, length: n } = term.tape;
  const s: Series[] = new Array(n);
  const constant = (c: number): Series => {
    const out = new Float64Array(K);
    out[0] = c;
    return out;
  };
  for (let i = 0; i < n; i++) {
    if (op[i] === INPUT) {
      s[i] = constant(val[i]);
      if (K > 1) s[i][1] = primal(tangents[a[i]]);
    } else if (op[i] === CONST || op[i] === FREE) {
      s[i] = constant(val[i]);
    } else if (op[i] >= FIRST_PRIMITIVE) {
      const name = primitiveOf(op[i]).name;
      const rule = e[name];
      if (!rule && K > 1) throw new WengertError(`taylor: the primitive ${name} has no Taylor rule: user primitives (defineOp) do not have Taylor rules yet; use nested jvp or rd for their derivatives.`);
      // order 0 is the value, already recorded (and checked while tracing)
      s[i] = K === 1 ? constant(val[i]) : rule(s[a[i]], s[b[i]]);
      for (let j = 1; checkNaN && j < K; j++) {
        if (Number.isFinite(s[i][j])) continue;
        const args = [val[a[i]], val[b[i]]].slice(0, ARITY[op[i]]).join(", ");
        throw new NaNError(`taylor: checkNaN: the derivative of order ${j} of ${name} (for v${i}) along v is ${derivative(s[i], j)} (argument values ${args}).`);
      }
    }
  }
  const out = term.output;
  const derivatives: unknown[] = [];
  for (let j = 0; j < K; j++) derivatives.push(unflatten(out.shape, out.atoms.map((v) => derivative(s[v], j))));
  return derivatives;
}
