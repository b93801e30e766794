/**
 * jacfwd's columns as lanes (api/columns.ts, eval/lanes.ts): the tangent term is evaluated
 * by the lanes alone (nothing of it computed while it is emitted, and the trace's own
 * values read rather than computed again), and an output that is a transpose of a fused
 * chain is written by the chain in its permuted places (eval/lane-layout.ts); the columns
 * stay those of jvp along each basis vector, to the bit.
 */
import ndarray from "ndarray";
import { describe, expect, it } from "vitest";
import { add, defineOp, exp, gather, jacfwd, jvp, matmul, mul, reshape, sin, sub, transpose, type NdArray, type Scalar, type Tensor } from "../../src/index.js";
import { basisVector } from "../../src/api/components.js";
import { leavesLike, trace } from "../../src/api/tracing.js";
import { emitTransformed } from "../../src/api/transform.js";
import { pushforward } from "../../src/diff/pushforward.js";
import { fusionStats } from "../../src/eval/lane-fusion.js";
import { numbers } from "../helpers/same-bits.js";

/** jacfwd(g, x) ([...S, D]) against jvp(g, x, e_c) for each column c, every number to the bit. */
function expectColumns(g: (t: Tensor) => Tensor, x: NdArray): NdArray {
  const D = x.data.length;
  const J = jacfwd(g, x) as NdArray;
  const Jd = numbers(J);
  for (let c = 0; c < D; c++) {
    const e = ndarray(Float64Array.from({ length: D }, (_, k) => +(k === c)), x.shape.slice());
    const col = numbers((jvp(g, x, e) as unknown as [unknown, NdArray])[1]);
    expect(Jd.length).toBe(col.length * D);
    col.forEach((y, k) => {
      if (!Object.is(Jd[k * D + c], y)) expect.fail(`column ${c}, element ${k}: ${Jd[k * D + c]} (jacfwd) vs ${y} (jvp)`);
    });
  }
  return J;
}

describe("jacfwd's tangent term evaluated by the lanes alone", () => {
  it("is emitted without computing its tensors (Emission.unevaluated), and its columns are jvp's", () => {
    const x = ndarray(Float64Array.of(0.3, -1.2, 0.8, 2.1, -0.4), [5]);
    const g = (t: Tensor) => mul(sin(t), exp(t)) as Tensor;
    const traced = trace("jacfwd", g as never, x);
    const { term } = traced;
    const v0 = leavesLike("jacfwd", "v", term.params[0].shape, basisVector(term.params[0].shape, 0), "x");
    const applied = emitTransformed(traced, pushforward, { extra: { name: "v", shape: term.params[0].shape, leaves: v0 }, resultShape: term.output.shape, keep: "both", unevaluated: true });
    const tape = applied.term!.tape;
    const [tangent] = applied.term!.output.atoms;
    expect(tape.isTensor(tangent)).toBe(true);
    expect(tape.isDeferred(tangent)).toBe(true);
    expect(applied.results).toEqual([]);
    expectColumns(g, x);
  });

  it("reads what tracing computed at the point rather than computing it again", () => {
    let calls = 0;
    // exp whose tangent rule calls it again (an emitted instruction of x alone, computed once for every column)
    const counted = defineOp({ name: "countedExp", forward: (v) => (calls++, Math.exp(v)), reverse: ([v], _y, ct) => [mul(ct, counted(v))] });
    const f = ([a, b]: readonly Scalar[]) => [sin(counted(a)), mul(a, b)];
    calls = 0;
    const J = jacfwd(f as never, [0.7, -1.1] as never) as unknown as number[][];
    // tracing: countedExp(a); emitting (reals are computed as emitted): the rule's; the lanes: the
    // rule's again, once for both columns; sin's tangent reads tracing's countedExp(a), not computed again
    expect(calls).toBe(3);
    const e = Math.exp(0.7);
    expect(J[0][0]).toBe(e * Math.cos(e));
    for (let c = 0; c < 2; c++) {
      const [, column] = jvp(f as never, [0.7, -1.1] as never, [+(c === 0), +(c === 1)] as never) as unknown as [unknown, number[]];
      column.forEach((y, j) => expect(Object.is(J[j][c], y)).toBe(true));
    }
  });
});

describe("an output that is a transpose of a fused chain, written permuted by the chain", () => {
  const A = ndarray(Float64Array.from({ length: 36 }, (_, i) => Math.cos(0.7 * i + 1)), [12, 3]);
  const u = ndarray(Float64Array.from({ length: 8 }, (_, i) => 0.3 * i - 1), [1, 8]);
  const IDX = Int32Array.of(5, 0, 2, 2, 4, 1, 3, 0);
  const x = ndarray(Float64Array.of(0.4, -0.9, 1.3), [3]);
  /** A [2, 8] chain of gathers of V ([2, 6], batched), as ht's residuals over points. */
  const chain = (t: Tensor): Tensor => {
    const V = reshape(matmul(A, reshape(sin(t), [3, 1]) as Tensor) as Tensor, [2, 6]) as Tensor;
    return add(mul(u, gather(V, IDX, 1)), mul(sub(1, u), gather(V, Int32Array.from(IDX).reverse(), 1))) as Tensor;
  };

  it("[2, 8] returned as [8, 2]: the block [8, 2, 3] of jvp's columns, no transpose run", () => {
    const before = { ...fusionStats };
    const J = expectColumns((t) => transpose(chain(t)) as Tensor, x);
    expect(J.shape).toEqual([8, 2, 3]);
    expect(fusionStats.permuted - before.permuted).toBe(1);
  });

  it("three axes permuted ([2, 2, 4] as [4, 2, 2]), and a chain too large to copy element-major (lane-major, then placed)", () => {
    const before = { ...fusionStats };
    const J = expectColumns((t) => transpose(reshape(chain(t), [2, 2, 4]) as Tensor, [2, 0, 1]) as Tensor, x);
    expect(J.shape).toEqual([4, 2, 2, 3]);
    // the reshape between them: the chain is not the transpose's argument, and nothing is permuted
    expect(fusionStats.permuted - before.permuted).toBe(0);
    const B = ndarray(Float64Array.from({ length: 120 }, (_, i) => Math.sin(0.37 * i)), [40, 3]);
    const few = Int32Array.of(9, 0, 7);
    const g = (t: Tensor): Tensor => {
      const V = reshape(matmul(B, reshape(sin(t), [3, 1]) as Tensor) as Tensor, [2, 2, 10]) as Tensor;
      return transpose(add(mul(gather(V, few, 2), gather(V, Int32Array.from(few).reverse(), 2)), 1) as Tensor, [2, 0, 1]) as Tensor;
    };
    const K = expectColumns(g, x);
    expect(K.shape).toEqual([3, 2, 2, 3]);
    expect(fusionStats.permuted - before.permuted).toBe(1);
  });

  it("a chain returned as well as its transpose is not written permuted, and both blocks are jvp's", () => {
    const before = { ...fusionStats };
    const g = (t: Tensor) => {
      const c = chain(t);
      return [c, transpose(c)] as const;
    };
    const [Jc, Jt] = jacfwd(g as never, x) as unknown as [NdArray, NdArray];
    expect(fusionStats.permuted - before.permuted).toBe(0);
    expect(numbers(Jc)).toEqual(numbers(jacfwd((t: Tensor) => chain(t), x)));
    expect(Jt.shape).toEqual([8, 2, 3]);
    expect(Object.is(Jt.get(5, 1, 2), Jc.get(1, 5, 2))).toBe(true);
    expectColumns((t) => transpose(chain(t)) as Tensor, x);
  });
});
