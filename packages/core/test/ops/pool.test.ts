/**
 * Tensor buffers are recycled across calls (issue 4: "buffers of intermediate results
 * pooled and reused across calls where that is safe"): results stay the user's own.
 */
import ndarray from "ndarray";
import { poolStats } from "@wengert/ops";
import { describe, expect, it } from "vitest";
import { add, gather, grad, jacfwd, jvp, matmul, mul, square, sub, sum, tanh, traceOf, valueAndGrad, vjp, type NdArray, type Tensor } from "../../src/index.js";
import { keptBytes } from "../../src/trace/columns.js";

const X = ndarray(Float64Array.from({ length: 32 * 16 }, (_, i) => Math.cos(i)), [32, 16]);
const loss = (p: { W: Tensor; b: Tensor }) => sum(tanh(add(matmul(X, p.W), p.b)));
const params = () => ({ W: ndarray(Float64Array.from({ length: 16 * 8 }, (_, i) => 0.1 * Math.sin(i)), [16, 8]), b: new Float64Array(8).fill(0.1) });

describe("buffer pool", () => {
  it("later calls reuse buffers and give the same numbers", () => {
    const first = grad(loss, params()) as { W: NdArray; b: Float64Array };
    const before = poolStats.reused;
    const again = grad(loss, params()) as { W: NdArray; b: Float64Array };
    expect(poolStats.reused).toBeGreaterThan(before);
    expect(Array.from(again.W.data)).toEqual(Array.from(first.W.data));
    expect(Array.from(again.b)).toEqual(Array.from(first.b));
  });
  it("results are never handed to a later call: writing into them changes nothing", () => {
    const g1 = grad(loss, params()) as { W: NdArray; b: Float64Array };
    const keep = Array.from(g1.W.data);
    (g1.W.data as Float64Array).fill(1e9);
    g1.b.fill(1e9);
    const g2 = grad(loss, params()) as { W: NdArray; b: Float64Array };
    expect(Array.from(g2.W.data)).toEqual(keep);
    const [, g3] = valueAndGrad(loss, params()) as [number, { W: NdArray; b: Float64Array }];
    expect(Array.from(g3.W.data)).toEqual(keep);
    expect(Array.from(g2.W.data)).toEqual(keep); // g3's call did not reuse g2's buffers
  });
  it("a gradient longer than a slab cell is handed over, not copied; later calls never reuse it", () => {
    // W of 16×32: a buffer of its own (b, 32 elements, a slab cell, is still copied)
    const XL = ndarray(Float64Array.from({ length: 32 * 16 }, (_, i) => Math.cos(i)), [32, 16]);
    const lossL = (p: { W: Tensor; b: Tensor }) => sum(tanh(add(matmul(XL, p.W), p.b)));
    const at = (s: number) => ({ W: ndarray(Float64Array.from({ length: 16 * 32 }, (_, i) => s * Math.sin(i)), [16, 32]), b: new Float64Array(32).fill(s) });
    grad(lossL, at(0.1));
    const typed = Object.getPrototypeOf(Float64Array.prototype) as { slice: (this: Float64Array, ...a: number[]) => Float64Array };
    const slice = typed.slice;
    let copiedW = 0;
    typed.slice = function (this: Float64Array, ...a: number[]) {
      if (this.length === 16 * 32) copiedW++;
      return slice.apply(this, a);
    };
    let g1: { W: NdArray; b: Float64Array };
    try {
      g1 = grad(lossL, at(0.1)) as { W: NdArray; b: Float64Array };
    } finally {
      typed.slice = slice;
    }
    expect(copiedW).toBe(0);
    const keep = Array.from(g1.W.data);
    const g2 = grad(lossL, at(0.2)) as { W: NdArray; b: Float64Array };
    const g3 = grad(lossL, at(0.1)) as { W: NdArray; b: Float64Array };
    expect(g2.W.data).not.toBe(g1.W.data);
    expect(Array.from(g1.W.data)).toEqual(keep); // g2's and g3's calls wrote nothing into it
    expect(Array.from(g3.W.data)).toEqual(keep);
    expect(Array.from(g2.W.data)).not.toEqual(keep);
  });
  it("the pool stays the same size from call to call: inputs and literals are copied into pooled buffers", () => {
    // before, the copies of x's tensors and of X were fresh buffers handed to the pool at
    // the end of every call, and the pool grew by their size each call up to its bound
    const p = params();
    const fromF64 = (q: { W: Tensor; b: Tensor }) => loss({ W: q.W, b: add(q.b, new Float64Array(8).fill(0.5)) });
    for (let i = 0; i < 3; i++) grad(fromF64, p);
    const bytes = poolStats.bytes;
    for (let i = 0; i < 20; i++) grad(fromF64, p);
    expect(poolStats.bytes).toBe(bytes);
    for (let i = 0; i < 20; i++) valueAndGrad(loss, p);
    const after = poolStats.bytes;
    for (let i = 0; i < 20; i++) valueAndGrad(loss, p);
    expect(poolStats.bytes).toBe(after);
  });
  it("the tapes' columns come back too: a grad on tensors takes them from the column pool and gives them back", () => {
    const p = params();
    for (let i = 0; i < 3; i++) grad(loss, p);
    const kept = keptBytes();
    expect(kept).toBeGreaterThan(0);
    for (let i = 0; i < 10; i++) grad(loss, p);
    expect(keptBytes()).toBe(kept);
  });
  it("a Jacobian hands back each column's derivative buffers, and keeps the trace's until it is done", () => {
    const f = (t: Tensor) => tanh(mul(t, sum(mul(t, t))));
    const x = Float64Array.from({ length: 100 }, (_, i) => Math.sin(i));
    const want = jacfwd(f, x) as NdArray;
    for (let k = 0; k < 2; k++) jacfwd(f, x);
    const freshPerCall = (): number => {
      const fresh = poolStats.fresh;
      expect(Array.from((jacfwd(f, x) as NdArray).data)).toEqual(Array.from(want.data));
      return poolStats.fresh - fresh;
    };
    const bytes = poolStats.bytes;
    const first = freshPerCall();
    // what is handed out is new; the 100 columns' intermediate buffers come from the pool
    expect(first).toBeLessThan(10);
    expect(freshPerCall()).toBe(first);
    expect(poolStats.bytes).toBe(bytes);
  });
  it("a grad nested in jvp hands its primal's buffers back: repeated calls allocate only the two results", () => {
    // kmeans' dir: the inner grad's term is replayed in jvp's trace (diff/place.ts); its own
    // gather, sub and square (1000 × 3 each) were left to the collector at every call
    const P = ndarray(Float64Array.from({ length: 3000 }, (_, i) => Math.sin(i)), [1000, 3]);
    const at = Int32Array.from({ length: 1000 }, (_, i) => i % 10);
    const c = ndarray(Float64Array.from({ length: 30 }, (_, i) => Math.cos(i)), [10, 3]);
    const ones = ndarray(new Float64Array(30).fill(1), [10, 3]);
    const dir = () => jvp((q: Tensor) => grad((q2: Tensor) => sum(square(sub(gather(q2, at), P))), q), c, ones) as [NdArray, NdArray];
    const first = dir();
    for (let i = 0; i < 3; i++) dir();
    const before = poolStats.fresh;
    const again = dir();
    expect(poolStats.fresh - before).toBe(2);
    expect(Array.from(again[0].data)).toEqual(Array.from(first[0].data));
    expect(Array.from(again[1].data)).toEqual(Array.from(first[1].data));
    // H·1 of Σ‖c_a(i) − Pᵢ‖²: twice the number of points at each centroid, in every coordinate
    expect(Array.from(again[1].data)).toEqual(Array(30).fill(200));
  });
  it("a Jacobian by lanes gives the trace's buffers back too once its columns are computed: per call, only its result is new", () => {
    const A = Float64Array.from({ length: 300 }, (_, i) => Math.cos(i));
    const f = (t: Tensor) => mul(tanh(mul(t, A)), add(t, mul(A, A)));
    const x = Float64Array.from({ length: 300 }, (_, i) => Math.sin(i));
    const want = jacfwd(f, x) as NdArray;
    for (let k = 0; k < 2; k++) jacfwd(f, x);
    for (let k = 0; k < 3; k++) {
      const fresh = poolStats.fresh;
      expect(Array.from((jacfwd(f, x) as NdArray).data)).toEqual(Array.from(want.data));
      // the 300 × 300 block handed out, and f(x)'s copy; the trace's copies of x and A, its
      // values and the lanes' from the pool (9 when the trace's were left to the collector)
      expect(poolStats.fresh - fresh).toBeLessThanOrEqual(2);
    }
  });
  it("a term kept for inspection keeps its buffers", () => {
    const term = traceOf(loss, params());
    for (let i = 0; i < 3; i++) grad(loss, params());
    expect(term.evaluate(params())).toBeCloseTo(valueAndGrad(loss, params())[0] as number, 12);
  });
  // a term replayed into an enclosing trace (a vjp inside grad: once for its value, once
  // per pullback) has its tensor literals there too; each copy must be the enclosing
  // tape's own buffer, or the enclosing grad hands one buffer to the pool once per copy
  // and later results share it
  describe("a nested transformation's tensor literals", () => {
    const C = Float64Array.of(1, 2, 3);
    const x = Float64Array.of(0.5, -1, 2);
    // f(x) = Σ Cᵢ xᵢ² tanh(Cᵢ xᵢ), by a pullback of q ↦ C·q applied to x
    const f = (t: Tensor) => {
      const [y, pullback] = vjp((q: Tensor) => mul(q, C), t);
      return sum(mul(mul(pullback(t) as Tensor, t), tanh(y as Tensor)));
    };
    const want = Array.from(x, (xi, i) => C[i] * (2 * xi * Math.tanh(C[i] * xi) + (C[i] * xi * xi) / Math.cosh(C[i] * xi) ** 2));
    it("grad gives the same numbers call after call", () => {
      for (let k = 0; k < 5; k++) {
        const g = grad(f, x) as Float64Array;
        g.forEach((gi, i) => expect(gi).toBeCloseTo(want[i], 12));
      }
    });
    it("later results share no buffer", () => {
      const twice = (t: Tensor) => {
        const [, pullback] = vjp((q: Tensor) => mul(q, C), t);
        return sum(mul(add(pullback(Float64Array.of(1, 1, 1)) as Tensor, pullback(Float64Array.of(2, 2, 2)) as Tensor), t));
      };
      const fresh = () => {
        const rs = Array.from({ length: 12 }, (_, k) => mul(Float64Array.of(1, 1, 1), k + 1) as NdArray);
        expect(rs.map((r) => r.get(0))).toEqual(rs.map((_, k) => k + 1));
        expect(new Set(rs.map((r) => r.data)).size).toBe(rs.length);
      };
      expect(Array.from(grad(twice, x) as Float64Array)).toEqual([3, 6, 9]);
      fresh();
      // by forward mode: f(x) = 3 Σ Cᵢ xᵢ, along e₀
      const [value, tangent] = jvp(twice, x, Float64Array.of(1, 0, 0));
      expect([value, tangent]).toEqual([3 * (0.5 - 2 + 6), 3]);
      fresh();
    });
  });
});
