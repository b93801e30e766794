/**
 * jacfwd's columns as lanes (api/columns.ts, eval/lanes.ts): the tangent term is evaluated
 * by the lanes alone (nothing of it computed while it is emitted, and the trace's own
 * values read rather than computed again); the columns stay those of jvp along each basis
 * vector, to the bit.
 */
import ndarray from "ndarray";
import { describe, expect, it } from "vitest";
import { defineOp, exp, jacfwd, jvp, mul, sin, type NdArray, type Scalar, type Tensor } from "../../src/index.js";
import { basisVector } from "../../src/api/components.js";
import { leavesLike, trace } from "../../src/api/tracing.js";
import { emitTransformed } from "../../src/api/transform.js";
import { pushforward } from "../../src/diff/pushforward.js";
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
