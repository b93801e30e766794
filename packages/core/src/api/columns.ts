/**
 * @file The columns of a forward-mode Jacobian as lanes: jvp along every basis vector
 * from one tangent term (vmap of jvp over the basis, at the outermost level).
 *
 * jacfwd (and hessian, which is jacfwd of grad's term) sweeps forward once per input
 * component. Every sweep emits the same tangent term, a function of the point x and the
 * direction v (Fig. 4: the derivative is itself a trace term), and only v's values
 * differ. So the term is emitted once, along the first basis vector, and evaluated at
 * all of them as lanes of one batch (eval/lanes.ts): what depends on x alone is computed
 * once, the tangents column by column. Each lane computes what a sweep along its vector
 * computes, with the same kernels: the same numbers as one sweep per column.
 */
import { alloc, release as giveBack, size, type Dims } from "@wengert/ops";
import { pushforward } from "../diff/pushforward.js";
import { runLanes, type LaneInput } from "../eval/lanes.js";
import { leafShapes, unflatten, type Shape } from "../structure.js";
import { fromDense, toDense, type ConcreteTensor } from "../trace/host-tensor.js";
import { basisVector, componentCount } from "./components.js";
import { leavesLike, type TracedFn } from "./tracing.js";
import { emitTransformed, isOutermost } from "./transform.js";

const dimsOf = (s: Shape): Dims => (s.kind === "tensor" ? s.dims : []);

/**
 * The Jacobian of the traced function by forward mode, shaped as jacobian.ts's byForward
 * shapes it (blocks [...S, ...D] with tensors, rows of columns for reals), or null where
 * the columns cannot be lanes: inside an enclosing trace, with checkNaN (which names the
 * rule where a column goes wrong), or where a tangent rule decided on values.
 */
export function forwardColumns(traced: TracedFn, tensors: boolean, into?: BlockPlace): unknown {
  const { term } = traced;
  const out = term.output.shape;
  const xs = term.params[0].shape;
  const caller = traced.trace.caller;
  const C = componentCount(xs);
  if (C === 0 || !isOutermost(traced, []) || traced.trace.settings.checkNaN) return null;
  const ins = leafShapes(xs);
  const outs = leafShapes(out);
  const v0 = leavesLike(caller, "v", xs, basisVector(xs, 0), "x");
  // evaluated by the lanes alone: nothing of it computed while it is emitted (along v0, for nobody)
  const applied = emitTransformed(traced, pushforward, {
    extra: { name: "v", shape: xs, leaves: v0 },
    resultShape: out,
    keep: "both",
    unevaluated: true,
  });
  const emitted = applied.term!;
  // the emitted term extends C's tape; `all`: C's buffers too (every value read is copied out by then)
  const release = (all: boolean): void => {
    emitted.tape.releaseBuffers(true, all ? 0 : term.tape.length);
    emitted.tape.recycle();
  };
  if (applied.opaque) {
    // the caller goes on with C (a sweep per column)
    release(false);
    return null;
  }
  // the point, the same in every lane; the direction, lane c the basis vector c
  const inputs: LaneInput[] = traced.point.map((p) => {
    if (typeof p === "number") return { values: Float64Array.of(p), batched: false, width: 1 };
    const d = toDense(p as ConcreteTensor, `${caller}'s input`);
    return { values: d.data, batched: false, width: size(d.dims) };
  });
  // lane c is batch index first + c: the block's column in `into`'s matrix (BlockPlace), its
  // place there (element e of lane c at e · width + first + c, runLanes's element-major layout)
  const first = into?.column ?? 0;
  let offset = 0;
  for (const s of ins) {
    const w = size(dimsOf(s));
    const values = new Float64Array((first + C) * w);
    for (let a = 0; a < w; a++) values[(first + offset + a) * w + a] = 1;
    inputs.push({ values, batched: true, width: w });
    offset += w;
  }
  const widths = outs.map((s) => size(dimsOf(s)));
  // output j as an S_j × C matrix, element-major (the lane, i.e. the column, last): with
  // one input leaf, the block [...S, ...D] itself, the caller's to keep (`into`, where the
  // caller gives it: jacfwd's option, one output); with several, the pool's, their columns
  // copied out below and the buffer given back
  const whole = tensors && ins.length === 1;
  const columns = widths.map((w) => (whole ? (into?.into ?? new Float64Array(C * w)) : alloc(C * w, true)));
  // every lane holds (no guards, no checks): each output written whole
  const options = { reportTies: false, checkNaN: false, elementMajor: true, tracedBefore: term.tape.length };
  runLanes(emitted, [], options, inputs, Int32Array.from({ length: C }, (_, c) => first + c), columns);
  // nothing reads C after the lanes (f(x) is not returned): its buffers go back to the pool with the tangents', rather than to the collector
  release(true);
  if (!tensors) {
    // reals: row j holds ∂y_j/∂x_i for every input i
    const rowsOfReals = columns.map((col) => unflatten(xs, Array.from(col)));
    columns.forEach(giveBack);
    return unflatten(out, rowsOfReals);
  }
  // blocks ∂y_j/∂x_i of dims [...S, ...D] (a number where both are reals), row-major
  const rows = outs.map((o, j) => {
    let from = 0;
    return unflatten(
      xs,
      ins.map((i) => {
        const D = size(dimsOf(i));
        const block = whole ? columns[j] : columnsOf(columns[j], widths[j], C, from, D);
        from += D;
        return o.kind === "real" && i.kind === "real" ? block[0] : fromDense({ dims: [...dimsOf(o), ...dimsOf(i)], data: block }, "ndarray", false);
      }),
    );
  });
  if (!whole) columns.forEach(giveBack);
  return unflatten(out, rows);
}

/**
 * Where jacfwd's one block goes (its `into` and `column` options): the columns `column` …
 * of the matrix `into` (rows: the output's elements), the others left as they are.
 */
export interface BlockPlace {
  readonly into: Float64Array;
  readonly column: number;
}

/** Columns from … from + D − 1 of an S × C matrix (row-major), as an S × D block of its own. */
function columnsOf(matrix: Float64Array, S: number, C: number, from: number, D: number): Float64Array {
  const block = new Float64Array(S * D);
  for (let e = 0; e < S; e++) block.set(matrix.subarray(e * C + from, e * C + from + D), e * D);
  return block;
}
