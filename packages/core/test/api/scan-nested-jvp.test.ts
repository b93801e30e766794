/**
 * A jvp traced inside another transformation (grad of jvp, hessian of jvp, jvp of jvp)
 * pushes a scan forward as scans (diff/scan-tangent-nested.ts): the loop's numbers, bit for
 * bit, for carries of reals, two carries, xs of data that make the tape fold, a time counter
 * and decisions that change part way; one-hot tangents (1 and 0, where rules multiply by
 * 1); and a derivative term whose instructions do not grow with the iterations (counted:
 * written out, the loop would give it some per iteration).
 */
import { describe, expect, it } from "vitest";
import { add, cos, derivativeOf, exp, grad, hessian, jit, jvp, lt, mul, scan, sin, sub, tanh, traceOf, vmap, type Scalar } from "../../src/index.js";
import { expectSame } from "../helpers/same-bits.js";
import { gradNorm, sumSquares, type F } from "../helpers/nested.js";

/** A step of the loop: the carry, iteration i's data (or none), the parameter. */
type Step = (carry: Scalar[], x: Scalar[], a: Scalar) => Scalar[];

const STEPS: { name: string; step: Step; carry: number; nx: number }[] = [
  { name: "y ← exp(a·sin y) (rules reading carry′)", step: ([y], _x, a) => [exp(mul(a, sin(y)))], carry: 1, nx: 0 },
  { name: "tanh(a·y)", step: ([y], _x, a) => [tanh(mul(a, y))], carry: 1, nx: 0 },
  // y grows and crosses 1 once
  { name: "decisions that change part way", step: ([y], _x, a) => [lt(y, 1) ? add(y, mul(0.05, a)) : add(y, mul(0.01, exp(mul(-1, mul(a, y)))))], carry: 1, nx: 0 },
  {
    name: "two carries (Euler steps of Lotka–Volterra)",
    step: ([u, v], _x, a) => {
      const uv = mul(u, v);
      return [add(u, mul(0.01, sub(mul(a, u), uv))), add(v, mul(0.01, sub(uv, mul(3, v))))];
    },
    carry: 2,
    nx: 0,
  },
  { name: "xs of data that fold (x · 1, x + (−0), x⁰)", step: ([y], [x], a) => [add(mul(mul(a, sin(y)), x), x)], carry: 1, nx: 1 },
  { name: "a rule reading a value of the data alone (y·cos x·a)", step: ([y], [x], a) => [mul(mul(y, cos(x)), a)], carry: 1, nx: 1 },
];

/** Data with values where the tape folds (or none), repeating (a few constants of any trace). */
const data = (n: number, nx: number, folding: boolean): number[][] => {
  const values = folding ? [0.25, 1, -0, 0.7, 0, 1.5, 0.4, 2] : [0.25, 0.7, 1.5, 0.4, 2, 0.45, 0.9, 1.2];
  return Array.from({ length: n }, (_, i) => Array.from({ length: nx }, (_, l) => values[(i * (l + 3) + l) % 8]));
};

/** f(θ) = Σ carry² (+ 0.01 Σ ys) after n steps from θ's first leaves, a = θ's last: a scan, or the loop written out. */
function model(step: Step, carry: number, nx: number, n: number, ys = false, folding = true): { scanned: F; loop: F } {
  const xs = data(n, nx, folding);
  const out = (c: Scalar[], path: Scalar[]): Scalar => add(sumSquares(c), path.reduce<Scalar>((s, p) => add(s, mul(0.01, p)), 0));
  const scanned: F = (th) => {
    const a = th[th.length - 1];
    const body = (c: Scalar[], x: Scalar[]): [Scalar[], Scalar] | [Scalar[]] => {
      const next = step(c, x, a);
      return ys ? [next, next[0]] : [next];
    };
    const [c, path] = nx === 0 ? scan((c: Scalar[]) => body(c, []), th.slice(0, carry), n) : scan(body, th.slice(0, carry), xs);
    return out(c as Scalar[], (path ?? []) as unknown as Scalar[]);
  };
  const loop: F = (th) => {
    const a = th[th.length - 1];
    let c = th.slice(0, carry);
    const path: Scalar[] = [];
    for (let i = 0; i < n; i++) {
      c = step(c, xs[i], a);
      if (ys) path.push(c[0]);
    }
    return out(c, path);
  };
  return { scanned, loop };
}

/** f's tangent along v, as a function of the point. */
const tangent =
  (f: F, v: number[]): F =>
  (x) =>
    jvp(f, x, v)[1] as Scalar;

describe("a jvp inside another transformation: the loop's numbers, bit for bit", () => {
  for (const { name, step, carry, nx } of STEPS) {
    for (const ys of [false, true]) {
      it(`${name}${ys ? ", ys used" : ""}: grad of jvp, hessian of jvp, jvp of jvp, grad∘grad of jvp`, () => {
        const { scanned: S, loop: L } = model(step, carry, nx, 37, ys);
        const th = carry === 1 ? [0.3, 0.8] : [1, 0.5, 1.5];
        for (const v of [th.map((_, i) => 0.1 * (i + 1)), th.map((_, i) => (i === 0 ? 1 : 0))]) {
          expectSame(grad(tangent(S, v), th), grad(tangent(L, v), th));
          expectSame(hessian(tangent(S, v), th), hessian(tangent(L, v), th));
          expectSame(jvp(tangent(S, v), th, v), jvp(tangent(L, v), th, v));
          expectSame(grad(gradNorm(tangent(S, v)), th), grad(gradNorm(tangent(L, v)), th));
        }
      });
    }
  }
});

describe("a jvp inside another transformation, under jit and vmap", () => {
  it("jit and vmap of grad of jvp over a long loop (a stacked scan stepping forward in their traces) give each point's numbers", () => {
    const { scanned: S, loop: L } = model(STEPS[0].step, 1, 0, 600);
    const f = (y: Scalar): Scalar => (grad(tangent(S, [0.1, 0.2]), [y, 0.8]) as Scalar[])[1];
    const g = (y: Scalar): Scalar => (grad(tangent(L, [0.1, 0.2]), [y, 0.8]) as Scalar[])[1];
    const xs = [0.3, 0.5, 1.5, -0.7];
    expectSame(vmap(f)(Float64Array.from(xs)), Float64Array.from(xs, (x) => g(x) as number));
    const jf = jit(f);
    for (let round = 0; round < 3; round++) for (const x of xs) expectSame(jf(x), g(x));
  });
});

describe("a jvp inside another transformation: instructions that do not grow with the iterations", () => {
  it("two captured values whose tangents are one constant (a one-hot direction): the same for n = 100 and 10⁴, the loop's numbers", () => {
    const S = (n: number): F => ([y0, a, b]) => scan((y: Scalar) => [add(exp(mul(a, sin(y))), mul(0.1, b))], y0, n)[0];
    const L: F = ([y0, a, b]) => {
      let y = y0;
      for (let i = 0; i < 40; i++) y = add(exp(mul(a, sin(y))), mul(0.1, b));
      return y;
    };
    const th = [0.3, 0.8, 0.5];
    const v = [1, 0, 0];
    expectSame(grad(tangent(S(40), v), th), grad(tangent(L, v), th));
    expectSame(hessian(tangent(S(40), v), th), hessian(tangent(L, v), th));
    const size = (n: number): number => derivativeOf(tangent(S(n), v), th, 1).length;
    expect(size(10_000)).toBe(size(100));
  });
  for (const { name, step, carry, nx } of STEPS) {
    it(`${name}: the trace of a jvp inside grad, and grad's derivative term, the same for n = 100 and 10⁴${nx > 0 ? " (data that folds nowhere)" : ""}`, () => {
      const th = carry === 1 ? [0.3, 0.8] : [1, 0.5, 1.5];
      const v = th.map((_, i) => 0.1 * (i + 1));
      const sizes = (n: number, which: "scanned" | "loop" = "scanned"): number[] => {
        const f = tangent(model(step, carry, nx, n, false, false)[which], v);
        return [traceOf(f, th).length, derivativeOf(f, th, 1).length];
      };
      const small = sizes(100);
      expect(sizes(10_000)).toEqual(small);
      // the loop written out: some instructions per iteration
      const written = sizes(100, "loop");
      expect(written[0]).toBeGreaterThan(3 * small[0]);
      expect(written[1]).toBeGreaterThan(3 * small[1]);
    });
  }
});
