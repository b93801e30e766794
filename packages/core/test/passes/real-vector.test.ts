/**
 * x given as an array of numbers, the commonest input of grad: its shape `real^n` is made
 * once for calls of the same length (structure.ts realVector), and its traced reals are
 * made without the general walk (api/tracing.ts openTraceAt), as a fresh array per call.
 */
import { describe, expect, it } from "vitest";
import { flatten, isRealVector, realVector, REAL } from "../../src/structure.js";
import { grad, mul, sub, add, traceOf, type Scalar } from "../../src/index.js";

const isNumber = (v: unknown): v is number => typeof v === "number";

describe("x an array of numbers", () => {
  it("calls of one length share the shape real^n; another length gets its own", () => {
    const a = flatten([1, 2, 3], "x", isNumber, "an input").shape;
    const b = flatten([4, 5, 6], "x", isNumber, "an input").shape;
    expect(b).toBe(a);
    const c = flatten([1, 2], "x", isNumber, "an input").shape;
    expect(c).not.toBe(a);
    expect(c).toEqual({ kind: "tuple", items: [REAL, REAL] });
    expect(isRealVector(c)).toBe(true);
    expect(realVector(3)).toEqual(a);
    // a shape written out by hand, or made by the general walk, is not one
    expect(isRealVector({ kind: "tuple", items: [REAL, REAL] })).toBe(false);
    expect(isRealVector(flatten([1, [2]], "x", isNumber, "an input").shape)).toBe(false);
  });

  it("f gets a fresh array of traced reals per call, which it may change without effect on x or the next call", () => {
    const seen: unknown[] = [];
    const f = (x: Scalar[]): Scalar => {
      seen.push(x);
      const y = add(mul(x[0], x[1]), x[2]);
      x[0] = 0; // f's own array
      x.push(1);
      return y;
    };
    const x = [2, 3, 4];
    expect(grad(f, x)).toEqual([3, 2, 1]);
    expect(grad(f, x)).toEqual([3, 2, 1]);
    expect(x).toEqual([2, 3, 4]);
    expect(seen[0]).not.toBe(seen[1]);
    expect(seen[0]).not.toBe(x);
  });

  it("lengths interleaved give each call its own inputs, in order", () => {
    const f = (x: Scalar[]): Scalar => x.reduce<Scalar>((s, xi, i) => add(s, mul(i + 1, sub(xi, 1))), 0);
    for (const n of [3, 4, 3, 1, 4, 0]) {
      const x = Array.from({ length: n }, (_, i) => i / 2);
      expect(grad(f, x)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
      const term = traceOf(f, x);
      expect(term.params[0].atoms).toHaveLength(n);
      expect(Array.from(term.params[0].atoms, (v) => term.tape.val[v])).toEqual(x);
    }
  });
});
