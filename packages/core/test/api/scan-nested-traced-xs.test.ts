/**
 * Nested derivatives of a scan whose xs are traced values (computed from the
 * differentiated input: a cotangent per iteration) are scans too (diff/scan-nested.ts):
 * the scan of the rules returns each iteration's x cotangent as its y. The loop's numbers
 * bit for bit to third order, with decisions that change part way and rules that read x;
 * the instructions the nested derivative keeps per iteration are those of the xs alone
 * (their computation and their cotangents), not the body's: counted, for bodies of
 * different sizes. And an x that is the initial carry's variable, at first order.
 */
import { describe, expect, it } from "vitest";
import { add, derivativeOf, exp, grad, hessian, hvp, jit, lt, mul, scan, sin, sub, tanh, type Scalar } from "../../src/index.js";
import { reverseStats } from "../../src/eval/scan-reverse-run.js";
import { expectSame } from "../helpers/same-bits.js";
import { expectSameOverPoints, expectSameToThirdOrder, gradNorm, scanAndLoop, type F, type LoopBody } from "../helpers/nested.js";

type Body = LoopBody;
/** Each iteration's x from θ's last leaf b (a traced value per iteration and leaf). */
type Xs = (b: Scalar, n: number, nx: number) => Scalar[][];

const weights = (n: number, nx: number): number[][] =>
  Array.from({ length: n }, (_, i) => Array.from({ length: nx }, (_, l) => [0.25, 0.7, 1.5, 0.4, 2, 0.45, 0.9, 1.2][(i * (l + 3) + l) % 8]));
/** x = b·dᵢ (its rule reads dᵢ), or exp(b·dᵢ) (its rule reads x itself: x's cotangent is read again after the sweep). */
const scaled: Xs = (b, n, nx) => weights(n, nx).map((d) => d.map((w) => mul(b, w)));
const exps: Xs = (b, n, nx) => weights(n, nx).map((d) => d.map((w) => exp(mul(b, mul(0.1, w)))));

const BODIES: { name: string; body: Body; carry: number; nx: number; xs: Xs }[] = [
  { name: "y ← a·sin y + x (x's cotangent the chain's, passed on)", body: ([y], [x], a) => [add(mul(a, sin(y)), x)], carry: 1, nx: 1, xs: scaled },
  { name: "rules reading x (tanh(a·x·y)), x = exp(b·dᵢ)", body: ([y], [x], a) => [tanh(mul(mul(a, x), y))], carry: 1, nx: 1, xs: exps },
  {
    name: "decisions that change part way (y crosses 1 once)",
    body: ([y], [x], a) => [lt(y, 1) ? add(y, mul(0.05, mul(a, x))) : add(y, mul(0.01, exp(mul(-1, mul(y, x)))))],
    carry: 1,
    nx: 1,
    xs: scaled,
  },
  {
    name: "two carries, two x leaves (forced Euler steps)",
    body: ([u, v], [f, g], a) => {
      const uv = mul(u, v);
      return [add(u, mul(0.01, sub(mul(a, u), mul(uv, f)))), add(v, mul(0.01, sub(uv, mul(g, exp(mul(0.1, v))))))];
    },
    carry: 2,
    nx: 2,
    xs: scaled,
  },
];

/** f(θ) = Σ carry² (+ 0.01 Σ ys) after n iterations, the carry from θ's first leaves, a = θ[carry], the xs from b = θ's last: a scan, or the loop written out. */
const model = (body: Body, carry: number, nx: number, xsOf: Xs, n: number, ys = true): { scanned: F; loop: F } =>
  scanAndLoop(body, carry, (th) => xsOf(th[th.length - 1], n, nx), ys);

describe("nested derivatives of a scan over traced xs: the loop's numbers, bit for bit", () => {
  for (const { name, body, carry, nx, xs } of BODIES) {
    const th = carry === 1 ? [0.3, 0.8, 0.5] : [1, 0.5, 1.5, 0.7];
    it(`${name}: grad∘grad, hessian, hvp, jvp∘grad, jacobian of grad, third orders (ys used and not)`, () => {
      const v = th.map((_, i) => 0.1 * (i + 1));
      for (const ys of [true, false]) {
        const { scanned: S, loop: L } = model(body, carry, nx, xs, 41, ys);
        expectSameToThirdOrder(S, L, th, v);
      }
    });
    it(`${name}: the instructions grad's derivative keeps per iteration are the xs' own, not the body's`, () => {
      const size = (f: F): number => derivativeOf(gradNorm(f), th, 1).length;
      const at = (n: number) => model(body, carry, nx, xs, n, false);
      const { scanned: S, loop: L } = at(64);
      expectSame(grad(gradNorm(S), th), grad(gradNorm(L), th));
      // the same loop with a body 8 times as long (its own instructions, chained): per iteration, the scan's
      // derivative grows by the same count (the xs'), the loop written out by the body's
      const long: Body = (c, x, a) => {
        let next = body(c, x, a);
        for (let k = 0; k < 7; k++) next = body(next, x, a);
        return next;
      };
      const perIteration = (b: Body, which: "scanned" | "loop"): number =>
        (size(model(b, carry, nx, xs, 640, false)[which]) - size(model(b, carry, nx, xs, 64, false)[which])) / 576;
      const own = perIteration(body, "scanned");
      expect(perIteration(long, "scanned")).toBe(own);
      expect(perIteration(body, "loop")).toBeGreaterThan(2 * own);
      expect(perIteration(long, "loop")).toBeGreaterThan(8 * own);
      expect(size(at(640).scanned)).toBeLessThan(size(at(640).loop) / 2);
    });
  }
});

describe("nested derivatives of a scan over traced xs: memory", () => {
  const step = (y: Scalar, x: Scalar, a: Scalar): Scalar => add(mul(mul(a, sin(y)), x), x);
  const xsOf = (b: Scalar, n: number): Scalar[] => Array.from({ length: n }, (_, i) => mul(b, 0.2 + 0.1 * (i % 7)));
  it("grad∘grad at n = 10⁴: the loop's numbers, its sweeps storing about 2√n carries under 'sqrt'", () => {
    const n = 10_000;
    const S: F = ([y0, a, b]) => scan((y: Scalar, x: Scalar) => [step(y, x, a)], y0, xsOf(b, n), { checkpoint: "sqrt" })[0];
    const L: F = ([y0, a, b]) => xsOf(b, n).reduce<Scalar>((y, x) => step(y, x, a), y0);
    expectSame(grad(gradNorm(S), [0.3, 0.8, 0.5]), grad(gradNorm(L), [0.3, 0.8, 0.5]));
    expect(reverseStats.maxStored).toBeLessThanOrEqual(2 * Math.ceil(Math.sqrt(n)));
    expect(reverseStats.swept).toBe(n);
  });
  it("vmap and jit (compiled after replays) of grad∘grad give each point's numbers", () => {
    const S: F = ([y0, a]) => scan((y: Scalar, x: Scalar) => [step(y, x, a)], y0, xsOf(mul(y0, a), 300))[0];
    const L: F = ([y0, a]) => xsOf(mul(y0, a), 300).reduce<Scalar>((y, x) => step(y, x, a), y0);
    expectSameOverPoints(S, L, [0.3, 0.5, 1.5, -0.7]);
  });
});

describe("nested derivatives of a scan over traced xs under jit", () => {
  it("jit of hvp, of grad∘grad and of hessian at several points (compiled after replays): each point's numbers", () => {
    const xs = (b: Scalar, n: number): Scalar[] => Array.from({ length: n }, (_, i) => mul(b, [0.5, 0.25, 1.5, 0.7][i % 4]));
    const body = (y: Scalar, x: Scalar, a: Scalar): Scalar => tanh(add(mul(mul(a, x), sin(y)), mul(0.5, x)));
    const S: F = ([y0, a, b]) => scan((y: Scalar, x: Scalar) => [body(y, x, a)], y0, xs(b, 600))[0];
    const L: F = ([y0, a, b]) => xs(b, 600).reduce<Scalar>((y, x) => body(y, x, a), y0);
    const points = [0.3, 0.35, 0.9, 0.3];
    const jh = jit((th: Scalar[]) => hvp(S, th, [1, 0.5, 0.2]));
    for (const y0 of points) expectSame(jh([y0, 0.8, 0.5]), hvp(L, [y0, 0.8, 0.5], [1, 0.5, 0.2]));
    const jg = jit((th: Scalar[]) => grad(gradNorm(S), th));
    for (const y0 of points) expectSame(jg([y0, 0.8, 0.5]), grad(gradNorm(L), [y0, 0.8, 0.5]));
    const jH = jit((th: Scalar[]) => hessian(S, th));
    for (const y0 of points) expectSame(jH([y0, 0.8, 0.5]), hessian(L, [y0, 0.8, 0.5]));
  });
});

describe("an x that is the initial carry's variable (one variable, two arguments of the loop)", () => {
  it("grad and grad∘grad: the loop's numbers (the run stops before that x)", () => {
    const xs = (y0: Scalar, b: Scalar): Scalar[] => [mul(b, 0.5), y0, ...Array.from({ length: 30 }, (_, i) => mul(b, 0.1 * (i % 5)))];
    const S: F = ([y0, b]) => scan((y: Scalar, x: Scalar) => [add(mul(0.8, sin(y)), x)], y0, xs(y0, b))[0];
    const L: F = ([y0, b]) => xs(y0, b).reduce<Scalar>((y, x) => add(mul(0.8, sin(y)), x), y0);
    expectSame(grad(S, [0.3, 0.5]), grad(L, [0.3, 0.5]));
    expectSame(grad(gradNorm(S), [0.3, 0.5]), grad(gradNorm(L), [0.3, 0.5]));
  });
});

describe("traced xs used elsewhere, repeated, mixed with data, beside a time counter, deciding: the loop's numbers to third order", () => {
  const d = (n: number): number[] => Array.from({ length: n }, (_, i) => [0.25, 0.7, 1.5, 0.4, 2, 0.45][i % 6]);
  const step = (y: Scalar, x: Scalar, a: Scalar): Scalar => add(mul(a, sin(mul(y, x))), x);
  /** The scan over xs made from θ, and the loop written out over the same xs, then `after` of the result and the xs. */
  const pair = (xsOf: (a: Scalar, b: Scalar) => Scalar[], body: (y: Scalar, x: Scalar, a: Scalar) => Scalar, after = (y: Scalar, _xs: Scalar[]): Scalar => y): [F, F] => [
    ([y0, a, b]) => {
      const xs = xsOf(a, b);
      return after(scan((y: Scalar, x: Scalar) => [body(y, x, a)], y0, xs)[0], xs);
    },
    ([y0, a, b]) => {
      const xs = xsOf(a, b);
      return after(xs.reduce<Scalar>((y, x) => body(y, x, a), y0), xs);
    },
  ];
  const scaled = (_a: Scalar, b: Scalar): Scalar[] => d(30).map((w) => mul(b, w));
  const CASES: Record<string, [F, F]> = {
    "xs also read after the loop (their cotangents held: those blocks placed)": pair(scaled, step, (y, xs) => add(y, mul(xs[3], xs[20]))),
    "one variable as every x": pair((_a, b) => d(30).map(() => b), step),
    "an x that is a captured value": pair((a, b) => d(30).map((w, i) => (i === 10 ? a : mul(b, w))), step),
    "numbers among the traced xs": pair((_a, b) => d(30).map((w, i) => (i % 7 === 3 ? w : mul(b, w))), step),
    "decisions on x": pair(scaled, (y, x, a) => (lt(x, 0.5) ? mul(y, add(a, x)) : step(y, x, a))),
    "a time counter beside the traced xs": [
      ([y0, a, b]) =>
        scan(([y, t]: Scalar[], x: Scalar) => [[add(y, mul(0.25, mul(a, sin(mul(t, add(y, x)))))), add(t, 0.25)]], [y0, 0] as Scalar[], scaled(a, b))[0][0],
      ([y0, a, b]) => {
        let [y, t]: Scalar[] = [y0, 0];
        for (const x of scaled(a, b)) [y, t] = [add(y, mul(0.25, mul(a, sin(mul(t, add(y, x)))))), add(t, 0.25)];
        return y;
      },
    ],
  };
  for (const [name, [S, L]] of Object.entries(CASES)) it(name, () => expectSameToThirdOrder(S, L, [0.3, 0.8, 0.5], [0.1, 0.2, 0.3]));
});
