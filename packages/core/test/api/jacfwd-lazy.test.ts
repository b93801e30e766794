/**
 * f's tensor values are deferred while an outermost jacfwd traces it (api/tracing.ts,
 * TraceUse "columns"): its lanes (api/columns.ts, eval/lanes.ts) compute those the
 * tangents read, and f(x), which jacfwd does not return, is never computed. The Jacobians
 * are those of computing every value as it is appended, bit for bit: on random tensor
 * programs, at −0, NaN and ∞, where f decides on or reads a pending value, where a nested
 * rd reads one, where a rule decided on values (a sweep per column), and with reals
 * computed amid deferred tensors.
 */
import fc from "fast-check";
import ndarray from "ndarray";
import { afterEach, describe, expect, it } from "vitest";
import { poolStats } from "@wengert/ops";
import {
  add, exp, grad, gt, jacfwd, log, max, mul, sin, square, sub, sum, tanh, transpose, unstack, type NdArray, type Scalar, type Tensor,
} from "../../src/index.js";
import { basisVector } from "../../src/api/components.js";
import { lazyValues, leavesLike, trace } from "../../src/api/tracing.js";
import { emitTransformed } from "../../src/api/transform.js";
import { pushforward } from "../../src/diff/pushforward.js";
import { FIRST_PRIMITIVE } from "../../src/trace/opcodes.js";
import { tensorChains } from "../helpers/programs/tensor-chains.js";
import { expectSame } from "../helpers/same-bits.js";
import { random, rng } from "../helpers/tensors.js";

afterEach(() => {
  lazyValues.columns = true;
});

/** `run` with jacfwd's trace deferring f's values, and computing them as appended. */
function both<T>(run: () => T): { lazy: T; eager: T } {
  lazyValues.columns = true;
  const lazy = run();
  lazyValues.columns = false;
  const eager = run();
  lazyValues.columns = true;
  return { lazy, eager };
}

describe("f's tensor values deferred while jacfwd traces it", () => {
  it("property: random tensor programs, x a tensor or a record of tensors: the eager Jacobians, bit for bit", () => {
    fc.assert(
      fc.property(tensorChains, fc.integer({ min: 1, max: 1e6 }), fc.boolean(), (chain, seed, record) => {
        const r = rng(seed);
        const x = ndarray(random(r, 12), [3, 4]);
        const W = ndarray(random(r, 16, 0.7), [4, 4]);
        const out = record
          ? both(() => jacfwd((p: { x: Tensor; W: Tensor }) => chain.f(p.x as never, p.W as never), { x, W }))
          : both(() => jacfwd((t: Tensor) => transpose(chain.f(t as never, W)), x));
        expectSame(out.lazy, out.eager);
      }),
      { numRuns: 80, seed: 31 },
    );
  });

  it("−0, NaN and ∞ in x: the eager Jacobians", () => {
    const x = Float64Array.of(-0, 0, NaN, -1, 2, -0, Infinity, 0.5);
    const bodies: ((v: Tensor) => Tensor)[] = [
      (v) => mul(v, -0) as Tensor,
      (v) => add(mul(v, v), -0) as Tensor,
      (v) => sub(exp(mul(v, -1)), log(add(square(v), 1))) as Tensor,
      (v) => mul(sin(v), tanh(v)) as Tensor,
    ];
    for (const f of bodies) {
      const out = both(() => jacfwd(f, x));
      expectSame(out.lazy, out.eager);
    }
  });

  it("a decision on a pending value, a read of one, a nested rd reading one: each computed first, the eager Jacobians", () => {
    const x = random(rng(5), 16);
    const branches = (v: Tensor): Tensor => {
      const y = tanh(mul(v, 3));
      const s = sum(y) as Scalar;
      const first = (y as unknown as { value: { get(i: number): number } }).value.get(0);
      const z = gt(s, 0) ? mul(y, y) : sin(y);
      return (first > 0 ? add(z, v) : sub(z, v)) as Tensor;
    };
    const a = both(() => jacfwd(branches, x));
    expectSame(a.lazy, a.eager);
    const nested = (v: Tensor): Tensor => {
      const y = tanh(mul(v, 2));
      const g = grad((z: Tensor) => sum(mul(square(z), y)), v) as unknown as Tensor;
      return mul(g, sin(v)) as Tensor;
    };
    const b = both(() => jacfwd(nested, x));
    expectSame(b.lazy, b.eager);
  });

  it("a rule that decides on values (max's mask of its maxima): a sweep per column, from f's values computed then", () => {
    const x = random(rng(6), 8);
    const f = (v: Tensor): Tensor => mul(exp(v), max(tanh(v), 0, true) as Tensor) as Tensor;
    const out = both(() => jacfwd(f, x));
    expectSame(out.lazy, out.eager);
  });

  it("reals of x's components amid f's tensors (ht's pose): the eager Jacobian, with f's outputs never computed", () => {
    const C = ndarray(random(rng(7), 4 * 64), [4, 64]);
    const f = (t: Tensor): Tensor => {
      const [a, b] = unstack(t) as Scalar[];
      // a tensor, then reals of reals, then tensors of both: f(x) is [64, 4], not read by the tangents
      const s = mul(C, a);
      const c = sin(mul(a, b));
      return transpose(add(mul(exp(s), c), b)) as Tensor;
    };
    const x = Float64Array.of(0.3, -0.7);
    const out = both(() => jacfwd(f, x));
    expectSame(out.lazy, out.eager);
    const taken = (columns: boolean): number => {
      lazyValues.columns = columns;
      jacfwd(f, x);
      const before = poolStats.fresh + poolStats.reused;
      jacfwd(f, x);
      return poolStats.fresh + poolStats.reused - before;
    };
    // computed as appended, f's last three values (the product, the sum, its transpose) take a buffer each
    expect(taken(false) - taken(true)).toBeGreaterThanOrEqual(3);
  });

  it("a real that a tangent rule emits amid the deferred tangents computes none of them (Emission.unevaluated)", () => {
    const x = Float64Array.of(0.4, -0.9, 1.3);
    const f = (t: Tensor): Tensor => {
      const [a] = unstack(t) as Scalar[];
      const e = exp(t);
      // sin's tangent rule emits cos(a), a real, after exp's tangent, a tensor
      return mul(e, sin(a)) as Tensor;
    };
    const traced = trace("jacfwd", f as never, x, {}, "columns");
    const { term } = traced;
    const v0 = leavesLike("jacfwd", "v", term.params[0].shape, basisVector(term.params[0].shape, 0), "x");
    const applied = emitTransformed(traced, pushforward, { extra: { name: "v", shape: term.params[0].shape, leaves: v0 }, resultShape: term.output.shape, keep: "both", unevaluated: true });
    const tape = applied.term!.tape;
    let tensors = 0;
    for (let i = 0; i < tape.length; i++) {
      if (tape.op[i] < FIRST_PRIMITIVE || !tape.isTensor(i)) continue;
      tensors++;
      expect(tape.isDeferred(i), `instruction ${i}`).toBe(true);
    }
    expect(tensors).toBeGreaterThanOrEqual(4);
    const out = both(() => jacfwd(f, x) as NdArray);
    expectSame(out.lazy, out.eager);
  });
});
