/**
 * The types of the API say what comes back (api/types.ts), and the values agree with them.
 * `expectTypeOf` is checked by `tsc -p packages/core/test` (strict, part of `pnpm test`):
 * a type that loosens (to `Scalar`, `unknown`, `number | Real`) fails it. Each case also
 * checks the value's kind at run time (number, Real, Float64Array, ndarray, Tensor, leaf
 * by leaf), so the types cannot drift from what the runtime returns.
 */
import { describe, expect, expectTypeOf, it } from "vitest";
import {
  add, compileGrad, fd, grad, hessian, hvp, jacfwd, jacobian, jacrev, jit, jvp, matmul, mul, primal, rd, Real, sin, square, sum, taylor, Tensor,
  vmap, scan, checkpoint,
  TracedOperatorError, valueAndGrad, vjp, WengertError, type NdArray, type Scalar,
} from "../../src/index.js";
import { isNd, nd } from "../helpers/tensors.js";

/** What a value is at run time, leaf by leaf. */
function kind(v: unknown): unknown {
  if (typeof v === "number") return "number";
  if (v instanceof Real) return "Real";
  if (v instanceof Tensor) return "Tensor";
  if (v instanceof Float64Array) return "Float64Array";
  if (isNd(v)) return "ndarray";
  if (Array.isArray(v)) return v.map(kind);
  if (typeof v === "object" && v !== null) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, kind(x)]));
  return typeof v;
}

const prod = ([a, b]: Scalar[]) => mul(a, b);
const pair = ([a, b]: Scalar[]) => [mul(a, b), sin(a)];
const cube = (x: Scalar) => mul(x, square(x));

describe("outside any trace: numbers, arrays, Float64Arrays, ndarrays, records and tuples, leaf by leaf", () => {
  it("grad of a number is a number: x -= 0.1 * grad(f, x) compiles", () => {
    let x = 2;
    for (let k = 0; k < 3; k++) x -= 0.1 * grad(square, x);
    expect(x).toBeCloseTo(2 * 0.8 ** 3, 15);
    const g = grad(cube, 2);
    expectTypeOf(g).toEqualTypeOf<number>();
    expect(kind(g)).toBe("number");
    expect(g).toBe(12);
  });

  it("grad of number[] is number[], of a literal tuple a tuple of numbers", () => {
    const xs: number[] = [2, 3];
    const g = grad(prod, xs);
    expectTypeOf(g).toEqualTypeOf<number[]>();
    expect(g).toEqual([3, 2]);
    const t = grad(([a, b]) => mul(a, b), [2, 3]);
    expectTypeOf(t).toEqualTypeOf<[number, number]>();
    expect(kind(t)).toEqual(["number", "number"]);
  });

  it("grad of a Float64Array is a Float64Array, of an ndarray an ndarray, of a record a record", () => {
    const v = Float64Array.of(1, 2, 3);
    const gv = grad((t) => sum(mul(t, t)), v);
    expectTypeOf(gv).toEqualTypeOf<Float64Array>();
    expect(kind(gv)).toBe("Float64Array");
    expect(gv[2]).toBe(6);
    const m = nd([1, 2, 3, 4], [2, 2]);
    const gm = grad((t) => sum(mul(t, t)), m);
    expectTypeOf(gm).toEqualTypeOf<NdArray>();
    expect(kind(gm)).toBe("ndarray");
    expect(gm.get(1, 1)).toBe(8);
    const p = { W: m, b: v, s: 0.5, pair: [1, 2] };
    const gp = grad((q) => add(mul(q.s, add(sum(q.W), sum(q.b))), mul(q.pair[0], q.pair[1])), p);
    expectTypeOf(gp).toEqualTypeOf<{ W: NdArray; b: Float64Array; s: number; pair: number[] }>();
    expect(kind(gp)).toEqual({ W: "ndarray", b: "Float64Array", s: "number", pair: ["number", "number"] });
    expect(gp.s).toBe(16);
  });

  it("valueAndGrad and rd", () => {
    const [value, g] = valueAndGrad(prod, [2, 3]);
    expectTypeOf(value).toEqualTypeOf<number>();
    expectTypeOf(g).toEqualTypeOf<[number, number]>();
    expect([value, g]).toEqual([6, [3, 2]]);
    const r = rd(pair, [2, 3], [1, 0]);
    expectTypeOf(r).toEqualTypeOf<[number, number]>();
    expect(kind(r)).toEqual(["number", "number"]);
  });

  it("fd, jvp and taylor are shaped like f(x); a tensor of f(x) comes back an ndarray", () => {
    const j = fd(pair, [2, 3], [1, 0]);
    expectTypeOf(j).toEqualTypeOf<number[]>();
    expect(j[0]).toBe(3);
    const [value, tangent] = jvp(({ r, t }: { r: Scalar; t: Scalar }) => ({ x: mul(r, t), r }), { r: 2, t: 3 }, { r: 1, t: 0 });
    expectTypeOf(value).toEqualTypeOf<{ x: number; r: number }>();
    expectTypeOf(tangent).toEqualTypeOf<{ x: number; r: number }>();
    expect(tangent).toEqual({ x: 3, r: 1 });
    const [tv, tt] = jvp((t) => mul(t, t), Float64Array.of(1, 2), Float64Array.of(1, 1));
    expectTypeOf(tv).toEqualTypeOf<NdArray>();
    expectTypeOf(tt).toEqualTypeOf<NdArray>();
    expect([kind(tv), kind(tt)]).toEqual(["ndarray", "ndarray"]);
    const ts = taylor(sin, 0.5, 1, 2);
    expectTypeOf(ts).toEqualTypeOf<number[]>();
    expect(kind(ts)).toEqual(["number", "number", "number"]);
  });

  it("vjp: f(x), and a pullback from seeds shaped like f(x) to cotangents shaped like x", () => {
    const [value, pullback] = vjp(pair, [2, 3]);
    expectTypeOf(value).toEqualTypeOf<number[]>();
    const c = pullback([1, 0]);
    expectTypeOf(c).toEqualTypeOf<[number, number]>();
    expect(c).toEqual([3, 2]);
    // @ts-expect-error: f(x) is an array of reals, not a record
    expect(() => pullback({ a: 1 })).toThrow();
  });

  it("jacobian, jacrev, jacfwd: shaped like f(x), leaves shaped like x; blocks of tensors are ndarrays", () => {
    for (const jac of [jacobian, jacrev, jacfwd]) {
      const J = jac(pair, [2, 3]);
      expectTypeOf(J).toEqualTypeOf<[number, number][]>();
      expect(kind(J)).toEqual([["number", "number"], ["number", "number"]]);
    }
    const J1 = jacobian((t) => [sin(t), square(t)], 0.5);
    expectTypeOf(J1).toEqualTypeOf<number[]>();
    // a real output against a Float64Array input: an ndarray block (of dims [3]), not a Float64Array
    const J2 = jacobian((p: { t: Tensor; s: Scalar }) => mul(p.s, sum(p.t)), { t: Float64Array.of(1, 2, 3), s: 2 });
    expectTypeOf(J2).toEqualTypeOf<{ t: NdArray; s: number }>();
    expect(kind(J2)).toEqual({ t: "ndarray", s: "number" });
    // a tensor output: blocks [...out, ...in], a real input's too
    const J3 = jacrev((p: { t: Tensor; s: Scalar }) => mul(p.s, p.t), { t: Float64Array.of(1, 2), s: 2 });
    expectTypeOf(J3).toEqualTypeOf<{ t: NdArray; s: NdArray }>();
    expect(kind(J3)).toEqual({ t: "ndarray", s: "ndarray" });
    // a 0-d tensor against itself: a 0-d block, not a number
    const J4 = jacfwd((t: Tensor) => mul(t, t), nd([3], []));
    expectTypeOf(J4).toEqualTypeOf<NdArray>();
    expect(kind(J4)).toBe("ndarray");
  });

  it("hessian and hvp", () => {
    const H = hessian(prod, [2, 3]);
    expectTypeOf(H).toEqualTypeOf<[[number, number], [number, number]]>();
    expect(H).toEqual([[0, 1], [1, 0]]);
    const xs: number[] = [2, 3];
    expectTypeOf(hessian(prod, xs)).toEqualTypeOf<number[][]>();
    expectTypeOf(hessian(sin, 0.5)).toEqualTypeOf<number>();
    const Ht = hessian((t) => sum(mul(t, mul(t, t))), Float64Array.of(1, 2));
    expectTypeOf(Ht).toEqualTypeOf<NdArray>();
    expect(kind(Ht)).toBe("ndarray");
    const hv = hvp(prod, [2, 3], [1, 0]);
    expectTypeOf(hv).toEqualTypeOf<[number, number]>();
    expect(hv).toEqual([0, 1]);
    const hvt = hvp((t) => sum(mul(t, mul(t, t))), Float64Array.of(1, 2), Float64Array.of(1, 0));
    expectTypeOf(hvt).toEqualTypeOf<Float64Array>();
    expect(kind(hvt)).toBe("Float64Array");
  });

  it("compileGrad infers its argument from f's parameter: number[] in, number[] out, no type argument", () => {
    const g = compileGrad((p: Scalar[]) => mul(p[0], p[1]));
    const xs: number[] = [2, 3];
    expectTypeOf(g(xs)).toEqualTypeOf<number[]>();
    expectTypeOf(g([2, 3])).toEqualTypeOf<[number, number]>();
    const [value, d] = g.valueAndGrad(xs);
    expectTypeOf(value).toEqualTypeOf<number>();
    expect([value, d]).toEqual([6, [3, 2]]);
    // @ts-expect-error: f takes an array of reals
    expect(() => g({ a: 1 })).toThrow();
    const h = compileGrad((p: { W: Tensor; b: Tensor }) => sum(add(matmul(p.W, p.b), 1)));
    const gp = h({ W: nd([1, 2, 3, 4], [2, 2]), b: Float64Array.of(1, 1) });
    expectTypeOf(gp).toEqualTypeOf<{ W: NdArray; b: Float64Array }>();
    expect(kind(gp)).toEqual({ W: "ndarray", b: "Float64Array" });
  });
});

describe("inside a traced function: traced values", () => {
  it("f receives Real for a real and Tensor for a tensor", () => {
    grad((x) => {
      expectTypeOf(x).toEqualTypeOf<Real>();
      return x;
    }, 1);
    grad((p) => {
      expectTypeOf(p).toEqualTypeOf<{ t: Tensor; s: Real }>();
      return mul(sum(p.t), p.s);
    }, { t: Float64Array.of(1), s: 1 });
  });

  it("every transformation of a traced x is traced, all its leaves", () => {
    const outer = grad((x) => {
      const g = grad(cube, x);
      expectTypeOf(g).toEqualTypeOf<Real>();
      const [v, gv] = valueAndGrad(prod, [x, 1]);
      expectTypeOf(v).toEqualTypeOf<Real>();
      expectTypeOf(gv).toEqualTypeOf<[Real, Real]>();
      const r = rd(pair, [x, 2], [1, 0]);
      expectTypeOf(r).toEqualTypeOf<[Real, Real]>();
      const [jv, jt] = jvp(pair, [x, 2], [1, 0]);
      expectTypeOf(jv).toEqualTypeOf<Real[]>();
      expectTypeOf(jt).toEqualTypeOf<Real[]>();
      const f = fd(pair, [x, 2], [1, 0]);
      expectTypeOf(f).toEqualTypeOf<Real[]>();
      const [pv, pullback] = vjp(pair, [x, 2]);
      expectTypeOf(pv).toEqualTypeOf<Real[]>();
      expectTypeOf(pullback([1, 0])).toEqualTypeOf<[Real, Real]>();
      const J = jacobian(pair, [x, 2]);
      expectTypeOf(J).toEqualTypeOf<[Real, Real][]>();
      const Jr = jacrev((t) => [t, sin(t)], x);
      expectTypeOf(Jr).toEqualTypeOf<Real[]>();
      const Jf = jacfwd(prod, [x, 3]);
      expectTypeOf(Jf).toEqualTypeOf<[Real, Real]>();
      const H = hessian(cube, x);
      expectTypeOf(H).toEqualTypeOf<Real>();
      const hv = hvp(cube, x, 1);
      expectTypeOf(hv).toEqualTypeOf<Real>();
      const c = compileGrad(cube)(x);
      expectTypeOf(c).toEqualTypeOf<Real>();
      const all = [g, v, ...gv, ...r, ...jv, ...jt, ...f, ...pv, ...pullback([1, 0]), ...J.flat(), ...Jr, ...Jf, H, hv, c];
      expect(all).toHaveLength(27);
      // taylor computes numbers, and says so when x is traced
      expectTypeOf(taylor(sin, 0.5, 1, 2)).toEqualTypeOf<number[]>();
      expect(() => taylor(sin, x, 1, 2)).toThrow(WengertError);
      expect(new Set(all.map(kind))).toEqual(new Set(["Real"]));
      return add(add(g, H), add(hv, c));
    }, 2);
    // d/dx [3x² + 6x + 6x + 3x²] = 12x + 12
    expectTypeOf(outer).toEqualTypeOf<number>();
    expect(outer).toBe(36);
  });

  it("a traced seed or tangent makes the result traced too", () => {
    grad((s) => {
      const r = rd(sin, 0.3, s);
      expectTypeOf(r).toEqualTypeOf<Real>();
      const [v, t] = jvp(sin, 0.3, s);
      expectTypeOf(v).toEqualTypeOf<Real>();
      expectTypeOf(t).toEqualTypeOf<Real>();
      const pb = vjp(sin, 0.3)[1](s);
      expectTypeOf(pb).toEqualTypeOf<Real>();
      expect([r, v, t, pb].map(kind)).toEqual(["Real", "Real", "Real", "Real"]);
      return add(r, t);
    }, 2);
  });

  it("tensors: a Tensor for a traced tensor", () => {
    grad((w: Tensor) => {
      const g = grad((t) => sum(mul(t, t)), w);
      expectTypeOf(g).toEqualTypeOf<Tensor>();
      expect(kind(g)).toBe("Tensor");
      return sum(g);
    }, Float64Array.of(1, 2));
  });

  it("where x may be either (a parameter typed Scalar), the result may be either", () => {
    const dcube = (x: Scalar) => grad(cube, x);
    expectTypeOf(dcube).returns.toEqualTypeOf<Scalar>();
    expect(kind(dcube(2))).toBe("number");
    expect(grad((x) => {
      expect(kind(dcube(x))).toBe("Real");
      return dcube(x);
    }, 2)).toBe(12);
  });
});

describe("primitives: traced in, traced out; numbers and held tensors in, numbers and ndarrays out", () => {
  it("on numbers, traced reals, tensors", () => {
    expectTypeOf(mul(2, 3)).toEqualTypeOf<number>();
    expectTypeOf(sin(2)).toEqualTypeOf<number>();
    expectTypeOf(sum(nd([1, 2], [2]))).toEqualTypeOf<number>();
    expectTypeOf(matmul(nd([1, 2, 3, 4], [2, 2]), Float64Array.of(1, 1))).toEqualTypeOf<NdArray>();
    expectTypeOf(mul(Float64Array.of(1), 2)).toEqualTypeOf<NdArray>();
    grad((x) => {
      expectTypeOf(mul(x, 2)).toEqualTypeOf<Real>();
      expectTypeOf(mul(2, x)).toEqualTypeOf<Real>();
      expectTypeOf(sin(x)).toEqualTypeOf<Real>();
      expectTypeOf(mul(x, Float64Array.of(1, 2))).toEqualTypeOf<Tensor>();
      expect(kind(mul(x, Float64Array.of(1, 2)))).toBe("Tensor");
      return x;
    }, 1);
    const s = (x: Scalar) => sin(x);
    expectTypeOf(s).returns.toEqualTypeOf<Scalar>();
  });
});

describe("the paper's nested example: an inner rd at a constant point, closing over the outer x", () => {
  it("is typed as a number, is a traced real, and anything that would read it as a number throws", () => {
    let inner: number | null = null;
    const errors: unknown[] = [];
    const r = rd((x) => {
      const y = rd((u) => add(x, u), 1, 1);
      expectTypeOf(y).toEqualTypeOf<number>();
      inner = y;
      expect(kind(y)).toBe("Real");
      for (const use of [() => y * 2, () => y + 1, () => y < 1, () => Math.sin(y), () => Number(y), () => y.toFixed(2), () => new Float64Array([y])]) {
        try {
          use();
        } catch (e) {
          errors.push(e);
        }
      }
      // wengert's functions take it as a traced real, so the outer derivative goes through it
      return mul(x, y);
    }, 1, 1);
    expect(r).toBe(1);
    expect(errors).toHaveLength(7);
    for (const e of errors) expect(e).toBeInstanceOf(TracedOperatorError);
    expect(inner).toBeInstanceOf(Real);
  });

  it("a tensor result typed as a Float64Array or an ndarray: elements, length, iteration, data throw", () => {
    const c = Float64Array.of(1, -0.5);
    const errors: unknown[] = [];
    const g = grad((w: Tensor) => {
      const d = grad((x) => sum(mul(w, mul(x, x))), Float64Array.of(2, 3));
      expectTypeOf(d).toEqualTypeOf<Float64Array>();
      expect(kind(d)).toBe("Tensor");
      const m = grad((x) => sum(mul(w, x)), nd([1, 1], [2]));
      expectTypeOf(m).toEqualTypeOf<NdArray>();
      for (const use of [
        () => d[0],
        () => d.length,
        () => Array.from(d),
        () => [...d],
        () => new Float64Array(d),
        () => Float64Array.of(1, 2).set(d),
        () => m.data,
        () => m.get(0),
        () => m.size,
      ]) {
        try {
          use();
        } catch (e) {
          errors.push(e);
        }
      }
      // what a traced tensor has reads through: its shape, and wengert's functions
      expect(d instanceof Tensor && d.shape).toEqual([2]);
      return add(sum(mul(d, c)), sum(m));
    }, Float64Array.of(1, 1));
    // d = 2 w ⊙ x, so Σ c ⊙ d = 2 (c₀ x₀ w₀ + c₁ x₁ w₁) and its gradient in w is 2 c ⊙ x; Σ m = Σ w
    expectTypeOf(g).toEqualTypeOf<Float64Array>();
    expect(Array.from(g)).toEqual([2 * 1 * 2 + 1, 2 * -0.5 * 3 + 1]);
    expect(errors).toHaveLength(9);
    for (const e of errors) {
      expect(e).toBeInstanceOf(TracedOperatorError);
      expect((e as Error).message).toMatch(/^grad: this result is a traced tensor \(Tensor\[2\]\), not a number or tensor you hold/);
    }
  });

  it("a result with nothing traced behind it is a plain value: no proxy", () => {
    grad((x) => {
      const g = grad((u) => mul(u, u), 3);
      expect(typeof g).toBe("number");
      return mul(x, primal(x));
    }, 1);
  });
});

describe("jit and vmap: typed from f's parameter, as compileGrad is", () => {
  it("jit(f) called with numbers returns numbers; with ndarrays, ndarrays; inside an rd, traced values", () => {
    const jf = jit((p: Scalar[]) => [mul(p[0], p[1]), sin(p[0])]);
    const xs: number[] = [2, 3];
    const y = jf(xs);
    expectTypeOf(y).toEqualTypeOf<number[]>();
    expect(kind(y)).toEqual(["number", "number"]);
    const jc = jit(cube);
    expectTypeOf(jc(2)).toEqualTypeOf<number>();
    expect(jc(2)).toBe(8);
    expectTypeOf(jc.stats).toEqualTypeOf<{ traces: number; replays: number; compiled: number }>();
    // @ts-expect-error: f takes an array of reals
    expect(() => jf({ a: 1 })).toThrow();
    const jt = jit((p: { W: Tensor; b: Tensor }) => ({ y: matmul(p.W, p.b), s: sum(p.b) }));
    const out = jt({ W: nd([1, 2, 3, 4], [2, 2]), b: nd([1, 1], [2]) });
    expectTypeOf(out).toEqualTypeOf<{ y: NdArray; s: number }>();
    expect(kind(out)).toEqual({ y: "ndarray", s: "number" });
    const g = grad((x) => {
      const v = jc(x);
      expectTypeOf(v).toEqualTypeOf<Real>();
      expect(kind(v)).toBe("Real");
      return v;
    }, 2);
    expectTypeOf(g).toEqualTypeOf<number>();
    expect(g).toBe(12);
  });

  it("vmap(f) takes a batch (a Float64Array for each real, ndarrays for tensors) and returns one, inAxes and outAxes included", () => {
    const v = vmap(cube);
    const ys = v(Float64Array.of(1, 2));
    expectTypeOf(ys).toEqualTypeOf<Float64Array>();
    expect(kind(ys)).toBe("Float64Array");
    expect(Array.from(ys)).toEqual([1, 8]);
    // @ts-expect-error: a batch of reals is a Float64Array, not a number
    expect(() => v(2)).toThrow(WengertError);
    const h = vmap((p: { x: Scalar; c: Scalar }) => [mul(p.x, p.c), square(p.c)] as const, { inAxes: { x: 0, c: null }, outAxes: [0, null] });
    const [a, b] = h({ x: Float64Array.of(1, 2, 3), c: 5 });
    expectTypeOf(a).toEqualTypeOf<Float64Array>();
    expectTypeOf(b).toEqualTypeOf<number>();
    expect(kind([a, b])).toEqual(["Float64Array", "number"]);
    const t = vmap((w: Tensor) => sum(mul(w, w)))(nd([1, 2, 3, 4], [2, 2]));
    expectTypeOf(t).toEqualTypeOf<Float64Array>();
    expect(Array.from(t)).toEqual([5, 25]);
    const m = vmap((w: Tensor) => mul(w, 2))(nd([1, 2, 3, 4], [2, 2]));
    expectTypeOf(m).toEqualTypeOf<NdArray>();
    expect(kind(m)).toBe("ndarray");
    // jit(vmap(f)) is the same function, with stats
    const jv = jit(vmap(cube));
    expectTypeOf(jv(Float64Array.of(1, 2))).toEqualTypeOf<Float64Array>();
    expect(jv.stats.traces).toBe(1);
    // inside an rd, a batch of traced reals is a traced tensor, and so is the result
    const gs = grad((x) => {
      const r = vmap(cube)(x);
      expectTypeOf(r).toEqualTypeOf<Tensor>();
      expect(kind(r)).toBe("Tensor");
      return sum(r);
    }, Float64Array.of(1, 2));
    expectTypeOf(gs).toEqualTypeOf<Float64Array>();
    expect(Array.from(gs)).toEqual([3, 12]);
  });
});

describe("scan and checkpoint: the body receives what the loop would, the results come back as the loop's", () => {
  it("outside any trace: the body's values and the results are numbers and tensors as they are", () => {
    const [c, ys] = scan((s, x) => {
      expectTypeOf(s).toEqualTypeOf<number>();
      expectTypeOf(x).toEqualTypeOf<number>();
      expect(kind([s, x])).toEqual(["number", "number"]);
      return [s + x, mul(s, x)];
    }, 0, [1, 2, 3, 4]);
    expectTypeOf(c).toEqualTypeOf<number>();
    expectTypeOf(ys).toEqualTypeOf<number[]>();
    expect(kind([c, ys])).toEqual(["number", ["number", "number", "number", "number"]]);
    expect([c, ys]).toEqual([10, [0, 2, 9, 24]]);
    // a literal tuple carry, a length instead of xs (x undefined), no ys
    const [pair, none] = scan(([u, v], x) => {
      expectTypeOf(u).toEqualTypeOf<number>();
      expectTypeOf(x).toEqualTypeOf<undefined>();
      return [[v, add(u, v)]];
    }, [0, 1], 10);
    expectTypeOf(pair).toEqualTypeOf<[number, number]>();
    expectTypeOf(none).toEqualTypeOf<undefined[]>();
    expect(pair).toEqual([55, 89]);
    expect(none).toEqual([]);
    // tensors: in their container or traced in the body, an ndarray or a Float64Array out
    const [t] = scan((v) => {
      // init, then what the body returned: mul gives an ndarray
      expectTypeOf(v).toEqualTypeOf<Float64Array | NdArray>();
      expect(["Float64Array", "ndarray"]).toContain(kind(v));
      return [mul(v, 2)];
    }, Float64Array.of(1, 2), 3);
    // the carry is what the body returned: mul gives an ndarray
    expectTypeOf(t).toEqualTypeOf<Float64Array | NdArray>();
    expect(kind(t)).toBe("ndarray");
    const [same] = scan((v) => [v], Float64Array.of(1, 2), 2);
    expect(kind(same)).toBe("Float64Array");
  });

  it("inside a traced function: the body's values are traced, numbers among them; the results Scalar (literals alone stay numbers)", () => {
    const g = grad((x) => {
      const [c, ys] = scan(([y, k], xi) => {
        expectTypeOf(y).toEqualTypeOf<Real>();
        expectTypeOf(k).toEqualTypeOf<Real>();
        expectTypeOf(xi).toEqualTypeOf<Real>();
        return [[mul(y, xi), add(k, 1)], sin(y)];
      }, [x, 0], [1, 2, 3]);
      expectTypeOf(c).toEqualTypeOf<[Scalar, Scalar]>();
      expectTypeOf(ys).toEqualTypeOf<Scalar[]>();
      expect(kind([c, ys])).toEqual([["Real", "number"], ["Real", "Real", "Real"]]);
      return add(c[0], ys[0]);
    }, 0.5);
    expectTypeOf(g).toEqualTypeOf<number>();
    expect(g).toBeCloseTo(6 + Math.cos(0.5), 14);
  });

  it("where init may be either (typed Scalar), so may the body's values and the results", () => {
    const f = (x: Scalar) => {
      const [c, ys] = scan((y, xi) => {
        expectTypeOf(y).toEqualTypeOf<Scalar>();
        expectTypeOf(xi).toEqualTypeOf<Scalar>();
        return [mul(y, xi), y];
      }, x, [2, 3]);
      expectTypeOf(c).toEqualTypeOf<Scalar>();
      expectTypeOf(ys).toEqualTypeOf<Scalar[]>();
      return c;
    };
    expect(kind(f(1))).toBe("number");
    expect(grad((x) => (expect(kind(f(x))).toBe("Real"), f(x)), 1)).toBe(6);
  });

  it("checkpoint(f) has f's type", () => {
    const layer = checkpoint((h: Scalar, w: Scalar) => add(mul(w, sin(h)), h));
    expectTypeOf(layer).toEqualTypeOf<(h: Scalar, w: Scalar) => Scalar>();
    const out = layer(0.5, 2);
    expect(out).toBe(2 * Math.sin(0.5) + 0.5);
    const g = grad((p) => layer(layer(p[0], p[1]), p[1]), [0.5, 2]);
    expectTypeOf(g).toEqualTypeOf<[number, number]>();
    expect(kind(g)).toEqual(["number", "number"]);
  });
});
