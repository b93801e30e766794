/**
 * jacfwd(f, x, { into }) writes a one-block Jacobian into the caller's buffer and returns
 * its ndarray over it: the numbers of jacfwd without it, to the bit, whether the columns
 * are lanes (api/columns.ts) or a sweep each (checkNaN, a rule deciding on values); a
 * buffer of the wrong size or type, or a Jacobian of several blocks, is an ArgumentError;
 * with `column`, its columns of a wider matrix there (two calls fill one Jacobian).
 */
import ndarray from "ndarray";
import { describe, expect, it } from "vitest";
import { ArgumentError, concat, exp, jacfwd, matmul, max, mul, reshape, sin, tanh, transpose, WengertError, type NdArray, type Scalar, type Tensor } from "../../src/index.js";
import { expectSame } from "../helpers/same-bits.js";

const A = ndarray(Float64Array.of(1, -2, 3, 0.5, 5, -6), [3, 2]);
const f = (x: Tensor): Tensor => transpose(mul(tanh(matmul(A, x)), sin(matmul(A, x)))) as Tensor;
const x = ndarray(Float64Array.of(0.3, -0.7, 1.1, 0.2), [2, 2]);

describe("jacfwd's option into", () => {
  it("the block is an ndarray over the caller's buffer, jacfwd's numbers, written again in place at the next call", () => {
    const J = jacfwd(f, x) as NdArray; // [2, 3, 2, 2]: 24 numbers
    const into = new Float64Array(J.data.length).fill(NaN);
    const K = jacfwd(f, x, { into }) as NdArray;
    expect(K.data).toBe(into);
    expect(K.shape).toEqual(J.shape);
    expectSame(K, J);
    const y = ndarray(Float64Array.of(-0.4, 0.9, 0.1, -1.3), [2, 2]);
    const L = jacfwd(f, y, { into }) as NdArray;
    expect(L.data).toBe(into);
    expectSame(L, jacfwd(f, y));
  });

  it("columns swept one by one (checkNaN; a rule that decides on values): copied into the buffer, the same numbers", () => {
    const into = new Float64Array(24);
    expectSame(jacfwd(f, x, { into, checkNaN: true }), jacfwd(f, x, { checkNaN: true }));
    expect((jacfwd(f, x, { into, checkNaN: true }) as NdArray).data).toBe(into);
    const g = (v: Tensor): Tensor => mul(exp(v), max(v, 0, true) as Tensor) as Tensor;
    const v = Float64Array.of(0.2, 1.5, -0.3);
    const buffer = new Float64Array(9);
    const G = jacfwd(g, v, { into: buffer }) as NdArray;
    expect(G.data).toBe(buffer);
    expectSame(G, jacfwd(g, v));
  });

  it("column: two jacfwds along two parts of a point fill one matrix, the columns of jacfwd along the whole point, to the bit", () => {
    // f of (p, q) = (p, q) flattened, x = (p: 2 numbers, q: 2 numbers); the whole Jacobian [2, 3, 4] as rows of 4
    const g = (t: Tensor): Tensor => f(reshape(t, [2, 2]) as Tensor);
    const whole = jacfwd(g, Float64Array.of(0.3, -0.7, 1.1, 0.2)) as NdArray; // [2, 3, 4]
    const into = new Float64Array(24).fill(NaN);
    const P = jacfwd((p: Tensor) => g(concat([p, Float64Array.of(1.1, 0.2)])), Float64Array.of(0.3, -0.7), { into, column: 0 }) as NdArray;
    const Q = jacfwd((q: Tensor) => g(concat([Float64Array.of(0.3, -0.7), q])), Float64Array.of(1.1, 0.2), { into, column: 2 }) as NdArray;
    expectSame(ndarray(into, [2, 3, 4]), whole);
    // each block a view of its columns: rows 4 apart
    expect([P.shape, Q.shape]).toEqual([[2, 3, 2], [2, 3, 2]]);
    expect([P.get(1, 2, 1), Q.get(0, 1, 0)]).toEqual([whole.get(1, 2, 1), whole.get(0, 1, 2)]);
    // swept one by one (checkNaN): copied into its columns
    const swept = new Float64Array(24).fill(NaN);
    jacfwd((p: Tensor) => g(concat([p, Float64Array.of(1.1, 0.2)])), Float64Array.of(0.3, -0.7), { into: swept, column: 0, checkNaN: true });
    jacfwd((q: Tensor) => g(concat([Float64Array.of(0.3, -0.7), q])), Float64Array.of(1.1, 0.2), { into: swept, column: 2, checkNaN: true });
    expectSame(ndarray(swept, [2, 3, 4]), whole);
  });

  it("column past the matrix's width, not whole, or without into: an error naming the fix", () => {
    const into = new Float64Array(24);
    expect(() => jacfwd(f, x, { into, column: 1 })).toThrow(/column \+ 4/);
    expect(() => jacfwd(f, Float64Array.of(1, 2), { into: new Float64Array(12 * 5), column: 0.5 } as never)).toThrow(ArgumentError);
    expect(() => jacfwd(f, x, { into: new Float64Array(25), column: 0 })).toThrow(/rows/);
    expect(() => jacfwd(f, x, { column: 0 })).toThrow(/give into/);
  });

  it("a buffer of the wrong size or type, several blocks, a misspelt option: an error naming the fix", () => {
    expect(() => jacfwd(f, x, { into: new Float64Array(23) })).toThrow(ArgumentError);
    expect(() => jacfwd(f, x, { into: new Float64Array(23) })).toThrow(/24 numbers/);
    expect(() => jacfwd(f, x, { into: [0, 1] as never })).toThrow(ArgumentError);
    expect(() => jacfwd((t: Tensor) => [f(t), sin(t)], x, { into: new Float64Array(64) })).toThrow(/one leaf to one leaf/);
    expect(() => jacfwd((p: Scalar[]) => mul(p[0], p[1]), [1, 2], { into: new Float64Array(2) })).toThrow(/a tensor among them/);
    expect(() => jacfwd(f, x, { inot: new Float64Array(24) } as never)).toThrow(WengertError);
  });
});
