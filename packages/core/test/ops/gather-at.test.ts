/**
 * gather and scatterAdd with traced indices (gatherAt, scatterAddAt): indices that are an
 * input of a trace, not a parameter baked into it. A jitted function taking its indices
 * as an argument replays each call at that call's indices; the numbers, derivatives up to
 * second order included, are those of gather and scatterAdd at the same indices held as
 * numbers, to the bit; the indices carry no derivative; and a replay at indices outside
 * the axis is refused.
 */
import ndarray from "ndarray";
import { IndexValueError } from "@wengert/ops";
import { describe, expect, it } from "vitest";
import { div, gather, grad, jit, jvp, mul, scatterAdd, square, sub, sum, traceOf, type NdArray, type Tensor } from "../../src/index.js";
import { expectSame } from "../helpers/same-bits.js";
import { fdGradient, thrown } from "../helpers/check.js";
import { rng } from "../helpers/tensors.js";

const random = (dims: number[], seed: number): NdArray => {
  const r = rng(seed);
  return ndarray(Float64Array.from({ length: dims.reduce((a, b) => a * b, 1) }, () => r() * 4 - 2), dims);
};
const P = random([6, 3], 1);
const C = random([4, 3], 2);
const W = random([4, 3], 3);
const AT = [[3, 0, 1, 1, 3, 2], [0, 0, 0, 2, 1, 1], [2, 2, 3, 0, 1, 3]];
const ones = ndarray(new Float64Array(12).fill(1), [4, 3]);

/** kmeans' cost at an assignment, in terms of the public gather (indices numbers or traced). */
const cost = (c: NdArray | Tensor, at: ArrayLike<number> | Tensor) => sum(square(sub(gather(c, at, 0), P)));
/** A function of both gatherAt and scatterAddAt, nonlinear in c. */
const both = (c: NdArray | Tensor, at: ArrayLike<number> | Tensor) => sum(mul(square(scatterAdd(c, at, square(sub(gather(c, at), P)))), W));

interface X {
  c: Tensor;
  at: Tensor;
}

describe("gather and scatterAdd with traced indices", () => {
  it("record gatherAt and scatterAddAt, the indices an argument of the trace", () => {
    const printed = String(traceOf((x: X) => both(x.c, x.at), { c: C, at: Float64Array.from(AT[0]) }));
    expect(printed).toContain("gatherAt");
    expect(printed).toContain("scatterAddAt");
    expect(printed).not.toMatch(/indices=/);
  });

  it("replay each call at its own indices, the numbers of gather at them to the bit: value, gradient, forward over reverse", () => {
    const value = jit((x: X) => both(x.c, x.at));
    const gradient = jit((x: X) => grad((c: Tensor) => both(c, x.at), x.c));
    const dir = jit((x: X) => {
      const [J, H1] = jvp((c: Tensor) => grad((c2: Tensor) => cost(c2, x.at), c), x.c, ones);
      return div(J as Tensor, H1 as Tensor);
    });
    for (const at of [...AT, AT[0]]) {
      const x = { c: C, at: Float64Array.from(at) };
      expectSame(value(x), both(C, at));
      expectSame(gradient(x), grad((c: Tensor) => both(c, at), C));
      const [J, H1] = jvp((c: Tensor) => grad((c2: Tensor) => cost(c2, at), c), C, ones) as [NdArray, NdArray];
      expectSame(dir(x), div(J, H1));
    }
    // traced once, replayed at every other call: the indices were read from the argument, not the trace
    expect(value.stats.traces).toBe(1);
    expect(gradient.stats.traces).toBe(1);
    expect(dir.stats.traces).toBe(1);
  });

  it("have the derivatives of gather at fixed indices: against central differences, and a Hessian's products to the bit", () => {
    const at = AT[2];
    const g = jit((x: X) => grad((c: Tensor) => both(c, x.at), x.c))({ c: C, at: Float64Array.from(at) }) as NdArray;
    const flat = (v: number[]) => both(ndarray(Float64Array.from(v), [4, 3]), at) as number;
    const fd = fdGradient(flat, [...C.data]);
    g.data.forEach((v, i) => expect(v).toBeCloseTo(fd[i], 4));
    // second order through both rules: the Hessian along W, by forward over reverse
    const traced = jit((x: X) => jvp((c: Tensor) => grad((c2: Tensor) => both(c2, x.at), c), x.c, W));
    expectSame(traced({ c: C, at: Float64Array.from(at) }), jvp((c: Tensor) => grad((c2: Tensor) => both(c2, at), c), C, W));
    // and by reverse over reverse, the gradient of ⟨∇f, W⟩
    const rr = (at: ArrayLike<number> | Tensor) => (c: Tensor) => sum(mul(grad((c2: Tensor) => both(c2, at), c) as Tensor, W));
    expectSame(jit((x: X) => grad(rr(x.at), x.c))({ c: C, at: Float64Array.from(at) }), grad(rr(at), C));
  });

  it("untraced, indices in an ndarray are read as the numbers they hold", () => {
    expectSame(gather(C, ndarray(Float64Array.from(AT[2]), [6]), 0), gather(C, AT[2], 0));
    expectSame(scatterAdd(C, ndarray(Float64Array.from(AT[1]), [6]), P), scatterAdd(C, AT[1], P));
    expect(thrown(() => gather(C, ndarray(Float64Array.from(AT[2]), [2, 3]))).message).toContain("expected a vector");
  });

  it("carry no derivative: the indices' gradient is zero", () => {
    const g = grad((x: X) => both(x.c, x.at), { c: C, at: Float64Array.from(AT[1]) }) as { c: NdArray; at: Float64Array };
    expect([...g.at]).toEqual([0, 0, 0, 0, 0, 0]);
    expectSame(g.c, grad((c: Tensor) => both(c, AT[1]), C));
  });

  it("refuse indices that are no positions along the axis, on a replay too", () => {
    const value = jit((x: X) => cost(x.c, x.at));
    value({ c: C, at: Float64Array.from(AT[0]) });
    for (const bad of [[0, 1, 4, 0, 0, 0], [0, -1, 0, 0, 0, 0], [0, 1.5, 0, 0, 0, 0], [0, NaN, 0, 0, 0, 0]]) {
      const e = thrown(() => value({ c: C, at: Float64Array.from(bad) }));
      expect(e).toBeInstanceOf(IndexValueError);
      expect(e.message).toMatch(/^gatherAt: index .* \(position 1|2\) is not a position along axis 0 of length 4/);
    }
    expect(thrown(() => grad((x: X) => sum(gather(x.c, x.at)), { c: C, at: Float64Array.of(5) })).message).toContain("index 5 (position 0)");
  });
});
