/**
 * Chains of elementwise instructions and gathers fused into one loop under vmap
 * (eval/lane-fusion.ts): vmap(f)(xs) is still f mapped over the lanes to the bit, through
 * broadcasts, gathers along any axis, reals batched or shared, unary kernels, lanes that
 * branch apart and values read twice or kept as outputs; and the chains are fused (the
 * counter of fused instructions moves), the way jacfwd's columns of GradBench's ht are.
 */
import ndarray from "ndarray";
import { describe, expect, it } from "vitest";
import {
  abs, add, exp, gather, grad, gt, index, jacfwd, jvp, matmul, mul, neg, reshape, sin, sub, sum, tanh, vmap, TieError, type NdArray, type Scalar, type Tensor,
} from "../../src/index.js";
import { fusionStats } from "../../src/eval/lane-fusion.js";
import { expectLanes, numbers } from "../helpers/same-bits.js";
import { rng, sizeOf } from "../helpers/tensors.js";

type Value = Tensor | Scalar;
const B = 7;

/** B lanes of arguments of these dims (a Float64Array for a real), seeded. */
function batch(dims: readonly (readonly number[])[], seed: number): (NdArray | Float64Array)[] {
  const r = rng(seed);
  return dims.map((d) => {
    const data = Float64Array.from({ length: B * sizeOf(d) }, () => 2 * r() - 1);
    return d.length === 0 ? data : ndarray(data, [B, ...d]);
  });
}

function laneOf(x: NdArray | Float64Array, d: readonly number[], l: number): Value {
  if (x instanceof Float64Array) return x[l];
  const w = sizeOf(d);
  return ndarray(Float64Array.from(x.data.subarray(l * w, (l + 1) * w)), [...d]) as unknown as Value;
}

/**
 * vmap(f) at B lanes (argument `shared` the first lane's for all) against f at each lane,
 * every output's numbers to the bit; returns how many instructions ran fused.
 */
function expectMapped(dims: readonly (readonly number[])[], f: (xs: readonly Value[]) => unknown, shared: number | null, seed: number): number {
  const xs = batch(dims, seed).map((x, k) => (k === shared ? (laneOf(x, dims[k], 0) as never) : x));
  const inAxes = dims.map((_, k) => (k === shared ? null : 0));
  const parts = (ys: unknown): unknown[] => (Array.isArray(ys) ? ys : [ys]);
  const before = fusionStats.instructions;
  const got = parts(vmap(f, { inAxes })(xs)).map((y) => numbers(y));
  const fused = fusionStats.instructions - before;
  const perLane = Array.from({ length: B }, (_, l) => parts(f(xs.map((x, k) => (k === shared ? (x as unknown as Value) : laneOf(x, dims[k], l))))).map((y) => numbers(y)));
  expectLanes(got, perLane);
  return fused;
}

// indices of a 6-long axis, repeated and out of order
const IDX = Int32Array.of(5, 0, 2, 2, 4, 1, 3, 0);

describe("vmap's fused elementwise chains", () => {
  it("ht's per-point chain (three gathers weighted by shared rows, summed): fused, bit for bit", () => {
    const a = Int32Array.of(0, 3, 5, 1, 1, 2, 4, 0);
    const b = Int32Array.of(2, 2, 0, 5, 3, 1, 1, 4);
    const c = Int32Array.of(1, 0, 3, 3, 5, 5, 2, 2);
    const f = ([v, u0, u1, pts]: readonly Value[]) => {
      const V = v as Tensor; // [3, 6]
      const w = sub(sub(1, u0 as Tensor), u1 as Tensor);
      const point = add(add(mul(neg(u0 as Tensor), gather(V, a, 1)), mul(neg(u1 as Tensor), gather(V, b, 1))), mul(neg(w), gather(V, c, 1)));
      return add(pts as Tensor, point);
    };
    const dims = [[3, 6], [1, 8], [1, 8], [3, 8]];
    expect(expectMapped(dims, f, null, 1)).toBeGreaterThanOrEqual(8);
    // the weights and points shared by every lane, as jacfwd's point is
    for (const k of [1, 2, 3]) expectMapped(dims, f, k, 2 + k);
    expect(expectMapped(dims, f, 0, 9)).toBeGreaterThanOrEqual(0);
  });

  it("broadcasts of every kind, reals batched and shared, unary kernels, gathers along a middle axis", () => {
    const f = ([x, col, row, s]: readonly Value[]) => {
      // [2, 8, 3] each, read once: inside the chain
      const y = mul(add(sin(gather(x as Tensor, IDX, 1)), col as Tensor), row as Tensor); // col [2, 1, 3], row [3]
      return tanh(sub(mul(y, s as Scalar), exp(neg(gather(x as Tensor, Int32Array.from(IDX).reverse(), 1)))));
    };
    const dims = [[2, 6, 3], [2, 1, 3], [3], []];
    expect(expectMapped(dims, f, null, 21)).toBeGreaterThanOrEqual(8);
    for (const k of [0, 1, 2, 3]) expectMapped(dims, f, k, 22 + k);
  });

  it("a value read twice by one instruction is fused; one read by two, or returned, is computed once and kept", () => {
    const twice = ([x, y]: readonly Value[]) => {
      const d = sub(x as Tensor, y as Tensor);
      return add(mul(d, d), x as Tensor);
    };
    expect(expectMapped([[4, 5], [5]], twice, null, 31)).toBe(3);
    const shared = ([x, y]: readonly Value[]) => {
      const d = mul(sin(x as Tensor), y as Tensor);
      return [add(d, 1), mul(d, 2), d];
    };
    expectMapped([[4, 5], [4, 5]], shared, null, 32);
    const kept = ([x, y]: readonly Value[]) => {
      const d = mul(sin(x as Tensor), y as Tensor);
      return [add(d, y as Tensor), d];
    };
    expectMapped([[3, 3], [3, 3]], kept, null, 33);
  });

  it("a chain returned is written into the output in place: alone, twice, and read after", () => {
    const chain = (x: Value, y: Value) => add(mul(sin(x as Tensor), y as Tensor), 1);
    expect(expectMapped([[3, 40], [40]], ([x, y]) => chain(x, y), null, 35)).toBe(3);
    expectMapped([[3, 40], [40]], ([x, y]) => { const d = chain(x, y); return [d, d]; }, null, 36);
    expectMapped([[3, 40], [40]], ([x, y]) => { const d = chain(x, y); return [mul(d, d), d]; }, 0, 37);
  });

  it("lanes that branch apart each run their own trace's chain", () => {
    const f = ([x, y]: readonly Value[]) => {
      const z = add(mul(x as Tensor, y as Tensor), sin(x as Tensor));
      return gt(index(x as Tensor, [0, 0]), 0) ? mul(z, 3) : sub(z, exp(y as Tensor));
    };
    expectMapped([[2, 4], [2, 4]], f, null, 41);
  });

  it("jacfwd of a gathered chain equals its columns by jvp, to the bit, its tangent chain fused", () => {
    const A = ndarray(Float64Array.from({ length: 18 }, (_, i) => Math.sin(i + 1)), [6, 3]);
    const u = ndarray(Float64Array.from({ length: 8 }, (_, i) => 0.1 * i - 0.3), [1, 8]);
    const f = (t: Tensor) => {
      const V = reshape(matmul(A, reshape(sin(t) as Tensor, [3, 1]) as Tensor) as Tensor, [1, 6]) as Tensor;
      return add(mul(u, gather(V, IDX, 1)), mul(sub(1, u), gather(V, Int32Array.from(IDX).reverse(), 1)));
    };
    const x = ndarray(Float64Array.of(0.3, -1.2, 0.7), [3]);
    const before = fusionStats.instructions;
    const J = jacfwd(f, x) as NdArray; // [1, 8, 3]
    expect(fusionStats.instructions - before).toBeGreaterThanOrEqual(5);
    for (let c = 0; c < 3; c++) {
      const e = ndarray(Float64Array.from({ length: 3 }, (_, k) => +(k === c)), [3]);
      const [, col] = jvp(f, x, e) as unknown as [unknown, NdArray];
      const want = numbers(col);
      want.forEach((y, k) => {
        if (!Object.is(J.data[k * 3 + c], y)) expect.fail(`column ${c}, row ${k}: ${J.data[k * 3 + c]} (jacfwd) vs ${y} (jvp)`);
      });
    }
  });
});

describe("a chain ending at a kink", () => {
  it("keeps the kink's check: a tie at one lane's element is reported for that lane", () => {
    // abs(3u) at u = 0 is a tie: in the chain mul → add → abs, abs is checked per lane (an
    // instruction checked for ties is never fused, lane-fusion.ts; abs's rule reads add too)
    const g = (t: Tensor) => grad((u: Tensor) => sum(abs(add(mul(u, 2), u))), t, { ties: "error" });
    const lanes = ndarray(Float64Array.of(1, 2, 3, 0.5, 0, -1, -2, 4, 5), [3, 3]);
    expect(() => vmap(g)(lanes)).toThrow(TieError);
    expect(() => vmap(g)(lanes)).toThrow(/in lane 1 of vmap/);
    // without the tie, the same chain under vmap is g at each lane, bit for bit
    const clear = ndarray(Float64Array.of(1, 2, 3, 0.5, 0.25, -1, -2, 4, 5), [3, 3]);
    const got = numbers(vmap(g)(clear));
    for (let l = 0; l < 3; l++) expect(got.slice(3 * l, 3 * l + 3)).toEqual(numbers(g(Float64Array.from(clear.data.subarray(3 * l, 3 * l + 3)) as never)));
  });
});

describe("jacfwd's columns written element-major (lane-layout.ts)", () => {
  const A = ndarray(Float64Array.from({ length: 18 }, (_, i) => Math.cos(i + 2)), [6, 3]);
  const u = ndarray(Float64Array.from({ length: 8 }, (_, i) => 0.2 * i - 0.5), [1, 8]);
  const x = ndarray(Float64Array.of(0.4, -0.9, 1.3), [3]);
  const s = 0.7;
  // outputs: a gathered chain (written in place), a product (not a chain: transposed
  // whole), the chain again (kept lane-major: returned twice), a real, a constant
  const f = ([t, r]: readonly [Tensor, Scalar]) => {
    const V = reshape(matmul(A, reshape(sin(t) as Tensor, [3, 1]) as Tensor) as Tensor, [1, 6]) as Tensor;
    const chain = add(mul(u, gather(V, IDX, 1)), mul(sub(1, u), mul(gather(V, Int32Array.from(IDX).reverse(), 1), r)));
    const other = add(mul(u, gather(V, IDX, 1)), r);
    return [chain, matmul(A, reshape(mul(t, r), [3, 1]) as Tensor), other, other, mul(sum(t), r), u];
  };

  it("equal the columns by jvp to the bit, block by block, for two input leaves and six outputs", () => {
    const before = fusionStats.elementMajor;
    const J = jacfwd(f as never, [x, s] as never) as unknown as [NdArray | number, NdArray | number][];
    expect(fusionStats.elementMajor - before).toBeGreaterThanOrEqual(1);
    const columns = [0, 1, 2, 3].map((c) => {
      const v = [ndarray(Float64Array.from({ length: 3 }, (_, k) => +(k === c)), [3]), +(c === 3)];
      const [, tangents] = jvp(f as never, [x, s] as never, v as never) as unknown as [unknown, unknown[]];
      return tangents.map((y) => numbers(y));
    });
    J.forEach(([dt, dr], j) => {
      const S = columns[0][j].length;
      const byT = numbers(dt);
      const byR = numbers(dr);
      expect(byT.length).toBe(3 * S);
      expect(byR.length).toBe(S);
      for (let e = 0; e < S; e++) {
        for (let c = 0; c < 3; c++) if (!Object.is(byT[e * 3 + c], columns[c][j][e])) expect.fail(`output ${j}, element ${e}, column ${c}: ${byT[e * 3 + c]} vs ${columns[c][j][e]} (jvp)`);
        if (!Object.is(byR[e], columns[3][j][e])) expect.fail(`output ${j}, element ${e}, the real's column: ${byR[e]} vs ${columns[3][j][e]} (jvp)`);
      }
    });
  });

  it("a chain that gathers a few elements from lanes larger than its result: lane-major, then transposed once", () => {
    const A20 = ndarray(Float64Array.from({ length: 60 }, (_, i) => Math.sin(0.3 * i)), [20, 3]);
    const few = Int32Array.of(19, 0, 7, 7);
    const g = (t: Tensor) => {
      const V = reshape(matmul(A20, reshape(sin(t) as Tensor, [3, 1]) as Tensor) as Tensor, [1, 20]) as Tensor;
      return add(mul(gather(V, few, 1), gather(V, Int32Array.from(few).reverse(), 1)), 1);
    };
    const before = { em: fusionStats.elementMajor, chains: fusionStats.chains };
    const J = jacfwd(g, x) as NdArray;
    expect(fusionStats.chains - before.chains).toBeGreaterThanOrEqual(1);
    expect(fusionStats.elementMajor - before.em).toBe(0);
    expect(J.shape).toEqual([1, 4, 3]);
    for (let c = 0; c < 3; c++) {
      const [, col] = jvp(g, x, ndarray(Float64Array.from({ length: 3 }, (_, k) => +(k === c)), [3])) as unknown as [unknown, NdArray];
      numbers(col).forEach((y, k) => {
        if (!Object.is(J.data[k * 3 + c], y)) expect.fail(`column ${c}, row ${k}: ${J.data[k * 3 + c]} (jacfwd) vs ${y} (jvp)`);
      });
    }
  });

  it("a chain returned alone, from one tensor leaf: its block is the output written in place", () => {
    const g = (t: Tensor) => f([t, s])[0] as Tensor;
    const before = fusionStats.elementMajor;
    const J = jacfwd(g, x) as NdArray;
    expect(fusionStats.elementMajor - before).toBe(1);
    expect(J.shape).toEqual([1, 8, 3]);
    for (let c = 0; c < 3; c++) {
      const [, col] = jvp(g, x, ndarray(Float64Array.from({ length: 3 }, (_, k) => +(k === c)), [3])) as unknown as [unknown, NdArray];
      numbers(col).forEach((y, k) => {
        if (!Object.is(J.data[k * 3 + c], y)) expect.fail(`column ${c}, row ${k}: ${J.data[k * 3 + c]} (jacfwd) vs ${y} (jvp)`);
      });
    }
  });
});
