/**
 * Forward mode, pullbacks, Jacobians, Hessians and Taylor mode: jvp against fd (the
 * paper's forward derivative by nested rd) and central differences on random programs;
 * jvp and grad nested in both directions; vjp's pullback against rd (one trace of f);
 * jacobian / jacrev / jacfwd, hessian and hvp against closed forms and their documented
 * shapes; taylor against closed-form derivatives and against nested jvp and grad.
 */
import fc from "fast-check";
import ndarray from "ndarray";
import { describe, expect, it } from "vitest";
import {
  add,
  atan,
  ClosedTraceError,
  cos,
  defineOp,
  div,
  exp,
  fd,
  grad,
  hessian,
  hvp,
  jacfwd,
  jacobian,
  jacrev,
  jvp,
  log,
  lt,
  mul,
  pow,
  primal,
  rd,
  SeedMismatchError,
  ArgumentError,
  sigmoid,
  sin,
  softplus,
  sqrt,
  square,
  sub,
  sum,
  tanh,
  taylor,
  vjp,
  WengertError,
  type NdArray,
  type Scalar,
  type Tensor,
} from "../../src/index.js";
import { BINARY_NAMES, scalarOps } from "@wengert/ops";
import * as W from "../../src/index.js";
import { CODE, KERNELS } from "../../src/trace/opcodes.js";
import { tangentFromTable, tangentOnNumbers } from "../../src/diff/tangents.js";
import { H, MAX, recorded, reliableDiff } from "../helpers/branches.js";
import { rosenbrock, rosenbrockHessian } from "../helpers/cases.js";
import { rng as seeded } from "../helpers/tensors.js";
import { expectClose, thrown } from "../helpers/check.js";
import type { Program } from "../helpers/programs/expr.js";
import { trees } from "../helpers/programs/generate.js";
import { pick, TABLE } from "../helpers/programs/ops.js";
import { outputsOf } from "../helpers/programs/run.js";
import { IGNORE } from "../helpers/ties.js";

type V = Scalar[];
/** A seeded generator of numbers in [−1, 1), for reproducible directions. */
const rng = (seed: number) => {
  const r = seeded(seed);
  return () => 2 * r() - 1;
};
const dot = (a: readonly number[], b: readonly number[]) => a.reduce((s, x, i) => s + x * b[i], 0);
const matVec = (m: number[][], v: number[]) => m.map((row) => dot(row, v));

// ---------------------------------------------------------------- random programs
// two outputs over the same inputs; the smooth unary operations but exp∘tanh, softplus and √(1 + a²), and the table's primitives
const programs = trees({
  ops: [...pick("sin", "cos", "tanh", "sigmoid", "atan", "square", "log1sq", "add", "sub", "mul", "div1sq"), ...TABLE],
  weights: { un: 4, bin: 4, if: 2, for: 1, grad: 1, fd: 1 },
  preds: ["lt", "le", "gt", "ge"],
  exits: true,
  leaves: { variable: 1, constant: 1, tree: 3 },
  outputs: 2,
  leafRoot: true,
});
const prog = (p: Program) => (x: V): V => outputsOf(p)(x);
const onNumbers = (p: Program) => (x: number[]) => prog(p)(x) as number[];
const unit = fc.double({ min: -1, max: 1, noNaN: true });
const cases = fc.integer({ min: 1, max: 3 }).chain((n) => fc.record({
  e: programs, x: fc.array(fc.double({ min: -2, max: 2, noNaN: true }), { minLength: n, maxLength: n }),
  v: fc.array(unit, { minLength: n, maxLength: n }), w: fc.tuple(unit, unit),
}));
const PARAMS = { numRuns: 120, seed: 20251122, endOnFailure: true };
const moderate = (ys: number[]) => ys.every((y) => Number.isFinite(y) && Math.abs(y) <= MAX);
const along = (x: number[], v: number[], t: number) => x.map((xi, i) => xi + t * v[i]);

describe("jvp on random programs with branches, loops and nested grad", () => {
  it("gives f(x) and the same J·v as fd (nested rd), and ⟨J v, w⟩ = ⟨v, Jᵀ w⟩", () => {
    fc.assert(
      fc.property(cases, ({ e, x, v, w }) => {
        const y = onNumbers(e)(x);
        fc.pre(moderate(y));
        const [value, Jv] = jvp(prog(e), x, v, IGNORE) as [number[], number[]];
        expectClose(value, y, 1e-12, 1e-12, "jvp value");
        expectClose(Jv, fd(prog(e), x, v, IGNORE), 1e-9, 1e-10, "jvp vs fd");
        expectClose(dot(Jv, w), dot(v, rd(prog(e), x, w, IGNORE) as number[]), 1e-9, 1e-10, "⟨Jv, w⟩ vs ⟨v, Jᵀw⟩");
      }),
      PARAMS,
    );
  });

  it("equals central differences along v where every branch is the same on the stencil", () => {
    fc.assert(
      fc.property(cases, ({ e, x, v }) => {
        const [y, atX] = recorded(() => onNumbers(e)(x));
        fc.pre(moderate(y) && atX.margin >= 1e-3);
        for (const t of [-2, -1, 1, 2].flatMap((k) => [k * H, (k * H) / 2])) {
          const [yt, at] = recorded(() => onNumbers(e)(along(x, v, t)));
          fc.pre(at.branches === atX.branches && moderate(yt));
        }
        const Jv = jvp(prog(e), x, v, IGNORE)[1] as number[];
        for (let j = 0; j < 2; j++) {
          const d = reliableDiff((t) => onNumbers(e)(along(x, v, t))[j], 0);
          fc.pre(d !== null);
          expectClose(Jv[j], d, 1e-6, 1e-7, `(J·v)[${j}]`);
        }
      }),
      PARAMS,
    );
  });

  it("jacrev, jacfwd and jacobian agree, and vjp's pullback gives rd's answer", () => {
    fc.assert(
      fc.property(cases, ({ e, x, w }) => {
        fc.pre(moderate(onNumbers(e)(x)));
        const J = jacrev(prog(e), x, IGNORE);
        expectClose(jacfwd(prog(e), x, IGNORE), J, 1e-9, 1e-10, "jacfwd vs jacrev");
        expectClose(jacobian(prog(e), x, IGNORE), J, 1e-9, 1e-10, "jacobian vs jacrev");
        const pullback = vjp(prog(e), x, IGNORE)[1];
        expectClose(pullback(w), rd(prog(e), x, w, IGNORE), 1e-12, 1e-12, "pullback vs rd");
      }),
      { ...PARAMS, numRuns: 60 },
    );
  });
});

// ---------------------------------------------------------------- both tangents present
// random programs rarely give both arguments of a binary primitive a tangent (mul's sign flipped
// there changed 2 of 120): each of the table's, at its smooth points, by every path a tangent takes
describe("a binary primitive's tangent with both arguments' tangents, by every path", () => {
  const v = [0.3, -1.1];
  const dot2 = (g: V, w: number[]): Scalar => add(mul(g[0], w[0]), mul(g[1], w[1]));
  it.each([...BINARY_NAMES])("%s: the forward sweep, the term built, jvp under grad, and the rule on numbers equal nested rd", (name) => {
    const op = (W as unknown as Record<string, (a: Scalar, b: Scalar) => Scalar>)[name];
    const code = CODE[name];
    for (const x of scalarOps[name].domain) {
      const [a, b] = x;
      for (const f of [([p, q]: V) => op(p, q), ([p, q]: V) => mul(op(p, q), add(p, op(p, q)))]) {
        const at = `${name} at ${x} along ${v}`;
        // fd is the forward derivative by nested rd: reverse rules only
        const want = fd(f, x, v, IGNORE) as number;
        expectClose(jvp(f, x, v, IGNORE)[1], want, 1e-12, 1e-13, `jvp, ${at}`);
        expectClose(jvp(f, x, v, { ...IGNORE, checkNaN: true })[1], want, 1e-12, 1e-13, `jvp building its term, ${at}`);
        // d/dt of the tangent at x + t·v: pushforward.ts's term, differentiated; vᵀ∇(∇f·v) by rd twice
        const curvature = dot2(grad((p: V) => dot2(grad(f, p, IGNORE) as V, v), x, IGNORE) as V, v) as number;
        const tangentAlong = (t: Scalar) => jvp(f, x.map((xi, i) => add(xi, mul(t, v[i]))), v, IGNORE)[1] as Scalar;
        expectClose(grad(tangentAlong, 0, IGNORE), curvature, 1e-11, 1e-12, `grad of jvp, ${at}`);
      }
      // the rule on numbers, written out and from the table: hvp's dual numbers, and every tangent where no code may be made
      const want = fd(([p, q]: V) => op(p, q), x, v, IGNORE) as number;
      const out = KERNELS[code](a, b);
      expectClose(tangentOnNumbers(code, a, b, out, v[0], v[1], true, true), want, 1e-12, 1e-13, `written-out rule, ${name} at ${x}`);
      expectClose(tangentFromTable(code, a, b, out, v[0], v[1], true, true), want, 1e-12, 1e-13, `the table's rule, ${name} at ${x}`);
      expectClose(hvp(([p, q]: V) => op(p, q), x, v, IGNORE), grad((p: V) => dot2(grad(([r, s]: V) => op(r, s), p, IGNORE) as V, v), x, IGNORE), 1e-11, 1e-12, `hvp, ${name} at ${x}`);
    }
  });
});

// ---------------------------------------------------------------- closed forms
/** G(x, y, z) = (x y, y sin z, eˣ) and its Jacobian. */
const G = ([x, y, z]: V): V => [mul(x, y), mul(y, sin(z)), exp(x)];
const JG = ([x, y, z]: number[]) => [[y, x, 0], [0, Math.sin(z), y * Math.cos(z)], [Math.exp(x), 0, 0]];
/** F(x, y) = x²y³ + sin(xy), its gradient and Hessian. */
const F = ([x, y]: V): Scalar => add(mul(square(x), mul(y, square(y))), sin(mul(x, y)));
const HF = ([x, y]: number[]) => [
  [2 * y ** 3 - y ** 2 * Math.sin(x * y), 6 * x * y ** 2 + Math.cos(x * y) - x * y * Math.sin(x * y)],
  [6 * x * y ** 2 + Math.cos(x * y) - x * y * Math.sin(x * y), 6 * x ** 2 * y - x ** 2 * Math.sin(x * y)],
];
const PTS3 = [[0.3, -0.8, 1.1], [1.2, 0.5, -2], [-1.5, 1.1, 0.4]];
const PTS2 = [[0.7, -1.1], [1.5, 0.4], [-0.9, 1.3]];

describe("jvp: closed forms, structure and nesting", () => {
  it.each(PTS3)("J·v of (xy, y sin z, eˣ) at (%d, %d, %d) along several v", (...p) => {
    for (const v of [[1, 0, 0], [0, 0, 1], [0.4, -1.3, 2]]) {
      const [value, Jv] = jvp(G, p, v);
      expectClose(value, [p[0] * p[1], p[1] * Math.sin(p[2]), Math.exp(p[0])], 1e-15, 0, "f(x)");
      expectClose(Jv, matVec(JG(p), v), 1e-13, 1e-15, `J·${v}`);
    }
  });

  it("keeps the structure of x and f(x): records, tuples, constant and identity leaves", () => {
    const f = (p: { a: Scalar; b: Scalar[] }) => [p.a, 3, { b: mul(p.a, p.b[0]) }];
    const [value, tangent] = jvp(f, { a: 2, b: [5] }, { a: 1, b: [10] });
    expect(value).toEqual([2, 3, { b: 10 }]);
    expect(tangent).toEqual([1, 0, { b: 1 * 5 + 2 * 10 }]);
    expect(jvp(tanh, 0.4, -3)[1]).toBeCloseTo((1 - Math.tanh(0.4) ** 2) * -3, 15);
  });

  it("rejects a v not shaped like x with a SeedMismatchError", () => {
    expect(() => jvp(G, [1, 2, 3], [1, 2])).toThrow(SeedMismatchError);
    // @ts-expect-error: v is not shaped like x, which the types see too
    expect(() => jvp((p: { a: Scalar }) => p.a, { a: 1 }, { b: 1 })).toThrow(/jvp: v has type \{b: real\}, expected \{a: real\}/);
  });

  it("names distinct types when v mismatches a one-element tuple x", () => {
    // x = [2] has a type printed "real", like a bare real: the message contradicts itself.
    // @ts-expect-error: v is not shaped like x
    const message = (() => { try { jvp((x: V) => x[0], [2], 3); return ""; } catch (e) { return (e as Error).message; } })();
    const m = /v has type (.*), expected (.*?)\. /.exec(message);
    expect(m, message).not.toBeNull();
    expect(m![1], message).not.toBe(m![2]);
  });

  it.each(PTS2)("grad under jvp: jvp(∇F, x, v) = ∇²F·v at (%d, %d) (an hvp)", (...p) => {
    for (const v of [[1, 0], [0.3, -1.2]]) {
      expectClose(jvp((q: V) => grad(F, q), p, v)[1], matVec(HF(p), v), 1e-12, 1e-13, "jvp of grad");
      expectClose(hvp(F, p, v), matVec(HF(p), v), 1e-12, 1e-13, "hvp");
    }
  });

  it("jvp under grad: d/dx of the tangent is f''; a traced v, and v traced together with x", () => {
    for (const x0 of [-1.3, 0.5, 2]) {
      expectClose(grad((x: Scalar) => jvp((y: Scalar) => mul(y, mul(y, y)), x, 1)[1] as Scalar, x0), 6 * x0, 1e-14, 1e-14, "x³");
      expectClose(grad((x: Scalar) => jvp(sin, x, 1)[1] as Scalar, x0), -Math.sin(x0), 1e-14, 1e-15, "sin");
    }
    expectClose(grad((s: Scalar) => jvp(sin, 0.5, s)[1] as Scalar, 2), Math.cos(0.5), 1e-15, 0, "d/ds sin'(0.5)·s");
    const s0 = 1.7;
    expectClose(grad((s: Scalar) => jvp(sin, s, s)[1] as Scalar, s0), Math.cos(s0) - s0 * Math.sin(s0), 1e-14, 1e-15, "d/ds s cos s");
  });

  it.each(PTS2)("jvp of jvp is vᵀ∇²F v at (%d, %d)", (...p) => {
    for (const v of [[1, 0], [0.3, -1.2], [2, 0.5]]) {
      const got = jvp((q: V) => jvp(F, q, v)[1], p, v)[1];
      expectClose(got, dot(v, matVec(HF(p), v)), 1e-11, 1e-12, `v = ${v}`);
    }
  });

  it("no perturbation confusion between nested jvp and grad", () => {
    for (const x0 of [-1.7, 0.5, 3]) {
      expectClose(jvp((x: Scalar) => mul(x, jvp((y: Scalar) => add(x, y), 1, 1)[1] as Scalar), x0, 1)[1], 1, 0, 1e-15, "d/dx x·1");
      expectClose(grad((x: Scalar) => mul(x, jvp((y: Scalar) => mul(x, y), 1, 1)[1] as Scalar), x0), 2 * x0, 1e-15, 1e-15, "d/dx x·x");
    }
  });
});

describe("vjp", () => {
  const f2 = ([x, y]: V): V => [mul(x, y), sin(x), exp(sub(x, y))];
  const JT = ([x, y]: number[], w: number[]) => [w[0] * y + w[1] * Math.cos(x) + w[2] * Math.exp(x - y), w[0] * x - w[2] * Math.exp(x - y)];

  it("traces f once; the pullback applied to several seeds gives rd's answers and Jᵀw", () => {
    let calls = 0;
    const counted = (p: V) => (calls++, f2(p));
    const p = [0.8, -0.3];
    const [value, pullback] = vjp(counted, p);
    expectClose(value, [p[0] * p[1], Math.sin(p[0]), Math.exp(p[0] - p[1])], 1e-15, 0, "f(x)");
    const r = rng(7);
    const seeds = [[1, 0, 0], [0, 1, 0], [0, 0, 1], ...Array.from({ length: 5 }, () => [r(), r(), r()])];
    for (const w of seeds) {
      expectClose(pullback(w), rd(f2, p, w), 1e-14, 1e-15, `pullback(${w}) vs rd`);
      expectClose(pullback(w), JT(p, w), 1e-13, 1e-15, `pullback(${w}) vs Jᵀw`);
    }
    expect(calls).toBe(1);
  });

  it("works on records, with seeds shaped like f(x), and rejects a seed of another shape", () => {
    const [value, pullback] = vjp(({ a, b }: { a: Scalar; b: Scalar }) => ({ s: mul(a, b), t: [sin(a)] }), { a: 2, b: 3 });
    expect(value).toEqual({ s: 6, t: [Math.sin(2)] });
    expect(pullback({ s: 1, t: [0] })).toEqual({ a: 3, b: 2 });
    expectClose(pullback({ s: 0.5, t: [2] }), { a: 1.5 + 2 * Math.cos(2), b: 1 }, 1e-15, 0, "pullback");
    // @ts-expect-error: the seed is not shaped like f(x)
    expect(() => pullback({ s: 1 })).toThrow(SeedMismatchError);
    // @ts-expect-error: likewise
    expect(() => pullback({ s: 1 })).toThrow(/seed has type \{s: real\}, expected \{s: real, t: ⟨real⟩\}/);
  });

  it("the pullback inside an rd with a traced seed", () => {
    const pullback = vjp(sin, 0.3)[1];
    // d/ds pullback(s²) = 2s cos 0.3
    expectClose(grad((s: Scalar) => pullback(mul(s, s)), 2), 4 * Math.cos(0.3), 1e-15, 0, "outer vjp, traced seed");
    expectClose(pullback(2), 2 * Math.cos(0.3), 1e-15, 0, "the same pullback on a number afterwards");
    expectClose(grad((s: Scalar) => pullback(s), 5), Math.cos(0.3), 1e-15, 0, "and traced again");
    // vjp inside grad, x and seed both traced: d/dx [3x²·x] = 9x²
    expectClose(grad((x: Scalar) => vjp((y: Scalar) => mul(y, mul(y, y)), x)[1](x), 1.5), 9 * 1.5 ** 2, 1e-15, 0, "x and seed traced");
    // value and pullback both differentiated: d/dx [x sin x + sin x]
    const g = grad((x: Scalar) => ((([y, pb]) => add(y as Scalar, pb(1)))(vjp((z: Scalar) => mul(z, sin(x)), x))), 0.5);
    expectClose(g, Math.sin(0.5) + 0.5 * Math.cos(0.5) + Math.cos(0.5), 1e-15, 0, "value and pullback");
  });

  it("the pullback throws ClosedTraceError after the enclosing rd that traced x returned", () => {
    let pb: ((s: number) => unknown) | null = null;
    expectClose(grad((x: Scalar) => { const p = vjp((y: Scalar) => mul(y, y), x)[1]; pb = p; return mul(x, p(1)); }, 2), 4 * 2, 0, 0, "inside, d/dx 2x²");
    expect(() => pb!(1)).toThrow(ClosedTraceError);
    expect(() => pb!(1)).toThrow(/vjp's pullback: the value x \(or a value f used\) was traced by a grad call that has returned/);
    // the same when only a value f closes over was traced there
    grad((x: Scalar) => ((pb = vjp((y: Scalar) => mul(x, y), 3)[1]), x), 2);
    expect(() => pb!(1)).toThrow(ClosedTraceError);
    // and for a traced tensor (it went on from the stale trace before)
    let pbt: ((s: Float64Array) => unknown) | null = null;
    grad((t: Tensor) => ((pbt = vjp((y: Tensor) => mul(y, y), t)[1]), sum(t)), Float64Array.of(1, 2));
    expect(() => pbt!(Float64Array.of(1, 1))).toThrow(ClosedTraceError);
  });
});

// ---------------------------------------------------------------- Jacobians and Hessians
describe("jacobian, jacrev, jacfwd", () => {
  const modes = { jacobian, jacrev, jacfwd };

  it("of a 0-d tensor: a 0-d block, not a number (a number is for a real against a real)", () => {
    const x0 = ndarray(Float64Array.of(3), []);
    for (const [name, jac] of Object.entries(modes)) {
      const J = jac((v: Tensor) => mul(v, v), x0) as NdArray;
      expect([J.shape, J.get()], name).toEqual([[], 6]);
    }
    const H = hessian((v: Tensor) => sum(mul(v, mul(v, v))), x0) as NdArray;
    expect([H.shape, H.get()]).toEqual([[], 18]);
    expect(Array.from((jacobian((v: Tensor) => sum(v), Float64Array.of(1, 2)) as NdArray).data)).toEqual([1, 1]);
  });

  it.each(PTS3)("of (xy, y sin z, eˣ) at (%d, %d, %d): rows shaped like x, one per output", (...p) => {
    for (const [name, jac] of Object.entries(modes)) expectClose(jac(G, p), JG(p), 1e-14, 1e-15, name);
  });

  it.each([[2, 0.5], [1, -2.2], [0.3, 3]])("of polar → cartesian on records at r = %d, θ = %d", (r, t) => {
    const polar = ({ r, t }: { r: Scalar; t: Scalar }) => ({ x: mul(r, cos(t)), y: mul(r, sin(t)) });
    const want = { x: { r: Math.cos(t), t: -r * Math.sin(t) }, y: { r: Math.sin(t), t: r * Math.cos(t) } };
    for (const [name, jac] of Object.entries(modes)) {
      const J = jac(polar, { r, t });
      expectClose(J, want, 1e-14, 1e-15, name);
      expect(Object.keys(J as object)).toEqual(["x", "y"]);
    }
  });

  it("shapes: scalar → scalar is a number, R → R³ an array of numbers, R³ → R one leaf holding the gradient", () => {
    for (const jac of Object.values(modes)) {
      expect(jac(sin, 0.3)).toBeCloseTo(Math.cos(0.3), 15);
      expectClose(jac((t: Scalar) => [cos(t), sin(t), square(t)], 0.3), [-Math.sin(0.3), Math.cos(0.3), 0.6], 1e-15, 0, "R → R³");
      expectClose(jac(([a, b, c]: V) => add(mul(a, b), c), [2, 3, 4]), [3, 2, 1], 0, 0, "R³ → R");
      expectClose(jac(([a, b]: V) => [[a], { s: b }], [2, 3]), [[[1, 0]], { s: [0, 1] }], 0, 0, "nested output");
    }
  });

  it("jacobian picks reverse mode when outputs ≤ inputs and forward mode otherwise", () => {
    const calls = { reverse: 0, tangent: 0 };
    const probe = defineOp({ name: "jacobianProbe", forward: (x) => 2 * x,
      reverse: (_args, _y, ct) => (calls.reverse++, [mul(2, ct)]), tangent: (_args, [dx]) => (calls.tangent++, mul(2, dx)) });
    expectClose(jacobian((x: Scalar) => [probe(x), x, sin(x)], 0.5), [2, 1, Math.cos(0.5)], 1e-15, 0, "R → R³");
    expect(calls).toEqual({ reverse: 0, tangent: 1 });
    calls.tangent = 0;
    expectClose(jacobian(([a, b, c]: V) => add(probe(a), mul(b, c)), [1, 2, 3]), [2, 3, 2], 0, 0, "R³ → R");
    expect(calls).toEqual({ reverse: 1, tangent: 0 });
  });

  it("is differentiable: d/dx of the Jacobian of (sin, x²) is (−sin x, 2), by both modes", () => {
    for (const jac of Object.values(modes)) {
      expectClose(grad((x: Scalar) => (jac((y: Scalar) => [sin(y), square(y)], x) as V)[0], 0.5), -Math.sin(0.5), 1e-15, 0, "d/dx cos x");
      expectClose(grad((x: Scalar) => (jac((y: Scalar) => [sin(y), square(y)], x) as V)[1], 0.5), 2, 1e-15, 0, "d/dx 2x");
    }
  });
});

const [rosen, rosenH] = [rosenbrock, rosenbrockHessian];
const r5 = rng(11);
const ROSEN_POINTS = [[1, 1], [-1.2, 1], [0.5, -0.3], [1, 1, 1, 1, 1], [-1.2, 1, 0.3, -0.7, 2], Array.from({ length: 5 }, () => 2 * r5())];

describe("hessian and hvp", () => {
  it.each(ROSEN_POINTS.map((x) => ({ x })))("Rosenbrock's Hessian at $x, and jacrev / jacfwd / jacobian of ∇f agree", ({ x }) => {
    const H = hessian(rosen, x);
    expectClose(H, rosenH(x), 1e-13, 1e-12, "hessian");
    const g = (y: V) => grad(rosen, y);
    for (const [name, jac] of Object.entries({ jacrev, jacfwd, jacobian })) expectClose(jac(g, x), H, 1e-13, 1e-12, name);
    const r = rng(x.length);
    for (let k = 0; k < 3; k++) {
      const v = x.map(() => r());
      expectClose(hvp(rosen, x, v), matVec(rosenH(x), v), 1e-12, 1e-12, `hvp along ${v}`);
      expectClose(hvp(rosen, x, v), matVec(H as number[][], v), 1e-13, 1e-12, `hvp vs hessian·v along ${v}`);
    }
  });

  it("on records: f(u, v) = u²v + eᵛ", () => {
    const f = ({ u, v }: { u: Scalar; v: Scalar }) => add(mul(square(u), v), exp(v));
    const p = { u: 1.3, v: -0.6 };
    const H = { u: { u: 2 * p.v, v: 2 * p.u }, v: { u: 2 * p.u, v: Math.exp(p.v) } };
    expectClose(hessian(f, p), H, 1e-15, 1e-15, "hessian");
    expectClose(hvp(f, p, { u: 1, v: 2 }), { u: H.u.u + 2 * H.u.v, v: H.v.u + 2 * H.v.v }, 1e-15, 1e-15, "hvp");
  });

  it("of a scalar function is f'', and the Hessian is differentiable again", () => {
    expectClose(hessian(sin, 0.5), -Math.sin(0.5), 1e-15, 0, "sin''");
    expectClose(grad((x: Scalar) => hessian(sin, x) as Scalar, 0.5), -Math.cos(0.5), 1e-15, 0, "sin'''");
    expectClose(hessian(F, [0.7, -1.1]), HF([0.7, -1.1]), 1e-13, 1e-14, "x²y³ + sin(xy)");
  });
});

// ---------------------------------------------------------------- Taylor mode
const fact = (k: number): number => (k <= 1 ? 1 : k * fact(k - 1));
/** d^k/dx^k x^p = p(p−1)…(p−k+1) x^(p−k). */
const powDeriv = (p: number) => (x: number, k: number) =>
  ((c) => (c === 0 ? 0 : c * x ** (p - k)))(Array.from({ length: k }, (_, j) => p - j).reduce((a, b) => a * b, 1));
const SERIES: { name: string; f: (x: Scalar) => Scalar; d: (x: number, k: number) => number; maxK: number; points: number[] }[] = [
  { name: "exp", f: exp, d: (x) => Math.exp(x), maxK: 8, points: [-1.2, 0, 0.5, 2] },
  {
    name: "sin",
    f: sin,
    d: (x, k) => [Math.sin, Math.cos, (t: number) => -Math.sin(t), (t: number) => -Math.cos(t)][k % 4](x),
    maxK: 8,
    points: [-2, 0.7, 2.9],
  },
  { name: "1/(1−x)", f: (x) => div(1, sub(1, x)), d: (x, k) => fact(k) / (1 - x) ** (k + 1), maxK: 6, points: [-0.5, 0.3, 2] },
  { name: "log", f: log, d: (x, k) => (k === 0 ? Math.log(x) : ((-1) ** (k - 1) * fact(k - 1)) / x ** k), maxK: 6, points: [0.3, 1.7, 4] },
  { name: "sqrt", f: sqrt, d: powDeriv(0.5), maxK: 6, points: [0.5, 2, 7] },
  { name: "x^2.5 (pow)", f: (x) => pow(x, 2.5), d: powDeriv(2.5), maxK: 5, points: [0.5, 1.3, 3] },
  { name: "x^3 (pow) at negative x", f: (x) => pow(x, 3), d: powDeriv(3), maxK: 5, points: [-1.3, -0.5, 0] },
  { name: "x^-2 (pow)", f: (x) => pow(x, -2), d: powDeriv(-2), maxK: 5, points: [-0.5, 0.8] },
  { name: "x^65 (pow) at negative x", f: (x) => pow(x, 65), d: powDeriv(65), maxK: 4, points: [-1, -0.9] },
  {
    name: "atan",
    f: atan,
    d: (x, k) => [Math.atan(x), 1 / (1 + x * x), (-2 * x) / (1 + x * x) ** 2, (6 * x * x - 2) / (1 + x * x) ** 3, (24 * x * (1 - x * x)) / (1 + x * x) ** 4][k],
    maxK: 4,
    points: [-1.5, 0.5, 2],
  },
  // t = tanh x, s = 1 − t²: tanh' = s, tanh'' = −2ts, tanh''' = s(6t² − 2), tanh'''' = 8ts(2 − 3t²)
  {
    name: "tanh",
    f: tanh,
    d: (x, k) => ((t, s) => [t, s, -2 * t * s, s * (6 * t * t - 2), 8 * t * s * (2 - 3 * t * t)][k])(Math.tanh(x), 1 - Math.tanh(x) ** 2),
    maxK: 4,
    points: [-1, 0.5, 1.8],
  },
  // with s = sin x, c = cos x: (e^s)' = c e^s, '' = (c² − s) e^s, ''' = (c³ − 3sc − c) e^s
  {
    name: "exp(sin x)",
    f: (x) => exp(sin(x)),
    d: (x, k) => ((s, c, e) => [e, c * e, (c * c - s) * e, (c ** 3 - 3 * s * c - c) * e][k])(Math.sin(x), Math.cos(x), Math.exp(Math.sin(x))),
    maxK: 3,
    points: [-0.8, 0.4, 2.5],
  },
];

describe("taylor against closed-form derivatives", () => {
  it.each(SERIES)("$name: [f, f', …, f^(k)] scaled by v^j", ({ name, f, d, maxK, points }) => {
    for (const x of points) {
      for (const v of [1, -0.7, 2]) {
        const got = taylor(f, x, v, maxK);
        expect(got).toHaveLength(maxK + 1);
        got.forEach((dj, j) => expectClose(dj, v ** j * d(x, j), 1e-9, 1e-9, `${name}^(${j})(${x}), v = ${v}`));
      }
    }
  });

  it("finite far out, where e^x and cosh x overflow (|x| > 710): tanh, sigmoid, softplus", () => {
    const sigma = (x: number) => 1 / (1 + Math.exp(-x));
    for (const x of [-800, -30, 20, 800]) {
      // t = tanh x, s = sech² x (not 1 − t², which is 0 out there); p = σ(x), q = σ(−x)
      const [t, s, p, q] = [Math.tanh(x), 1 / Math.cosh(x) ** 2, sigma(x), sigma(-x)];
      const want = {
        tanh: [t, s, -2 * t * s, s * (4 * t * t - 2 * s)],
        sigmoid: [p, p * q, p * q * (q - p), p * q * ((q - p) ** 2 - 2 * p * q)],
        softplus: [Math.max(x, 0) + Math.log1p(Math.exp(-Math.abs(x))), p, p * q, p * q * (q - p)],
      };
      for (const [name, f] of [["tanh", tanh], ["sigmoid", sigmoid], ["softplus", softplus]] as const) {
        expectClose(taylor(f, x, 1, 3), want[name], 1e-9, 1e-300, `${name} at ${x}`);
      }
    }
  });

  it("pow where log a is not finite: a base through 0, a negative base, 0^b", () => {
    // (at 0) t^2.5: 0 below order 2.5, no derivative past it (as nested jvp: ∞)
    expect(taylor((x: Scalar) => pow(x, 2.5), 0, 1, 4)).toEqual([0, 0, 0, Infinity, -Infinity]);
    expect(taylor((x: Scalar) => pow(x, 3), 0, 2, 4)).toEqual([0, 0, 0, 48, 0]);
    expect(taylor((x: Scalar) => pow(0, x), 2, 1, 3)).toEqual([0, 0, 0, 0]);
    expect(taylor((x: Scalar) => pow(x, 65), -1, 1, 2)).toEqual([-1, 65, -4160]);
  });

  it("checkNaN names the first primitive with a derivative that is not finite", () => {
    expect(() => taylor(sqrt, 0, 1, 2, { checkNaN: true })).toThrow(/taylor: checkNaN: the derivative of order 1 of sqrt \(for v1\) along v is Infinity/);
    expect(taylor(sqrt, 0, 1, 2)).toEqual([0, Infinity, -Infinity]);
  });

  it("orders up to 170, the last whose j! is finite: sin's 170th derivative is −sin, x²'s are 0", () => {
    const got = taylor(sin, 0.5, 1, 170) as number[];
    expect(got).toHaveLength(171);
    // sin⁽ʲ⁾ cycles sin, cos, −sin, −cos: 168 ≡ 0, 169 ≡ 1, 170 ≡ 2 (mod 4)
    expectClose(got.slice(168), [Math.sin(0.5), Math.cos(0.5), -Math.sin(0.5)], 1e-12, 1e-12, "sin at 0.5");
    expect(taylor((x: Scalar) => mul(x, x), 0.5, 1, 170).slice(167)).toEqual([0, 0, 0, 0]);
  });

  it("k = 0 gives [f(x)], shaped like f(x)", () => {
    expect(taylor(sin, 0.5, 1, 0)).toEqual([Math.sin(0.5)]);
    expect(taylor(([a, b]: V) => ({ p: mul(a, b), q: [a] }), [2, 3], [1, 1], 0)).toEqual([{ p: 6, q: [2] }]);
  });

  it("identity and constant outputs; structured x, v and f(x)", () => {
    expect(taylor((x: Scalar) => x, 2, 3, 3)).toEqual([2, 3, 0, 0]);
    expect(taylor(() => 5, 2, 3, 2)).toEqual([5, 0, 0]);
    // t ↦ (a b, {s: sin a}) along a = 1 + t, b = 2 − t
    const got = taylor(({ a, b }: { a: Scalar; b: Scalar }) => [mul(a, b), { s: sin(a) }], { a: 1, b: 2 }, { a: 1, b: -1 }, 3);
    expectClose(got, [[2, { s: Math.sin(1) }], [1, { s: Math.cos(1) }], [-2, { s: -Math.sin(1) }], [0, { s: -Math.cos(1) }]], 1e-14, 1e-15, "taylor");
  });

  it("rejects a negative, fractional or too high order (ArgumentError, at once), and x or v traced by an enclosing rd", () => {
    const order = (k: unknown) => thrown(() => taylor(sin, 0.5, 1, k as number));
    for (const k of [-1, 1.5, NaN, "3", 171, 1e9, Infinity]) expect(order(k), String(k)).toBeInstanceOf(ArgumentError);
    expect(order(-1).message).toMatch(
      /^taylor: the order k is -1; expected an integer from 0 to 170, at .*forward\.test\.ts:\d+:\d+\. Pass the highest order wanted, a whole number/,
    );
    expect(order(1.5).message).toMatch(/^taylor: the order k is 1\.5; expected an integer from 0 to 170/);
    expect(order("3").message).toMatch(/^taylor: the order k is a string \("3"\)/);
    // it hung: a Float64Array of 10⁹ + 1 numbers per instruction, and 10⁹ factorials
    expect(order(1e9).message).toMatch(
      new RegExp(
        /^taylor: the order k is 1000000000; expected an integer from 0 to 170: j! overflows float64 past j = 170, /.source +
          /where every derivative would be ±Infinity or a wrong 0, at .*\. Ask for at most 170 orders\.$/.source,
      ),
    );
    expect(order(171).message).toContain("the order k is 171; expected an integer from 0 to 170: j! overflows");
    const nested = /taylor: x, v or a value f uses is traced by an enclosing rd; taylor computes numbers and cannot be differentiated/;
    expect(() => grad((x: Scalar) => taylor(sin, x, 1, 2)[2] as Scalar, 0.5)).toThrow(nested);
    expect(() => grad((s: Scalar) => taylor(sin, 0.5, s, 2)[1] as Scalar, 1)).toThrow(nested);
    expect(() => grad((s: Scalar) => taylor((x: Scalar) => mul(s, x), 0.5, 1, 1)[1] as Scalar, 1)).toThrow(WengertError);
    expect(() => taylor(G, [1, 2, 3], [1, 2], 2)).toThrow(SeedMismatchError);
  });
});

describe("taylor against nested jvp and nested grad, along random directions", () => {
  const funcs: { name: string; f: (x: V) => Scalar; x: number[] }[] = [
    { name: "x²y³ + sin(xy)", f: F, x: [0.7, -1.1] },
    { name: "e^(xy)/(1 + z²) + atan(x − z)", f: ([x, y, z]) => add(div(exp(mul(x, y)), add(1, square(z))), atan(sub(x, z))), x: [0.4, -0.9, 1.2] },
    { name: "Rosenbrock, n = 3", f: rosen, x: [-1.2, 1, 0.5] },
    { name: "√(1 + x²) · log(2 + y) − x/y", f: ([x, y]) => sub(mul(sqrt(add(1, square(x))), log(add(2, y))), div(x, y)), x: [0.8, 1.4] },
  ];
  const K = 4;
  const nthJvp = (f: (x: V) => unknown, v: number[], j: number): ((x: V) => unknown) => (j === 0 ? f : (x) => jvp(nthJvp(f, v, j - 1), x, v)[1]);
  const nthGrad = (h: (t: Scalar) => Scalar, j: number): ((t: Scalar) => Scalar) => (j === 0 ? h : (t) => grad(nthGrad(h, j - 1), t));

  it.each(funcs)("$name, k = 4", ({ name, f, x }) => {
    const r = rng(x.length * 31 + 5);
    for (let trial = 0; trial < 3; trial++) {
      const v = x.map(() => r());
      const got = taylor(f, x, v, K) as number[];
      const h = (t: Scalar) => f(x.map((xi, i) => add(xi, mul(t, v[i]))));
      for (let j = 0; j <= K; j++) {
        expectClose(got[j], nthJvp(f, v, j)(x), 1e-9, 1e-10, `${name}: d${j} vs ${j} nested jvp, v = ${v}`);
        expectClose(got[j], nthGrad(h, j)(0), 1e-9, 1e-10, `${name}: d${j} vs ${j} nested grad of t ↦ f(x + tv)`);
      }
    }
  });

  it("structured output: each derivative shaped like f(x)", () => {
    const [f, x, v] = [([x, y]: V) => ({ a: mul(x, exp(y)), b: [sin(mul(x, y))] }), [0.6, -0.4], [0.3, 0.9]];
    const got = taylor(f, x, v, 3);
    for (let j = 0; j <= 3; j++) expectClose(got[j], nthJvp(f, v, j)(x), 1e-10, 1e-12, `d${j}`);
  });
});
