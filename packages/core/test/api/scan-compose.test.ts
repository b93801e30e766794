/**
 * scan under jit and vmap, and jit and vmap of a scan's derivatives, against the loop
 * written out: the same numbers, bit for bit, at points where the body's decisions change
 * part way (and where they change at different iterations lane by lane). What is kept is
 * counted, not timed: the body's calls (a replay runs the scan's term, not the body), and
 * the iterations a reverse sweep ran as one scanGrad instruction (a long loop not written
 * out in jit's or vmap's trace).
 */
import { describe, expect, it } from "vitest";
import { add, cos, grad, hessian, jit, jvp, lt, mul, scan, sin, valueAndGrad, vmap, type Scalar } from "../../src/index.js";
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
/** A chain that decides nothing: one run of the body, so one reverse sweep of n iterations. */
const chainOf =
  (n: number): F =>
  (x) =>
    scan((y: Scalar) => [add(mul(0.9, y), mul(0.1, sin(y)))], x, n)[0];
/** Long enough that jit's and vmap's traces keep the scan (a short loop runs faster written out there). */
const LONG = 10_000;
const chain = chainOf(LONG);
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
    // a replay of a long loop runs the reverse sweep as a scanGrad instruction (written out in the trace,
    // it would count none); a short one is written out there, compiled with the rest
    const jc = jit((x: Scalar) => grad(chain, x));
    const short = chainOf(N);
    const js = jit((x: Scalar) => grad(short, x));
    for (const x of POINTS) {
      reverseStats.total = 0;
      expectSame(jc(x), grad(chain, x));
      expect(reverseStats.total).toBe(LONG + LONG);
      reverseStats.total = 0;
      expectSame(js(x), grad(short, x));
      expect(reverseStats.total).toBe(N);
    }
    expect(jc.stats.replays).toBe(POINTS.length - 1);
  });

  it("jit of grad and of jvp of a long loop whose decisions change part way: kept, the loop's numbers", () => {
    const n = 8000;
    // y rises past 1 after a few hundred iterations (from below 1), then on by the other branch
    const rising = (y: Scalar): Scalar => (lt(y, 1) ? add(y, mul(0.002, cos(y))) : add(y, mul(0.001, sin(y))));
    const long: F = (x) => scan((y: Scalar) => [rising(y)], x, n)[0];
    const longLoop: F = (x) => {
      let y = x;
      for (let i = 0; i < n; i++) y = rising(y);
      return y;
    };
    const jg = jit((x: Scalar) => valueAndGrad(long, x));
    const jgl = jit((x: Scalar) => valueAndGrad(longLoop, x));
    const jt = jit((x: Scalar) => jvp(long, x, 1));
    const jtl = jit((x: Scalar) => jvp(longLoop, x, 1));
    for (const x of [0.3, 0.31, 2, 0.3]) {
      reverseStats.total = 0;
      expectSame(jg(x), jgl(x));
      expect(reverseStats.total).toBeGreaterThan(0);
      expectSame(jt(x), jtl(x));
    }
    expect(jg.stats.replays).toBeGreaterThan(0);
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

  it("vmap of grad of a long loop keeps the reverse sweep one instruction per lane; jit(vmap(grad)) replays it", () => {
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
      expect(reverseStats.total).toBe(2 * LONG * POINTS.length);
    }
  });

  it("vmap of hessian and of jvp", () => {
    expectSame(vmap((x: Scalar) => hessian(scanned, x))(LANES), POINTS.map((x) => hessian(loop, x)));
    expectSame(vmap((x: Scalar) => jvp(scanned, x, 1)[1])(LANES), POINTS.map((x) => jvp(loop, x, 1)[1]));
  });
});
