/**
 * Higher-order derivatives by nesting: orders 1–4 against closed forms, mixed partials,
 * forward derivatives (fd) against rd and finite differences, perturbation confusion
 * (Siskind & Pearlmutter; the two nested examples of Abadi & Plotkin, Sec. 3),
 * valueAndGrad, and structured inputs with cotangents shaped like the input.
 */
import { describe, expect, it } from "vitest";
import {
  add, cos, div, exp, fd, grad, hessian, hvp, jvp, log, mul, pow, rd, sin, sqrt, square, sub, sum, tanh, valueAndGrad, type Scalar, type Tensor,
} from "../../src/index.js";
import { nth, type Unary as U } from "../helpers/nth.js";
import { expectClose } from "../helpers/check.js";


/** The n-th derivative of f, by nesting grad n times. */

const fact = (k: number): number => (k <= 1 ? 1 : k * fact(k - 1));
const pow5chain: U = (x) => mul(x, mul(x, mul(x, mul(x, x))));
const pow5loop: U = (x) => {
  let acc: Scalar = 1;
  for (let i = 0; i < 5; i++) acc = mul(acc, x);
  return acc;
};

const ORDERS: readonly { name: string; f: U; d: ((x: number) => number)[]; points: number[] }[] = [
  { name: "exp", f: exp, d: [Math.exp, Math.exp, Math.exp, Math.exp], points: [-1.2, 0.5, 2] },
  { name: "sin", f: sin, d: [Math.cos, (x) => -Math.sin(x), (x) => -Math.cos(x), Math.sin], points: [-2, 0.7, 2.9] },
  { name: "x^5 via pow", f: (x) => pow(x, 5), d: [(x) => 5 * x ** 4, (x) => 20 * x ** 3, (x) => 60 * x ** 2, (x) => 120 * x], points: [0.4, 1.3, 2.1] },
  { name: "x^5 via mul chain", f: pow5chain, d: [(x) => 5 * x ** 4, (x) => 20 * x ** 3, (x) => 60 * x ** 2, (x) => 120 * x], points: [-1.3, 0.4, 2.1] },
  { name: "x^5 via a loop of mul", f: pow5loop, d: [(x) => 5 * x ** 4, (x) => 20 * x ** 3, (x) => 60 * x ** 2, (x) => 120 * x], points: [-0.8, 1.1] },
  { name: "log", f: log, d: [(x) => 1 / x, (x) => -1 / x ** 2, (x) => 2 / x ** 3, (x) => -6 / x ** 4], points: [0.3, 1.7, 4] },
  {
    name: "1/(1−x) via div",
    f: (x) => div(1, sub(1, x)),
    d: [1, 2, 3, 4].map((k) => (x: number) => fact(k) / (1 - x) ** (k + 1)),
    points: [-0.5, 0.3, 2],
  },
  {
    name: "√x",
    f: sqrt,
    d: [(x) => 0.5 * x ** -0.5, (x) => -0.25 * x ** -1.5, (x) => 0.375 * x ** -2.5, (x) => -0.9375 * x ** -3.5],
    points: [0.5, 2, 7],
  },
];

describe.each(ORDERS)("derivatives of order 1–4: $name", ({ name, f, d, points }) => {
  it.each([1, 2, 3, 4])("order %i", (k) => {
    for (const x of points) expectClose(nth(f, k)(x), d[k - 1](x), 1e-10, 1e-12, `${name}^(${k})(${x})`);
  });
});

describe("x^5 via pow at a negative base (the exponent is a constant)", () => {
  it.each([1, 2, 3, 4])("order %i at x = −1.3", (k) => {
    const x = -1.3;
    const d = [5 * x ** 4, 20 * x ** 3, 60 * x ** 2, 120 * x];
    expectClose(nth((y) => pow(y, 5), k)(x), d[k - 1], 1e-10, 1e-12, `(x^5)^(${k})(${x})`);
  });
});

describe("xⁿ via pow at x = 0: every order, past the n-th too (0, where 0 · 0⁻¹ gave NaN)", () => {
  // the k-th derivative of xⁿ at 0: n! at k = n, else 0
  it.each([0, 1, 2, 3])("x^%i, orders 1–5, by nested grad, jvp, hvp and hessian", (n) => {
    const f = (y: Scalar) => pow(y, n);
    for (let k = 1; k <= 5; k++) expect(nth(f, k)(0)).toBe(k === n ? fact(n) : 0);
    const first = (y: Scalar) => grad(f, y) as Scalar;
    expect(jvp(f, 0, 1)[1]).toBe(n === 1 ? 1 : 0);
    expect(jvp(first, 0, 1)[1]).toBe(n === 2 ? 2 : 0);
    expect(hvp(f, 0, 1)).toBe(n === 2 ? 2 : 0);
    expect(hessian((p: Scalar[]) => pow(p[0], n), [0])).toEqual([[n === 2 ? 2 : 0]]);
    expect(fd(first, 0, 1)).toBe(n === 2 ? 2 : 0);
  });
  it("on tensors: the Hessian of Σ tᵢ¹ is 0, of Σ tᵢ² is 2I", () => {
    const t = Float64Array.of(0, 0, 1);
    expect(Array.from(hvp((u: Tensor) => sum(pow(u, 1)), t, Float64Array.of(1, 1, 1)) as Float64Array)).toEqual([0, 0, 0]);
    expect(Array.from(hvp((u: Tensor) => sum(pow(u, 2)), t, Float64Array.of(1, 2, 3)) as Float64Array)).toEqual([2, 4, 6]);
  });
  it("a traced exponent keeps its derivatives at b = 0: the Hessian of aᵇ at (1/2, 0) is symmetric", () => {
    // ∂²/∂a∂b aᵇ = a^(b−1)(1 + b log a) = 2 there, ∂²/∂a² = b(b − 1)a^(b−2) = 0, ∂²/∂b² = aᵇ log² a
    expect(hessian((p: Scalar[]) => pow(p[0], p[1]), [0.5, 0])).toEqual([[0, 2], [2, Math.log(0.5) ** 2]]);
  });
});

// f(x, y) = x²y³ + sin(xy) and its partial derivatives.
const F = ([x, y]: Scalar[]): Scalar => add(mul(square(x), mul(y, square(y))), sin(mul(x, y)));
const dF = {
  x: (x: number, y: number) => 2 * x * y ** 3 + y * Math.cos(x * y),
  y: (x: number, y: number) => 3 * x ** 2 * y ** 2 + x * Math.cos(x * y),
  xx: (x: number, y: number) => 2 * y ** 3 - y ** 2 * Math.sin(x * y),
  xy: (x: number, y: number) => 6 * x * y ** 2 + Math.cos(x * y) - x * y * Math.sin(x * y),
  yy: (x: number, y: number) => 6 * x ** 2 * y - x ** 2 * Math.sin(x * y),
  xxx: (x: number, y: number) => -(y ** 3) * Math.cos(x * y),
  xxy: (x: number, y: number) => 6 * y ** 2 - 2 * y * Math.sin(x * y) - x * y ** 2 * Math.cos(x * y),
};
const PAIRS: [number, number][] = [[0.7, -1.1], [1.5, 0.4], [-0.9, 1.3]];
const gradF = (p: Scalar[]) => grad(F, p);

describe("mixed partials of x²y³ + sin(xy)", () => {
  it.each(PAIRS)("gradient and Hessian by nested rd at (%d, %d)", (x, y) => {
    expectClose(grad(F, [x, y]), [dF.x(x, y), dF.y(x, y)], 1e-12, 1e-13, "∇f");
    expectClose(rd(gradF, [x, y], [1, 0]), [dF.xx(x, y), dF.xy(x, y)], 1e-12, 1e-13, "∇²f row x");
    expectClose(rd(gradF, [x, y], [0, 1]), [dF.xy(x, y), dF.yy(x, y)], 1e-12, 1e-13, "∇²f row y");
  });

  it.each(PAIRS)("third partials ∂³f/∂x³, ∂³f/∂x²∂y by three nested rd at (%d, %d)", (x, y) => {
    const fxx = (p: Scalar[]) => (rd(gradF, p, [1, 0]) as Scalar[])[0];
    expectClose(grad(fxx, [x, y]), [dF.xxx(x, y), dF.xxy(x, y)], 1e-11, 1e-12, "∇∂²f/∂x²");
  });

  it.each(PAIRS)("∂²f/∂x∂y by scalar grads closing over the other variable, in both orders, at (%d, %d)", (x, y) => {
    const xThenY = grad((b: Scalar) => grad((a: Scalar) => F([a, b]), x), y);
    const yThenX = grad((a: Scalar) => grad((b: Scalar) => F([a, b]), y), x);
    expectClose(xThenY, dF.xy(x, y), 1e-12, 1e-13, "∂y ∂x f");
    expectClose(yThenX, dF.xy(x, y), 1e-12, 1e-13, "∂x ∂y f");
  });
});

// G : R² → R³ and its Jacobian.
const G = ([x, y]: Scalar[]): Scalar[] => [mul(x, y), add(sin(x), square(y)), exp(sub(x, y))];
const JG = (x: number, y: number): number[][] => [[y, x], [Math.cos(x), 2 * y], [Math.exp(x - y), -Math.exp(x - y)]];
const Gnum = (p: number[]) => G(p) as number[];

describe("fd, the forward derivative J·v", () => {
  const cases: { p: [number, number]; v: [number, number] }[] = [
    { p: [0.3, -0.8], v: [1, 0] },
    { p: [1.2, 0.5], v: [-0.4, 2] },
    { p: [-1.5, 1.1], v: [0.7, 0.3] },
  ];

  it.each(cases)("equals J·v from rd rows, the closed form and finite differences at $p along $v", ({ p, v }) => {
    const Jv = fd(G, p, v);
    const rows = [0, 1, 2].map((j) => rd(G, p, [0, 1, 2].map((i) => (i === j ? 1 : 0))) as number[]);
    expectClose(Jv, rows.map((r) => r[0] * v[0] + r[1] * v[1]), 1e-12, 1e-14, "J·v vs rd rows");
    expectClose(Jv, JG(...p).map((r) => r[0] * v[0] + r[1] * v[1]), 1e-12, 1e-14, "J·v closed form");
    const h = 1e-6;
    const up = Gnum([p[0] + h * v[0], p[1] + h * v[1]]);
    const down = Gnum([p[0] - h * v[0], p[1] - h * v[1]]);
    expectClose(Jv, up.map((u, i) => (u - down[i]) / (2 * h)), 1e-6, 1e-8, "J·v vs FD");
  });

  it("satisfies ⟨J v, w⟩ = ⟨v, Jᵀ w⟩", () => {
    const p = [0.9, -0.35];
    const v = [0.6, -1.7];
    const w = [1.3, -0.2, 0.45];
    const Jv = fd(G, p, v) as number[];
    const JTw = rd(G, p, w) as number[];
    expectClose(Jv.reduce((s, e, i) => s + e * w[i], 0), JTw[0] * v[0] + JTw[1] * v[1], 1e-13, 1e-14, "⟨Jv, w⟩");
  });

  it("of a scalar function is f'(x)·v", () => {
    for (const [x, v] of [[0.4, 1], [2.2, -3], [-1, 0.5]]) expectClose(fd(tanh, x, v), (1 - Math.tanh(x) ** 2) * v, 1e-13, 1e-15, `fd(tanh, ${x}, ${v})`);
  });

  it("fd of fd is the second directional derivative vᵀ∇²f v", () => {
    for (const [x, y] of PAIRS) {
      for (const v of [[1, 0], [0.3, -1.2], [2, 0.5]]) {
        const got = fd((p: Scalar[]) => fd(F, p, v), [x, y], v);
        const want = dF.xx(x, y) * v[0] ** 2 + 2 * dF.xy(x, y) * v[0] * v[1] + dF.yy(x, y) * v[1] ** 2;
        expectClose(got, want, 1e-11, 1e-12, `vᵀHv at (${x}, ${y}), v = ${v}`);
      }
    }
    expectClose(fd((x: Scalar) => fd(sin, x, 1), 0.8, 1), -Math.sin(0.8), 1e-13, 1e-15, "fd∘fd sin");
  });

  it("works on records, with v shaped like x", () => {
    const f = ({ a, b }: { a: Scalar; b: Scalar }) => [mul(a, b), div(a, b)];
    const got = fd(f, { a: 1.5, b: 0.5 }, { a: 2, b: -1 });
    // J·v = [b·va + a·vb, va/b − a·vb/b²]
    expectClose(got, [0.5 * 2 + 1.5 * -1, 2 / 0.5 - (1.5 * -1) / 0.25], 1e-13, 1e-15, "fd on a record");
  });
});

describe("perturbation confusion", () => {
  const xs = [-1.7, 0, 0.5, 3];

  it.each(xs)("d/dx [x · d/dy (x + y)] = 1 at x = %d (inner point constant or x itself)", (x0) => {
    expectClose(grad((x: Scalar) => mul(x, grad((y: Scalar) => add(x, y), 1)), x0), 1, 0, 1e-15, "inner at y = 1");
    expectClose(grad((x: Scalar) => mul(x, grad((y: Scalar) => add(x, y), x)), x0), 1, 0, 1e-15, "inner at y = x");
  });

  it.each(xs)("d/dx [x · (d/dy (x·y))|_{y=1}] = 2x at x = %d", (x0) => {
    expectClose(grad((x: Scalar) => mul(x, grad((y: Scalar) => mul(x, y), 1)), x0), 2 * x0, 0, 1e-14, "2x");
  });

  it("d/dx [x · (d/dy (x·y²))|_{y=x}] = d/dx 2x³ = 6x²", () => {
    for (const x0 of [-1.2, 0.8, 2]) {
      expectClose(grad((x: Scalar) => mul(x, grad((y: Scalar) => mul(x, square(y)), x)), x0), 6 * x0 ** 2, 1e-14, 1e-15, `at ${x0}`);
    }
  });

  it("the inner point is traced: grad(x ↦ rd(y ↦ y·y, x, 1), 3) = 2", () => {
    expectClose(grad((x: Scalar) => rd((y: Scalar) => mul(y, y), x, 1), 3), 2, 0, 1e-15);
  });

  it("the inner seed is traced: grad(s ↦ rd(y ↦ sin y, 0.5, s), 2) = cos 0.5", () => {
    expectClose(grad((s: Scalar) => rd((y: Scalar) => sin(y), 0.5, s), 2), Math.cos(0.5), 1e-15, 0);
  });

  it("point, seed and body all traced: grad(x ↦ rd(y ↦ x·y, x, x), 2) = d/dx x² = 4", () => {
    expectClose(grad((x: Scalar) => rd((y: Scalar) => mul(x, y), x, x), 2), 4, 0, 1e-15);
  });

  it("three levels: ∂x ∂y ∂z (x·y·z + x·sin z) = 1 (x·sin z does not depend on y)", () => {
    const got = grad((x: Scalar) => grad((y: Scalar) => grad((z: Scalar) => add(mul(mul(x, y), z), mul(x, sin(z))), 1), 1), 1);
    expectClose(got, 1, 0, 1e-15, "∂³(xyz + x sin z)/∂x∂y∂z");
  });

  it("three levels, inner points from different levels: d/dx [d/dy (d/dz x·y·z²)|_{z=x}]|_{y=x} = d/dx 2x² = 4x", () => {
    for (const x0 of [-0.6, 1.5]) {
      const got = grad((x: Scalar) => grad((y: Scalar) => grad((z: Scalar) => mul(x, mul(y, square(z))), x), x), x0);
      expectClose(got, 4 * x0, 1e-15, 1e-15, `at ${x0}`);
    }
  });

  it("three levels, innermost point from the middle level: d/dx [d/dy (d/dz x·y·z²)|_{z=y}]|_{y=x} = d/dx 4x² = 8x", () => {
    for (const x0 of [0.5, 2]) {
      const got = grad((x: Scalar) => grad((y: Scalar) => grad((z: Scalar) => mul(x, mul(y, square(z))), y), x), x0);
      expectClose(got, 8 * x0, 1e-15, 1e-15, `at ${x0}`);
    }
  });

  it("paper: 1.rd_1(x. x × 1.rd_1(y. x + y)) ⇒ 1", () => {
    expect(rd((x: Scalar) => mul(x, rd((y: Scalar) => add(x, y), 1, 1)), 1, 1)).toBe(1);
  });

  it("paper: letrec f(x) = 1.rd_1(y. x + y) in 1.rd_1(x. x + f(x)) ⇒ 1", () => {
    const f = (x: Scalar): Scalar => rd((y: Scalar) => add(x, y), 1, 1);
    expect(rd((x: Scalar) => add(x, f(x)), 1, 1)).toBe(1);
  });
});

describe("valueAndGrad", () => {
  it.each(PAIRS)("returns f(x) and ∇f(x) at (%d, %d)", (x, y) => {
    const [value, g] = valueAndGrad(F, [x, y]);
    expectClose(value, x ** 2 * y ** 3 + Math.sin(x * y), 1e-14, 1e-15, "value");
    expectClose(g, [dF.x(x, y), dF.y(x, y)], 1e-12, 1e-13, "gradient");
  });

  it("inside grad, both parts of valueAndGrad are differentiable: d/dx [x sin y, ∂_y(x sin y)] at y = x", () => {
    const x0 = 0.7;
    const value = grad((x: Scalar) => valueAndGrad((y: Scalar) => mul(x, sin(y)), x)[0], x0);
    const slope = grad((x: Scalar) => valueAndGrad((y: Scalar) => mul(x, sin(y)), x)[1], x0);
    expectClose(value, Math.sin(x0) + x0 * Math.cos(x0), 1e-14, 1e-15, "d/dx x sin x");
    expectClose(slope, Math.cos(x0) - x0 * Math.sin(x0), 1e-14, 1e-15, "d/dx x cos x");
  });

  it("nested: valueAndGrad of the derivative gives f' and f''", () => {
    const [v, g] = valueAndGrad((x: Scalar) => grad(log, x), 2.5);
    expectClose([v, g], [1 / 2.5, -1 / 2.5 ** 2], 1e-15, 0, "[log'(2.5), log''(2.5)]");
  });
});

describe("structured inputs: cotangents shaped like the input", () => {
  it("tuple", () => {
    const g = grad(([a, b, c]: Scalar[]) => add(mul(a, b), sin(c)), [1.5, -2, 0.3]);
    expectClose(g, [-2, 1.5, Math.cos(0.3)], 1e-15, 0, "∇ on a tuple");
  });

  it("record with an array field (a one-neuron layer)", () => {
    const data = [0.5, -1.5];
    const f = ({ w, b }: { w: Scalar[]; b: Scalar }) => tanh(add(add(mul(w[0], data[0]), mul(w[1], data[1])), b));
    const p = { w: [0.2, 0.4], b: 0.1 };
    const z = 0.2 * 0.5 + 0.4 * -1.5 + 0.1;
    const t = 1 - Math.tanh(z) ** 2;
    const g = grad(f, p);
    expect(Object.keys(g)).toEqual(["w", "b"]);
    expectClose(g, { w: [t * data[0], t * data[1]], b: t }, 1e-14, 1e-16, "∇ on a record");
  });

  it("nested tuples and records, with a unit field", () => {
    type X = { p: [Scalar, { q: Scalar }]; r: [] };
    const f = ({ p: [a, { q }] }: X) => mul(exp(a), cos(q));
    const g = grad(f, { p: [0.4, { q: 1.1 }], r: [] }) as unknown as X;
    expect(g.r).toEqual([]);
    expectClose(g, { p: [Math.exp(0.4) * Math.cos(1.1), { q: -Math.exp(0.4) * Math.sin(1.1) }], r: [] }, 1e-14, 1e-16, "∇ nested");
  });

  it("structured output with a seed shaped like it", () => {
    const f = ([a, b]: Scalar[]) => [mul(a, b), { s: sin(a) }];
    expectClose(rd(f, [0.7, -1.2], [2, { s: 3 }]), [2 * -1.2 + 3 * Math.cos(0.7), 2 * 0.7], 1e-14, 1e-16, "seed·J");
  });

  it("Hessian rows over a record by nested rd with record seeds", () => {
    // f(u, v) = u²v + eᵛ: ∇²f = [[2v, 2u], [2u, eᵛ]]
    const f = ({ u, v }: { u: Scalar; v: Scalar }) => add(mul(square(u), v), exp(v));
    const inner = (p: { u: Scalar; v: Scalar }) => grad(f, p);
    const p = { u: 1.3, v: -0.6 };
    expectClose(rd(inner, p, { u: 1, v: 0 }), { u: 2 * p.v, v: 2 * p.u }, 1e-14, 1e-16, "row u");
    expectClose(rd(inner, p, { u: 0, v: 1 }), { u: 2 * p.u, v: Math.exp(p.v) }, 1e-14, 1e-16, "row v");
  });
});
