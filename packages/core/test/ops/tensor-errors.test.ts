/**
 * Mistakes with tensors are reported: every shape error is a ShapeError whose message
 * names the operation, the shapes involved, and the caller's place (this file, with a
 * line), both on untraced values and inside a traced f. Ties of max/min (and of tensor
 * predicates and kinks) are warned about, raise TieError, or are ignored, as asked; and
 * the other tensor misuses (leaked traced tensors, a tensor returned to grad, unreadable
 * dtypes, Jacobians of tensors inside rd, taylor on tensors) raise their errors.
 */
import ndarray from "ndarray";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  abs, add, broadcastTo, ClosedTraceError, compileGrad, concat, conv2d, dot, gather, grad, gt, index, InputTypeError, jacobian, logSoftmax,
  logsumexp, matmul, max, mean, min, mul, outer, OutputTypeError, rd, reshape, scatterAdd, ShapeError, slice, softmax, stack, sum,
  taylor, TieError, traceOf, transpose, unstack, WengertError, where, jvp, type NdArray, type Scalar, type Tensor,
} from "../../src/index.js";
import { thrown } from "../helpers/check.js";

const FILE = "tensor-errors.test.ts";
const nd = (dims: number[], fill = 1): NdArray => ndarray(new Float64Array(dims.reduce((a, b) => a * b, 1)).fill(fill), dims);

/**
 * `fn` throws a ShapeError whose message contains every part, the op's name first, and
 * this file's name with a line and column (the call site).
 */
function expectShapeError(fn: () => unknown, op: string, ...parts: string[]): Error {
  const e = thrown(fn);
  expect(e, e.message).toBeInstanceOf(ShapeError);
  expect(e.message.startsWith(`${op}:`), `message should start with "${op}:": ${e.message}`).toBe(true);
  for (const p of parts) expect(e.message).toContain(p);
  expect(e.message).toMatch(new RegExp(`${FILE.replace(/\./g, "\\.")}:\\d+:\\d+`));
  return e;
}

/** The same error untraced and inside grad (with x traced in place of the first tensor). */
function bothWays(x: NdArray | Float64Array, use: (t: Tensor | NdArray | Float64Array) => unknown, op: string, ...parts: string[]): void {
  expectShapeError(() => use(x), op, ...parts);
  expectShapeError(() => grad((t: Tensor) => sum(use(t) as Tensor), x), op, ...parts);
}

describe("ShapeError: the op, the shapes, and the call site", () => {
  it("names this file and the line of the call", () => {
    // the line of here()'s caller: the second frame in this file
    const here = () => Number([...(new Error().stack ?? "").matchAll(/tensor-errors\.test\.ts:(\d+)/g)][1]?.[1]);
    const [line, e] = [here(), thrown(() => add(nd([2, 3]), nd([4])))];
    expect(e).toBeInstanceOf(ShapeError);
    expect(e.message).toContain(`${FILE}:${line}:`);
    // inside a traced f, the place is the line in f
    const [line2, e2] = [here(), thrown(() => grad((t: Tensor) => sum(add(t, nd([4]))), nd([2, 3])))];
    expect(e2.message).toContain(`${FILE}:${line2}:`);
  });

  it("elementwise ops whose shapes do not broadcast", () => {
    bothWays(nd([2, 3]), (t) => add(t, nd([4])), "add", "[2, 3]", "[4]");
    bothWays(nd([2, 3]), (t) => mul(nd([3, 3]), t), "mul", "[3, 3]", "[2, 3]");
    bothWays(Float64Array.from([1, 2]), (t) => add(t, Float64Array.from([1, 2, 3])), "add", "[2]", "[3]");
    bothWays(nd([2, 1, 3]), (t) => mul(t, nd([4, 2])), "mul", "[2, 1, 3]", "[4, 2]");
    // predicates and where check too
    expectShapeError(() => gt(nd([2, 3]), nd([3, 2])), "gt", "[2, 3]", "[3, 2]");
    bothWays(nd([2, 3]), (t) => where(nd([3, 1]), t, 0), "where", "[3, 1]", "[2, 3]");
  });

  it("matmul: inner dimensions, batch axes, vectors and reals", () => {
    bothWays(nd([2, 2]), (t) => matmul(nd([2, 3]), t), "matmul", "[2, 3]", "[2, 2]", "3 vs 2");
    bothWays(nd([2, 3, 4]), (t) => matmul(t, nd([3, 4, 5])), "matmul", "[2, 3, 4]", "[3, 4, 5]");
    bothWays(Float64Array.from([1, 2, 3]), (t) => matmul(t, nd([2, 2])), "matmul", "[3]", "[2, 2]");
    bothWays(Float64Array.from([1, 2, 3]), (t) => matmul(t, Float64Array.from([1, 2, 3])), "matmul", "[3]", "dot");
    expectShapeError(() => matmul(nd([2, 2]), 3 as never), "matmul", "[2, 2]", "[]");
  });

  it("dot and outer", () => {
    bothWays(Float64Array.from([1, 2, 3]), (t) => dot(t, Float64Array.from([1, 2])), "dot", "3", "2");
    bothWays(nd([2, 3]), (t) => outer(t, Float64Array.from([1, 2])), "outer", "[2, 3]", "[2]");
  });

  it("reshape to a different size, an uninferable -1, two -1s", () => {
    bothWays(nd([2, 3]), (t) => reshape(t, [4, 2]), "reshape", "[2, 3]", "[4, 2]");
    bothWays(nd([2, 3]), (t) => reshape(t, [-1, 4]), "reshape", "[2, 3]", "[-1, 4]");
    bothWays(nd([2, 3]), (t) => reshape(t, [-1, -1]), "reshape", "[-1, -1]");
    bothWays(nd([2, 3]), (t) => reshape(t, [2.5, 2]), "reshape", "[2.5, 2]");
  });

  it("transpose with a bad permutation", () => {
    bothWays(nd([2, 3, 4]), (t) => transpose(t, [0, 0, 1]), "transpose", "[0, 0, 1]", "[2, 3, 4]");
    bothWays(nd([2, 3, 4]), (t) => transpose(t, [1, 0]), "transpose", "[1, 0]", "[2, 3, 4]");
    bothWays(nd([2, 3]), (t) => transpose(t, [0, 2]), "transpose", "[0, 2]", "[2, 3]");
  });

  it("broadcastTo a shape it does not broadcast to", () => {
    bothWays(Float64Array.from([1, 2, 3]), (t) => broadcastTo(t, [2, 4]), "broadcastTo", "[3]", "[2, 4]");
    bothWays(nd([2, 3]), (t) => broadcastTo(t, [3]), "broadcastTo", "[2, 3]", "[3]");
    bothWays(nd([2, 1]), (t) => broadcastTo(t, [3, 4]), "broadcastTo", "[2, 1]", "[3, 4]");
    // sizes that are no sizes (a fraction made a tensor of dims [2.5]; a negative one a RangeError)
    bothWays(nd([1]), (t) => broadcastTo(t, [2.5]), "broadcastTo", "[2.5]");
    bothWays(nd([1]), (t) => broadcastTo(t, [2, -1]), "broadcastTo", "[2, -1]");
  });

  it("slice with starts or ends that are not integers (it made dims [3.5] of NaN)", () => {
    bothWays(Float64Array.from([10, 20, 30, 40]), (t) => slice(t, [0.5], [4]), "slice", "[0.5]");
    bothWays(Float64Array.from([10, 20, 30, 40]), (t) => slice(t, [0], [2.5]), "slice", "[2.5]");
  });

  it("slice out of range, with the wrong number of entries, or with starts after ends", () => {
    bothWays(nd([4, 5]), (t) => slice(t, [1, 0], [3, 6]), "slice", "[4, 5]", "[1, 0]", "[3, 6]");
    bothWays(nd([4, 5]), (t) => slice(t, [-1, 0], [3, 5]), "slice", "[4, 5]");
    bothWays(nd([4, 5]), (t) => slice(t, [1], [3]), "slice", "[4, 5]");
    bothWays(nd([4, 5]), (t) => slice(t, [3, 0], [2, 5]), "slice", "[4, 5]");
  });

  it("index with the wrong rank, out of range, or not an integer", () => {
    bothWays(nd([2, 3]), (t) => index(t, 1), "index", "[2, 3]");
    bothWays(nd([2, 3]), (t) => index(t, [1]), "index", "[1]", "[2, 3]");
    bothWays(nd([2, 3]), (t) => index(t, [1, 3]), "index", "[1, 3]", "[2, 3]");
    bothWays(Float64Array.from([1, 2, 3]), (t) => index(t, 3), "index", "[3]");
    bothWays(Float64Array.from([1, 2, 3]), (t) => index(t, -1), "index", "[3]");
    bothWays(Float64Array.from([1, 2, 3]), (t) => index(t, 0.5), "index", "[3]");
  });

  it("gather out of range, at a non-integer, or along a bad axis", () => {
    bothWays(nd([3, 2]), (t) => gather(t, [0, 3]), "gather", "3", "[3, 2]");
    bothWays(nd([3, 2]), (t) => gather(t, [-1]), "gather", "-1");
    bothWays(nd([3, 2]), (t) => gather(t, [1.5]), "gather", "1.5");
    bothWays(nd([3, 2]), (t) => gather(t, [0], 2), "gather", "axis 2", "[3, 2]");
    bothWays(nd([3, 2]), (t) => gather(t, [2], 1), "gather", "2", "[3, 2]");
    // an Int32Array is copied without the integer check, and checked against the axis all the same
    bothWays(nd([3, 2]), (t) => gather(t, Int32Array.of(0, 3)), "gather", "3", "[3, 2]");
    bothWays(nd([3, 2]), (t) => gather(t, Int32Array.of(1, -1)), "gather", "-1");
  });

  it("gather keeps its own copy of an Int32Array of indices: writing the caller's array later changes nothing", () => {
    const indices = Int32Array.of(2, 0);
    const weights = ndarray(Float64Array.of(1, 2, 3, 4), [2, 2]);
    const f = compileGrad((t: Tensor) => sum(mul(gather(t, indices), weights)));
    const first = Array.from((f(nd([3, 2])) as NdArray).data);
    indices[0] = 1;
    expect(Array.from((f(nd([3, 2])) as NdArray).data)).toEqual(first);
    expect(first).toEqual([3, 4, 0, 0, 1, 2]);
  });

  it("scatterAdd with values of the wrong shape, or indices out of range", () => {
    bothWays(nd([4, 3]), (t) => scatterAdd(t, [1, 3, 1], nd([2, 3])), "scatterAdd", "[2, 3]", "[3, 3]", "[4, 3]");
    bothWays(nd([4, 3]), (t) => scatterAdd(t, [0, 0], nd([2, 2]), 1), "scatterAdd", "[2, 2]", "[4, 2]");
    bothWays(nd([4, 3]), (t) => scatterAdd(t, [4], nd([1, 3])), "scatterAdd", "4", "[4, 3]");
    // values traced, the tensor not
    expectShapeError(() => grad((v: Tensor) => sum(scatterAdd(nd([4, 3]), [1], v)), nd([1, 2])), "scatterAdd", "[1, 2]", "[1, 3]");
  });

  it("concat of tensors that differ off the axis, of different ranks, of none, of reals", () => {
    bothWays(nd([2, 3]), (t) => concat([t, nd([2, 4])]), "concat", "[2, 3]", "[2, 4]");
    bothWays(nd([2, 3]), (t) => concat([nd([1, 3]), t], 1), "concat", "[1, 3]", "[2, 3]");
    bothWays(nd([2, 3]), (t) => concat([t, Float64Array.from([1, 2, 3])]), "concat", "[2, 3]", "[3]");
    bothWays(nd([2, 3]), (t) => concat([t, t], 2), "concat", "axis 2", "[2, 3]");
    expectShapeError(() => concat([]), "concat");
    expectShapeError(() => concat([1, 2] as never), "concat");
  });

  it("stack of tensors of different dims, or of none, or along a bad axis", () => {
    bothWays(nd([2, 3]), (t) => stack([t, nd([3, 2])]), "stack", "[2, 3]", "[3, 2]");
    bothWays(Float64Array.from([1, 2]), (t) => stack([t, 1]), "stack", "[2]", "[]");
    bothWays(nd([2, 3]), (t) => stack([t, t], 3), "stack", "axis 3");
    expectShapeError(() => stack([]), "stack");
  });

  it("unstack of a real or along a bad axis", () => {
    bothWays(nd([2, 3]), (t) => unstack(t, 2)[0], "unstack", "axis 2", "[2, 3]");
    expectShapeError(() => unstack(3 as never), "unstack");
  });

  it("reductions and softmax along a bad axis, or an axis given twice", () => {
    bothWays(nd([2, 3]), (t) => sum(t, 2), "sum", "axis 2", "[2, 3]");
    bothWays(nd([2, 3]), (t) => sum(t, -3), "sum", "axis -3", "[2, 3]");
    bothWays(nd([2, 3]), (t) => sum(t, [0, -2]), "sum", "[2, 3]");
    bothWays(nd([2, 3]), (t) => mean(t, [0, 5]), "mean", "axis 5", "[2, 3]");
    bothWays(nd([2, 3]), (t) => max(t, 1.5), "max", "1.5", "[2, 3]");
    bothWays(nd([2, 3]), (t) => min(t, 2), "min", "axis 2");
    bothWays(nd([2, 3]), (t) => logsumexp(t, [3]), "logsumexp", "axis 3");
    bothWays(nd([2, 3]), (t) => softmax(t, 2), "softmax", "axis 2", "[2, 3]");
    bothWays(nd([2, 3]), (t) => logSoftmax(t, -3), "logSoftmax", "axis -3", "[2, 3]");
  });

  it("max, min and mean over an axis with no elements (they have no identity; the folds gave ∓∞ and 0/0)", () => {
    bothWays(new Float64Array(0), (t) => max(t), "max", "axis 0, which has no elements", "no identity", "[0]");
    bothWays(new Float64Array(0), (t) => min(t), "min", "axis 0, which has no elements", "[0]");
    bothWays(new Float64Array(0), (t) => mean(t), "mean", "axis 0, which has no elements", "0/0", "[0]");
    bothWays(nd([0, 3]), (t) => max(t, 0), "max", "axis 0", "[0, 3]");
    bothWays(nd([2, 0]), (t) => min(t, [0, 1], true), "min", "axis 1", "[2, 0]");
    bothWays(nd([2, 0]), (t) => mean(t, -1), "mean", "axis 1", "[2, 0]");
    // as NumPy: the axis reduced is what counts, also when the result has no elements
    expectShapeError(() => max(nd([0, 0]), 1), "max", "axis 1");
    // no group is empty: the result has no elements, and no error
    expect((max(nd([0, 3]), 1) as NdArray).shape).toEqual([0]);
    expect((mean(nd([0, 3]), 1) as NdArray).shape).toEqual([0]);
    // with an identity, an empty group is defined: Σ of none is 0, log Σ exp of none is −∞
    expect(sum(new Float64Array(0))).toBe(0);
    expect(logsumexp(new Float64Array(0))).toBe(-Infinity);
    expect([...(logsumexp(nd([2, 0]), 1) as NdArray).data]).toEqual([-Infinity, -Infinity]);
    // softmax over an empty axis has no elements to give
    expect((softmax(nd([2, 0])) as NdArray).shape).toEqual([2, 0]);
    expect(grad((t: Tensor) => logsumexp(t), new Float64Array(0))).toEqual(new Float64Array(0));
  });

  it("conv2d with mismatched channels, wrong ranks, a kernel larger than the input, a bad stride", () => {
    bothWays(nd([1, 3, 5, 5]), (t) => conv2d(t, nd([2, 2, 3, 3])), "conv2d", "3", "2", "[1, 3, 5, 5]", "[2, 2, 3, 3]");
    bothWays(nd([3, 5, 5]), (t) => conv2d(t, nd([2, 3, 3, 3])), "conv2d", "[3, 5, 5]");
    bothWays(nd([1, 3, 5, 5]), (t) => conv2d(t, nd([3, 3, 3])), "conv2d", "[3, 3, 3]");
    bothWays(nd([1, 1, 2, 2]), (t) => conv2d(t, nd([1, 1, 3, 3])), "conv2d", "3×3");
    bothWays(nd([1, 1, 4, 4]), (t) => conv2d(t, nd([1, 1, 3, 3]), { stride: 0 }), "conv2d", "stride");
    bothWays(nd([1, 1, 4, 4]), (t) => conv2d(t, nd([1, 1, 3, 3]), { padding: -1 }), "conv2d", "padding");
    // weights traced, input not
    expectShapeError(() => grad((w: Tensor) => sum(conv2d(nd([1, 2, 4, 4]), w)), nd([1, 3, 2, 2])), "conv2d", "[1, 2, 4, 4]", "[1, 3, 2, 2]");
  });

  it("where with a traced mask", () => {
    expectShapeError(() => grad((t: Tensor) => sum(where(t as never, t, 0)), nd([2])), "where", "mask");
  });
});

describe("ties of max and min", () => {
  afterEach(() => vi.restoreAllMocks());

  it("the gradient is split evenly among tied maxima, and the tie is warned about once", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const g = grad((t: Tensor) => max(t), Float64Array.from([1, 3, 3, 2])) as Float64Array;
    expect(Array.from(g)).toEqual([0, 0.5, 0.5, 0]);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(String(warn.mock.calls[0][0])).toContain("max");
  });

  it("ties along an axis: min over rows with a three-way and a two-way tie", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const g = grad((t: Tensor) => sum(mul(min(t, 1), Float64Array.from([1, 2]))), ndarray(Float64Array.from([1, 1, 1, 0, 3, 0]), [2, 3])) as NdArray;
    const data = Array.from(g.data as Float64Array);
    [1 / 3, 1 / 3, 1 / 3, 1, 0, 1].forEach((w, i) => expect(data[i]).toBeCloseTo(w, 15));
    expect(warn).toHaveBeenCalled();
    expect(String(warn.mock.calls[0][0])).toContain("min");
  });

  it("ties: \"error\" throws TieError; \"ignore\" is silent; no ties means no warning", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    expect(() => grad((t: Tensor) => max(t), Float64Array.from([3, 3]), { ties: "error" })).toThrow(TieError);
    expect(() => grad((t: Tensor) => sum(max(t, 0)), ndarray(Float64Array.from([1, 2, 1, 0]), [2, 2]), { ties: "error" })).toThrow(/max/);
    const g = grad((t: Tensor) => max(t), Float64Array.from([3, 3]), { ties: "ignore" }) as Float64Array;
    expect(Array.from(g)).toEqual([0.5, 0.5]);
    expect(grad((t: Tensor) => max(t), Float64Array.from([1, 2]), { ties: "error" })).toEqual(Float64Array.from([0, 1]));
    expect(warn).not.toHaveBeenCalled();
  });

  it("predicates decided at a tie on tensors and abs at its kink are reported too", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const x = Float64Array.from([1, 2, 3]);
    expect(() => grad((t: Tensor) => sum(where(gt(t, 2), t, 0)), x, { ties: "error" })).toThrow(TieError);
    expect(() => grad((t: Tensor) => sum(abs(t)), Float64Array.from([1, 0]), { ties: "error" })).toThrow(TieError);
    const g = grad((t: Tensor) => sum(abs(t)), Float64Array.from([-1, 0, 2])) as Float64Array;
    expect(Array.from(g)).toEqual([-1, 0, 1]);
    expect(warn).toHaveBeenCalledTimes(1);
  });

  it("a tensor against itself is no tie, also as two objects of one variable (t · 1 is t)", () => {
    const x = Float64Array.from([1, 2, 3]);
    for (const f of [(t: Tensor) => sum(where(gt(t, t), t, 0)), (t: Tensor) => sum(where(gt(mul(t, 1), t), t, mul(t, t)))]) {
      expect(() => grad(f, x, { ties: "error" })).not.toThrow();
    }
    expect(() => grad((t: Tensor) => sum(where(gt(mul(t, 2), add(t, t)), t, 0)), x, { ties: "error" })).toThrow(TieError);
  });
});

describe("other misuses of tensors", () => {
  it("a traced tensor used after its grad returned: ClosedTraceError", () => {
    let leaked: Tensor | undefined;
    grad((t: Tensor) => {
      leaked = t;
      return sum(t);
    }, Float64Array.from([1, 2]));
    expect(() => sum(leaked!)).toThrow(ClosedTraceError);
    expect(() => sum(leaked!)).toThrow(/^sum: a traced value \(v0, dims \[2\]\) was used after the grad call that traced it returned/);
    expect(String(leaked)).toBe("Tensor[2]");
    expect(() => grad((u: Tensor) => sum(mul(u, leaked!)), Float64Array.from([1, 2]))).toThrow(ClosedTraceError);
  });

  it("grad of a tensor-valued f: OutputTypeError pointing to rd with a seed", () => {
    expect(() => grad((t: Tensor) => mul(t, 2) as never, Float64Array.from([1, 2]))).toThrow(OutputTypeError);
    expect(() => grad((t: Tensor) => mul(t, 2) as never, Float64Array.from([1, 2]))).toThrow(/real\[2\]|seed/);
  });

  it("an ndarray of a non-numeric dtype: InputTypeError", () => {
    const bad = ndarray(new BigInt64Array(2), [2]);
    expect(() => grad((t: Tensor) => sum(t), bad as unknown as NdArray)).toThrow(InputTypeError);
  });

  it("an ndarray whose data is shorter than its shape: InputTypeError wherever it enters (it read NaN, and its gradient covered the data only in part)", () => {
    const short = () => ndarray(new Float64Array([1, 2, 3]), [2, 2]);
    const good = nd([2, 2], 2);
    const expectShort = (fn: () => unknown, where: string): void => {
      const e = thrown(fn);
      expect(e, e.message).toBeInstanceOf(InputTypeError);
      expect(e.message).toContain(
        `${where} is an ndarray of shape [2, 2] whose elements lie at data[0] to data[3] (offset 0, stride [2, 1]), but its data has 3 elements`,
      );
      expect(e.message).toMatch(new RegExp(`${FILE.replace(/\./g, "\\.")}:\\d+:\\d+\\. Give it data of at least 4 elements`));
    };
    expectShort(() => sum(short()), "sum's argument 1");
    expectShort(() => add(good, short()), "add's argument 2");
    expectShort(() => grad((t: Tensor) => sum(t), short()), "grad's input");
    expectShort(() => grad((t: Tensor) => sum(mul(t, short())), good), "a tensor argument");
    expectShort(() => rd((t: Tensor) => mul(t, 2), good, short()), "rd's seed");
    expectShort(() => jvp((t: Tensor) => sum(t), good, short()), "jvp's tangent v");
    expectShort(() => jacobian((t: Tensor) => mul(t, 2), short()), "jacobian's input");
    expectShort(() => traceOf((t: Tensor) => sum(t), good).evaluate(short()), "evaluate's x");
    const g = compileGrad((t: Tensor) => sum(mul(t, t)));
    g(good);
    g(good);
    expectShort(() => g(short()), "compileGrad's input");
    // an offset that leaves too few elements, and a view past the end of its data
    const e = thrown(() => sum(ndarray(new Float64Array(6), [2, 2], [2, 1], 3)));
    expect(e.message).toContain("at data[3] to data[6] (offset 3, stride [2, 1]), but its data has 6 elements");
    expect(e.message).toContain("Give it data of at least 7 elements");
  });

  it("ndarrays with negative strides are read in order; a stride or shape that is not one is refused", () => {
    const reversed = ndarray(Float64Array.from([1, 2, 3, 4]), [4]).step(-1);
    expect([...(mul(reversed, 1) as NdArray).data]).toEqual([4, 3, 2, 1]);
    expect([...(grad((t: Tensor) => dot(t, Float64Array.from([1, 2, 3, 4])) as Scalar, reversed) as NdArray).data]).toEqual([1, 2, 3, 4]);
    const e = thrown(() => sum(ndarray(Float64Array.from([1, 2, 3, 4]), [4], [-1], 0)));
    expect(e).toBeInstanceOf(InputTypeError);
    expect(e.message).toContain("whose elements lie at data[-3] to data[0] (offset 0, stride [-1]), but its data has 4 elements");
    expect(e.message).toContain("A negative stride needs an offset at the axis's last element");
    expect(() => sum(ndarray(new Float64Array(4), [1.5]))).toThrow(/whose dims are not all sizes/);
    expect(() => sum(ndarray(new Float64Array(4), [2, 2], [2]))).toThrow(/stride \[2, undefined\] and offset 0 are not integers, one stride per axis/);
    // longer data than the shape needs, and an empty view over no data, are fine
    expect(sum(ndarray(new Float64Array(9).fill(1), [2, 2]))).toBe(4);
    expect(sum(ndarray(new Float64Array(0), [3, 0]))).toBe(0);
    expect(sum(ndarray(Float64Array.of(5), []))).toBe(5);
    expect(() => sum(ndarray(new Float64Array(1), [], [], 1))).toThrow(/data\[1\] to data\[1\].*has 1 element\b/);
  });

  it("Jacobians of tensor functions inside rd, and taylor of tensor programs, are refused with a message", () => {
    expect(() => rd((s: Scalar) => sum(jacobian((t: Tensor) => mul(t, s), Float64Array.from([1, 2])) as NdArray), 1, 1)).toThrow(WengertError);
    expect(() => taylor((t: Tensor) => sum(t), Float64Array.from([1, 2]), Float64Array.from([1, 0]), 2)).toThrow(/tensors/);
  });
});
