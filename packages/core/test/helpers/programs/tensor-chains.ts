/**
 * @file Random tensor programs: compositions of maps of a [3, 4] tensor to a [3, 4]
 * tensor (W: a traced [4, 4] matrix), each smooth, drawn and strung together.
 */
import {
  add, broadcastTo, concat, conv2d, div, gather, index, logSoftmax, logsumexp, matmul, mean, mul, reshape, scatterAdd, sin, slice, softmax,
  sqrt, square, stack, sub, sum, tanh, transpose, unstack, type NdArray,
} from "../../../src/index.js";
import fc from "fast-check";
import { nd } from "../tensors.js";

/** Maps of a [3, 4] tensor to a [3, 4] tensor (W: a traced [4, 4] matrix), each smooth. */
export const CHAIN: [string, (t: NdArray, W: NdArray) => unknown][] = [
  ["tanh", (t) => tanh(t)],
  ["reshape(transpose)", (t) => reshape(transpose(t), [3, 4]) as NdArray],
  ["softmax axis 0", (t) => softmax(t, 0)],
  ["logSoftmax axis 1", (t) => logSoftmax(t, 1)],
  ["+ 0.3 · column sums", (t) => add(t, mul(sum(t, 0, true) as NdArray, 0.3))],
  ["− logsumexp of rows", (t) => sub(t, logsumexp(t, 1, true) as NdArray)],
  ["rotate rows (slice, concat)", (t) => concat([slice(t, [1, 0], [3, 4]), slice(t, [0, 0], [1, 4])])],
  ["gather columns with repeats", (t) => gather(t, [3, 1, 1, 0], 1)],
  ["scatterAdd columns", (t) => scatterAdd(t, [0, 2, 0], slice(t, [0, 1], [3, 4]), 1)],
  ["tanh(t W)", (t, W) => tanh(matmul(t, W))],
  ["C t (constant [3, 3])", (t) => matmul(nd([1, 0.5, 0, -0.5, 1, 0.25, 0, 0.3, 1], [3, 3]), t)],
  ["normalize rows", (t) => div(t, sqrt(add(sum(square(t), 1, true) as NdArray, 1)))],
  ["unstack columns, restack reversed", (t) => stack((unstack(t, 1) as NdArray[]).reverse(), 1)],
  [
    "conv2d 3×3, padding 1",
    (t, W) =>
      reshape(conv2d(reshape(t, [1, 1, 3, 4]) as NdArray, reshape(slice(W, [0, 0], [3, 3]), [1, 1, 3, 3]) as NdArray, { padding: 1 }), [3, 4]) as NdArray,
  ],
  ["+ broadcast mean of rows", (t) => add(t, broadcastTo(mean(t, 1, true), [3, 4]))],
  ["sin · index", (t) => mul(sin(t), index(t, [1, 2]))],
  ["square then × 0.5", (t) => mul(square(t), 0.5)],
];

/** A random tensor program: 1 to 4 maps of CHAIN, composed; its name and its function of t and W. */
export const tensorChains: fc.Arbitrary<{ name: string; f: (t: NdArray, W: NdArray) => NdArray }> = fc
  .array(fc.integer({ min: 0, max: CHAIN.length - 1 }), { minLength: 1, maxLength: 4 })
  .map((ks) => ({ name: ks.map((k) => CHAIN[k][0]).join(" ∘ "), f: (t: NdArray, W: NdArray) => ks.reduce((u, k) => CHAIN[k][1](u, W) as NdArray, t) }));
