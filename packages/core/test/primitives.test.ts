/**
 * Every scalar primitive, at the points of its declared domain (ops/scalar.ts): the
 * kernel against a Math-based closed form written here, first derivatives against
 * central differences, second derivatives (nested grad; the full Hessian of binary ops
 * by nested rd) against central differences of the first, and a few derivatives against
 * closed forms. primitive-table.test.ts checks every rule against the others.
 */
import { describe, expect, it } from "vitest";
import { BINARY_NAMES, binaryOps, UNARY_NAMES, unaryOps, type BinaryName, type UnaryName } from "@wengert/ops";
import * as W from "../src/index.js";
import {
  abs, asin, atan, atan2, div, expm1, grad, log, mul, pow, rd, sigmoid, sin, softplus, sqrt, tanh, valueAndGrad, xlogy, safeLog, safeRecip, type Scalar,
} from "../src/index.js";
import { centralDiff, expectClose, fdGradient, fdJacobianT } from "./helpers/check.js";

type U = (x: Scalar) => Scalar;
type B = (a: Scalar, b: Scalar) => Scalar;

interface UnaryRow {
  readonly name: string;
  readonly op: U;
  /** The function written with Math (or arithmetic), independently of the kernel. */
  readonly ref: (x: number) => number;
  /** Points where the primitive is smooth (well inside its domain, away from kinks). */
  readonly points: readonly number[];
}

interface BinaryRow {
  readonly name: string;
  readonly op: B;
  readonly ref: (a: number, b: number) => number;
  readonly points: readonly (readonly [number, number])[];
}

const logistic = (x: number) => 1 / (1 + Math.exp(-x));
const unaryFn = (name: UnaryName) => (W as unknown as Record<string, U>)[name];
const binaryFn = (name: BinaryName) => (W as unknown as Record<string, B>)[name];

/** Each unary primitive written with Math (or arithmetic), independently of its kernel: tsc asks for a new one's. */
const UNARY_REF: { readonly [K in UnaryName]: (x: number) => number } = {
  neg: (x) => 0 - x,
  exp: (x) => Math.E ** x,
  log: (x) => Math.log2(x) / Math.LOG2E,
  sin: (x) => Math.cos(x - Math.PI / 2),
  cos: (x) => Math.sin(x + Math.PI / 2),
  tan: (x) => Math.sin(x) / Math.cos(x),
  tanh: (x) => (Math.exp(2 * x) - 1) / (Math.exp(2 * x) + 1),
  sinh: (x) => (Math.exp(x) - Math.exp(-x)) / 2,
  cosh: (x) => (Math.exp(x) + Math.exp(-x)) / 2,
  asin: (x) => Math.atan(x / Math.sqrt(1 - x * x)),
  acos: (x) => Math.PI / 2 - Math.atan(x / Math.sqrt(1 - x * x)),
  atan: (x) => Math.asin(x / Math.sqrt(1 + x * x)),
  sqrt: (x) => x ** 0.5,
  cbrt: (x) => Math.sign(x) * Math.abs(x) ** (1 / 3),
  square: (x) => x ** 2,
  log1p: (x) => Math.log(1 + x),
  expm1: (x) => Math.exp(x) - 1,
  sigmoid: logistic,
  softplus: (x) => Math.log(1 + Math.exp(x)),
  abs: (x) => (x < 0 ? -x : x),
  sign: (x) => (x < 0 ? -1 : 1),
  safeLog: (x) => Math.log(x),
  safeRecip: (x) => 1 / x,
};
/** The rows: the closed form beside the primitive, at the points of its declared domain (ops/scalar.ts). */
const UNARY: readonly UnaryRow[] = UNARY_NAMES.map((name) => ({ name, op: unaryFn(name), ref: UNARY_REF[name], points: unaryOps[name].domain }));

const BINARY_REF: { readonly [K in BinaryName]: (a: number, b: number) => number } = {
  add: (a, b) => a - -b,
  sub: (a, b) => a + -b,
  mul: (a, b) => a / (1 / b),
  div: (a, b) => a * (1 / b),
  // atan2 off the negative real axis: atan(a/b), shifted by π in the second quadrant.
  atan2: (a, b) => Math.atan(a / b) + (b < 0 ? Math.PI : 0),
  pow: (a, b) => Math.exp(b * Math.log(a)),
  xlogy: (a, b) => a * Math.log(b),
};
const BINARY: readonly BinaryRow[] = BINARY_NAMES.map((name) => ({ name, op: binaryFn(name), ref: BINARY_REF[name], points: binaryOps[name].domain }));

const num = (v: unknown): number => {
  expect(typeof v, `expected a number, got ${String(v)}`).toBe("number");
  return v as number;
};
const nums = (v: unknown): number[] => (v as unknown[]).map(num);

/** First derivative of a unary op by grad, as a function on numbers. */
const d1 = (op: U) => (x: number) => num(grad(op, x));
/** The gradient of a binary op at [a, b], as a function on flat arrays. */
const g2 = (op: B) => (p: number[]) => nums(grad(([a, b]: Scalar[]) => op(a, b), p));

describe("the table covers every primitive", () => {
  it("has a closed form and a user function for every unary and binary primitive, each with at least 3 points", () => {
    expect(Object.keys(UNARY_REF).sort()).toEqual([...UNARY_NAMES].sort());
    expect(Object.keys(BINARY_REF).sort()).toEqual([...BINARY_NAMES].sort());
    for (const r of [...UNARY, ...BINARY]) {
      expect(typeof r.op, r.name).toBe("function");
      expect(r.points.length, r.name).toBeGreaterThanOrEqual(3);
    }
  });
});

describe.each(UNARY)("unary $name", ({ name, op, ref, points }) => {
  it("on numbers equals the closed form, and traced evaluation gives the same value", () => {
    for (const x of points) {
      expectClose(op(x), ref(x), 1e-13, 1e-15, `${name}(${x})`);
      expect(valueAndGrad(op, x)[0], `valueAndGrad(${name}, ${x})[0]`).toBe(op(x));
    }
  });

  it("first derivative (grad) equals central differences", () => {
    for (const x of points) expectClose(grad(op, x), centralDiff((t) => num(op(t)), x, 1e-6), 1e-6, 1e-8, `${name}'(${x})`);
  });

  it("second derivative (nested grad) equals central differences of grad", () => {
    for (const x of points) {
      const second = grad((y: Scalar) => grad(op, y), x);
      expectClose(second, centralDiff(d1(op), x, 1e-5), 1e-5, 1e-7, `${name}''(${x})`);
    }
  });
});

describe.each(BINARY)("binary $name", ({ name, op, ref, points }) => {
  it("on numbers equals the closed form, and traced evaluation gives the same value", () => {
    for (const [a, b] of points) {
      expectClose(op(a, b), ref(a, b), 1e-13, 1e-15, `${name}(${a}, ${b})`);
      expect(valueAndGrad(([u, v]: Scalar[]) => op(u, v), [a, b])[0]).toBe(op(a, b));
    }
  });

  it("both partials (grad over [a, b]) equal central differences", () => {
    for (const p of points) {
      const f = ([a, b]: number[]) => num(op(a, b));
      expectClose(g2(op)([...p]), fdGradient(f, p, 1e-6), 1e-6, 1e-8, `∇${name}(${p})`);
    }
  });

  it("the 2×2 Hessian (nested rd) equals central differences of grad and is symmetric", () => {
    for (const p of points) {
      const inner = (q: Scalar[]) => grad(([a, b]: Scalar[]) => op(a, b), q);
      const H = [nums(rd(inner, [...p], [1, 0])), nums(rd(inner, [...p], [0, 1]))];
      expectClose(H, fdJacobianT(g2(op), p, 1e-5), 1e-5, 1e-7, `∇²${name}(${p})`);
      expectClose(H[0][1], H[1][0], 1e-12, 1e-14, `∇²${name}(${p}) symmetry`);
    }
  });
});

/** Derivatives known in closed form, independently of the finite differences above. */
const CLOSED_UNARY: readonly { name: string; op: U; d1: (x: number) => number; d2: (x: number) => number; points: number[] }[] = [
  { name: "tanh", op: tanh, d1: (x) => 1 - Math.tanh(x) ** 2, d2: (x) => -2 * Math.tanh(x) * (1 - Math.tanh(x) ** 2), points: [-1, 0.3, 2] },
  { name: "sin", op: sin, d1: Math.cos, d2: (x) => -Math.sin(x), points: [-2, 0.4, 3] },
  { name: "sigmoid", op: sigmoid, d1: (x) => logistic(x) * (1 - logistic(x)), d2: (x) => logistic(x) * (1 - logistic(x)) * (1 - 2 * logistic(x)), points: [-3, 0.5, 2] },
  { name: "log", op: log, d1: (x) => 1 / x, d2: (x) => -1 / x ** 2, points: [0.3, 1.7, 4] },
  { name: "atan", op: atan, d1: (x) => 1 / (1 + x * x), d2: (x) => (-2 * x) / (1 + x * x) ** 2, points: [-2, 0.3, 1.5] },
  { name: "sqrt", op: sqrt, d1: (x) => 0.5 / Math.sqrt(x), d2: (x) => -0.25 * x ** -1.5, points: [0.25, 2, 9] },
  { name: "asin", op: asin, d1: (x) => 1 / Math.sqrt(1 - x * x), d2: (x) => x / (1 - x * x) ** 1.5, points: [-0.6, 0.1, 0.8] },
  { name: "softplus", op: softplus, d1: logistic, d2: (x) => logistic(x) * (1 - logistic(x)), points: [-2, 0.7, 3] },
  { name: "expm1", op: expm1, d1: Math.exp, d2: Math.exp, points: [-1, 0.4, 2] },
  { name: "abs", op: abs, d1: Math.sign, d2: () => 0, points: [-1.4, 0.6, 2] },
];

describe.each(CLOSED_UNARY)("closed-form derivatives of $name", ({ name, op, d1: D1, d2: D2, points }) => {
  it("first and second derivatives", () => {
    for (const x of points) {
      expectClose(grad(op, x), D1(x), 1e-13, 1e-15, `${name}'(${x})`);
      expectClose(grad((y: Scalar) => grad(op, y), x), D2(x), 1e-12, 1e-14, `${name}''(${x})`);
    }
  });
});

const CLOSED_BINARY: readonly { name: string; op: B; partials: (a: number, b: number) => [number, number]; points: [number, number][] }[] = [
  { name: "div", op: div, partials: (a, b) => [1 / b, -a / (b * b)], points: [[1.5, 0.7], [-2, 3]] },
  { name: "atan2", op: atan2, partials: (a, b) => [b / (a * a + b * b), -a / (a * a + b * b)], points: [[1, 2], [2, -1.5]] },
  { name: "pow", op: pow, partials: (a, b) => [b * a ** (b - 1), a ** b * Math.log(a)], points: [[0.7, 2.5], [1.8, -1.3]] },
  { name: "xlogy", op: xlogy, partials: (a, b) => [Math.log(b), a / b], points: [[0.5, 2], [-1.5, 0.4]] },
];

describe.each(CLOSED_BINARY)("closed-form partials of $name", ({ name, op, partials, points }) => {
  it("∂/∂a and ∂/∂b", () => {
    for (const [a, b] of points) expectClose(g2(op)([a, b]), partials(a, b), 1e-13, 1e-15, `∇${name}(${a}, ${b})`);
  });
});

describe("mixed second partials in closed form", () => {
  it("∂²(a·b)/∂a∂b = 1 and ∂²(a/b)/∂b² = 2a/b³", () => {
    const Hmul = rd((q: Scalar[]) => grad(([a, b]: Scalar[]) => mul(a, b), q), [1.3, -0.4], [1, 0]);
    expectClose(Hmul, [0, 1], 0, 1e-15, "∇²(ab) row a");
    const Hdiv = rd((q: Scalar[]) => grad(([a, b]: Scalar[]) => div(a, b), q), [1.5, 0.7], [0, 1]);
    expectClose(Hdiv, [-1 / 0.49, (2 * 1.5) / 0.7 ** 3], 1e-13, 1e-15, "∇²(a/b) row b");
  });
});

describe("safeLog and safeRecip at 0, where they are 0 with derivatives 0", () => {
  it("values and derivatives of orders 1 to 3", () => {
    expect([safeLog(0), safeRecip(0)]).toEqual([0, 0]);
    const d = (f: (x: Scalar) => Scalar) => (x: Scalar) => grad(f, x) as Scalar;
    expect([d(safeLog)(0), d(d(safeLog))(0), d(d(d(safeLog)))(0)]).toEqual([0, -0, 0]);
    expectClose(d(safeRecip)(2), -0.25, 1e-15, 0, "safeRecip'(2)");
    expectClose(d(d(safeLog))(2), -0.25, 1e-15, 0, "safeLog''(2)");
  });
});

describe("pow at base 0, where its gradient is defined by convention (0^b · log 0 = 0)", () => {
  // a^b at (0, b), b > 1: ∇ = [b·0^(b−1), 0^b·log 0 → 0] = [0, 0]. One-sided limits a → 0⁺
  // of the second partials: ∂²/∂a² = b(b−1)a^(b−2), ∂²/∂a∂b = a^(b−1)(1 + b log a) → 0,
  // ∂²/∂b² = a^b log² a → 0. For b = 2: [[2, 0], [0, 0]].
  const F = ([a, b]: Scalar[]) => pow(a, b);
  it("the gradient is [0, 0] and d²/da² (b fixed) is b(b−1)·0^(b−2)", () => {
    expectClose(grad(F, [0, 2]), [0, 0], 0, 0, "∇pow(0, 2)");
    expectClose(grad((a: Scalar) => grad((x: Scalar) => pow(x, 2), a), 0), 2, 0, 1e-15, "d²/da² a² at 0");
  });

  it("the 2×2 Hessian by nested rd at (0, 2) is [[2, 0], [0, 0]] (finite, and ∂²/∂a² as with b fixed)", () => {
    const inner = (q: Scalar[]) => grad(F, q);
    expectClose([rd(inner, [0, 2], [1, 0]), rd(inner, [0, 2], [0, 1])], [[2, 0], [0, 0]], 1e-12, 1e-12, "∇²pow(0, 2)");
  });
});
