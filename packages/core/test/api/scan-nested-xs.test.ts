/**
 * Nested derivatives of a scan over data (xs that are numbers: literals of the loop
 * written out) are scans too (diff/scan-nested.ts): the loop's numbers bit for bit to
 * third order, with data that makes the tape fold (1, 0, −0 where a rule multiplies, adds,
 * raises to a power) and decisions that change part way, and a number of instructions that
 * does not grow with the iterations (counted, with data of a few distinct values, each
 * one constant of the trace). So are those of a scan carrying a literal (a time counter
 * carried as a number). Traced xs: scan-nested-traced-xs.test.ts.
 */
import { describe, expect, it } from "vitest";
import { add, cos, derivativeOf, div, exp, grad, hessian, hvp, jacobian, jit, lt, mul, pow, scan, sin, sub, tanh, type Scalar } from "../../src/index.js";
import { reverseStats } from "../../src/eval/scan-reverse-run.js";
import { expectSame } from "../helpers/same-bits.js";
import { expectSameOverPoints, expectSameToThirdOrder, gradNorm, nestedSizes, scanAndLoop, type F } from "../helpers/nested.js";
import type { LoopBody } from "../helpers/nested.js";

type Body = LoopBody;


const BODIES: { name: string; body: Body; carry: number; nx: number }[] = [
  { name: "y ← a·sin y + x", body: ([y], [x], a) => [add(mul(a, sin(y)), x)], carry: 1, nx: 1 },
  { name: "rules reading x (tanh(a·x·y))", body: ([y], [x], a) => [tanh(mul(mul(a, x), y))], carry: 1, nx: 1 },
  { name: "rules reading a value of x alone (y·cos x·a)", body: ([y], [x], a) => [mul(mul(y, cos(x)), a)], carry: 1, nx: 1 },
  { name: "x divides, x a power", body: ([y], [x], a) => [add(div(sin(y), add(x, 2)), pow(mul(a, 0.5), x))], carry: 1, nx: 1 },
  {
    name: "decisions that change part way (y crosses 1 once)",
    body: ([y], [x], a) => [lt(y, 1) ? add(y, mul(0.05, mul(a, x))) : add(y, mul(0.01, exp(mul(-1, mul(y, x)))))],
    carry: 1,
    nx: 1,
  },
  {
    name: "two carries, two data leaves (forced Euler steps)",
    body: ([u, v], [f, g], a) => {
      const uv = mul(u, v);
      return [add(u, mul(0.01, sub(mul(a, u), mul(uv, f)))), add(v, mul(0.01, sub(uv, mul(g, exp(mul(0.1, v))))))];
    },
    carry: 2,
    nx: 2,
  },
];

/** Data with values where the tape folds (x · 1, x + (−0), x⁰), or without them, repeating (a few constants of any trace). */
const data = (n: number, nx: number, folding = true): number[][] => {
  const values = folding ? [0.25, 1, -0, 0.7, 0, 1.5, 0.4, 2] : [0.25, 0.7, 1.5, 0.4, 2, 0.45, 0.9, 1.2];
  return Array.from({ length: n }, (_, i) => Array.from({ length: nx }, (_, l) => values[(i * (l + 3) + l) % 8]));
};

/** f(θ) = Σ carry² (+ 0.01 Σ ys) after the data, the carry starting at θ's first leaves, a = θ's last: as a scan, or the loop written out. */
const model = (body: Body, carry: number, xs: number[][], ys = true): { scanned: F; loop: F } => scanAndLoop(body, carry, () => xs, ys);

describe("nested derivatives of a scan over data: the loop's numbers, bit for bit", () => {
  for (const { name, body, carry, nx } of BODIES) {
    it(`${name}: grad∘grad, hessian, hvp, jvp∘grad, jacobian of grad, third orders`, () => {
      const { scanned: S, loop: L } = model(body, carry, data(41, nx));
      const th = carry === 1 ? [0.3, 0.8] : [1, 0.5, 1.5];
      const v = th.map((_, i) => 0.1 * (i + 1));
      expectSameToThirdOrder(S, L, th, v);
    });
    it(`${name}: data that folds nowhere, the derivative of grad a scan of its rules (instructions the same for 64 and 640 data points)`, () => {
      const th = carry === 1 ? [0.3, 0.8] : [1, 0.5, 1.5];
      const at = (n: number) => model(body, carry, data(n, nx, false), false);
      const { scanned: S, loop: L } = at(64);
      expectSame(grad(gradNorm(gradNorm(S)), th), grad(gradNorm(gradNorm(L)), th));
      expectSame(hessian(S, th), hessian(L, th));
      const size = (f: F): number => derivativeOf(gradNorm(f), th, 1).length;
      const small = size(S);
      expect(size(at(640).scanned)).toBe(small);
      // the loop written out: instructions per iteration
      expect(size(L)).toBeGreaterThan(3 * small);
    });
  }
});

describe("nested derivatives of a scan over data under jit and vmap", () => {
  it("jit(hvp) at several points, vmap and jit (compiled after replays) of grad∘grad give each point's numbers", () => {
    // the rules read x itself (y·x): the forward scan writes its x leaves
    const { scanned: S, loop: L } = model(([y], [x], a) => [add(mul(mul(y, x), 0.9), mul(a, sin(y)))], 1, data(300, 1, false), false);
    const js = jit((x: Scalar[]) => hvp(S, x, [1, 0.5]));
    for (const x of [0.3, 0.35, 0.9]) expectSame(js([x, 0.8]), hvp(L, [x, 0.8], [1, 0.5]));
    expectSameOverPoints(S, L, [0.3, 0.5, 1.5, -0.7]);
  });
});

describe("xs that are traced values (a cotangent per iteration): the loop's numbers", () => {
  it("y ← a·sin y + x, x = b·dᵢ", () => {
    const d = data(30, 1, false).map(([x]) => x);
    const S: F = ([y0, a, b]) => scan((y: Scalar, x: Scalar) => [add(mul(a, sin(y)), x)], y0, d.map((x) => mul(b, x)))[0];
    // the xs made before the loop, as the scan's are (the order of the instructions is the order of a cotangent's sum)
    const L: F = ([y0, a, b]) => d.map((x) => mul(b, x)).reduce<Scalar>((y, x) => add(mul(a, sin(y)), x), y0);
    expectSameToThirdOrder(S, L, [0.3, 0.8, 0.5], [0.1, 0.2, 0.3]);
  });
});

describe("a rule that folds on the data where the body does not", () => {
  it("pow(v, x) at x = 1: the loop written out folds v⁰ in its rule (whose derivative at v = 0 would be 0 · ∞); the run of rules stops there", () => {
    const xs = Array.from({ length: 40 }, (_, i) => [2, 1, 3, 4, 1, 2, 3, 5][i % 8]);
    // v is 0 from the second iteration on (a computed 0, no literal): the rule's v^(x − 1) is at 0
    const body = ([u, v]: Scalar[], x: Scalar, a: Scalar): Scalar[] => [add(mul(u, 0.5), mul(pow(v, x), a)), mul(v, 0)];
    const S: F = ([u0, v0, a]) => {
      const [[u, v]] = scan((c: Scalar[], x: Scalar) => [body(c, x, a)], [u0, v0], xs);
      return add(u, v);
    };
    const L: F = ([u0, v0, a]) => {
      const [u, v] = xs.reduce<Scalar[]>((c, x) => body(c, x, a), [u0, v0]);
      return add(u, v);
    };
    const th = [0.3, 0.5, 0.8];
    const h = hessian(S, th) as number[][];
    expect(h.flat().every(Number.isFinite)).toBe(true);
    expectSame(h, hessian(L, th));
    expectSame(jacobian((x: Scalar[]) => grad(S, x), th), jacobian((x: Scalar[]) => grad(L, x), th));
    expectSame(hvp(S, th, [0.1, 0.2, 0.3]), hvp(L, th, [0.1, 0.2, 0.3]));
  });
});

describe("nested derivatives of a scan over data: instructions that do not grow with the iterations", () => {
  const points = (n: number): number[] => Array.from({ length: n }, (_, i) => 0.2 + 0.1 * (i % 7));
  const step = (y: Scalar, x: Scalar, a: Scalar): Scalar => add(mul(mul(a, sin(y)), x), x);
  /** y ← a·sin(y)·x + x over n data points of 7 distinct values (7 constants of any trace). */
  const chain =
    (n: number, checkpoint: "every" | "sqrt" = "every"): F =>
    ([y0, a]) =>
      scan((y: Scalar, x: Scalar) => [step(y, x, a)], y0, points(n), { checkpoint })[0];
  it("grad's derivative term traced inside another grad, and grad∘grad's, are the same for n = 100 and 10⁴", () => {
    const small = nestedSizes(chain(100), [0.3, 0.8]);
    expect(nestedSizes(chain(10_000), [0.3, 0.8])).toEqual(small);
    expect(small[0]).toBeLessThan(60);
  });
  it("grad∘grad at n = 10⁴: the loop's numbers, its sweeps storing about 2√n carries under 'sqrt'", () => {
    const n = 10_000;
    const loop: F = ([y0, a]) => points(n).reduce<Scalar>((y, x) => step(y, x, a), y0);
    expectSame(grad(gradNorm(chain(n, "sqrt")), [0.3, 0.8]), grad(gradNorm(loop), [0.3, 0.8]));
    expect(reverseStats.maxStored).toBeLessThanOrEqual(2 * Math.ceil(Math.sqrt(n)));
    expect(reverseStats.swept).toBe(n);
  });
});

/** A body of a real carry y and a time t carried as a number (a literal of the loop written out), a = θ's last. */
type Timed = (y: Scalar, t: Scalar, a: Scalar) => [Scalar, Scalar];

const TIMED: { name: string; body: Timed }[] = [
  { name: "Euler steps in time (t·y folds at t = 1)", body: (y, t, a) => [add(y, mul(0.25, mul(a, sin(mul(y, t))))), add(t, 0.25)] },
  { name: "a rule reading t alone (cos t)", body: (y, t, a) => [add(mul(y, cos(t)), mul(0.1, mul(a, y))), add(t, 0.5)] },
  { name: "decisions on t (a forcing switched on part way)", body: (y, t, a) => [lt(t, 3) ? mul(a, sin(y)) : add(mul(a, sin(y)), mul(0.01, t)), add(t, 0.125)] },
];

/** f(θ) = y² after n steps from y = θ₀, t = 0 (a number): as a scan, or the loop written out. */
function timed(body: Timed, n: number): { scanned: F; loop: F } {
  const scanned: F = ([y0, a]) => {
    const [[y]] = scan(([y, t]: Scalar[]) => [body(y, t, a)], [y0, 0] as Scalar[], n);
    return mul(y, y);
  };
  const loop: F = ([y0, a]) => {
    let [y, t]: Scalar[] = [y0, 0];
    for (let i = 0; i < n; i++) [y, t] = body(y, t, a);
    return mul(y, y);
  };
  return { scanned, loop };
}

describe("nested derivatives of a scan with a literal carry (a time counter)", () => {
  for (const { name, body } of TIMED) {
    it(`${name}: the loop's numbers to third order; instructions the same for 64 and 640 steps`, () => {
      const { scanned: S, loop: L } = timed(body, 41);
      expectSameToThirdOrder(S, L, [0.3, 0.8], [0.1, 0.2]);
      const size = (f: F): number => derivativeOf(gradNorm(f), [0.3, 0.8], 1).length;
      const small = size(timed(body, 64).scanned);
      expect(size(timed(body, 640).scanned)).toBe(small);
      expect(size(timed(body, 64).loop)).toBeGreaterThan(3 * small);
    });
  }
});
