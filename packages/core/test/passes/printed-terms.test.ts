/**
 * @file The printed trace and derivative terms of a few representative functions, held
 * as snapshots: a chain of primitives, both sides of a branch (decided on the value,
 * then gone from the trace, Sec. 3), the paper's nested example
 * 1.rd_1(x. x × 1.rd_1(y. x + y)) whose inner rd is differentiated again, and a function
 * of tensors. A change in the printer (the paper's notation) or in the term the reverse
 * sweep emits (Fig. 6) shows here as a changed snapshot.
 */
import ndarray from "ndarray";
import { describe, expect, it } from "vitest";
import { add, derivativeOf, exp, lt, matmul, mul, rd, sin, sqrt, square, sum, tanh, traceOf, type Scalar, type Tensor } from "../../src/index.js";

const chain = (x: Scalar) => exp(tanh(sqrt(add(1, square(sin(x))))));
const relu = (x: Scalar) => (lt(x, 0) ? 0 : mul(x, x));
const nested = (x: Scalar) => mul(x, rd((y: Scalar) => add(x, y), 1, 1));
const layer = (p: { W: Tensor; x: Tensor }) => sum(tanh(matmul(p.W, p.x)));
const tensors = { W: ndarray(Float64Array.from([1, 2, 3, 4, 5, 6]), [2, 3]), x: ndarray(Float64Array.from([0.1, 0.2, 0.3]), [3, 1]) };

describe("printed terms", () => {
  it("a chain of primitives: its trace and derivative", () => {
    expect(String(traceOf(chain, 0.5))).toMatchInlineSnapshot(`
      "x : real.
      let v0:real = x in
      let v1:real = sin(v0) in
      let v2:real = square(v1) in
      let v4:real = 1 + v2 in
      let v5:real = sqrt(v4) in
      let v6:real = tanh(v5) in
      let v7:real = exp(v6) in
      v7"
    `);
    expect(String(derivativeOf(chain, 0.5, 1))).toMatchInlineSnapshot(`
      "x : real.
      let v0:real = x in
      W : real.
      let v8:real = W in
      let v1:real = sin(v0) in
      let v2:real = square(v1) in
      let v4:real = 1 + v2 in
      let v5:real = sqrt(v4) in
      let v6:real = tanh(v5) in
      let v7:real = exp(v6) in
      let v9:real = mul(v8, v7) in
      let v10:real = square(v6) in
      let v11:real = sub(1, v10) in
      let v12:real = mul(v9, v11) in
      let v14:real = mul(2, v5) in
      let v15:real = div(v12, v14) in
      let v16:real = mul(2, v1) in
      let v17:real = mul(v15, v16) in
      let v18:real = cos(v0) in
      let v19:real = mul(v17, v18) in
      v19"
    `);
  });

  it("a branch: each side traced where it is taken, the predicate gone", () => {
    expect(String(traceOf(relu, -1))).toMatchInlineSnapshot(`
      "x : real.
      let v0:real = x in
      0"
    `);
    expect(String(traceOf(relu, 2))).toMatchInlineSnapshot(`
      "x : real.
      let v0:real = x in
      let v1:real = mul(v0, v0) in
      v1"
    `);
    expect(String(derivativeOf(relu, 2, 1))).toMatchInlineSnapshot(`
      "x : real.
      let v0:real = x in
      W : real.
      let v2:real = W in
      let v1:real = mul(v0, v0) in
      let v3:real = mul(v2, v0) in
      let v4:real = mul(v2, v0) in
      let v5:real = v3 + v4 in
      v5"
    `);
  });

  it("the paper's nested example: the inner rd evaluated while the outer one traces", () => {
    expect(String(traceOf(nested, 1))).toMatchInlineSnapshot(`
      "x : real.
      let v0:real = x in
      let v2:real = v0 + 1 in
      v0"
    `);
    expect(String(derivativeOf(nested, 1, 1))).toMatchInlineSnapshot(`
      "x : real.
      let v0:real = x in
      W : real.
      let v3:real = W in
      let v2:real = v0 + 1 in
      v3"
    `);
  });

  it("a function of tensors: matmul, tanh, sum", () => {
    expect(String(traceOf(layer, tensors))).toMatchInlineSnapshot(`
      "x : {W: real[2, 3], x: real[3, 1]}.
      let {W: v0:real[2, 3], x: v1:real[3, 1]} = x in
      let v2:real[2, 1] = matmul(v0, v1) in
      let v3:real[2, 1] = tanh(v2) in
      let v4:real = sum(v3, axes=[0, 1]) in
      v4"
    `);
    expect(String(derivativeOf(layer, tensors, 1))).toMatchInlineSnapshot(`
      "x : {W: real[2, 3], x: real[3, 1]}.
      let {W: v0:real[2, 3], x: v1:real[3, 1]} = x in
      W : real.
      let v5:real = W in
      let v2:real[2, 1] = matmul(v0, v1) in
      let v3:real[2, 1] = tanh(v2) in
      let v4:real = sum(v3, axes=[0, 1]) in
      let v6:real[1, 1] = reshape(v5, dims=[1, 1]) in
      let v7:real[2, 1] = broadcastTo(v6, dims=[2, 1]) in
      let v9:real[2, 1] = square(v3) in
      let v10:real[2, 1] = sub(1, v9) in
      let v11:real[2, 1] = mul(v7, v10) in
      let v12:real[1, 3] = transpose(v1, perm=[1, 0]) in
      let v13:real[2, 3] = matmul(v11, v12) in
      let v14:real[1, 2] = transpose(v11, perm=[1, 0]) in
      let v15:real[1, 3] = matmul(v14, v0) in
      let v16:real[3, 1] = transpose(v15, perm=[1, 0]) in
      {W: v13, x: v16}"
    `);
  });
});
