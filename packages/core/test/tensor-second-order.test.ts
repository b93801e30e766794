/**
 * Second derivatives through tensor programs, nested rd with tensors, and where's
 * NaN guarantee at first and second order.
 *
 * - The Hessian of the logistic-regression loss equals Xᵀ diag(p(1 − p)) X (closed form
 *   in plain JS), by hessian(f, w), hvp, nested grad (rd inside rd) and jacrev/jacfwd of grad.
 * - Hessian-vector products through matmul + tanh + logsumexp against differences of grad.
 * - rd inside rd: d/dλ of grad_w f(w, λ); an outer gradient with respect to a matrix that an
 *   inner gradient (with respect to a vector) closes over; where and max inside nested rd.
 * - where(gt(x, 0), g(x), …) has gradient exactly 0 (never NaN) at the unselected entries,
 *   through chains of elementwise ops, and its Hessian is finite and right.
 */
import ndarray from "ndarray";
import { describe, expect, it } from "vitest";
import {
  add, dot, exp, gather, grad, gt, hessian, hvp, index, jacfwd, jacrev, jvp, le, log, log1p, logsumexp, vjp, matmul, max, mean, mul, neg,
  pow, rd, reshape, sigmoid, slice, softmax, softplus, sqrt, square, sub, sum, tanh, transpose, unstack, where,
  type NdArray, type Scalar, type Tensor,
} from "../src/index.js";
import { rng, isNd, flat, nd, closeWithin } from "./helpers/tensors.js";

// ---------------------------------------------------------------- helpers (plain JS)

const randArr = (n: number, r: () => number, lo = -1, hi = 1) => Array.from({ length: n }, () => lo + (hi - lo) * r());

const expectClose = closeWithin(1e-6, 1e-8);
const allFinite = (v: unknown) => flat(v).every(Number.isFinite);
const sig = (z: number) => 1 / (1 + Math.exp(-z));
const IGNORE = { ties: "ignore" } as const;

/** Fourth-order central difference of a vector function of t at 0. */
function diff4(g: (t: number) => number[], h = 1e-3): number[] {
  const [p2, p1, m1, m2] = [g(2 * h), g(h), g(-h), g(-2 * h)];
  return p1.map((_, i) => (-p2[i] + 8 * p1[i] - 8 * m1[i] + m2[i]) / (12 * h));
}
/** x + t v for Float64Arrays and ndarrays (a contiguous copy of x's dims). */
function plus<T extends Float64Array | NdArray>(x: T, v: T, t: number): T {
  const d = flat(x).map((xi, i) => xi + t * flat(v)[i]);
  return (x instanceof Float64Array ? Float64Array.from(d) : nd(d, [...(x as NdArray).shape])) as T;
}

// ---------------------------------------------------------------- logistic regression

describe("Hessian of the logistic-regression loss", () => {
  const m = 7;
  const n = 3;
  const r = rng(11);
  const Xrows = Array.from({ length: m }, () => randArr(n, r, -1.5, 1.5));
  const X = nd(Xrows.flat(), [m, n]);
  const yv = Array.from({ length: m }, (_, i) => (i % 3 === 0 ? -1 : 1));
  const Y = Float64Array.from(yv);
  const w0 = Float64Array.from([0.3, -0.7, 0.5]);

  /** Closed forms: L = Σ log(1 + exp(−yᵢ xᵢᵀw)); ∇L = −Σ yᵢ(1 − pᵢ)xᵢ; H = Σ pᵢ(1 − pᵢ) xᵢxᵢᵀ, pᵢ = σ(yᵢ xᵢᵀw). */
  function closedForm(w: ArrayLike<number>, scale = 1): { g: number[]; H: number[][] } {
    const g = new Array<number>(n).fill(0);
    const H = Array.from({ length: n }, () => new Array<number>(n).fill(0));
    Xrows.forEach((xi, i) => {
      const z = yv[i] * xi.reduce((s, xij, j) => s + xij * w[j], 0);
      const p = sig(z);
      for (let j = 0; j < n; j++) {
        g[j] += (-yv[i] * (1 - p) * xi[j]) * scale;
        for (let k = 0; k < n; k++) H[j][k] += p * (1 - p) * xi[j] * xi[k] * scale;
      }
    });
    return { g, H };
  }

  const losses: [string, (w: Tensor) => Scalar, number][] = [
    ["Σ softplus(−y ⊙ Xw)", (w) => sum(softplus(neg(mul(Y, matmul(X, w))))), 1],
    ["mean log(1 + exp(−y ⊙ Xw))", (w) => mean(log(add(1, exp(neg(mul(Y, matmul(X, w))))))), 1 / m],
    ["Σ log1p(exp(−yᵢ dot(xᵢ, w))) over unstacked rows", (w) => (unstack(X) as NdArray[]).reduce<Scalar>((s, xi, i) => add(s, log1p(exp(mul(-yv[i], dot(xi, w) as Scalar)))), 0), 1],
    ["−Σ log σ(y ⊙ (w·Xᵀ)) with the vector on the left", (w) => neg(sum(log(sigmoid(mul(Y, matmul(w, transpose(X))))))), 1],
  ];

  for (const [name, f, scale] of losses) {
    describe(name, () => {
      const { g, H } = closedForm(w0, scale);
      it("grad equals the closed form (Float64Array in, Float64Array out)", () => {
        const gw = grad(f, w0);
        expect(gw).toBeInstanceOf(Float64Array);
        expectClose(Array.from(gw as Float64Array), g, 1e-10, 1e-12);
      });
      it("hessian(f, w) is an [n, n] ndarray equal to Xᵀ diag(p(1 − p)) X", () => {
        const Hw = hessian(f, w0) as NdArray;
        expect(isNd(Hw)).toBe(true);
        expect(Hw.shape).toEqual([n, n]);
        expectClose(flat(Hw), H.flat(), 1e-9, 1e-12);
      });
      it("nested grad (rd inside rd): rows of H as grad of w ↦ ∂L/∂w_j, and rd of grad with a basis seed", () => {
        for (let j = 0; j < n; j++) {
          const row = grad((w: Tensor) => index(grad(f, w) as Tensor, j), w0);
          expectClose(Array.from(row as Float64Array), H[j], 1e-9, 1e-12, `grad∘grad row ${j}`);
          const e = new Float64Array(n);
          e[j] = 1;
          const row2 = rd((w: Tensor) => grad(f, w), w0, e);
          expect(row2).toBeInstanceOf(Float64Array);
          expectClose(Array.from(row2 as Float64Array), H[j], 1e-9, 1e-12, `rd(grad) row ${j}`);
          const row3 = hvp(f, w0, e);
          expectClose(flat(row3), H[j], 1e-9, 1e-12, `hvp row ${j}`);
        }
      });
      it("jacrev and jacfwd of grad give the same [n, n] Hessian", () => {
        const Jr = jacrev((w: Tensor) => grad(f, w), w0) as NdArray;
        const Jf = jacfwd((w: Tensor) => grad(f, w), w0) as NdArray;
        expect(Jr.shape).toEqual([n, n]);
        expect(Jf.shape).toEqual([n, n]);
        expectClose(flat(Jr), H.flat(), 1e-9, 1e-12, "jacrev");
        expectClose(flat(Jf), H.flat(), 1e-9, 1e-12, "jacfwd");
      });
    });
  }

  it("at several random points, with w as an [n, 1] ndarray column: hessian has dims [n, 1, n, 1]", () => {
    const rr = rng(12);
    for (let trial = 0; trial < 4; trial++) {
      const w = nd(randArr(n, rr, -2, 2), [n, 1]);
      const f = (v: Tensor) => sum(softplus(neg(mul(reshape(Y, [m, 1]), matmul(X, v)))));
      const Hw = hessian(f, w) as NdArray;
      expect(Hw.shape).toEqual([n, 1, n, 1]);
      expectClose(flat(Hw), closedForm(flat(w)).H.flat(), 1e-9, 1e-12);
    }
  });

  it("hvp at a random direction equals H v", () => {
    const v = Float64Array.from([0.4, -1.1, 0.9]);
    const { H } = closedForm(w0);
    const Hv = H.map((row) => row.reduce((s, h, k) => s + h * v[k], 0));
    expectClose(flat(hvp(losses[0][1], w0, v)), Hv, 1e-9, 1e-12);
  });
});

// ---------------------------------------------------------------- hvp through matmul, tanh, logsumexp

describe("Hessian-vector products through matmul + tanh + logsumexp", () => {
  const r = rng(21);
  const X = nd(randArr(15, r), [5, 3]);
  const W = nd(randArr(12, r), [3, 4]);
  const V = nd(randArr(12, r), [3, 4]);
  const f = (w: Tensor) => add(sum(logsumexp(tanh(matmul(X, w)), 1)), mul(0.5, logsumexp(matmul(X, w))));

  it("hvp(f, W, V) equals differences of grad along V, and reverse over reverse agrees", () => {
    const want = diff4((t) => flat(grad(f, plus(W, V, t))));
    const Hv = hvp(f, W, V) as NdArray;
    expect(isNd(Hv)).toBe(true);
    expect(Hv.shape).toEqual([3, 4]);
    expectClose(flat(Hv), want, 1e-6, 1e-8, "hvp");
    const rr = grad((w: Tensor) => sum(mul(grad(f, w) as Tensor, V)), W) as NdArray;
    expect(rr.shape).toEqual([3, 4]);
    expectClose(flat(rr), want, 1e-6, 1e-8, "grad⟨grad, V⟩");
    // reverse over forward: grad of w ↦ ⟨∇f(w), V⟩ computed by jvp
    const rf = grad((w: Tensor) => jvp(f, w, V)[1] as Scalar, W) as NdArray;
    expectClose(flat(rf), want, 1e-6, 1e-8, "grad∘jvp");
    // forward over forward: jvp of (w ↦ jvp(f, w, V)) along V gives Vᵀ H V
    const vHv = jvp((w: Tensor) => jvp(f, w, V)[1] as Scalar, W, V)[1] as number;
    expectClose([vHv], [flat(Hv).reduce((s, h, i) => s + h * flat(V)[i], 0)], 1e-9, 1e-10, "vᵀHv");
  });

  it("the full Hessian of a [3, 4] input has dims [3, 4, 3, 4], is symmetric, and matches hvp on basis directions", () => {
    const Hfull = hessian(f, W) as NdArray;
    expect(Hfull.shape).toEqual([3, 4, 3, 4]);
    const h = flat(Hfull);
    for (let i = 0; i < 12; i++) for (let j = 0; j < 12; j++) expect(Math.abs(h[i * 12 + j] - h[j * 12 + i])).toBeLessThan(1e-10);
    const e = nd(new Array(12).fill(0).map((_, k) => (k === 7 ? 1 : 0)), [3, 4]);
    expectClose(h.slice(7 * 12, 8 * 12), flat(hvp(f, W, e)), 1e-10, 1e-12);
  });

  it("a two-layer record of weights: hvp with a record direction against differences of grad", () => {
    const p = { W1: nd(randArr(6, r), [3, 2]), W2: nd(randArr(8, r), [2, 4]) };
    const v = { W1: nd(randArr(6, r), [3, 2]), W2: nd(randArr(8, r), [2, 4]) };
    const g = (q: { W1: Tensor; W2: Tensor }) => logsumexp(matmul(tanh(matmul(X, q.W1)), q.W2));
    const at = (t: number) => {
      const gr = grad(g, { W1: plus(p.W1, v.W1, t), W2: plus(p.W2, v.W2, t) }) as { W1: NdArray; W2: NdArray };
      return [...flat(gr.W1), ...flat(gr.W2)];
    };
    const Hv = hvp(g, p, v) as { W1: NdArray; W2: NdArray };
    expect(Hv.W1.shape).toEqual([3, 2]);
    expect(Hv.W2.shape).toEqual([2, 4]);
    expectClose([...flat(Hv.W1), ...flat(Hv.W2)], diff4(at), 1e-6, 1e-8);
  });
});

// ---------------------------------------------------------------- nested rd with tensors

describe("nested rd with tensors", () => {
  const r = rng(31);
  const X = nd(randArr(12, r), [4, 3]);
  const yv = Float64Array.from(randArr(4, r));
  const w0 = Float64Array.from([0.2, -0.4, 0.9]);
  // f(w, λ) = Σ (Xw − y)² + λ Σ w²: ∇_w f = 2Xᵀ(Xw − y) + 2λw, so d/dλ ∇_w f = 2w
  const f = (w: Tensor, lam: Scalar) => add(sum(square(sub(matmul(X, w), yv))), mul(lam, sum(square(w))));

  it("d/dλ of grad_w f(w, λ) is 2w: rd over λ with a tensor seed, jvp, and jacfwd", () => {
    const v = Float64Array.from([1, -2, 0.5]);
    const d = rd((lam: Scalar) => grad((w: Tensor) => f(w, lam), w0), 0.3, v);
    expect(typeof d).toBe("number");
    expect(d as number).toBeCloseTo(2 * (w0[0] * v[0] + w0[1] * v[1] + w0[2] * v[2]), 12);
    const [g, dg] = jvp((lam: Scalar) => grad((w: Tensor) => f(w, lam), w0), 0.3, 1) as [Float64Array, unknown];
    expectClose(flat(dg), Array.from(w0).map((x) => 2 * x), 1e-12, 1e-12, "jvp");
    // and the value is the gradient at λ = 0.3
    const res = Array.from({ length: 4 }, (_, i) => X.get(i, 0) * w0[0] + X.get(i, 1) * w0[1] + X.get(i, 2) * w0[2] - yv[i]);
    const want = [0, 1, 2].map((j) => 2 * res.reduce((s, ri, i) => s + ri * X.get(i, j), 0) + 2 * 0.3 * w0[j]);
    expectClose(flat(g), want, 1e-12, 1e-12, "grad value");
    const J = jacfwd((lam: Scalar) => grad((w: Tensor) => f(w, lam), w0), 0.3);
    expectClose(flat(J), Array.from(w0).map((x) => 2 * x), 1e-12, 1e-12, "jacfwd");
  });

  it("the inner variable's value is the outer's: grad over (w, λ) of ⟨grad_w f, c⟩ against differences", () => {
    const c = Float64Array.from([0.3, 1, -0.6]);
    const F = (p: { w: Tensor; lam: Scalar }) => sum(mul(grad((u: Tensor) => f(u, p.lam), p.w) as Tensor, c));
    const got = grad(F, { w: w0, lam: 0.7 }) as { w: Float64Array; lam: number };
    expect(got.w).toBeInstanceOf(Float64Array);
    expect(typeof got.lam).toBe("number");
    const Fnum = (w: Float64Array, lam: number) => flat(F({ w: w as never, lam } as never) as never)[0];
    // F is quadratic in w: differences are exact up to rounding
    const want = [0, 1, 2].map((j) => diff4((t) => [Fnum(plus(w0, Float64Array.from([0, 1, 2].map((k) => (k === j ? 1 : 0))), t), 0.7)]).at(0)!);
    expectClose(Array.from(got.w), want, 1e-7, 1e-9, "w");
    expect(got.lam).toBeCloseTo(2 * (w0[0] * c[0] + w0[1] * c[1] + w0[2] * c[2]), 10);
  });

  it("outer gradient with respect to a matrix that an inner gradient (over a vector) closes over", () => {
    const W = nd(randArr(6, r), [2, 3]);
    const x0 = Float64Array.from([0.5, -1, 0.25]);
    const c = Float64Array.from([1, -0.5, 2]);
    // inner: ∇_x Σ tanh(Wx) = Wᵀ(1 − tanh²(Wx)); outer: Σ c ⊙ that, differentiated in W
    // the inner gradient is at a point of its own (x0), so it is typed as a Float64Array; it
    // closes over w and is a traced tensor: wengert's functions take it either way (README, "Types")
    const F = (w: Tensor | NdArray) => sum(mul(grad((x: Tensor) => sum(tanh(matmul(w, x))), x0), c));
    const got = grad(F, W);
    expect(got.shape).toEqual([2, 3]);
    const want = flat(W).map((_, k) => {
      const e = nd(flat(W).map((__, j) => (j === k ? 1 : 0)), [2, 3]);
      return diff4((t) => [F(plus(W, e, t)) as number])[0];
    });
    expectClose(flat(got), want, 1e-7, 1e-9);
    // plain-JS closed form: ∂/∂W_ab Σ_j c_j Σ_i W_ij s_i with s = 1 − tanh²(Wx)
    const z = [0, 1].map((i) => [0, 1, 2].reduce((s, j) => s + W.get(i, j) * x0[j], 0));
    const th = z.map(Math.tanh);
    const s = th.map((t) => 1 - t * t);
    const ds = th.map((t, i) => -2 * t * s[i]); // d s_i / d z_i
    const cw = [0, 1].map((i) => [0, 1, 2].reduce((acc, j) => acc + c[j] * W.get(i, j), 0));
    const closed = [0, 1].flatMap((a) => [0, 1, 2].map((b) => c[b] * s[a] + cw[a] * ds[a] * x0[b]));
    expectClose(flat(got), closed, 1e-10, 1e-12, "closed form");
  });

  it("where inside nested rd: d/da of grad_x Σ where(x > 0, a√x, a·x) has no NaN", () => {
    const x0 = Float64Array.from([-1, 4, -0.25, 9]);
    const v = Float64Array.from([1, 1, 1, 1]);
    const inner = (a: Scalar) => grad((x: Tensor) => sum(where(gt(x, 0), mul(a, sqrt(x)), mul(a, x))), x0);
    const g = inner(2) as Float64Array;
    expectClose(Array.from(g), [2, 2 / (2 * 2), 2, 2 / (2 * 3)], 1e-12, 1e-12, "inner grad");
    const d = rd(inner, 2, v) as number;
    expect(d).toBeCloseTo(1 + 1 / 4 + 1 + 1 / 6, 12);
    // and an outer gradient over x itself (reverse over reverse through where)
    const gg = grad((x: Tensor) => sum(grad((u: Tensor) => sum(where(gt(u, 0), mul(u, sqrt(u)), 0)), x) as Tensor), x0) as Float64Array;
    // d²/dx² x^{3/2} = 3/(4√x) where x > 0; 0 elsewhere
    expect(Array.from(gg).every(Number.isFinite)).toBe(true);
    expectClose(Array.from(gg), [0, 3 / 8, 0, 3 / 12], 1e-12, 1e-12, "grad of grad");
  });

  it("max inside nested rd: d/da of grad_x a·max(x ⊙ x) and d/da of softmax-weighted sums", () => {
    const x0 = Float64Array.from([0.5, -2, 1.5, 1]);
    const inner = (a: Scalar) => grad((x: Tensor) => mul(a, max(mul(x, x))), x0);
    const g = inner(3) as Float64Array;
    expectClose(Array.from(g), [0, 3 * 2 * -2, 0, 0], 1e-12, 1e-12, "inner grad");
    const v = Float64Array.from([1, 2, 3, 4]);
    expect(rd(inner, 3, v) as number).toBeCloseTo(2 * -2 * 2, 12);
    // max over an axis, differentiated twice: Hessian of Σ_rows max(row)² is diagonal 2 at the argmaxes
    const M = nd([1, 5, 2, 7, 3, 4], [2, 3]);
    const Hm = hessian((m: Tensor) => sum(square(max(m, 1))), M) as NdArray;
    expect(Hm.shape).toEqual([2, 3, 2, 3]);
    const want = new Array(36).fill(0);
    want[1 * 6 + 1] = 2;
    want[3 * 6 + 3] = 2;
    expectClose(flat(Hm), want, 1e-12, 1e-12, "hessian of max²");
    // d/dτ of grad_x logsumexp(x/τ)·τ (a smooth max) at τ = 0.5 against differences
    const sm = (tau: Scalar) => grad((x: Tensor) => mul(tau, logsumexp(mul(x, tau))), x0);
    const dsm = jvp(sm, 0.5, 1)[1];
    expectClose(flat(dsm), diff4((t) => flat(sm(0.5 + t))), 1e-7, 1e-9, "smooth max");
  });

  it("differentiating with respect to tangents and seeds: grad over v of jvp, over s of a pullback and of rd", () => {
    const W = nd([0.1, 0.2, -0.3, 0.4], [2, 2]);
    const V = nd([1, -1, 0.5, 2], [2, 2]);
    const F = (w: Tensor) => tanh(matmul(w, w));
    const Lf = (w: Tensor) => sum(F(w));
    // ⟨∇L, v⟩ is linear in v: its gradient in v is ∇L
    const gv = grad((v: Tensor) => jvp(Lf, W, v)[1] as Scalar, V) as NdArray;
    expectClose(flat(gv), flat(grad(Lf, W)), 1e-12, 1e-14, "grad_v jvp");
    // Σ Jᵀs is sᵀ(J·1): its gradient in s is J·1 (a jvp along ones)
    const ones = nd([1, 1, 1, 1], [2, 2]);
    const [, pullback] = vjp(F, W);
    const gs = grad((s: Tensor) => sum(pullback(s) as Tensor), V) as NdArray;
    expectClose(flat(gs), flat(jvp(F, W, ones)[1]), 1e-12, 1e-14, "grad_s pullback");
    // ⟨Jᵀs, V⟩ in s: J·V
    const gr = grad((s: Tensor) => sum(mul(rd(F, W, s) as Tensor, V)), nd([1, 0, 0, 1], [2, 2])) as NdArray;
    expectClose(flat(gr), flat(jvp(F, W, V)[1]), 1e-12, 1e-14, "grad_s rd");
  });

  it("hessian of a record mixing a Float64Array and a number: blocks by leaf", () => {
    const H = hessian((p: { a: Tensor; s: Scalar }) => add(sum(mul(p.a, p.a)), mul(mul(p.s, p.s), sum(p.a))), { a: Float64Array.from([1, 2]), s: 3 }) as {
      a: { a: NdArray; s: NdArray };
      s: { a: NdArray; s: number };
    };
    expect(H.a.a.shape).toEqual([2, 2]);
    expectClose(flat(H.a.a), [2, 0, 0, 2], 1e-14, 0, "∂²/∂a²");
    expectClose(flat(H.a.s), [6, 6], 1e-14, 0, "∂²/∂a∂s");
    expectClose(flat(H.s.a), [6, 6], 1e-14, 0, "∂²/∂s∂a");
    expect(H.s.s).toBeCloseTo(2 * 3, 14);
  });

  it("an outer traced tensor used in a where branch of an inner gradient", () => {
    const g = grad((u: Tensor) => sum(grad((x: Tensor) => sum(where(gt(x, 0), mul(u, sqrt(x)), exp(u))), Float64Array.from([-1, 4]))), Float64Array.from([2, 3]));
    expectClose(flat(g), [0, 0.25], 1e-14, 0);
  });

  it("three levels: the derivative in λ of the Hessian-vector product", () => {
    // f(w, λ) = λ Σ w⁴ / 4 + Σ softplus(Xw): H(λ) v = 3λ w² ⊙ v + Xᵀ diag(σ'(Xw)) X v, so d/dλ Hv = 3 w² ⊙ v
    const v = Float64Array.from([0.5, -1, 2]);
    const Hv = (lam: Scalar) => hvp((w: Tensor) => add(mul(lam, sum(div4(pow(w, 4)))), sum(softplus(matmul(X, w)))), w0, v);
    const d = jvp(Hv, 1.3, 1)[1];
    expectClose(flat(d), Array.from(w0).map((w, i) => 3 * w * w * v[i]), 1e-10, 1e-12);
  });
});

const div4 = (t: Tensor) => mul(t, 0.25);

// ---------------------------------------------------------------- where without NaN

describe("where: no NaN from the unselected branch", () => {
  const x = Float64Array.from([-1, 4, -9, 0, 16, 0.25]);
  const pos = (i: number) => x[i] > 0;

  it("grad of Σ where(x > 0, √x, 0) is 1/(2√x) where selected and exactly 0 elsewhere", () => {
    const g = grad((t: Tensor) => sum(where(gt(t, 0), sqrt(t), 0)), x) as Float64Array;
    expect(g).toBeInstanceOf(Float64Array);
    expectClose(Array.from(g), Array.from(x).map((v, i) => (pos(i) ? 1 / (2 * Math.sqrt(v)) : 0)), 0, 0);
  });

  it("through several elementwise ops inside the branch: log(√x), exp(log x)·x, 1/x, pow(x, 1.5), log(log1p(x))", () => {
    const cases: [string, (t: Tensor) => Tensor, (v: number) => number][] = [
      ["log(√x)", (t) => log(sqrt(t)), (v) => 1 / (2 * v)],
      ["exp(log x)·x", (t) => mul(exp(log(t)), t), (v) => 2 * v],
      ["1/x via pow", (t) => pow(t, -1), (v) => -1 / (v * v)],
      ["pow(x, 1.5)", (t) => pow(t, 1.5), (v) => 1.5 * Math.sqrt(v)],
      ["log(sqrt(x)) + square(log x)", (t) => add(log(sqrt(t)), square(log(t))), (v) => 1 / (2 * v) + (2 * Math.log(v)) / v],
      ["tanh(log(x))·sqrt(x)", (t) => mul(tanh(log(t)), sqrt(t)), (v) => (1 - Math.tanh(Math.log(v)) ** 2) / v * Math.sqrt(v) + Math.tanh(Math.log(v)) / (2 * Math.sqrt(v))],
    ];
    for (const [name, br, d] of cases) {
      const g = grad((t: Tensor) => sum(where(gt(t, 0), br(t), 0)), x) as Float64Array;
      expectClose(Array.from(g), Array.from(x).map((v, i) => (pos(i) ? d(v) : 0)), 1e-12, 1e-12, name);
      // and with the branches swapped (the selected side is b)
      const g2 = grad((t: Tensor) => sum(where(le(t, 0), 0, br(t))), x) as Float64Array;
      expectClose(Array.from(g2), Array.from(x).map((v, i) => (pos(i) ? d(v) : 0)), 1e-12, 1e-12, `${name}, swapped`);
    }
  });

  it("both branches NaN-prone: where(x > 0, √x, √−x) has gradient ±1/(2√|x|)", () => {
    const y = Float64Array.from([-1, 4, -9, 16]);
    const g = grad((t: Tensor) => sum(where(gt(t, 0), sqrt(t), sqrt(neg(t)))), y) as Float64Array;
    expectClose(Array.from(g), [-0.5, 0.25, -1 / 6, 0.125], 1e-12, 1e-12);
  });

  it("ops after where (exp, matmul, logsumexp) and the where result used twice", () => {
    const W = nd([1, 2, -1, 0.5, 0, 3, 1, -2, 2, 1, 1, 1], [6, 2]);
    const f = (t: Tensor) => {
      const s = where(gt(t, 0), log(sqrt(t)), 0);
      return add(logsumexp(matmul(exp(s) as Tensor, W)), sum(mul(s, s)));
    };
    const g = grad(f, x) as Float64Array;
    expect(Array.from(g).every(Number.isFinite)).toBe(true);
    Array.from(x).forEach((v, i) => {
      if (!pos(i)) expect(g[i] === 0, `entry ${i}`).toBe(true);
    });
    // the selected entries against differences of f on x restricted to them
    const want = Array.from(x).map((v, i) => (pos(i) ? diff4((h) => [f(plus(x, Float64Array.from(x, (_, j) => (j === i ? 1 : 0)), h) as never) as unknown as number])[0] : 0));
    expectClose(Array.from(g), want, 1e-6, 1e-9);
  });

  it("the unselected branch is also read through index (pieces) and a second where", () => {
    const f = (t: Tensor) => {
      const s = sqrt(t);
      return add(add(sum(where(gt(t, 0), s, 0)), index(s, 1)), sum(where(gt(t, 5), mul(2, s), 1)));
    };
    const g = grad(f, x) as Float64Array;
    expectClose(Array.from(g), Array.from(x).map((v, i) => (pos(i) ? (1 + (i === 1 ? 1 : 0) + (v > 5 ? 2 : 0)) / (2 * Math.sqrt(v)) : 0)), 1e-12, 1e-12);
  });

  it("a later index/slice read of the branch at an unselected element still gets its gradient", () => {
    // exp is finite everywhere: the read at element 0 (unselected by the where) must count
    const y = Float64Array.from([-1, 2]);
    const want = [Math.exp(-1), Math.exp(2)];
    const viaIndex = grad((t: Tensor) => {
      const s = exp(t);
      return add(sum(where(gt(t, 0), s, 0)), index(s, 0));
    }, y) as Float64Array;
    expectClose(Array.from(viaIndex), want, 1e-14, 0, "index after where");
    const viaSlice = grad((t: Tensor) => {
      const s = exp(t);
      return add(sum(where(gt(t, 0), s, 0)), sum(slice(s, [0], [1])));
    }, y) as Float64Array;
    expectClose(Array.from(viaSlice), want, 1e-14, 0, "slice after where");
    const indexFirst = grad((t: Tensor) => {
      const s = exp(t);
      return add(index(s, 0), sum(where(gt(t, 0), s, 0)));
    }, y) as Float64Array;
    expectClose(Array.from(indexFirst), want, 1e-14, 0, "index before where");
    const viaReshape = grad((t: Tensor) => {
      const s = exp(t);
      return add(sum(where(gt(t, 0), s, 0)), sum(reshape(s, [2, 1]) as Tensor));
    }, y) as Float64Array;
    expectClose(Array.from(viaReshape), [Math.exp(-1), 2 * Math.exp(2)], 1e-14, 0, "reshape after where");
  });

  it("the branch goes through gather, reshape and slice before the NaN", () => {
    const y = Float64Array.from([-1, 2, -3, 8]);
    const g1 = grad((t: Tensor) => sum(where(gt(gather(t, [1, 0, 1, 2]), 0), gather(sqrt(t), [1, 0, 1, 2]), 0)), y) as Float64Array;
    expectClose(Array.from(g1), [0, 2 / (2 * Math.SQRT2), 0, 0], 1e-14, 0, "gather");
    const g2 = grad((t: Tensor) => sum(where(gt(reshape(t, [2, 2]) as Tensor, 0), reshape(log(t), [2, 2]) as Tensor, 0)), y) as Float64Array;
    expectClose(Array.from(g2), [0, 0.5, 0, 0.125], 1e-14, 0, "reshape");
    const g3 = grad((t: Tensor) => sum(where(gt(slice(t, [1], [4]), 0), slice(sqrt(t), [1], [4]), 0)), y) as Float64Array;
    expectClose(Array.from(g3), [0, 1 / (2 * Math.SQRT2), 0, 1 / (2 * Math.sqrt(8))], 1e-14, 0, "slice");
  });

  it("the branch goes through a transpose (a tensor op between where and the NaN)", () => {
    const X = nd([-1, 4, -9, 16], [2, 2]);
    const g = grad((t: Tensor) => sum(where(gt(transpose(t), 0), transpose(sqrt(t)), 0)), X) as NdArray;
    expectClose(flat(g), [0, 0.25, 0, 0.125], 0, 0);
  });

  it("the branch is broadcast against the other (√x of [4] with zeros [2, 4])", () => {
    const y = Float64Array.from([-1, 4, -9, 16]);
    const g = grad((t: Tensor) => sum(where(gt(t, 0), sqrt(t), nd(new Array(8).fill(0), [2, 4]))), y) as Float64Array;
    expectClose(Array.from(g), [0, 0.5, 0, 0.25], 0, 0);
  });

  it("second order: hessian of Σ where(x > 0, log(√x), 0) at mixed-sign x is finite and diagonal −1/(2x²)", () => {
    const H = hessian((t: Tensor) => sum(where(gt(t, 0), log(sqrt(t)), 0)), x) as NdArray;
    expect(H.shape).toEqual([6, 6]);
    expect(allFinite(H)).toBe(true);
    const want = new Array(36).fill(0);
    x.forEach((v, i) => {
      if (pos(i)) want[i * 6 + i] = -1 / (2 * v * v);
    });
    expectClose(flat(H), want, 1e-12, 1e-12);
  });

  it("second order through where with a piece on the same branch: hessian of Σ where(x > 0, √x, 0) + √x₁", () => {
    const H = hessian((t: Tensor) => {
      const s = sqrt(t);
      return add(sum(where(gt(t, 0), s, 0)), index(s, 1));
    }, x) as NdArray;
    expect(allFinite(H)).toBe(true);
    const want = new Array(36).fill(0);
    x.forEach((v, i) => {
      if (pos(i)) want[i * 6 + i] = (i === 1 ? 2 : 1) * (-0.25 * v ** -1.5);
    });
    expectClose(flat(H), want, 1e-12, 1e-12);
  });

  it("second order by hvp, reverse over reverse, and on a matrix input", () => {
    const f = (t: Tensor) => sum(where(gt(t, 0), mul(t, sqrt(t)), mul(0.5, square(t))));
    const v = Float64Array.from([1, -1, 2, 0.5, 1, 3]);
    // d²: 3/(4√x) where x > 0, else 1
    const d2 = Array.from(x).map((u, i) => (pos(i) ? 3 / (4 * Math.sqrt(u)) : 1));
    expectClose(flat(hvp(f, x, v)), d2.map((h, i) => h * v[i]), 1e-12, 1e-12, "hvp");
    const rr = grad((t: Tensor) => sum(mul(grad(f, t) as Tensor, v)), x) as Float64Array;
    expectClose(Array.from(rr), d2.map((h, i) => h * v[i]), 1e-12, 1e-12, "reverse over reverse");
    const M = nd(Array.from(x), [2, 3]);
    const HM = hessian(f, M) as NdArray;
    expect(HM.shape).toEqual([2, 3, 2, 3]);
    expect(allFinite(HM)).toBe(true);
    const want = new Array(36).fill(0);
    d2.forEach((h, i) => (want[i * 6 + i] = h));
    expectClose(flat(HM), want, 1e-12, 1e-12, "hessian of a matrix input");
  });

  it("nested where and a where of where: gradients finite and right", () => {
    const f = (t: Tensor) => sum(where(gt(t, -5), where(gt(t, 0), sqrt(t), mul(t, t)), sqrt(neg(t))));
    const g = grad(f, x) as Float64Array;
    expectClose(Array.from(g), Array.from(x).map((v) => (v > 0 ? 1 / (2 * Math.sqrt(v)) : v > -5 ? 2 * v : -1 / (2 * Math.sqrt(-v)))), 1e-12, 1e-12);
    const H = hessian(f, x) as NdArray;
    expect(allFinite(H)).toBe(true);
    const g2 = grad((t: Tensor) => sum(where(gt(t, 0), sqrt(where(gt(t, 0), t, 1)), 0)), x) as Float64Array;
    expectClose(Array.from(g2), Array.from(x).map((v, i) => (pos(i) ? 1 / (2 * Math.sqrt(v)) : 0)), 1e-12, 1e-12);
  });

  it("jvp through where: tangent 0 at the unselected entries, never NaN", () => {
    const v = Float64Array.from([1, 1, 1, 1, 1, 1]);
    const [y, dy] = jvp((t: Tensor) => where(gt(t, 0), log(sqrt(t)), 0), x, v);
    expect(flat(y).every(Number.isFinite)).toBe(true);
    expectClose(flat(dy), Array.from(x).map((u, i) => (pos(i) ? 1 / (2 * u) : 0)), 1e-12, 1e-12);
  });

  it("slices and gathers of a where result, and where over a slice", () => {
    const f = (t: Tensor) => add(sum(gather(where(gt(t, 0), sqrt(t), 0), [1, 1, 2, 5])), sum(where(gt(slice(t, [0], [3]), 0), log(slice(t, [0], [3])), 0)));
    const g = grad(f, x) as Float64Array;
    expect(Array.from(g).every(Number.isFinite)).toBe(true);
    expectClose(Array.from(g), [0, 2 / (2 * 2) + 1 / 4, 0, 0, 0, 1 / (2 * 0.5)], 1e-12, 1e-12);
  });

  it("logits masked with −∞ (added constant): softmax gradient and Hessian are finite, zero at masked entries", () => {
    const M = Float64Array.from([-Infinity, 0, 0, -Infinity]);
    const R = Float64Array.from([1, 2, 3, 4]);
    const f = (t: Tensor) => sum(mul(softmax(add(t, M)), R));
    const z = Float64Array.from([1, 2, 3, 4]);
    const g = grad(f, z) as Float64Array;
    expect(Array.from(g).every(Number.isFinite)).toBe(true);
    expect(g[0] === 0 && g[3] === 0).toBe(true);
    const p = [Math.exp(2), Math.exp(3)].map((e, _i, a) => e / (a[0] + a[1]));
    // ∂/∂z1 Σ p_k R_k = p1 (R1 − Σ p R)
    const mean = p[0] * 2 + p[1] * 3;
    expectClose([g[1], g[2]], [p[0] * (2 - mean), p[1] * (3 - mean)], 1e-12, 1e-14);
    const H = hessian(f, z) as NdArray;
    expect(allFinite(H)).toBe(true);
    expect(allFinite(grad((t: Tensor) => logsumexp(add(t, M)), z))).toBe(true);
  });

  it("softmax with a −∞-free mask: masked logits via where give zero gradient to masked entries", () => {
    const logits = nd([1, 2, 3, 4, 5, 6], [2, 3]);
    const mask = nd([1, 1, 0, 1, 0, 1], [2, 3]);
    const g = grad((z: Tensor) => sum(mul(where(mask, softmax(where(mask, z, -1e30)), 0), nd([1, 0, 0, 0, 0, 1], [2, 3]))), logits) as NdArray;
    expect(allFinite(g)).toBe(true);
    expect(g.get(0, 2) === 0 && g.get(1, 1) === 0).toBe(true);
    // row 0 over {z00, z01}: ∂p0/∂z = p0(δ − p)
    const p0 = Math.exp(1) / (Math.exp(1) + Math.exp(2));
    expect(g.get(0, 0)).toBeCloseTo(p0 * (1 - p0), 12);
    expect(g.get(0, 1)).toBeCloseTo(-p0 * (1 - p0), 12);
  });
});
