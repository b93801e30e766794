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
import { alloc, kernels, release as giveBack, size, type Dims } from "@wengert/ops";
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
export function forwardColumns(traced: TracedFn, tensors: boolean): unknown {
  const { term } = traced;
  const out = term.output.shape;
  const xs = term.params[0].shape;
  const caller = traced.trace.caller;
  const C = componentCount(xs);
  if (C === 0 || !isOutermost(traced, []) || traced.trace.settings.checkNaN) return null;
  const ins = leafShapes(xs);
  const outs = leafShapes(out);
  const v0 = leavesLike(caller, "v", xs, basisVector(xs, 0), "x");
  const applied = emitTransformed(traced, pushforward, { extra: { name: "v", shape: xs, leaves: v0 }, resultShape: out, keep: "both" });
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
  let offset = 0;
  for (const s of ins) {
    const w = size(dimsOf(s));
    const values = new Float64Array(C * w);
    for (let a = 0; a < w; a++) values[(offset + a) * w + a] = 1;
    inputs.push({ values, batched: true, width: w });
    offset += w;
  }
  const widths = outs.map((s) => size(dimsOf(s)));
  // every lane holds (no guards, no checks): each column written whole; the pool's, given back below
  const columns = widths.map((w) => alloc(C * w, true));
  runLanes(emitted, [], { reportTies: false, checkNaN: false }, inputs, Int32Array.from({ length: C }, (_, c) => c), columns);
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
        const S = widths[j];
        const D = size(dimsOf(i));
        const block = transposed(columns[j], from, S, D);
        from += D;
        return o.kind === "real" && i.kind === "real" ? block[0] : fromDense({ dims: [...dimsOf(o), ...dimsOf(i)], data: block }, "ndarray", false);
      }),
    );
  });
  columns.forEach(giveBack);
  return unflatten(out, rows);
}

/**
 * Lanes from … from + D − 1 of a column of S values per lane, as an S × D block (row-major):
 * the D × S rows of those lanes transposed, by the tiled kernel (a plain loop reads the
 * lanes S apart at every step, a page apart for the S of GradBench's ht).
 */
function transposed(column: Float64Array, from: number, S: number, D: number): Float64Array {
  const block = kernels.transpose(column.subarray(from * S, (from + D) * S), [D, S], [1, 0]);
  // the caller's to keep: a buffer the pool does not know, not one it may hand out again
  return block.buffer.byteLength === block.length * 8 && block.byteOffset === 0 ? block : block.slice();
}
