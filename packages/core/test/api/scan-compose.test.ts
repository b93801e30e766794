/**
 * scan under jit and vmap, and jit and vmap of a scan's derivatives, against the loop
 * written out: the same numbers, bit for bit, at points where the body's decisions change
 * part way (and where they change at different iterations lane by lane). What is kept is
 * counted, not timed: the body's calls (a replay runs the scan's term, not the body), and
 * the iterations a reverse sweep ran as one scanGrad instruction (the loop not written
 * out in jit's or vmap's trace).
 */
import { describe, expect, it } from "vitest";
import { add, grad, hessian, jit, jvp, lt, mul, scan, sin, valueAndGrad, vmap, type Scalar } from "../../src/index.js";
import { reverseStats } from "../../src/eval/scan-reverse-run.js";
import { expectSame } from "../helpers/same-bits.js";

type F = (x: Scalar) => Scalar;

const N = 40;
const branchy = (y: Scalar): Scalar => (lt(y, 1) ? add(mul(1.2, y), 0.05) : mul(0.5, sin(y)));
/** The loop as a scan, counting the body's calls (a replay makes none). */
function counted(): { f: F; calls: () => number } {
  let calls = 0;
  const f: F = (x) =>
    scan(
      (y: Scalar) => {
        calls++;
        return [branchy(y)];
      },
      x,
      N,
    )[0];
  return { f, calls: () => calls };
}
const scanned: F = (x) => scan((y: Scalar) => [branchy(y)], x, N)[0];
/** A chain that decides nothing: one run of the body, so one reverse sweep of N iterations. */
const chain: F = (x) => scan((y: Scalar) => [add(mul(0.9, y), mul(0.1, sin(y)))], x, N)[0];
const loop: F = (x) => {
  let y = x;
  for (let i = 0; i < N; i++) y = branchy(y);
  return y;
};
/** Points whose iterations change their decisions at different places (and one above 1 from the start). */
const POINTS = [0.3, 0.31, 2, 0.5, 0.3, 0.32, 3, 0.05];
const LANES = new Float64Array(POINTS);

describe("jit of a scan", () => {
  it("replays the scan's term (the body not called again) with the loop's numbers", () => {
    const { f, calls } = counted();
    const j = jit(f);
    const jl = jit(loop);
    for (const x of POINTS) expectSame(j(x), jl(x));
    for (const x of POINTS) expectSame(j(x), loop(x));
    expect(j.stats.replays).toBeGreaterThan(POINTS.length);
    // traced where no kept trace held; every call after that a replay, the body untouched
    const before = calls();
    for (const x of POINTS) j(x);
    expect(calls()).toBe(before);
  });

  it("jit of grad and of jvp keeps the scan's sweeps as single instructions: the loop's numbers", () => {
    const jg = jit((x: Scalar) => valueAndGrad(scanned, x));
    const jgl = jit((x: Scalar) => valueAndGrad(loop, x));
    const jt = jit((x: Scalar) => jvp(scanned, x, 1));
    const jtl = jit((x: Scalar) => jvp(loop, x, 1));
    for (let round = 0; round < 2; round++) {
      for (const x of POINTS) {
        expectSame(jg(x), jgl(x));
        expectSame(jg(x), valueAndGrad(loop, x));
        expectSame(jt(x), jtl(x));
      }
    }
    expect(jg.stats.replays).toBeGreaterThan(0);
    expect(jt.stats.replays).toBeGreaterThan(0);
    // a replay runs the reverse sweep as scanGrad instructions (written out in the trace, it would count none)
    const jc = jit((x: Scalar) => grad(chain, x));
    for (const x of POINTS) {
      reverseStats.total = 0;
      expectSame(jc(x), grad(chain, x));
      expect(reverseStats.total).toBe(N + N);
    }
    expect(jc.stats.replays).toBe(POINTS.length - 1);
  });

  it("jit of hessian and of grad of grad (written out inside: the loop's numbers to any order)", () => {
    const jh = jit((x: Scalar) => hessian(scanned, x));
    const jgg = jit((x: Scalar) => grad((y: Scalar) => grad(scanned, y), x));
    for (const x of POINTS) {
      expectSame(jh(x), hessian(loop, x));
      expectSame(jgg(x), grad((y: Scalar) => grad(loop, y), x));
    }
  });

  it("grad of a jitted grad of a scan, to third order", () => {
    const inner = jit((x: Scalar) => grad(scanned, x));
    const innerLoop = jit((x: Scalar) => grad(loop, x));
    for (const x of [0.3, 2]) {
      expectSame(grad(inner, x), grad(innerLoop, x));
      expectSame(
        grad((y: Scalar) => grad(inner, y), x),
        grad((y: Scalar) => grad(innerLoop, y), x),
      );
    }
  });
});

describe("vmap of a scan", () => {
  it("lanes whose decisions change at different iterations: each lane the loop's numbers", () => {
    expectSame(vmap(scanned)(LANES), vmap(loop)(LANES));
    expectSame(vmap(scanned)(LANES), POINTS.map(loop));
  });

  it("vmap of grad keeps the reverse sweep one instruction per lane; jit(vmap(grad)) replays it", () => {
    expectSame(vmap((x: Scalar) => grad(scanned, x))(LANES), POINTS.map((x) => grad(loop, x)));
    const jv = jit(vmap((x: Scalar) => grad(scanned, x)));
    const jvl = jit(vmap((x: Scalar) => grad(loop, x)));
    for (let call = 0; call < 4; call++) expectSame(jv(LANES), jvl(LANES));
    expect(jv.stats.replays).toBeGreaterThan(0);
    // once its trace is kept, every lane is a replay whose reverse sweep is one scanGrad of N iterations
    const jc = jit(vmap((x: Scalar) => grad(chain, x)));
    jc(LANES);
    for (let call = 0; call < 3; call++) {
      reverseStats.total = 0;
      expectSame(jc(LANES), POINTS.map((x) => grad(chain, x)));
      expect(reverseStats.total).toBe(N * POINTS.length + N * POINTS.length);
    }
  });

  it("vmap of hessian and of jvp", () => {
    expectSame(vmap((x: Scalar) => hessian(scanned, x))(LANES), POINTS.map((x) => hessian(loop, x)));
    expectSame(vmap((x: Scalar) => jvp(scanned, x, 1)[1])(LANES), POINTS.map((x) => jvp(loop, x, 1)[1]));
  });
});
