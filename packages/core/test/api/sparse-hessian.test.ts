/**
 * hessian inside a trace (jit's, an rd's) emits one sweep along 0 and, per column, only
 * what its input reaches (diff/basis-columns.ts): counted (the trace of rosenbrock's
 * Hessian grows as n, not n²), and the same numbers as the outermost hessian and as one
 * jvp of grad per column inside the trace, to the bit (Object.is: NaN, −0), on every
 * primitive at its special points, on random programs, and at points with NaN and ±∞.
 */
import fc from "fast-check";
import { BINARY_NAMES, UNARY_NAMES } from "@wengert/ops";
import { describe, expect, it, vi } from "vitest";
import { add, grad, hessian, jit, jvp, mul, sqrt, traceOf, vmap, type Scalar } from "../../src/index.js";
import { binaryCases, point, rosenbrock, rosenbrockHessian, special, unaryCases, type F } from "../helpers/cases.js";
import { branchy } from "../helpers/programs/generate.js";
import { firstOf } from "../helpers/programs/run.js";

/** Each entry as a string that tells −0 from 0 and shows NaN (toEqual on these is Object.is entry by entry). */
const bits = (H: unknown): string[][] => (H as number[][]).map((r) => r.map((v) => (Object.is(v, -0) ? "-0" : String(v))));

/** The Hessian as jacfwd of grad used to compute it inside a trace: one jvp of grad per column, densely. */
const perColumn = (f: F) => (x: Scalar[]) => {
  const columns = x.map((_, k) => jvp((p: Scalar[]) => grad(f, p) as Scalar[], x, x.map((_, j) => (j === k ? 1 : 0)))[1] as Scalar[]);
  return x.map((_, j) => columns.map((c) => c[j]));
};

/** jit(hessian), the outermost hessian and the per-column jvps inside jit agree to the bit at x (each jitted function called thrice: traced, replayed, compiled). */
function agree(f: F, xs: readonly number[][]): void {
  const quiet = vi.spyOn(console, "warn").mockImplementation(() => {});
  try {
    const jh = jit((p: Scalar[]) => hessian(f, p), { ties: "ignore" });
    const jc = jit(perColumn(f), { ties: "ignore" });
    for (const x of [...xs, ...xs, ...xs]) {
      const want = bits(hessian(f, x));
      expect(bits(jh(x))).toEqual(want);
      expect(bits(jc(x))).toEqual(want);
    }
  } finally {
    quiet.mockRestore();
  }
}

describe("hessian inside a trace", () => {
  it("costs O(n) instructions for rosenbrock, not n sweeps of the tangent term (counted)", () => {
    const primitives = (n: number): number => traceOf((p: Scalar[]) => hessian(rosenbrock, p), Array.from({ length: n }, (_, i) => Math.cos(i))).tape.countPrimitives();
    const [p50, p100, p200] = [50, 100, 200].map(primitives);
    // one sweep per column emitted ~25 n² instructions (250 000 at n = 100)
    expect(p100).toBeLessThan(60 * 100);
    expect(p200 / p100).toBeLessThan(2.1);
    expect(p100 / p50).toBeLessThan(2.1);
  });

  it("jit(hessian) runs compiled and gives rosenbrock's Hessian, rows of numbers", () => {
    const jh = jit((p: Scalar[]) => hessian(rosenbrock, p));
    for (let k = 0; k < 5; k++) {
      const x = Array.from({ length: 40 }, (_, i) => Math.sin(i + k));
      const H = jh(x) as number[][];
      expect(H).toEqual(hessian(rosenbrock, x));
      const hand = rosenbrockHessian(x);
      H.forEach((row, i) => row.forEach((h, j) => expect(Math.abs(h - hand[i][j])).toBeLessThanOrEqual(1e-12 * Math.max(1, Math.abs(hand[i][j])))));
    }
    expect(jh.stats).toEqual({ traces: 1, replays: 4, compiled: 2 });
  });

  it("NaN and ±∞ in x: NaN·0 stays NaN where one sweep per column has it, and the compiled replay agrees", () => {
    const x = Array.from({ length: 12 }, (_, i) => Math.cos(i));
    const nan = x.map((t, i) => (i === 3 ? NaN : t));
    const inf = x.map((t, i) => (i === 7 ? Infinity : i === 8 ? -Infinity : t));
    agree(rosenbrock, [x, nan, inf, x]);
    const H = jit((p: Scalar[]) => hessian(rosenbrock, p))(nan) as number[][];
    // row 3 meets x_3 in every column (0·NaN), far rows do not
    expect(H[3].every(Number.isNaN)).toBe(true);
    expect(H[10][5]).toBe(0);
    expect(Number.isNaN(H[10][3])).toBe(false);
  });

  it("every primitive at its special points (kinks, 0, domain edges), to the bit", () => {
    for (const name of UNARY_NAMES) for (const [f, x] of unaryCases(name)) agree(f, [x]);
    for (const name of BINARY_NAMES) for (const [f, x] of binaryCases(name)) agree(f, [x]);
  });

  it("property: random programs with branches, at ordinary, special and non-finite points, to the bit", () => {
    const nonFinite = fc.array(fc.constantFrom(NaN, Infinity, -Infinity, 0, -0, 1.5), { minLength: 3, maxLength: 3 });
    fc.assert(
      fc.property(branchy, fc.array(fc.oneof(point, special, nonFinite), { minLength: 1, maxLength: 4 }), (prog, xs) => agree(firstOf(prog), xs)),
      { numRuns: 80 },
    );
  });

  it("under vmap and inside grad: the same numbers as hessian lane by lane, and (to rounding: sums taken in another order) as the derivative of per-column jvps", () => {
    const f: F = (p) => rosenbrock(p);
    const xs = [0, 1, 2].map((k) => Array.from({ length: 5 }, (_, i) => Math.cos(i * k + 1)));
    const lanes = vmap((p: Scalar[]) => hessian(f, p) as Scalar[][])(xs[0].map((_, i) => Float64Array.from(xs, (x) => x[i])) as never) as unknown as Float64Array[][];
    xs.forEach((x, l) => expect(bits(lanes.map((r) => r.map((c) => c[l])))).toEqual(bits(hessian(f, x))));
    const x = xs[1];
    const sum = (H: Scalar[][]): Scalar => H.flat().reduce((s, h) => add(s, h));
    const got = grad((p: Scalar[]) => sum(hessian(f, p) as Scalar[][]), x) as number[];
    const want = grad((p: Scalar[]) => sum(perColumn(f)(p)), x) as number[];
    got.forEach((g, i) => expect(Math.abs(g - want[i])).toBeLessThanOrEqual(1e-12 * Math.abs(want[i])));
  });

  it("with checkNaN (hessian's or the enclosing trace's), one sweep per column, whose messages name the rule where a NaN appears", () => {
    const f: F = (p) => mul(sqrt(p[0]), p[1]);
    const sum = (H: Scalar[][]): Scalar => H.flat().reduce((s, h) => add(s, h));
    const x = [0, 2];
    const message = (run: () => unknown): string => {
      try {
        run();
      } catch (e) {
        return (e as Error).message;
      }
      return "no error";
    };
    const inner = message(() => grad((p: Scalar[]) => sum(hessian(f, p, { checkNaN: true }) as Scalar[][]), x));
    const outer = message(() => grad((p: Scalar[]) => sum(hessian(f, p) as Scalar[][]), x, { checkNaN: true }));
    for (const m of [inner, outer]) expect(m).toMatch(/checkNaN: div\(2, 0\) = Infinity in /);
    const primitives = (options: { checkNaN: boolean }, outer: { checkNaN: boolean }): number =>
      traceOf((p: Scalar[]) => hessian(rosenbrock, p, options), Array.from({ length: 20 }, (_, i) => Math.cos(i)), outer).primitives;
    const sparse = primitives({ checkNaN: false }, { checkNaN: false });
    expect(primitives({ checkNaN: true }, { checkNaN: false })).toBeGreaterThan(3 * sparse);
    expect(primitives({ checkNaN: false }, { checkNaN: true })).toBeGreaterThan(3 * sparse);
  });
});
