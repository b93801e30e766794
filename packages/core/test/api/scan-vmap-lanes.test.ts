/**
 * vmap of a scan runs the scan over all lanes at once (issue 21): the body's term per
 * iteration over the column of the lanes' values, lanes whose decisions come out
 * otherwise stopped there and traced again by vmap with the lanes that decide as they
 * do. The numbers of mapping f over the lanes, bit for bit, and of the scan run lane by
 * lane (interpreted).
 */
import { afterEach, describe, expect, it } from "vitest";
import { add, cos, grad, jvp, lt, mul, scan, sin, sub, vmap, type Scalar } from "../../src/index.js";
import { scanLaneStats } from "../../src/jit/scan-lanes.js";
import { scanCode } from "../../src/jit/scan-code.js";
import { tangentStats } from "../../src/eval/scan-tangent-run.js";
import { expectSame } from "../helpers/same-bits.js";

afterEach(() => {
  scanCode.enabled = true;
});

const step = (y: Scalar): Scalar => (lt(y, 1) ? add(mul(1.2, y), 0.05) : mul(0.5, sin(y)));
const f = (x: Scalar): Scalar => scan((y: Scalar) => [step(y)], x, 100)[0];
/** Lanes that cross 1 at different iterations (or start above it), repeated so that many share a trace. */
const LANES = new Float64Array(Array.from({ length: 64 }, (_, k) => [0.3, 0.31, 2, 0.5, 0.3, 0.32, 3, 0.05][k % 8] + 1e-4 * Math.floor(k / 8)));

describe("vmap of a scan: the lanes at once", () => {
  it("a body that decides: each lane's numbers as f at its point, bit for bit; the scan run once per trace over its lanes", () => {
    const before = { ...scanLaneStats };
    const v = vmap(f)(LANES);
    expectSame(Array.from(v), Array.from(LANES, (x) => f(x)));
    const runs = scanLaneStats.runs - before.runs;
    const lanes = scanLaneStats.lanes - before.lanes;
    // every lane ran in a column with others (a run per trace vmap tried), not one run per lane
    expect(lanes).toBeGreaterThanOrEqual(LANES.length);
    expect(runs).toBeGreaterThan(0);
    expect(runs).toBeLessThan(LANES.length / 2);
    // lane by lane, interpreted: the same numbers
    scanCode.enabled = false;
    expectSame(vmap(f)(LANES), v);
  });

  it("batched xs, captured values and a carry the same in every lane; ys read per lane", () => {
    const g = ([w, s]: Scalar[]): Scalar => {
      // x a new variable per iteration (one used twice is written out: the loop's own trace)
      const xs = Array.from({ length: 300 }, (_, k) => (k % 2 === 0 ? mul(w, 0.01 * k) : add(cos(s), 0.001 * k)));
      const [c, ys] = scan((c: Scalar, x: Scalar): [Scalar, Scalar] => [add(mul(mul(0.5, w), c), mul(x, sin(c))), mul(c, s)], 0.4, xs);
      return add(c, ys.reduce((t: Scalar, y) => add(t, y), 0));
    };
    const W = new Float64Array([0.3, 0.5, 0.9, -0.2, 1.5, 0.31]);
    const S = new Float64Array([0.7, 0.1, 0.3, 2, -1, 0.69]);
    const before = scanLaneStats.lanes;
    const v = vmap(g)([W, S]);
    expectSame(Array.from(v), Array.from(W, (w, k) => g([w, S[k]])));
    // the lanes but the one f was traced at
    expect(scanLaneStats.lanes - before).toBeGreaterThanOrEqual(W.length - 1);
    // s the same for every lane (inAxes null)
    const u = vmap(g, { inAxes: [0, null] })([W, 0.7]);
    expectSame(Array.from(u), Array.from(W, (w) => g([w, 0.7])));
  });

  it("vmap of grad of a long loop: the forward scan over the lanes at once, each lane's gradient as grad gives it", () => {
    // (a decision in the body: the replay runs the forward scan for its flag; a body deciding nothing has only its sweep's run)
    const chain = (x: Scalar): Scalar =>
      scan((c: Scalar): [Scalar] => [lt(c, 100) ? add(mul(0.9, c), mul(0.1, sin(sub(c, x)))) : c], x, 10_000)[0];
    const X = new Float64Array([0.5, 0.7, 1.5, -0.4, 0.51]);
    const before = scanLaneStats.lanes;
    const v = vmap((x: Scalar) => grad(chain, x))(X);
    expectSame(Array.from(v), Array.from(X, (x) => grad(chain, x)));
    expect(scanLaneStats.lanes - before).toBeGreaterThanOrEqual(X.length - 1);
  });

  it("vmap of jvp of a long loop: each lane's forward sweep one call of its compiled block, each lane's tangent as jvp gives it", () => {
    const chain = (x: Scalar): Scalar => scan((c: Scalar): [Scalar] => [add(mul(0.9, c), mul(0.1, sin(sub(c, x))))], x, 10_000)[0];
    const X = new Float64Array([0.5, 0.7, 1.5, -0.4, 0.51]);
    const calls = tangentStats.calls;
    const v = vmap((x: Scalar) => jvp(chain, x, 1)[1])(X);
    // lane by lane, each lane's scanTangent a compiled run over its iterations (one pattern: one call), not interpreted
    expect(tangentStats.calls - calls).toBe(X.length);
    expectSame(Array.from(v), Array.from(X, (x) => jvp(chain, x, 1)[1]));
    scanCode.enabled = false;
    expectSame(vmap((x: Scalar) => jvp(chain, x, 1)[1])(X), v);
  });
});
