/**
 * `hessian` at the outermost level: f traced once, each column H·e_i by hvp's sweep
 * (diff/hvp-sweep.ts). Against `jacfwd` of `grad`, which is how hessian computed it before
 * (the derivative term of grad built in jacfwd's trace, one forward sweep per input), to
 * the bit (toEqual tells −0 from 0), on every scalar primitive and on random programs;
 * against closed forms; nested in other derivatives (the symbolic path, differentiable
 * again); and on a long trace.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BINARY_NAMES, UNARY_NAMES } from "@wengert/ops";
import { add, cos, defineOp, grad, hessian, hvp, jacfwd, jacrev, mul, OutputTypeError, sin, square, type Scalar } from "../../src/index.js";
import { expectClose } from "../helpers/check.js";
import { binaryCases, point, rosenbrock, rosenbrockHessian, special, unaryCases, type F } from "../helpers/cases.js";
import { branchy } from "../helpers/programs/generate.js";
import { firstOf } from "../helpers/programs/run.js";
import { IGNORE } from "../helpers/ties.js";


/** The Hessian as hessian computed it before the sweep: jacfwd of grad. */
const before = (f: F, x: number[]): unknown => jacfwd((p: Scalar[]) => grad(f, p, IGNORE), x, IGNORE);

function expectSame(f: F, x: number[]): void {
  expect(hessian(f, x, IGNORE), `hessian at ${x}`).toEqual(before(f, x));
}

const transpose = (H: number[][]): number[][] => H.map((_, i) => H.map((row) => row[i]));

describe("hessian's sweep = jacfwd of grad built symbolically, to the bit", () => {
  it.each([...UNARY_NAMES])("unary %s, to second order and at its special points", (name) => {
    for (const [f, x] of unaryCases(name)) expectSame(f, x);
  });

  it.each([...BINARY_NAMES])("binary %s, to second order and at its special points", (name) => {
    for (const [f, x] of binaryCases(name)) expectSame(f, x);
  });

  it("on random programs with branches and literals, at random points", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 3 }), point, branchy, (m, x, prog) => expectSame(firstOf(prog), x.slice(0, m))),
      { numRuns: 300, seed: 17 },
    );
  });

  it("on random programs at points made of 0, −0, ±1 and 0.5 (signed zeros, ties, kinks)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 3 }), special, branchy, (m, x, prog) => expectSame(firstOf(prog), x.slice(0, m))),
      { numRuns: 600, seed: 23 },
    );
  });

  it("on a scalar, on records, and through an rd inside f", () => {
    for (const x of [0.5, 0, -2]) expect(hessian(sin, x)).toEqual(jacfwd((y: Scalar) => grad(sin, y), x));
    const f = ({ u, w }: { u: Scalar; w: Scalar[] }) => add(mul(u, square(w[0])), mul(w[1], sin(mul(u, w[0]))));
    const x = { u: 0.3, w: [1.2, -0.7] };
    expect(hessian(f, x)).toEqual(jacfwd((p: { u: Scalar; w: Scalar[] }) => grad(f, p as typeof x), x));
    const g = ([p, q]: Scalar[]) => mul(sin(mul(p, q)), cos(q));
    expectSame(([p, q]) => {
      const [gp, gq] = grad(g, [p, q]) as Scalar[];
      return add(mul(gp, gq), square(p));
    }, [0.4, -0.9]);
  });

  it("equals hvp along each basis vector, and the symbolic path it falls back to (checkNaN)", () => {
    const x = [0.3, -1.2, 0.8];
    const f: F = ([a, b, c]) => add(mul(sin(mul(a, b)), square(c)), mul(cos(a), b));
    const H = hessian(f, x) as number[][];
    x.forEach((_, i) => expect(H.map((row) => row[i])).toEqual(hvp(f, x, x.map((_, j) => (j === i ? 1 : 0)))));
    expect(hessian(f, x, { checkNaN: true })).toEqual(H);
  });
});

describe("hessian against closed forms", () => {
  it("rosenbrock, at random points: the closed form, and symmetric to the bit", () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: -2, max: 2, noNaN: true }), { minLength: 2, maxLength: 30 }), (x) => {
        const H = hessian(rosenbrock, x) as number[][];
        expectClose(H, rosenbrockHessian(x), 1e-12, 1e-9, "hessian");
        expect(H).toEqual(transpose(H));
      }),
      { numRuns: 100, seed: 3 },
    );
  });

  it("a quadratic form xᵀAx gives A + Aᵀ exactly, at any point", () => {
    const A = [[2, -1, 3, 0], [4, 0.5, -2, 1], [0, 7, 1, -3], [-1, 2, 0, 5]];
    const q: F = (x) => {
      let s: Scalar = 0;
      for (let i = 0; i < A.length; i++) for (let j = 0; j < A.length; j++) s = add(s, mul(A[i][j], mul(x[i], x[j])));
      return s;
    };
    for (const x of [[1, 2, 3, 4], [-0.3, 0.7, 0, 1e3], [0, 0, 0, 0]]) expect(hessian(q, x)).toEqual(A.map((row, i) => row.map((a, j) => a + A[j][i])));
  });

  it("finite and symmetric up to rounding on random programs, where the order of the sums differs", () => {
    fc.assert(
      fc.property(point, branchy, (x, prog) => {
        // where f has no derivative (atan2 at the origin, pow at 0 among subnormal points) neither H is checked;
        // elsewhere every entry must be finite: expectClose fails on NaN and ∞
        fc.pre((grad(firstOf(prog), x, IGNORE) as number[]).every(Number.isFinite));
        const H = hessian(firstOf(prog), x, IGNORE) as number[][];
        expectClose(H, transpose(H), 1e-9, 1e-9, "H against Hᵀ");
      }),
      { numRuns: 300, seed: 29 },
    );
  });

  it("a trace of 10⁵ instructions and 3 inputs, without recursion: y_{k+1} = sin y_k from y₀ = ab + c", () => {
    const n = 100_000;
    const f: F = ([a, b, c]) => {
      let y = add(mul(a, b), c);
      for (let k = 0; k < n; k++) y = sin(y);
      return y;
    };
    const x = [0.6, 0.9, 0.2];
    // y_n as a function of u = ab + c: y' and y'' along the chain; H = y''·∇u∇uᵀ + y'·∇²u
    let [y, d1, d2] = [x[0] * x[1] + x[2], 1, 0];
    for (let k = 0; k < n; k++) [y, d1, d2] = [Math.sin(y), Math.cos(y) * d1, Math.cos(y) * d2 - Math.sin(y) * d1 * d1];
    const du = [x[1], x[0], 1];
    const d2u = [[0, 1, 0], [1, 0, 0], [0, 0, 0]];
    expectClose(hessian(f, x), du.map((p, i) => du.map((q, j) => d2 * p * q + d1 * d2u[i][j])), 1e-9, 1e-15, "hessian of the chain");
  }, 60_000);
});

describe("hessian nested in other derivatives (the symbolic path)", () => {
  // f = x³y² + sin(xy), with s = sin(xy), c = cos(xy)
  const f: F = ([x, y]) => add(mul(mul(x, square(x)), square(y)), sin(mul(x, y)));
  const third = ([x, y]: number[]): number[][][] => {
    const [s, c] = [Math.sin(x * y), Math.cos(x * y)];
    const xxx = 6 * y * y - y ** 3 * c;
    const xxy = 12 * x * y - 2 * y * s - x * y * y * c;
    const xyy = 6 * x * x - 2 * x * s - x * x * y * c;
    const yyy = -(x ** 3) * c;
    return [[[xxx, xxy], [xxy, xyy]], [[xxy, xyy], [xyy, yyy]]];
  };
  const points = [[0.7, -1.1], [1.3, 0.4], [-0.5, 2]];

  it("third derivatives: jacrev and jacfwd of hessian, grad of an entry", () => {
    for (const p of points) {
      const T = third(p);
      expectClose(jacrev((q: Scalar[]) => hessian(f, q), p), T, 1e-12, 1e-12, `jacrev of hessian at ${p}`);
      expectClose(jacfwd((q: Scalar[]) => hessian(f, q), p), T, 1e-12, 1e-12, `jacfwd of hessian at ${p}`);
      expectClose(grad((q: Scalar[]) => (hessian(f, q) as Scalar[][])[0][1], p), T[0][1], 1e-12, 1e-12, `∇ of H[0][1] at ${p}`);
    }
  });

  it("fourth derivatives: hessian (the sweep) of an entry of hessian (nested)", () => {
    for (const [x, y] of points) {
      const [s, c] = [Math.sin(x * y), Math.cos(x * y)];
      const xxxx = y ** 4 * s;
      const xxxy = 12 * y - 3 * y * y * c + x * y ** 3 * s;
      const xxyy = 12 * x - 2 * s - 4 * x * y * c + x * x * y * y * s;
      expectClose(hessian((q: Scalar[]) => (hessian(f, q) as Scalar[][])[0][0], [x, y]), [[xxxx, xxxy], [xxxy, xxyy]], 1e-12, 1e-12, `at ${[x, y]}`);
    }
  });

  it("traces f once on every path: the sweep, checkNaN, a user primitive, nested", () => {
    let calls = 0;
    const counted: F = (p) => (calls++, f(p));
    const cube = defineOp({ name: "cube_hessian", forward: (x) => x * x * x, reverse: ([x], _y, ct) => [mul(ct, mul(3, mul(x, x)))] });
    const runs: [string, () => unknown][] = [
      ["sweep", () => hessian(counted, [0.7, -1.1])],
      ["checkNaN", () => hessian(counted, [0.7, -1.1], { checkNaN: true })],
      ["user primitive", () => hessian((p: Scalar[]) => mul(cube(p[0]), counted(p)), [0.7, -1.1])],
      ["nested", () => grad((q: Scalar[]) => (hessian(counted, q) as Scalar[][])[1][1], [0.7, -1.1])],
    ];
    for (const [name, run] of runs) {
      calls = 0;
      run();
      expect(calls, name).toBe(1);
    }
  });

  it("names hessian when f does not return a real", () => {
    expect(() => hessian(((p: Scalar[]) => p) as unknown as F, [1, 2])).toThrow(OutputTypeError);
    expect(() => hessian(((p: Scalar[]) => p) as unknown as F, [1, 2])).toThrow("hessian: f returned real × real at x; hessian needs f to return a real");
  });
});
