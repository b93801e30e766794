/**
 * compileGrad replays a cached trace where its guards hold, and traces again where they
 * do not: the gradients are those of grad, call after call.
 */
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import {
  abs,
  add,
  atan2,
  compileGrad,
  cos,
  div,
  exp,
  grad,
  gt,
  hessian,
  hvp,
  jacobian,
  jvp,
  lt,
  mul,
  primal,
  sin,
  sqrt,
  square,
  sub,
  sum,
  valueAndGrad,
  type Scalar,
  type Tensor,
} from "../../src/index.js";
import { trace } from "../../src/api/tracing.js";

const rosen = (x: readonly Scalar[]): Scalar => {
  let s: Scalar = 0;
  for (let i = 0; i < x.length - 1; i++) s = add(s, add(mul(100, square(sub(x[i + 1], square(x[i])))), square(sub(1, x[i]))));
  return s;
};

describe("compileGrad", () => {
  it("replays a straight-line trace: the same numbers as grad at every point", () => {
    const g = compileGrad(rosen);
    fc.assert(
      fc.property(fc.array(fc.double({ min: -2, max: 2, noNaN: true }), { minLength: 5, maxLength: 5 }), (x) => {
        expect(g(x)).toEqual(grad(rosen, x));
        expect(g.valueAndGrad(x)[0]).toBe(valueAndGrad(rosen, x)[0]);
      }),
      { numRuns: 40 },
    );
    expect(g.stats.traces).toBe(1);
    expect(g.stats.replays).toBeGreaterThan(40);
  });

  it("a −0 reaching x + 0 gives +0 on every path: the trace keeps the addition (folding it gave atan2(−0, −1) = −π)", () => {
    const f = (x: Scalar[]) => mul(x[1], atan2(add(x[0], 0), -1));
    const plain = (x: number[]) => x[1] * Math.atan2(x[0] + 0, -1);
    const g = compileGrad(f);
    for (const x of [[1, 2], [-0, 1], [0.5, 3], [-0, 1], [-0, 2], [-0, 1]]) {
      const want = [(x[1] * -1) / (x[0] * x[0] + 1), Math.atan2(x[0] + 0, -1)]; // atan2's rule, in its order
      expect(valueAndGrad(f, x)).toEqual([plain(x), want]);
      expect(g.valueAndGrad(x)).toEqual([plain(x), want]);
    }
    expect(g.stats.compiled).toBeGreaterThan(0);
    // on tensors: an elementwise x + 0 is kept too
    const t = (v: Tensor) => sum(atan2(add(v, 0), -1));
    expect(valueAndGrad(t, Float64Array.of(-0, 0))[0]).toBe(2 * Math.PI);
  });

  it("a branch decided otherwise is traced again; each trace is right on its side", () => {
    // Newton's iteration for sqrt(a): the loop count depends on a
    const newton = (a: Scalar): Scalar => {
      let y: Scalar = a;
      for (let k = 0; k < 50 && gt(abs(sub(square(y), a)), 1e-12); k++) y = mul(0.5, add(y, div(a, y)));
      return gt(y, 1) ? mul(y, square(y)) : sin(y);
    };
    const g = compileGrad(newton);
    for (const a of [0.5, 0.6, 2, 2.1, 0.7, 3, 0.25]) expect(g(a)).toBeCloseTo(grad(newton, a) as number, 12);
    expect(g.stats.traces).toBeGreaterThan(1);
    expect(g.stats.traces + g.stats.replays).toBe(7);
  });

  it("property: random piecewise functions, random points, always equal to grad", () => {
    const pieces = (x: readonly Scalar[]): Scalar => {
      const s = add(mul(x[0], x[1]), sin(x[2]));
      return lt(s, 0) ? mul(s, exp(x[1])) : lt(x[0], x[2]) ? square(s) : cos(mul(x[0], x[2]));
    };
    const g = compileGrad(pieces);
    fc.assert(
      fc.property(fc.array(fc.double({ min: -3, max: 3, noNaN: true }), { minLength: 3, maxLength: 3 }), (x) => {
        expect(g(x)).toEqual(grad(pieces, x));
      }),
      { numRuns: 80 },
    );
    expect(g.stats.replays).toBeGreaterThan(0);
    expect(g.stats.traces).toBeGreaterThan(1);
  });

  it("only a trace to be replayed keeps its decisions as guards, and so does every trace opened inside it", () => {
    const newton = (a: Scalar) => {
      let y = a;
      for (let i = 0; i < 20 && gt(abs(sub(mul(y, y), a)), 1e-12); i++) y = mul(0.5, add(y, div(a, y)));
      return y;
    };
    const decisions = (x: number) => trace("test", ((a: Scalar) => newton(a)) as never, x, {}, "replay").trace.guards.length;
    expect(decisions(2)).toBeGreaterThan(3);
    // grad's own trace (not replayed) keeps none
    expect(trace("test", ((a: Scalar) => newton(a)) as never, 2, {}).trace.guards).toHaveLength(0);
    // an inner grad's decisions reach a replayed trace (placed with its term), not a plain one
    const inner = (a: Scalar) => grad((b: Scalar) => mul(newton(b), a), a);
    expect(trace("test", inner as never, 2, {}, "replay").trace.guards.length).toBeGreaterThan(3);
    expect(trace("test", inner as never, 2, {}).trace.guards).toHaveLength(0);
  });

  it("decisions taken inside an inner grad, jvp, hessian, hvp or jacobian guard the replay too", () => {
    // f(x) = d/dy [y > 1 ? y² : 3y] at y = x: 2x for x > 1, 3 below; f' is 2, then 0
    const inner = (y: Scalar): Scalar => (gt(y, 1) ? mul(y, y) : mul(3, y));
    const f = (x: readonly Scalar[]): Scalar => grad(inner, x[0]) as Scalar;
    const g = compileGrad(f);
    const points = [2, 2, 2, 2, 0.5, 0.5, 2, 0.5, 3, 0.25];
    for (const x0 of points) expect(g([x0])).toEqual([x0 > 1 ? 2 : 0]);
    expect(g.stats.replays).toBeGreaterThan(0);
    // the same through forward mode, and for a read of the inner traced value (never replayed)
    const h = compileGrad((x: readonly Scalar[]) => mul(x[0], jvp(inner, x[0], 1)[1] as Scalar));
    for (const x0 of points) expect(h([x0])).toEqual([x0 > 1 ? 4 * x0 : 3]);
    const read = compileGrad((x: readonly Scalar[]) => grad((y: Scalar) => (primal(y) > 1 ? mul(y, y) : mul(3, y)), x[0]) as Scalar);
    for (const x0 of points) expect(read([x0])).toEqual([x0 > 1 ? 2 : 0]);
    expect(read.stats.replays).toBe(0);
    // and through hessian, hvp and jacobian: x³ above 1, 3x² below
    const cubic = (y: readonly Scalar[]): Scalar => (gt(y[0], 1) ? mul(mul(y[0], y[0]), y[0]) : mul(3, mul(y[0], y[0])));
    const viaHessian = compileGrad((x: readonly Scalar[]) => (hessian(cubic, [x[0]]) as Scalar[][])[0][0]);
    const viaHvp = compileGrad((x: readonly Scalar[]) => (hvp(cubic, [x[0]], [1]) as Scalar[])[0]);
    const viaJacobian = compileGrad((x: readonly Scalar[]) => (jacobian((y: Scalar[]) => [cubic(y)], [x[0]]) as Scalar[][])[0][0]);
    for (const x0 of points) {
      expect(viaHessian([x0])).toEqual([x0 > 1 ? 6 : 0]);
      expect(viaHvp([x0])).toEqual([x0 > 1 ? 6 : 0]);
      expect(viaJacobian([x0])).toEqual([x0 > 1 ? 6 * x0 : 6]);
    }
  });

  it("a kink or a tie met on replay is traced (and reported) again", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const g = compileGrad((x: Scalar) => add(abs(x), lt(x, 1) ? 0 : x));
    g(0.5);
    expect(g(0)).toBe(grad((x: Scalar) => add(abs(x), lt(x, 1) ? 0 : x), 0));
    g(0.5);
    expect(g(1)).toBe(2);
    expect(warn).toHaveBeenCalled();
    warn.mockRestore();
  });

  it("grad and compileGrad agree on what a tie is: two variables with equal values, not one variable on both sides", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const warnings = (run: () => unknown): number => {
      warn.mockClear();
      run();
      return warn.mock.calls.length;
    };
    // x · 1 is x: the decision is x < x, the same at every point, so no tie anywhere
    const same = (x: readonly Scalar[]) => (lt(mul(x[0], 1), x[0]) ? x[0] : sin(x[0]));
    // an inner derivative taken at the outer x, whose inner branch is decided at y = x: a tie
    // every call, though placed in the outer trace both sides are x
    const inner = (x: readonly Scalar[]) => grad((y: Scalar) => (lt(y, x[0]) ? mul(y, 2) : mul(y, 3)), x[0]) as Scalar;
    const [gSame, gInner] = [compileGrad(same), compileGrad(inner)];
    for (let k = 0; k < 5; k++) {
      const x = [1 + k / 8];
      expect(warnings(() => grad(same, x))).toBe(0);
      expect(warnings(() => expect(gSame(x)).toEqual(grad(same, x)))).toBe(0);
      let want: unknown;
      expect(warnings(() => (want = grad(inner, x)))).toBe(1);
      expect(warnings(() => expect(gInner(x)).toEqual(want))).toBe(1);
    }
    expect(() => grad(same, [1], { ties: "error" })).not.toThrow();
    expect(gSame.stats).toMatchObject({ traces: 1, replays: 4 });
    expect(gInner.stats).toMatchObject({ traces: 5, replays: 0 });
    warn.mockRestore();
  });

  it("a TieError that f catches leaves a trace that is never replayed (the decision that threw has no guard)", () => {
    const f = (x: Scalar) => {
      try {
        return lt(x, 1) ? mul(x, 2) : mul(x, x);
      } catch {
        return mul(x, 10);
      }
    };
    const g = compileGrad(f, { ties: "error" });
    expect([1, 2, 3, 2].map((x) => g(x))).toEqual([10, 4, 6, 4]);
    expect(g.stats.traces).toBeGreaterThan(1);
    // and the same through an inner grad whose tie throws
    const h = (x: Scalar) => {
      let d: Scalar = 0;
      try {
        d = grad((y: Scalar) => (lt(y, 1) ? mul(y, 2) : mul(y, y)), x, { ties: "error" }) as Scalar;
      } catch {
        d = 0;
      }
      return mul(x, d);
    };
    const gh = compileGrad(h);
    expect([1, 2, 3].map((x) => gh(x))).toEqual([0, 8, 12]);
  });

  it("checkNaN checks the reverse rules too, as grad's does (sqrt at 0: only the derivative is infinite)", () => {
    const g = compileGrad((x: Scalar) => sqrt(x), { checkNaN: true });
    expect(() => g(0)).toThrow(/^compileGrad: checkNaN: the reverse rule of sqrt/);
    expect(g(4)).toBe(0.25);
    expect(compileGrad((x: Scalar) => sqrt(x))(0)).toBe(Infinity);
  });

  it("another structure is traced again, however its record keys are spelt", () => {
    const f = (p: Record<string, Scalar>) => Object.values(p).reduce<Scalar>((s, v) => add(s, mul(v, v)), 0);
    const g = compileGrad(f);
    for (let k = 0; k < 3; k++) g({ a: 1, b: 2 });
    // {"a: real, b": real} printed as {a: real, b: real} keyed the cache before
    const x = { "a: real, b": 5 };
    expect(g.valueAndGrad(x)).toEqual(valueAndGrad(f, x));
    expect(g.stats.traces).toBe(2);
  });

  it("a trace that read a value (primal, .value) is never replayed", () => {
    const f = (x: Scalar): Scalar => (primal(x) > 0 ? mul(x, x) : mul(3, x));
    const g = compileGrad(f);
    expect(g(2)).toBe(4);
    expect(g(-2)).toBe(3);
    expect(g(5)).toBe(10);
    expect(g.stats.replays).toBe(0);
  });

  it("records of numbers, and inside rd it differentiates through (nested use)", () => {
    const f = (p: { w: Scalar; b: Scalar }) => square(sub(add(mul(p.w, 2), p.b), 1));
    const g = compileGrad(f);
    expect(g({ w: 1, b: 0 })).toEqual(grad(f, { w: 1, b: 0 }));
    expect(g({ w: 0.5, b: 0.25 })).toEqual(grad(f, { w: 0.5, b: 0.25 }));
    expect(g.stats.replays).toBe(1);
    const h = compileGrad((x: Scalar) => mul(x, mul(x, x)));
    // d/dx of h'(x) = 6x: compileGrad inside grad is traced like grad
    expect(grad((x: Scalar) => h(x as number) as Scalar, 2)).toBe(12);
  });

  it("inside rd, f closing over the enclosing trace's values is differentiated through them, cached trace or not", () => {
    let y: Scalar = 5;
    const g = compileGrad((x: Scalar) => mul(square(x), y));
    expect([g(2), g(3)]).toEqual([20, 30]);
    expect(g.stats).toMatchObject({ traces: 1, replays: 1 });
    // d/dy of g(2) = d/dy (2·2·y) = 4: the cached trace has y = 5 as a literal, so it is not replayed here
    const outer = grad((t: Scalar) => {
      y = t;
      return g(2) as Scalar;
    }, 7);
    expect(outer).toBe(4);
    y = 5;
  });
});

describe("compileGrad with ties: 'ignore'", () => {
  it("replays through a tie (the branch the trace took), with the same numbers as grad", () => {
    const f = (x: readonly Scalar[]) => add(gt(x[0], 1) ? mul(x[0], x[1]) : sin(x[1]), abs(x[1]));
    const g = compileGrad(f, { ties: "ignore" });
    for (const x of [[0.5, 2], [1, 2], [0.25, 0], [0.75, 3]]) expect(g(x)).toEqual(grad(f, x, { ties: "ignore" }));
    expect(g.stats).toEqual({ traces: 1, replays: 3, compiled: 1 });
  });
});
