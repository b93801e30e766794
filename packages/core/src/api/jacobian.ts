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
import { ArgumentError, ClosedTraceError, WengertError } from "../errors.js";
import { showDims, size, type Dims } from "@wengert/ops";
import { countLeaves, describe, leafShapes, unflatten, type Shape } from "../structure.js";
import ndarray from "ndarray";
import { fromDense, type NdArray } from "../trace/host-tensor.js";
import { Real, Tensor, type Operand, type Scalar } from "../trace/traced.js";
import { basisVector, componentCount, components, componentsOf, fromComponents, leafComponents } from "./components.js";
import { forwardColumns, type BlockPlace } from "./columns.js";
import { sparseHessian } from "./sparse-hessian.js";
import type { Tape } from "../trace/tape.js";
import type { TraceTerm } from "../trace/term.js";
import { primal } from "../trace/record.js";
import { realSeed } from "./rd.js";
import { jvpAs } from "./forward.js";
import { hvpSweep, hvpSweeper } from "../diff/hvp-sweep.js";
import { checkOptionKeys, RD_OPTIONS, type RdOptions } from "./options.js";
import { leavesLike, trace, userValue, type Fn, type TracedFn } from "./tracing.js";
import { emitTransformed, isOutermost } from "./transform.js";
import type { Cotangent, Hessian, Jacobian, Like, Mode, Output, Traced } from "./types.js";

const caller = (traced: TracedFn): string => traced.trace.caller;
const oneHot = (shape: Shape, i: number): unknown => unflatten(shape, Array.from({ length: countLeaves(shape) }, (_, j) => (j === i ? 1 : 0)));

/** Every traced value the trace depends on must still be live when it is transformed again. */
function checkLive(caller: string, traced: TracedFn): void {
  for (const v of [...traced.point, ...traced.term.tape.frees]) {
    if ((v instanceof Real || v instanceof Tensor) && v.trace.closed) {
      throw new ClosedTraceError(
        `${caller}: the value x (or a value f used) was traced by a ${v.trace.caller} call that has returned; ` +
          `call ${caller} again inside it.`,
      );
    }
  }
}

/**
 * `[f(x), pullback]`: the pullback maps a seed shaped like `f(x)` to `rd(f, x, seed)`
 * without tracing `f` again. At the outermost level the derivative term is built once
 * and re-evaluated for each seed.
 */
export function vjp<const X, Y>(f: (x: Traced<X>) => Y, x: X, options?: RdOptions): [Output<Y, Mode<X>>, Pullback<X, Y>] {
  const traced = trace("vjp", f as Fn, x, options);
  const { term } = traced;
  const out = term.output.shape;
  const xs = term.params[0].shape;
  let built: TraceTerm | null = null;
  const pullback = <const S extends Like<Y>>(seed: S): Cotangent<X, S> => {
    checkLive("vjp's pullback", traced);
    const leaves = leavesLike("vjp's pullback", "seed", out, seed, "f(x)");
    if (built !== null && leaves.every((s) => typeof s === "number") && traced.point.every((p) => typeof p === "number")) {
      // re-evaluate W.R_V(x. C) at the new seed, on a copy of its buffer
      const tape: Tape = built.tape;
      const vals = tape.val.slice(0, tape.length);
      run(tape, vals, term.tape.length, [...traced.point.map(primal), ...(leaves as number[])]);
      return unflatten(xs, built.output.atoms.map((v) => vals[v])) as Cotangent<X, S>;
    }
    const applied = emitTransformed(traced, differentiate, { extra: { name: "W", shape: out, leaves }, resultShape: xs });
    if (applied.term !== null && term.tape.frees.length === 0) built = applied.term;
    return unflatten(xs, applied.results) as Cotangent<X, S>;
  };
  // f(x): the recorded values at the outermost level, else replayed into the enclosing trace
  const outShapes = leafShapes(out);
  const value = isOutermost(traced, [])
    ? term.output.atoms.map((v, j) => userValue(term.tape, v, outShapes[j]))
    : emitTransformed(traced, replay, { extra: { name: "*", shape: { kind: "tuple", items: [] }, leaves: [] }, resultShape: out }).outputs;
  return [unflatten(out, value) as Output<Y, Mode<X>>, pullback];
}

/** vjp's pullback: a seed shaped like `f(x)` to the cotangent shaped like `x`, traced when `x` or the seed is. */
export type Pullback<X, Y> = <const S extends Like<Y>>(seed: S) => Cotangent<X, S>;

/** The Jacobian by reverse mode: one pullback per output leaf, one trace in all. */
export function jacrev<const X, Y>(f: (x: Traced<X>) => Y, x: X, options?: RdOptions): Jacobian<Y, X, Mode<X>> {
  return byReverse(trace("jacrev", f as Fn, x, options)) as Jacobian<Y, X, Mode<X>>;
}

/** jacfwd's options: rd's, and a buffer to write a one-block Jacobian into. */
export interface JacfwdOptions extends RdOptions {
  /**
   * Where the Jacobian's numbers go (f(x) and x one leaf each, a tensor among them): its
   * block, an ndarray of dims [...out, ...in], is a view of this buffer, which must hold as
   * many numbers, rather than a fresh one. A caller computing Jacobians of one size again
   * and again writes them where the last one was (GradBench's manual tools keep their
   * output so), not into fresh memory the system must map and zero each time.
   */
  readonly into?: Float64Array;
  /**
   * With `into`: the block's columns (x's components) are columns `column` … `column` + n − 1
   * of a wider matrix in `into`, of size(f(x)) rows and into.length / size(f(x)) columns,
   * row-major (a leading dimension, as BLAS has), the other columns left as they are: two
   * calls along two parts of a point fill one Jacobian matrix. The block is then returned as
   * a view of those columns.
   */
  readonly column?: number;
}

const JACFWD_OPTIONS = ["into", "column", ...RD_OPTIONS];

/**
 * The Jacobian by forward mode: one jvp per input leaf, one trace in all (at the outermost
 * level, f's tensor values computed only where the tangents read them: TraceUse "columns").
 */
export function jacfwd<const X, Y>(f: (x: Traced<X>) => Y, x: X, options: JacfwdOptions = {}): Jacobian<Y, X, Mode<X>> {
  checkOptionKeys("jacfwd", options, JACFWD_OPTIONS);
  const { into, column, ...rd } = options;
  if (column !== undefined && into === undefined) {
    throw new ArgumentError("jacfwd: options.column places the Jacobian in `into`'s matrix; give into as well, or drop column.");
  }
  const traced = trace("jacfwd", f as Fn, x, rd, "columns");
  return (into === undefined ? byForward(traced) : intoBlock(traced, into, column)) as Jacobian<Y, X, Mode<X>>;
}

/** jacfwd's one block written into `into` at `column` (JacfwdOptions), returned as an ndarray over it. */
function intoBlock(traced: TracedFn, into: unknown, column: unknown): unknown {
  const out = traced.term.output.shape;
  const xs = traced.term.params[0].shape;
  const [o, i] = [leafShapes(out), leafShapes(xs)];
  if (o.length !== 1 || i.length !== 1 || !(hasTensor(out) || hasTensor(xs))) {
    throw new ArgumentError(
      `jacfwd: options.into takes the Jacobian of a function of one leaf to one leaf, a tensor among them (here f(x) has ${o.length} ` +
        `and x ${i.length}); drop into, or return and take one tensor.`,
    );
  }
  const [S, D] = [size(dimsOf(o[0])), size(dimsOf(i[0]))];
  const dims = [...dimsOf(o[0]), ...dimsOf(i[0])];
  if (column === undefined && (!(into instanceof Float64Array) || into.length !== S * D)) {
    throw new ArgumentError(
      `jacfwd: options.into is ${describe(into)}; it must be a Float64Array of ${S * D} numbers, the Jacobian's (dims ${showDims(dims)}).`,
    );
  }
  const width = into instanceof Float64Array ? into.length / S : NaN;
  const at = column ?? 0;
  if (!(into instanceof Float64Array) || !Number.isInteger(width) || !Number.isInteger(at) || (at as number) < 0 || (at as number) + D > width) {
    throw new ArgumentError(
      `jacfwd: options.into is ${describe(into)} and options.column ${describe(column)}; into must be a Float64Array of ${S} rows (f(x)'s size) ` +
        `of equally many numbers, and column a whole number with column + ${D} (x's size) at most that many.`,
    );
  }
  const J = byForward(traced, { into, column: at as number }) as NdArray;
  // where the columns were not lanes (a sweep per column), the block is copied in
  if (J.data !== into) for (let r = 0; r < S; r++) into.set((J.data as Float64Array).subarray(r * D, (r + 1) * D), r * width + (at as number));
  if (width === D) return fromDense({ dims: J.shape, data: into }, "ndarray", false);
  // the block's columns of the wider matrix: rows `width` apart
  const strides = [...dims.slice(0, -1).map((_, k) => size(dims.slice(k + 1, -1)) * width), 1];
  return ndarray(into, dims, strides, at as number);
}

function byReverse(traced: TracedFn): unknown {
  const out = traced.term.output.shape;
  const xs = traced.term.params[0].shape;
  if (hasTensor(out) || hasTensor(xs)) {
    return tensorBlocks(traced, out, xs, "reverse", (seed) => emitTransformed(traced, differentiate, {
      extra: { name: "W", shape: out, leaves: leavesLike(caller(traced), "seed", out, seed, "f(x)") },
      resultShape: xs,
      keep: "trace",
    }).results);
  }
  const rows = Array.from({ length: countLeaves(out) }, (_, j) => {
    const seed = leavesLike(caller(traced), "seed", out, oneHot(out, j), "f(x)");
    return unflatten(xs, emitTransformed(traced, differentiate, { extra: { name: "W", shape: out, leaves: seed }, resultShape: xs, keep: "trace" }).results);
  });
  return unflatten(out, rows);
}

/** The Jacobian by forward mode (`into`: its one block's matrix, where the columns are lanes: JacfwdOptions). */
function byForward(traced: TracedFn, into?: BlockPlace): unknown {
  const out = traced.term.output.shape;
  const xs = traced.term.params[0].shape;
  // at the outermost level, the columns as lanes of one tangent term
  const lanes = forwardColumns(traced, hasTensor(out) || hasTensor(xs), into);
  if (lanes !== null) return lanes;
  if (hasTensor(out) || hasTensor(xs)) {
    return tensorBlocks(traced, out, xs, "forward", (v) => emitTransformed(traced, pushforward, {
      extra: { name: "v", shape: xs, leaves: leavesLike(caller(traced), "v", xs, v, "x") },
      resultShape: out,
      keep: "trace",
    }).results);
  }
  const columns: unknown[][] = Array.from({ length: countLeaves(xs) }, (_, i) => {
    const v = leavesLike(caller(traced), "v", xs, oneHot(xs, i), "x");
    return emitTransformed(traced, pushforward, { extra: { name: "v", shape: xs, leaves: v }, resultShape: out, keep: "trace" }).results;
  });
  const rows = Array.from({ length: countLeaves(out) }, (_, j) => unflatten(xs, columns.map((c) => c[j])));
  return unflatten(out, rows);
}

function hasTraced(v: unknown): boolean {
  if (v instanceof Real || v instanceof Tensor) return true;
  if (Array.isArray(v)) return v.some(hasTraced);
  if (typeof v === "object" && v !== null && Object.getPrototypeOf(v) === Object.prototype) return Object.values(v).some(hasTraced);
  return false;
}

function hasTensor(shape: Shape): boolean {
  return leafShapes(shape).some((s) => s.kind === "tensor");
}

const dimsOf = (s: Shape): Dims => (s.kind === "tensor" ? s.dims : []);

/**
 * A Jacobian with tensor leaves: for output leaf j (dims S) and input leaf i (dims D),
 * the block ∂y_j/∂x_i of dims [...S, ...D] (a number when both are reals), as JAX and
 * NumPy lay it out. One sweep per output component (reverse) or input component (forward).
 */
function tensorBlocks(traced: TracedFn, out: Shape, xs: Shape, mode: "reverse" | "forward", sweep: (basis: unknown) => unknown[]): unknown {
  if (!isOutermost(traced, [])) {
    throw new WengertError(
      `${caller(traced)}: Jacobians of functions of tensors are computed at the outermost level only; ` +
        "inside rd, use vjp or jvp per direction.",
    );
  }
  const outs = leafShapes(out);
  const ins = leafShapes(xs);
  const blocks = outs.map((o) => ins.map((i) => new Float64Array(size(dimsOf(o)) * size(dimsOf(i)))));
  const along = mode === "reverse" ? out : xs;
  components(along).forEach(({ leaf, at }, c) => {
    const results = sweep(basisVector(along, c));
    (mode === "reverse" ? ins : outs).forEach((_, k) => {
      const r = leafComponents(results[k], caller(traced));
      const [j, i] = mode === "reverse" ? [leaf, k] : [k, leaf];
      const block = blocks[j][i];
      const nIn = size(dimsOf(ins[i]));
      // block[e_out, e_in]: reverse fills a row (e_out = at), forward a column (e_in = at)
      for (let e = 0; e < r.length; e++) block[mode === "reverse" ? at * nIn + e : e * nIn + at] = r[e];
    });
  });
  const rows = outs.map((o, j) =>
    unflatten(
      xs,
      ins.map((i, k) => {
        const dims = [...dimsOf(o), ...dimsOf(i)];
        // a number where both are reals; a tensor (0-d too) where either is one
        return o.kind === "real" && i.kind === "real" ? blocks[j][k][0] : fromDense({ dims, data: blocks[j][k] }, "ndarray");
      }),
    ),
  );
  return unflatten(out, rows);
}

/** The Jacobian, by whichever mode needs fewer sweeps (reverse when outputs ≤ inputs). */
export function jacobian<const X, Y>(f: (x: Traced<X>) => Y, x: X, options?: RdOptions): Jacobian<Y, X, Mode<X>> {
  const traced = trace("jacobian", f as Fn, x, options);
  const m = componentCount(traced.term.output.shape);
  const n = componentCount(traced.term.params[0].shape);
  return (m <= n ? byReverse(traced) : byForward(traced)) as Jacobian<Y, X, Mode<X>>;
}

/**
 * The Hessian of a real-valued `f`, forward over reverse: the Jacobian of `grad f` by
 * jvps, one per input, shaped like `x` with leaves shaped like `x`. `f` is traced once.
 * At the outermost level, for reals and fewer than LANES_FROM inputs, column i is H·e_i
 * computed on numbers by hvp's sweep (hvp-sweep.ts), run once per input over the one
 * trace; otherwise jacfwd's trace holds the derivative term of f's trace and is swept
 * along each basis vector (at the outermost level, all of them at once as lanes: columns.ts).
 */
export function hessian<const X>(f: (x: Traced<X>) => Scalar, x: X, options?: RdOptions): Hessian<X> {
  const inner = trace("hessian", f as Fn, x, options);
  const { term } = inner;
  const xs = term.params[0].shape;
  const seed = leavesLike("hessian", "seed", term.output.shape, realSeed("hessian")(term.output.shape), "f(x)");
  // past a few dozen inputs the columns as lanes of grad's tangent term (columns.ts) are faster
  if (onNumbers(inner, []) && term.params[0].atoms.length < LANES_FROM) {
    // nothing will look at the terms of grad and of its jvps: H·e_i for each input i
    const sweep = hvpSweeper(term);
    const n = term.params[0].atoms.length;
    const columns = Array.from({ length: n }, (_, i) => sweep(Array.from({ length: n }, (_, j) => (j === i ? 1 : 0))));
    sweep.recycle();
    term.tape.recycle(); // nobody holds the trace: its columns serve the next one
    return unflatten(xs, Array.from({ length: n }, (_, j) => unflatten(xs, columns.map((c) => c[j])))) as Hessian<X>;
  }
  const gradient = trace("hessian", gradOfTrace("hessian", inner, seed), x, options);
  // inside a trace, for reals: each column what its input reaches (sparse-hessian.ts)
  return (sparseHessian(gradient) ?? byForward(gradient)) as Hessian<X>;
}

/** Inputs from which hessian computes its columns as lanes (rosenbrock: 2× faster at 100, 3× at 300; slower at 10). */
const LANES_FROM = 32;

/**
 * At the outermost level, for reals, without checkNaN: nothing will
 * look at the terms of grad and of its jvp, and hvp's sweep gives their numbers.
 */
function onNumbers(inner: TracedFn, tangents: readonly Operand[]): boolean {
  const { term } = inner;
  return term.tape.tensorCount === 0 && !inner.trace.settings.checkNaN && isOutermost(inner, tangents);
}

/**
 * `y ↦ grad f(y)` from f's trace alone: the derivative term of that trace, emitted into
 * the trace `y` belongs to (as `grad` called there would emit it, without tracing f again).
 */
function gradOfTrace(caller: string, inner: TracedFn, seed: readonly Operand[]): Fn {
  const { term } = inner;
  const out = term.output.shape;
  const xs = term.params[0].shape;
  return ((y: unknown): unknown => {
    const point = leavesLike(caller, "x", xs, y, "x");
    return unflatten(xs, emitTransformed({ ...inner, point }, differentiate, {
      extra: { name: "W", shape: out, leaves: seed },
      resultShape: xs,
      keep: "trace",
    }).results);
  }) as Fn;
}

/**
 * The Hessian-vector product `H·v`, forward over reverse: `jvp` of `grad f` along `v`.
 * `f` is traced once. At the outermost level, for reals, H·v is the tangent of the
 * reverse sweep computed on numbers (hvp-sweep.ts); otherwise jvp's trace holds the
 * derivative term of that trace (as `grad` inside `jvp` would emit it) and is swept.
 */
export function hvp<const X, const V extends Like<X>>(f: (x: Traced<X>) => Scalar, x: X, v: V, options?: RdOptions): Cotangent<X, V> {
  const inner = trace("hvp", f as Fn, x, options);
  const { term } = inner;
  const out = term.output.shape;
  const xs = term.params[0].shape;
  const seed = leavesLike("hvp", "seed", out, realSeed("hvp")(out), "f(x)");
  const tangents = leavesLike("hvp", "v", xs, v, "x");
  if (onNumbers(inner, tangents)) {
    const hv = hvpSweep(term, (tangents as Scalar[]).map(primal));
    term.tape.recycle(); // nobody holds the trace: its columns serve the next one
    return unflatten(xs, hv) as Cotangent<X, V>;
  }
  const hv = jvpAs("hvp", gradOfTrace("hvp", inner, seed), x, v, options)[1];
  // H·v is shaped like x: its tensors come back in x's containers
  return (hasTraced(hv) ? hv : fromComponents(componentsOf(x, "hvp").shape, componentsOf(hv, "hvp").values)) as Cotangent<X, V>;
}
