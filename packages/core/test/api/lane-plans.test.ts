/**
 * A term's plan over lanes (eval/lane-plan.ts) is kept by its structure (eval/lane-plans.ts):
 * jacfwd traces f and emits its tangent term at every call, and a later call of the same
 * structure runs the plan made for an earlier one. At a new point it gives the numbers a
 * fresh plan gives, bit for bit; a gather's indices written since, or new ones, make a new
 * plan (a plan's chains read its indices).
 */
import fc from "fast-check";
import ndarray from "ndarray";
import { afterEach, describe, expect, it } from "vitest";
import { add, gather, jacfwd, mul, neg, sin, transpose, vmap, type NdArray, type Tensor } from "../../src/index.js";
import { lanePlanStats } from "../../src/eval/lane-plans.js";
import { tensorChains } from "../helpers/programs/tensor-chains.js";
import { expectSame } from "../helpers/same-bits.js";
import { random, rng } from "../helpers/tensors.js";

afterEach(() => {
  lanePlanStats.enabled = true;
});

/** `run` with plans kept by structure, and made afresh. */
function both<T>(run: () => T): { kept: T; fresh: T } {
  lanePlanStats.enabled = true;
  const kept = run();
  lanePlanStats.enabled = false;
  const fresh = run();
  lanePlanStats.enabled = true;
  return { kept, fresh };
}

/** ht's per-point work in small: three gathers of a [3, M] tensor weighted per point, returned point by point. */
const points = (corr: readonly Int32Array[], u: NdArray) => (t: Tensor) => {
  const V = sin(mul(t, 1.5)) as Tensor;
  const [a, b, c] = corr.map((k) => gather(V, k, 1) as Tensor);
  return transpose(add(add(mul(neg(u), a), mul(u, b)), mul(0.5, c)));
};

describe("lane plans kept by the term's structure", () => {
  it("property: random tensor programs, a plan made at one point and run at another: the numbers of a fresh plan there, bit for bit", () => {
    const found = lanePlanStats.found;
    fc.assert(
      fc.property(tensorChains, fc.integer({ min: 1, max: 1e6 }), (chain, seed) => {
        const r = rng(seed);
        const W = ndarray(random(r, 16, 0.7), [4, 4]);
        const f = (t: Tensor) => transpose(chain.f(t as never, W));
        jacfwd(f, ndarray(random(r, 12), [3, 4]));
        const x = ndarray(random(r, 12), [3, 4]);
        const out = both(() => jacfwd(f, x));
        expectSame(out.kept, out.fresh);
      }),
      { numRuns: 60, seed: 7 },
    );
    // most programs have no literal vector of indices (each call's is a new one): their second call found the first's plan
    expect(lanePlanStats.found - found).toBeGreaterThan(30);
  });

  it("a repeated jacfwd finds its plan; at a new point its Jacobian is a fresh plan's", () => {
    const r = rng(3);
    const M = 7;
    const N = 40;
    const corr = [0, 1, 2].map(() => Int32Array.from({ length: N }, () => Math.floor(r() * M)));
    const u = ndarray(random(r, N), [1, N]);
    const f = points(corr, u);
    jacfwd(f, ndarray(random(r, 3 * M), [3, M]));
    const { made, found } = lanePlanStats;
    const x = ndarray(random(r, 3 * M), [3, M]);
    const again = jacfwd(f, x);
    expect([lanePlanStats.made - made, lanePlanStats.found - found]).toEqual([0, 1]);
    lanePlanStats.enabled = false;
    expectSame(again, jacfwd(f, x));
  });

  it("indices written since the plan was made: a new plan, and the new indices' Jacobian", () => {
    const r = rng(5);
    const M = 6;
    const N = 25;
    const corr = [0, 1, 2].map(() => Int32Array.from({ length: N }, () => Math.floor(r() * M)));
    const u = ndarray(random(r, N), [1, N]);
    const f = points(corr, u);
    const x = ndarray(random(r, 3 * M), [3, M]);
    const before = jacfwd(f, x) as NdArray;
    corr[1].reverse();
    corr[2][0] = (corr[2][0] + 1) % M;
    const made = lanePlanStats.made;
    const after = jacfwd(f, x) as NdArray;
    const madeAfter = lanePlanStats.made;
    expect(Array.from(after.data)).not.toEqual(Array.from(before.data));
    // per column, as a sweep computes it (checkNaN: no lanes), and by a fresh plan
    expectSame(after, jacfwd(f, x, { checkNaN: true }));
    lanePlanStats.enabled = false;
    expectSame(after, jacfwd(f, x));
    expect(madeAfter - made).toBe(1);
  });

  it("vmap of the same function at two batches of points: one plan, the numbers of a fresh one", () => {
    const r = rng(11);
    const corr = [Int32Array.of(2, 0, 1, 1), Int32Array.of(0, 0, 2, 1), Int32Array.of(1, 2, 0, 0)];
    const u = ndarray(random(r, 4), [1, 4]);
    const f = points(corr, u);
    const xs = () => ndarray(random(r, 5 * 9), [5, 3, 3]);
    vmap(f)(xs());
    const found = lanePlanStats.found;
    const x = xs();
    const out = both(() => vmap(f)(x));
    expect(lanePlanStats.found - found).toBeGreaterThan(0);
    expectSame(out.kept, out.fresh);
  });
});
