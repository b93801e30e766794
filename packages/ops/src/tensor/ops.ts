/**
 * @file Every tensor primitive, declared once: shape rule, kernel, reverse and tangent
 * rules side by side, and its method on emitters (`call`). Rules use only primitives
 * (the emitter's methods), so every derivative is again a program over primitives:
 * differentiable to any order.
 *
 * As in scalar.ts, the table is a class whose fields have declared types: the emitter's
 * type (TensorEmitter) is read off the fields' signatures, and the rules are written
 * against it, a cycle tsc refuses where it infers an object literal's type from its
 * values. So a new field is the whole of a new primitive: its declared type names its
 * parameters and its method's signature, tsc asks for each facet, and core's symbolic
 * emitter makes the method from `call`.
 *
 * Formulas are above each entry; `ȳ` is the output cotangent, `ẋ` a tangent.
 */
import { alloc, pooledCopy, release } from "./pool.js";
import { broadcastAxes, broadcastDims, emptyAxis, reducedDims, sameDims, showDims, size, type Dims } from "./dims.js";
import * as K from "./kernels.js";
import { firstOutOfRange } from "./index-range.js";
import { indexVector } from "./index-tensor.js";
import type { Emitter } from "../scalar.js";
import type { PredicateName } from "../predicates.js";
import { alignedDims, broadcastLanes, laneDims, owned, shifted, withLanes, type LaneArgs } from "./lanes.js";
import type { Arg, Buf, Contribution, ConvDims, EmbedParams, GatherParams, Instantiate, ReduceParams, SliceParams, TensorCall } from "./op.js";

export interface TensorOp<P = never> {
  readonly kind: "tensor";
  /** Number of arguments, or -1 for any number (concat, pack, embed). */
  readonly arity: number;
  /** The output's dims, or a message saying why the arguments do not fit. */
  readonly shape: (dims: readonly Dims[], params: P) => Dims | string;
  /** The output's value: a fresh buffer (core's `compute` reads one of dims [] as its element, a real). */
  readonly forward: (args: readonly Buf[], dims: readonly Dims[], params: P, out: Dims) => Buf;
  /** The contribution to argument `k` (the paper's `op_r`, per argument). */
  readonly reverse: <A>(e: TensorEmitter<A>, k: number, args: readonly A[], y: A, ct: A, params: P) => Contribution<A>;
  /** The output's tangent from the arguments' tangents (null: zero). */
  readonly tangent: <A>(e: TensorEmitter<A>, args: readonly A[], y: A, tangents: readonly (A | null)[], params: P) => A | null;
  /** Which arguments carry no derivative (the mask of `where`). */
  readonly constantArgs?: readonly number[];
  /** A tie met by the forward computation (several maximal elements), described; or null. */
  readonly tie?: (args: readonly Buf[], dims: readonly Dims[], params: P, y: Buf) => string | null;
  /** The parameters, for printing trace terms. */
  readonly show?: (params: P) => string;
  /**
   * Every lane of a batch at once (vmap): the lanes' results side by side, lane l's at
   * l · size(out), `out` being one lane's dims; each lane's numbers those of `forward` on
   * its own arguments, to the bit (lanes.ts). Without it, vmap calls `forward` per lane.
   */
  readonly batch?: (a: LaneArgs, params: P, out: Dims) => Float64Array;
}

/**
 * A built-in tensor primitive: its declaration, and its method on emitters, of
 * signature `S` (`Arg` for each tensor argument), which `call` turns into the
 * instruction's arguments and parameters. The emitters' methods (TensorEmitter) are
 * read off these signatures, and the symbolic emitter's are made from `call`.
 */
export interface TensorDeclaration<P, S extends readonly unknown[]> extends TensorOp<P> {
  readonly call: (...args: S) => TensorCall<P>;
}

/**
 * Primitives as methods over `A`, tensors included: what tensor rules are written with.
 * The tensor primitives' methods are the table's signatures; `dims`, `zeros` and
 * `decide` are no primitives (they record no instruction that is differentiated).
 */
export type TensorEmitter<A> = Emitter<A> & {
  dims(x: A): Dims;
  zeros(dims: Dims): A;
  /** A 0/1 tensor decided now on concrete values, with no derivative: `pred(a, b)` elementwise. */
  decide(pred: PredicateName, a: A, b: A): A;
} & { readonly [K in TensorOpName]: (...args: Instantiate<Parameters<TensorPrimitives[K]["call"]>, A>) => A };

type ReduceCall = [x: Arg, axes: readonly number[], keepdims: boolean];
/** The parameter of gatherAt and scatterAddAt: the axis their index tensor selects along. */
interface AxisParams {
  readonly axis: number;
}

const reduceCall = (x: Arg, axes: readonly number[], keepdims: boolean): TensorCall<ReduceParams> => ({ args: [x], params: { axes, keepdims } });

const buf = (b: Buf): Float64Array => (typeof b === "number" ? Float64Array.of(b) : b);

/** A rule of one argument, which is batched (the instruction is batched through it): the kernel on its lanes, `dims` with the lane axis. */
const onLanes =
  <P>(kernel: (x: Float64Array, dims: Dims, p: P, lanes: number) => Float64Array) =>
  (a: LaneArgs, p: P): Float64Array =>
    kernel(a.args[0] as Float64Array, laneDims(a, 0), p, a.lanes);

/** A rule whose kernel wants every argument with the lane axis: the ones for every lane repeated per lane, then given back. */
function allLanes(a: LaneArgs, kernel: (xs: readonly Float64Array[], dims: readonly Dims[]) => Float64Array): Float64Array {
  const xs = a.args.map((_, k) => withLanes(a, k));
  const y = kernel(xs, a.args.map((_, k) => laneDims(a, k)));
  xs.forEach((x, k) => owned(a, k) && release(x));
  return y;
}

const reduceLanes = (kind: K.Reduction) => onLanes<ReduceParams>((x, d, p) => K.reduce(x, d, shifted(p.axes), kind));

/** `x` summed back to dims `to` it was broadcast from (the adjoint of broadcasting). */
export function sumTo<A>(e: TensorEmitter<A>, x: A, to: Dims): A {
  const from = e.dims(x);
  if (sameDims(from, to)) return x;
  const summed = e.sum(x, broadcastAxes(to, from), true);
  return e.reshape(summed, to);
}

/** The reduced output read back at the input's rank (reduced axes kept as 1). */
const kept = <A>(e: TensorEmitter<A>, y: A, x: A, p: ReduceParams): A =>
  p.keepdims ? y : e.reshape(y, e.dims(x).map((d, i) => (p.axes.includes(i) ? 1 : d)));

const reduceShape = (dims: readonly Dims[], p: ReduceParams): Dims => reducedDims(dims[0], p.axes, p.keepdims);

const showReduce = (p: ReduceParams): string => `axes=${showDims(p.axes)}${p.keepdims ? ", keepdims" : ""}`;

/**
 * max and min: ȳ goes to the maximal elements, split evenly among ties (the mean of
 * the one-sided choices, as abs'(0) = 0); the weights are a decision on values.
 * They have no identity, so over an axis with no elements they are not defined (their
 * folds start from ∓∞, which would come out silently); NumPy raises there too.
 */
const extremum = (kind: "max" | "min"): TensorDeclaration<ReduceParams, ReduceCall> => ({
  kind: "tensor",
  arity: 1,
  call: reduceCall,
  shape: (dims, p) => {
    const empty = emptyAxis(dims[0], p.axes);
    if (empty < 0) return reduceShape(dims, p);
    return (
      `the ${kind} over axis ${empty}, which has no elements, is not defined (${kind} has no identity); ` +
      `reduce over axes that have elements, or test for the empty case first`
    );
  },
  forward: ([x], [xd], p) => K.reduce(buf(x), xd, p.axes, kind),
  batch: reduceLanes(kind),
  reverse: (e, _k, [x], y, ct, p) => e.mul(kept(e, ct, x, p), weights(e, x, y, p)),
  tangent: (e, [x], y, [dx], p) => (dx === null ? null : e.sum(e.mul(dx, weights(e, x, y, p)), p.axes, p.keepdims)),
  tie: ([x], [xd], p, y) => {
    const count = K.countEqual(buf(x), xd, p.axes, buf(y));
    const i = count.findIndex((c) => c > 1);
    return i < 0 ? null : `${kind} over ${showReduce(p)} met ${count[i]} equal ${kind === "max" ? "maximal" : "minimal"} elements (value ${buf(y)[i]})`;
  },
  show: showReduce,
});

function weights<A>(e: TensorEmitter<A>, x: A, y: A, p: ReduceParams): A {
  const hit = e.decide("eq", x, kept(e, y, x, p));
  return e.div(hit, e.sum(hit, p.axes, true));
}

const convShape = (x: Dims, w: Dims, p: { stride: readonly number[]; padding: readonly number[] }): Dims | string => {
  if (x.length !== 4) return `the input must be NCHW (rank 4), got ${showDims(x)}`;
  if (w.length !== 4) return `the weights must be OIHW (rank 4), got ${showDims(w)}`;
  if (x[1] !== w[1]) return `the input has ${x[1]} channels but the weights expect ${w[1]} (input ${showDims(x)}, weights ${showDims(w)})`;
  const oh = Math.floor((x[2] + 2 * p.padding[0] - w[2]) / p.stride[0]) + 1;
  const ow = Math.floor((x[3] + 2 * p.padding[1] - w[3]) / p.stride[1]) + 1;
  if (oh <= 0 || ow <= 0) return `the ${w[2]}×${w[3]} kernel does not fit the padded ${x[2]}×${x[3]} input`;
  return [x[0], w[0], oh, ow];
};

const swapLast = <A>(e: TensorEmitter<A>, x: A): A => {
  const r = e.dims(x).length;
  return e.transpose(x, [...Array.from({ length: r - 2 }, (_, i) => i), r - 1, r - 2]);
};

/**
 * x yᵀ (`right`) or xᵀ y (`left`), the matrix product's cotangents: as written, or as
 * (y xᵀ)ᵀ and (yᵀ x)ᵀ, which transpose y and the result instead of x (or x and the result
 * instead of y), whichever moves fewer elements. Both give the same numbers: each element
 * is the same products (commuted, which is exact) summed in the same order. For h of
 * 64×128 and C̄ of 64×10, hᵀ C̄ as (C̄ᵀ h)ᵀ transposes 640 + 1280 elements instead of h's 8192.
 */
function transposedProduct<A>(e: TensorEmitter<A>, x: A, y: A, side: "left" | "right"): A {
  const [xd, yd] = [e.dims(x), e.dims(y)];
  const batch = size(broadcastDims(xd.slice(0, -2), yd.slice(0, -2)) as Dims);
  // elements each form transposes; the result has x's rows by y's rows (right), or x's
  // columns by y's columns (left), for each batch entry
  const written = size(side === "right" ? yd : xd);
  const swapped = size(side === "right" ? xd : yd) + batch * (side === "right" ? xd.at(-2)! * yd.at(-2)! : xd.at(-1)! * yd.at(-1)!);
  if (written <= swapped) return side === "right" ? e.matmul(x, swapLast(e, y)) : e.matmul(swapLast(e, x), y);
  return swapLast(e, side === "right" ? e.matmul(y, swapLast(e, x)) : e.matmul(swapLast(e, y), x));
}

const zerosFor = <A>(e: TensorEmitter<A>, args: readonly A[], tangents: readonly (A | null)[]): A[] =>
  tangents.map((t, k) => t ?? e.zeros(e.dims(args[k])));

/** Every tensor primitive (the order of their opcodes, after the scalar ones). */
export class TensorPrimitives {
  // y = Σ_axes x;  x̄ = ȳ broadcast back;  ẏ = Σ_axes ẋ
  readonly sum: TensorDeclaration<ReduceParams, ReduceCall> = {
    kind: "tensor",
    arity: 1,
    call: reduceCall,
    shape: reduceShape,
    forward: ([x], [xd], p) => K.reduce(buf(x), xd, p.axes, "sum"),
    batch: reduceLanes("sum"),
    reverse: (e, _k, [x], _y, ct, p) => e.broadcastTo(kept(e, ct, x, p), e.dims(x)),
    tangent: (e, _a, _y, [dx], p) => (dx === null ? null : e.sum(dx, p.axes, p.keepdims)),
    show: showReduce,
  };
  readonly max: TensorDeclaration<ReduceParams, ReduceCall> = extremum("max");
  readonly min: TensorDeclaration<ReduceParams, ReduceCall> = extremum("min");
  // y = log Σ exp x;  x̄ = ȳ · exp(x − y) (the softmax, by scaledExp);  ẏ = Σ ẋ · exp(x − y)
  readonly logsumexp: TensorDeclaration<ReduceParams, ReduceCall> = {
    kind: "tensor",
    arity: 1,
    call: reduceCall,
    shape: reduceShape,
    forward: ([x], [xd], p) => K.reduce(buf(x), xd, p.axes, "logsumexp"),
    batch: reduceLanes("logsumexp"),
    reverse: (e, _k, [x], y, ct, p) => e.scaledExp(x, kept(e, y, x, p), kept(e, ct, x, p)),
    tangent: (e, [x], y, [dx], p) => (dx === null ? null : e.sum(e.mul(dx, e.exp(e.sub(x, kept(e, y, x, p)))), p.axes, p.keepdims)),
    show: showReduce,
  };
  // y = x − logsumexp(x) over the axes, computed stably (reduce.ts);  x̄ = ȳ − eʸ Σ ȳ,  ẏ = ẋ − Σ eʸ ẋ
  readonly logSoftmax: TensorDeclaration<{ readonly axes: readonly number[] }, [x: Arg, axes: readonly number[]]> = {
    kind: "tensor",
    arity: 1,
    call: (x, axes) => ({ args: [x], params: { axes } }),
    shape: ([xd]) => xd,
    forward: ([x], [xd], p) => K.logSoftmax(buf(x), xd, p.axes),
    batch: onLanes((x, d, p) => K.logSoftmax(x, d, shifted(p.axes))),
    reverse: (e, _k, _a, y, ct, p) => e.sub(ct, e.mul(e.exp(y), e.sum(ct, p.axes, true))),
    tangent: (e, _a, y, [dx], p) => (dx === null ? null : e.sub(dx, e.sum(e.mul(e.exp(y), dx), p.axes, true))),
    show: (p) => `axes=${showDims(p.axes)}`,
  };
  // the same buffer read with other dims; linear
  readonly reshape: TensorDeclaration<{ readonly dims: Dims }, [x: Arg, dims: Dims]> = {
    kind: "tensor",
    arity: 1,
    call: (x, dims) => ({ args: [x], params: { dims } }),
    shape: ([xd], p) =>
      size(xd) === size(p.dims) ? p.dims : `cannot reshape ${showDims(xd)} (${size(xd)} elements) to ${showDims(p.dims)} (${size(p.dims)} elements)`,
    forward: ([x]) => pooledCopy(buf(x)), // each instruction owns its buffer (the pool takes every one back)
    batch: onLanes((x) => pooledCopy(x)),
    reverse: (e, _k, [x], _y, ct) => e.reshape(ct, e.dims(x)),
    tangent: (e, _a, _y, [dx], p) => (dx === null ? null : e.reshape(dx, p.dims)),
    show: (p) => `dims=${showDims(p.dims)}`,
  };
  // x repeated along new or size-1 axes;  x̄ = ȳ summed over them
  readonly broadcastTo: TensorDeclaration<{ readonly dims: Dims }, [x: Arg, dims: Dims]> = {
    kind: "tensor",
    arity: 1,
    call: (x, dims) => ({ args: [x], params: { dims } }),
    shape: ([xd], p) => {
      if (!p.dims.every((n) => Number.isInteger(n) && n >= 0)) return `${showDims(p.dims)} is not a list of sizes (integers ≥ 0)`;
      const r = broadcastDims(xd, p.dims);
      return typeof r === "string" || !sameDims(r, p.dims) ? `cannot broadcast ${showDims(xd)} to ${showDims(p.dims)}` : p.dims;
    },
    forward: ([x], [xd], p) => K.broadcastTo(x, xd, p.dims),
    batch: (a, p) => K.broadcastTo(a.args[0], alignedDims(a, 0, p.dims.length), [a.lanes, ...p.dims]),
    reverse: (e, _k, [x], _y, ct) => sumTo(e, ct, e.dims(x)),
    tangent: (e, _a, _y, [dx], p) => (dx === null ? null : e.broadcastTo(dx, p.dims)),
    show: (p) => `dims=${showDims(p.dims)}`,
  };
  // axes permuted;  x̄ = ȳ permuted back
  readonly transpose: TensorDeclaration<{ readonly perm: readonly number[] }, [x: Arg, perm: readonly number[]]> = {
    kind: "tensor",
    arity: 1,
    call: (x, perm) => ({ args: [x], params: { perm } }),
    shape: ([xd], p) => p.perm.map((i) => xd[i]),
    forward: ([x], [xd], p) => K.transpose(buf(x), xd, p.perm),
    batch: onLanes((x, d, p) => K.transpose(x, d, [0, ...shifted(p.perm)])),
    reverse: (e, _k, _a, _y, ct, p) => e.transpose(ct, inversePerm(p.perm)),
    tangent: (e, _a, _y, [dx], p) => (dx === null ? null : e.transpose(dx, p.perm)),
    show: (p) => `perm=${showDims(p.perm)}`,
  };
  // C = AB (batched);  Ā = C̄ Bᵀ,  B̄ = Aᵀ C̄ (summed over broadcast batch axes; formed as
  // transposedProduct says);  Ċ = ȦB + AḂ
  readonly matmul: TensorDeclaration<undefined, [a: Arg, b: Arg]> = {
    kind: "tensor",
    arity: 2,
    call: (a, b) => ({ args: [a, b], params: undefined }),
    shape: ([ad, bd]) => {
      if (ad.length < 2 || bd.length < 2) return `matmul needs rank ≥ 2 (got ${showDims(ad)} and ${showDims(bd)})`;
      if (ad[ad.length - 1] !== bd[bd.length - 2]) {
        return `inner dimensions differ: ${showDims(ad)} @ ${showDims(bd)} (${ad[ad.length - 1]} vs ${bd[bd.length - 2]})`;
      }
      const batch = broadcastDims(ad.slice(0, -2), bd.slice(0, -2));
      if (typeof batch === "string") return `batch axes: ${batch}`;
      return [...batch, ad[ad.length - 2], bd[bd.length - 1]];
    },
    forward: ([a, b], [ad, bd], _p, o) => K.matmul(buf(a), ad, buf(b), bd, o),
    // with b one matrix for every lane, a's rows of every lane are one matrix times it
    // (each element the same sum, gemm.ts); else the lanes are one more batch axis
    batch: (a, _p, out) => {
      const [ad, bd] = a.dims;
      if (a.batched[0] && !a.batched[1] && bd.length === 2) {
        const rows = a.lanes * (size(ad) / ad[ad.length - 1]);
        return K.matmul(buf(a.args[0]), [rows, ad[ad.length - 1]], buf(a.args[1]), bd, [rows, bd[1]]);
      }
      return broadcastLanes(([x, y], [xd, yd], o) => K.matmul(buf(x), xd, buf(y), yd, o), a, out);
    },
    reverse: (e, k, [a, b], _y, ct) => (k === 0 ? transposedProduct(e, ct, b, "right") : transposedProduct(e, a, ct, "left")),
    tangent: (e, [a, b], _y, [da, db]) => {
      const l = da === null ? null : e.matmul(da, b);
      const r = db === null ? null : e.matmul(a, db);
      return l === null ? r : r === null ? l : e.add(l, r);
    },
  };
  // the box starts ≤ i < ends;  x̄ = ȳ placed back in the box (a piece: see Contribution)
  readonly slice: TensorDeclaration<SliceParams, [x: Arg, starts: readonly number[], ends: readonly number[]]> = {
    kind: "tensor",
    arity: 1,
    call: (x, starts, ends) => ({ args: [x], params: { starts, ends } }),
    shape: ([xd], p) => {
      if (p.starts.length !== xd.length || p.ends.length !== xd.length) return `starts and ends need ${xd.length} entries for ${showDims(xd)}`;
      for (let i = 0; i < xd.length; i++) {
        if (!Number.isInteger(p.starts[i]) || !Number.isInteger(p.ends[i])) {
          return `starts ${showDims(p.starts)} and ends ${showDims(p.ends)} must be integers (axis ${i})`;
        }
        if (!(0 <= p.starts[i] && p.starts[i] <= p.ends[i] && p.ends[i] <= xd[i])) {
          return `the box ${showDims(p.starts)}…${showDims(p.ends)} is not inside ${showDims(xd)} (axis ${i})`;
        }
      }
      return p.ends.map((end, i) => end - p.starts[i]);
    },
    forward: ([x], [xd], p) => K.slice(buf(x), xd, p.starts, p.ends),
    batch: onLanes((x, d, p, w) => K.slice(x, d, [0, ...p.starts], [w, ...p.ends])),
    reverse: (_e, _k, _a, _y, ct, p) => ({ piece: ct, start: p.starts }),
    tangent: (e, _a, _y, [dx], p) => (dx === null ? null : e.slice(dx, p.starts, p.ends)),
    show: (p) => `${showDims(p.starts)}…${showDims(p.ends)}`,
  };
  // one element, a real;  x̄ = ȳ at that place (a piece)
  readonly index: TensorDeclaration<{ readonly at: readonly number[] }, [x: Arg, at: readonly number[]]> = {
    kind: "tensor",
    arity: 1,
    call: (x, at) => ({ args: [x], params: { at } }),
    shape: ([xd], p) => {
      if (p.at.length !== xd.length) return `index ${showDims(p.at)} has ${p.at.length} entries for a tensor of rank ${xd.length} (${showDims(xd)})`;
      for (let i = 0; i < xd.length; i++) {
        if (!Number.isInteger(p.at[i]) || p.at[i] < 0 || p.at[i] >= xd[i]) return `index ${showDims(p.at)} is out of range for ${showDims(xd)} (axis ${i})`;
      }
      return [];
    },
    forward: ([x], [xd], p) => {
      let flat = 0;
      for (let i = 0; i < xd.length; i++) flat = flat * xd[i] + p.at[i];
      return buf(x)[flat];
    },
    batch: onLanes((x, d, p, w) => K.slice(x, d, [0, ...p.at], [w, ...p.at.map((i) => i + 1)])),
    reverse: (_e, _k, _a, _y, ct, p) => ({ piece: ct, start: p.at }),
    tangent: (e, _a, _y, [dx], p) => (dx === null ? null : e.index(dx, p.at)),
    show: (p) => showDims(p.at),
  };
  // zeros of dims with each piece added at its start: the adjoint of slice and index
  readonly embed: TensorDeclaration<EmbedParams, [dims: Dims, pieces: readonly Arg[], starts: readonly (readonly number[])[]]> = {
    kind: "tensor",
    arity: -1,
    call: (dims, pieces, starts) => ({ args: pieces, params: { dims, starts } }),
    shape: (dims, p) => (dims.every((d) => d.length === 0 || d.length === p.dims.length) ? p.dims : `pieces must be scalars or of rank ${p.dims.length}`),
    forward: (args, dims, p) => {
      const r = alloc(size(p.dims));
      args.forEach((piece, k) => K.addAt(r, p.dims, piece, dims[k], p.starts[k]));
      return r;
    },
    // the pieces added in the same order, from zero, at every lane
    batch: (a, p) => {
      const w = a.lanes;
      const r = alloc(w * size(p.dims));
      a.args.forEach((_, k) => {
        const piece = withLanes(a, k);
        K.addAt(r, [w, ...p.dims], piece, laneDims(a, k, p.dims.length), [0, ...p.starts[k]]);
        if (owned(a, k)) release(piece);
      });
      return r;
    },
    reverse: (e, k, args, _y, ct, p) => {
      const d = e.dims(args[k]);
      return d.length === 0 ? e.index(ct, p.starts[k]) : e.slice(ct, p.starts[k], p.starts[k].map((s, i) => s + d[i]));
    },
    tangent: (e, args, _y, tangents, p) => e.embed(p.dims, zerosFor(e, args, tangents), p.starts),
    show: (p) => `dims=${showDims(p.dims)}, at ${p.starts.map(showDims).join(" ")}`,
  };
  // reals gathered into a vector;  x̄_k = ȳ[k]
  readonly pack: TensorDeclaration<undefined, [xs: readonly Arg[]]> = {
    kind: "tensor",
    arity: -1,
    call: (xs) => ({ args: xs, params: undefined }),
    shape: (dims) => (dims.every((d) => d.length === 0) ? [dims.length] : "pack takes reals"),
    forward: (args) => Float64Array.from(args as number[]),
    batch: (a) => {
      const n = a.args.length;
      const r = alloc(a.lanes * n, true);
      a.args.forEach((x, k) => {
        for (let l = 0; l < a.lanes; l++) r[l * n + k] = typeof x === "number" ? x : a.batched[k] ? x[l] : x[0];
      });
      return r;
    },
    reverse: (e, k, _a, _y, ct) => e.index(ct, [k]),
    tangent: (e, _args, _y, tangents) => e.pack(tangents.map((t) => t ?? e.lit(0))),
  };
  // entries `indices` along `axis`;  x̄ = ȳ scattered (added) back
  readonly gather: TensorDeclaration<GatherParams, [x: Arg, indices: Int32Array, axis: number]> = {
    kind: "tensor",
    arity: 1,
    call: (x, indices, axis) => ({ args: [x], params: { indices, axis } }),
    shape: ([xd], p) => {
      const bad = firstOutOfRange(p.indices, xd[p.axis]);
      if (bad >= 0) return `index ${p.indices[bad]} (position ${bad}) is out of range for axis ${p.axis} of length ${xd[p.axis]}`;
      return xd.map((d, i) => (i === p.axis ? p.indices.length : d));
    },
    forward: ([x], [xd], p) => K.gather(buf(x), xd, p.indices, p.axis),
    batch: onLanes((x, d, p) => K.gather(x, d, p.indices, p.axis + 1)),
    reverse: (e, _k, [x], _y, ct, p) => e.scatterAdd(e.zeros(e.dims(x)), p.indices, ct, p.axis),
    tangent: (e, _a, _y, [dx], p) => (dx === null ? null : e.gather(dx, p.indices, p.axis)),
    show: (p) => `axis=${p.axis}, indices=[${[...p.indices.subarray(0, 8)].join(", ")}${p.indices.length > 8 ? ", …" : ""}]`,
  };
  // entries of x along axis at the positions a tensor holds (a vector, no derivative: a
  // decision on values);  x̄ = ȳ scattered (added) back at them
  readonly gatherAt: TensorDeclaration<AxisParams, [x: Arg, indices: Arg, axis: number]> = {
    kind: "tensor",
    arity: 2,
    call: (x, indices, axis) => ({ args: [x, indices], params: { axis } }),
    constantArgs: [1],
    shape: ([xd, id], p) => {
      if (id.length !== 1) return `the indices have dims ${showDims(id)}; expected a vector of positions along axis ${p.axis}`;
      return xd.map((d, i) => (i === p.axis ? id[0] : d));
    },
    forward: ([x, at], [xd], p) => K.gather(buf(x), xd, indexVector("gatherAt", buf(at), xd[p.axis], p.axis), p.axis),
    reverse: (e, k, [x, at], _y, ct, p) => (k === 0 ? e.scatterAddAt(e.zeros(e.dims(x)), at, ct, p.axis) : null),
    tangent: (e, [, at], _y, [dx], p) => (dx === null ? null : e.gatherAt(dx, at, p.axis)),
    show: (p) => `axis=${p.axis}`,
  };
  // t with values added at the positions a tensor holds along axis;  t̄ = ȳ,  v̄ = ȳ gathered at them
  readonly scatterAddAt: TensorDeclaration<AxisParams, [t: Arg, indices: Arg, values: Arg, axis: number]> = {
    kind: "tensor",
    arity: 3,
    call: (t, indices, values, axis) => ({ args: [t, indices, values], params: { axis } }),
    constantArgs: [1],
    shape: ([td, id, vd], p) => {
      if (id.length !== 1) return `the indices have dims ${showDims(id)}; expected a vector of positions along axis ${p.axis}`;
      const want = td.map((d, i) => (i === p.axis ? id[0] : d));
      if (!sameDims(vd, want)) return `values have dims ${showDims(vd)}; ${id[0]} indices along axis ${p.axis} of ${showDims(td)} need ${showDims(want)}`;
      return td;
    },
    forward: ([t, at, v], [td], p) => K.scatterAdd(buf(t), td, indexVector("scatterAddAt", buf(at), td[p.axis], p.axis), buf(v), p.axis),
    reverse: (e, k, [, at], _y, ct, p) => (k === 0 ? ct : k === 1 ? null : e.gatherAt(ct, at, p.axis)),
    tangent: (e, [t, at, v], _y, [dt, , dv], p) => {
      if (dt === null && dv === null) return null;
      return e.scatterAddAt(dt ?? e.zeros(e.dims(t)), at, dv ?? e.zeros(e.dims(v)), p.axis);
    },
    show: (p) => `axis=${p.axis}`,
  };
  // t with values added at indices along axis;  t̄ = ȳ,  v̄ = ȳ gathered
  readonly scatterAdd: TensorDeclaration<GatherParams, [t: Arg, indices: Int32Array, values: Arg, axis: number]> = {
    kind: "tensor",
    arity: 2,
    call: (t, indices, values, axis) => ({ args: [t, values], params: { indices, axis } }),
    shape: ([td, vd], p) => {
      const want = td.map((d, i) => (i === p.axis ? p.indices.length : d));
      if (!sameDims(vd, want)) {
        return `values have dims ${showDims(vd)}; ${p.indices.length} indices along axis ${p.axis} of ${showDims(td)} need ${showDims(want)}`;
      }
      const bad = firstOutOfRange(p.indices, td[p.axis]);
      if (bad >= 0) return `index ${p.indices[bad]} (position ${bad}) is out of range for axis ${p.axis} of length ${td[p.axis]}`;
      return td;
    },
    forward: ([t, v], [td], p) => K.scatterAdd(buf(t), td, p.indices, buf(v), p.axis),
    batch: (a, p) => allLanes(a, ([t, v], [td]) => K.scatterAdd(t, td, p.indices, v, p.axis + 1)),
    reverse: (e, k, _a, _y, ct, p) => (k === 0 ? ct : e.gather(ct, p.indices, p.axis)),
    tangent: (e, args, _y, tangents, p) => {
      if (tangents[0] === null && tangents[1] === null) return null;
      const [dt, dv] = zerosFor(e, args, tangents);
      return e.scatterAdd(dt, p.indices, dv, p.axis);
    },
    show: (p) => `axis=${p.axis}`,
  };
  // tensors joined along axis;  x̄_k = ȳ's part k
  readonly concat: TensorDeclaration<{ readonly axis: number }, [xs: readonly Arg[], axis: number]> = {
    kind: "tensor",
    arity: -1,
    call: (xs, axis) => ({ args: xs, params: { axis } }),
    shape: (dims, p) => {
      const first = dims[0];
      for (let k = 1; k < dims.length; k++) {
        const d = dims[k];
        if (d.length !== first.length || d.some((n, i) => i !== p.axis && n !== first[i])) {
          return `tensor ${k} has dims ${showDims(d)}, which do not match ${showDims(first)} off axis ${p.axis}`;
        }
      }
      return first.map((n, i) => (i === p.axis ? dims.reduce((s, d) => s + d[p.axis], 0) : n));
    },
    forward: (args, dims, p, o) => K.concat(args.map(buf), dims, p.axis, o),
    batch: (a, p, out) => allLanes(a, (xs, ds) => K.concat(xs, ds, p.axis + 1, [a.lanes, ...out])),
    reverse: (e, k, args, _y, ct, p) => {
      let start = 0;
      for (let j = 0; j < k; j++) start += e.dims(args[j])[p.axis];
      const d = e.dims(args[k]);
      const ends = e.dims(ct).map((n, i) => (i === p.axis ? start + d[p.axis] : n));
      return e.slice(ct, ends.map((_, i) => (i === p.axis ? start : 0)), ends);
    },
    tangent: (e, args, _y, tangents, p) => e.concat(zerosFor(e, args, tangents), p.axis),
    show: (p) => `axis=${p.axis}`,
  };
  // mask ? a : b;  ā = ȳ where the mask holds, b̄ = ȳ elsewhere (exact zeros in between:
  // the sweep keeps the mask on what flows from them, so an unselected NaN stays out)
  readonly where: TensorDeclaration<undefined, [mask: Arg, a: Arg, b: Arg]> = {
    kind: "tensor",
    arity: 3,
    call: (mask, a, b) => ({ args: [mask, a, b], params: undefined }),
    constantArgs: [0],
    shape: ([md, ad, bd]) => {
      const ab = broadcastDims(ad, bd);
      if (typeof ab === "string") return ab;
      return broadcastDims(md, ab);
    },
    forward: ([m, a, b], [md, ad, bd], _p, o) => K.select(buf(m), md, a, ad, b, bd, o),
    batch: (a, _p, out) => broadcastLanes(([m, x, y], [md, xd, yd], o) => K.select(buf(m), md, x, xd, y, yd, o), a, out),
    reverse: (e, k, [m], _y, ct) => (k === 0 ? null : k === 1 ? e.where(m, ct, e.lit(0)) : e.where(m, e.lit(0), ct)),
    tangent: (e, [m], _y, [, da, db]) => (da === null && db === null ? null : e.where(m, da ?? e.lit(0), db ?? e.lit(0))),
  };
  // y = x ⋆ w;  x̄ = conv2dInput(ȳ, w),  w̄ = conv2dFilter(x, ȳ)
  readonly conv2d: TensorDeclaration<K.ConvParams, [x: Arg, w: Arg, p: K.ConvParams]> = {
    kind: "tensor",
    arity: 2,
    call: (x, w, p) => ({ args: [x, w], params: p }),
    shape: ([xd, wd], p) => convShape(xd, wd, p),
    forward: ([x, w], [xd, wd], p, o) => {
      const y = alloc(size(o));
      K.convLoops("forward", buf(x), xd, buf(w), wd, y, o, p);
      return y;
    },
    reverse: (e, k, [x, w], _y, ct, p) =>
      k === 0 ? e.conv2dInput(ct, w, { ...p, dims: e.dims(x) }) : e.conv2dFilter(x, ct, { ...p, dims: e.dims(w) }),
    tangent: (e, [x, w], _y, [dx, dw], p) => {
      const l = dx === null ? null : e.conv2d(dx, w, p);
      const r = dw === null ? null : e.conv2d(x, dw, p);
      return l === null ? r : r === null ? l : e.add(l, r);
    },
    show: (p) => `stride=${showDims(p.stride)}, padding=${showDims(p.padding)}`,
  };
  // the adjoint of conv2d in its input: X = g ⋆ᵀ w;  ḡ = conv2d(X̄, w),  w̄ = conv2dFilter(X̄, g)
  readonly conv2dInput: TensorDeclaration<ConvDims, [g: Arg, w: Arg, p: ConvDims]> = {
    kind: "tensor",
    arity: 2,
    call: (g, w, p) => ({ args: [g, w], params: p }),
    shape: (_d, p) => p.dims,
    forward: ([g, w], [gd, wd], p) => {
      const x = alloc(size(p.dims));
      K.convLoops("input", x, p.dims, buf(w), wd, buf(g), gd, p);
      return x;
    },
    reverse: (e, k, [g, w], _y, ct, p) =>
      k === 0 ? e.conv2d(ct, w, p) : e.conv2dFilter(ct, g, { ...p, dims: e.dims(w) }),
    tangent: (e, [g, w], _y, [dg, dw], p) => {
      const l = dg === null ? null : e.conv2dInput(dg, w, p);
      const r = dw === null ? null : e.conv2dInput(g, dw, p);
      return l === null ? r : r === null ? l : e.add(l, r);
    },
    show: (p) => `stride=${showDims(p.stride)}, padding=${showDims(p.padding)}`,
  };
  // the adjoint of conv2d in its weights: W = x ⋆ᵀ g;  x̄ = conv2dInput(g, W̄),  ḡ = conv2d(x, W̄)
  readonly conv2dFilter: TensorDeclaration<ConvDims, [x: Arg, g: Arg, p: ConvDims]> = {
    kind: "tensor",
    arity: 2,
    call: (x, g, p) => ({ args: [x, g], params: p }),
    shape: (_d, p) => p.dims,
    forward: ([x, g], [xd, gd], p) => {
      const w = alloc(size(p.dims));
      K.convLoops("filter", buf(x), xd, w, p.dims, buf(g), gd, p);
      return w;
    },
    reverse: (e, k, [x, g], _y, ct, p) =>
      k === 0 ? e.conv2dInput(g, ct, { ...p, dims: e.dims(x) }) : e.conv2d(x, ct, p),
    tangent: (e, [x, g], _y, [dx, dg], p) => {
      const l = dx === null ? null : e.conv2dFilter(dx, g, p);
      const r = dg === null ? null : e.conv2dFilter(x, dg, p);
      return l === null ? r : r === null ? l : e.add(l, r);
    },
    show: (p) => `stride=${showDims(p.stride)}, padding=${showDims(p.padding)}`,
  };
  // y = c · exp(x − m), m and c broadcast (logsumexp's cotangent, ȳ · exp(x − lse), in one pass);
  // x̄ = ȳ y,  m̄ = −Σ ȳ y,  c̄ = Σ ȳ exp(x − m) (each summed to its argument's dims);  ẏ = y (ẋ − ṁ) + ċ exp(x − m)
  readonly scaledExp: TensorDeclaration<undefined, [x: Arg, m: Arg, c: Arg]> = {
    kind: "tensor",
    arity: 3,
    call: (x, m, c) => ({ args: [x, m, c], params: undefined }),
    shape: ([xd, md, cd]) => {
      const xm = broadcastDims(xd, md);
      if (typeof xm === "string") return xm;
      return broadcastDims(xm, cd);
    },
    forward: ([x, m, c], [xd, md, cd], _p, o) => K.scaledExp(x, xd, m, md, c, cd, o),
    batch: (a, _p, out) => broadcastLanes(([x, m, c], [xd, md, cd], o) => K.scaledExp(x, xd, m, md, c, cd, o), a, out),
    reverse: (e, k, [x, m, c], y, ct) => {
      if (k === 0) return sumTo(e, e.mul(ct, y), e.dims(x));
      if (k === 1) return sumTo(e, e.neg(e.mul(ct, y)), e.dims(m));
      return sumTo(e, e.mul(ct, e.exp(e.sub(x, m))), e.dims(c));
    },
    tangent: (e, [x, m, c], y, [dx, dm, dc]) => {
      const shift = dx === null ? (dm === null ? null : e.neg(dm)) : dm === null ? dx : e.sub(dx, dm);
      const fromShift = shift === null ? null : e.mul(y, shift);
      const fromScale = dc === null ? null : e.mul(dc, e.exp(e.sub(x, m)));
      return fromShift === null ? fromScale : fromScale === null ? fromShift : e.add(fromShift, fromScale);
    },
  };
}

/** The table. */
export const tensorOps: TensorPrimitives = new TensorPrimitives();

export type TensorOpName = keyof TensorPrimitives;
/** The tensor primitives' names, in the table's order. */
export const TENSOR_OP_NAMES = Object.keys(tensorOps) as TensorOpName[];

export function inversePerm(perm: readonly number[]): number[] {
  const inv = new Array<number>(perm.length);
  perm.forEach((p, i) => (inv[p] = i));
  return inv;
}
