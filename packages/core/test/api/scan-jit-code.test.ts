/**
 * jit around a scan compiles the whole term (issue 21): the instructions around the scan
 * as JavaScript, the scan a call to its body's compiled loop, its sweeps calls to their
 * kernels; no replay instruction by instruction once compiled. The numbers are the
 * replay's and the loop written out's, bit for bit, at points whose decisions change
 * part way through the loop (and where a decision outside the loop does).
 */
import { afterEach, describe, expect, it } from "vitest";
import { abs, add, compileGrad, cos, exp, grad, gt, hvp, jit, jvp, lt, mul, scan, sin, sub, tanh, valueAndGrad, type Scalar } from "../../src/index.js";
import { scanTermStats } from "../../src/jit/scan-term.js";
import { scanCode } from "../../src/jit/scan-code.js";
import { reverseStats } from "../../src/eval/scan-reverse-run.js";
import { tangentStats } from "../../src/eval/scan-tangent-run.js";
import { expectSame } from "../helpers/same-bits.js";

afterEach(() => {
  scanCode.enabled = true;
});

const N = 40;
const LONG = 10_000;
const branchy = (y: Scalar, w: Scalar): Scalar => (lt(y, 1) ? add(mul(1.2, y), mul(0.05, w)) : mul(0.5, sin(mul(w, y))));
/** Around the scan: a decision on x, work before and after, a y per iteration summed. */
const around =
  (scanOf: (y0: Scalar, w: Scalar) => [Scalar, Scalar[]]) =>
  ([x, w]: Scalar[]): Scalar => {
    const y0 = gt(x, 0) ? mul(x, cos(w)) : sub(0.1, x);
    const [y, ys] = scanOf(y0, w);
    return add(mul(y, y), ys.reduce((s: Scalar, v) => add(s, mul(v, w)), 0));
  };
const scanned = around((y0, w) => scan((y: Scalar, k: Scalar): [Scalar, Scalar] => [branchy(y, w), mul(y, k)], y0, Array.from({ length: N }, (_, k) => k + 1)));
const loop = around((y0, w) => {
  let y = y0;
  const ys: Scalar[] = [];
  for (let k = 1; k <= N; k++) {
    ys.push(mul(y, k));
    y = branchy(y, w);
  }
  return [y, ys];
});
/** Points whose iterations change their decisions at different places; one below 0 (the other branch before the loop). */
const POINTS = [
  [0.3, 0.7],
  [0.31, 0.7],
  [2, 0.4],
  [0.5, 0.9],
  [0.3, 0.71],
  [-0.4, 0.5],
  [0.32, 0.69],
  [3, 1.1],
];

describe("jit of a scan compiles the whole term", () => {
  it("after two replays, every replay runs compiled code: the replay's numbers and the loop's, bit for bit", () => {
    const made = scanTermStats.compiled;
    const j = jit(scanned);
    const outs = [0, 1, 2].flatMap(() => POINTS.map((x) => j(x)));
    for (const [k, x] of POINTS.entries()) expectSame(outs[k], loop(x));
    expectSame(outs.slice(0, POINTS.length), outs.slice(POINTS.length, 2 * POINTS.length));
    expect(scanTermStats.compiled).toBeGreaterThan(made);
    // compiled code ran: every replay of a trace after its second (no instruction-by-instruction replay)
    expect(j.stats.compiled).toBeGreaterThanOrEqual(POINTS.length);
    // interpreted (the replay of eval/replay.ts and the body's interpreter): the same numbers
    scanCode.enabled = false;
    const ji = jit(scanned);
    const interpreted = [0, 1, 2].flatMap(() => POINTS.map((x) => ji(x)));
    expect(ji.stats.compiled).toBe(0);
    expectSame(outs, interpreted);
  });

  it("a point where the body decides otherwise traces again (compiled code gives up as the replay does)", () => {
    const j = jit(scanned);
    for (let r = 0; r < 4; r++) expectSame(j([0.3, 0.7]), loop([0.3, 0.7]));
    const traces = j.stats.traces;
    expect(j.stats.compiled).toBeGreaterThan(0);
    // from 0.3 the loop crosses 1 at some iteration; from 0.9 at another: the scan's flag fails
    expectSame(j([0.9, 0.7]), loop([0.9, 0.7]));
    expect(j.stats.traces).toBe(traces + 1);
  });

  it("jit of grad and of jvp of a long loop: compiled around the scan's sweeps, the loop's numbers", () => {
    const chain = ([x, w]: Scalar[]): Scalar => {
      const [y] = scan((c: Scalar): [Scalar] => [add(mul(0.9, c), mul(mul(0.1, w), sin(c)))], mul(x, x), LONG);
      return mul(y, cos(w));
    };
    const chainLoop = ([x, w]: Scalar[]): Scalar => {
      let c = mul(x, x);
      for (let i = 0; i < LONG; i++) c = add(mul(0.9, c), mul(mul(0.1, w), sin(c)));
      return mul(c, cos(w));
    };
    const made = scanTermStats.compiled;
    const jg = jit((x: Scalar[]) => valueAndGrad(chain, x));
    const jt = jit((x: Scalar[]) => jvp(chain, x, [1, -0.5]));
    for (let r = 0; r < 3; r++) {
      for (const x of [
        [0.5, 0.3],
        [0.7, 0.2],
        [1.5, -0.4],
      ]) {
        reverseStats.total = 0;
        expectSame(jg(x), valueAndGrad(chainLoop, x));
        // the reverse sweep ran as one instruction (the scan kept in jit's trace), not written out
        expect(reverseStats.total).toBe(LONG);
        expectSame(jt(x), jvp(chainLoop, x, [1, -0.5]));
      }
    }
    expect(scanTermStats.compiled).toBeGreaterThanOrEqual(made + 2);
    expect(jg.stats.compiled).toBeGreaterThan(0);
    expect(jt.stats.compiled).toBeGreaterThan(0);
    expectSame(grad(chain, [0.5, 0.3]), grad(chainLoop, [0.5, 0.3]));
  });

  it("compileGrad of a scan: after two replays, compiled code around the scan and its reverse sweep; the replay's numbers and the loop's", () => {
    const made = scanTermStats.compiled;
    const cg = compileGrad(scanned);
    const outs = [0, 1, 2].flatMap(() => POINTS.map((x) => cg.valueAndGrad(x)));
    for (const [k, x] of POINTS.entries()) expectSame(outs[k], [loop(x), grad(loop, x)]);
    expectSame(outs.slice(0, POINTS.length), outs.slice(POINTS.length, 2 * POINTS.length));
    expect(scanTermStats.compiled).toBeGreaterThan(made);
    expect(cg.stats.compiled).toBeGreaterThanOrEqual(POINTS.length);
    scanCode.enabled = false;
    const ci = compileGrad(scanned);
    const interpreted = [0, 1, 2].flatMap(() => POINTS.map((x) => ci.valueAndGrad(x)));
    expect(ci.stats.compiled).toBe(0);
    expectSame(outs, interpreted);
  });

  it("jit of hvp of a long loop: the nested sweep's scans (reading the forward scan's packed value) compiled; the replay's numbers and the loop's", () => {
    const chain = ([x, w]: Scalar[]): Scalar => scan((c: Scalar): [Scalar] => [add(mul(0.9, c), mul(mul(0.1, w), sin(c)))], x, LONG)[0];
    const chainLoop = ([x, w]: Scalar[]): Scalar => {
      let c = x;
      for (let i = 0; i < LONG; i++) c = add(mul(0.9, c), mul(mul(0.1, w), sin(c)));
      return c;
    };
    const points = [
      [0.5, 0.3],
      [0.7, 0.2],
      [1.5, -0.4],
      [0.6, 0.25],
    ];
    const run = (): unknown[] => {
      const j = jit((x: Scalar[]) => hvp(chain, x, [1, -0.5]));
      const outs = points.map((x) => j(x));
      return [outs, j.stats.compiled];
    };
    const [compiled, count] = run();
    // the first call traces, two replays interpreted, then compiled code
    expect(count).toBe(points.length - 3);
    for (const [k, x] of points.entries()) expectSame((compiled as unknown[])[k], hvp(chainLoop, x, [1, -0.5]));
    scanCode.enabled = false;
    const [interpreted, none] = run();
    expect(none).toBe(0);
    expectSame(compiled, interpreted);
  });

  it("a kink met inside the loop or around it: compiled code does as the replay does", () => {
    // |y − 0.5| inside the loop meets its kink where y is 0.5; |x − 2| around it where x is 2
    const kinked = (x: Scalar): Scalar => {
      const [y] = scan((y: Scalar): [Scalar] => [add(mul(0.5, y), mul(0.1, abs(sub(y, 0.5))))], x, 50);
      return add(y, abs(sub(x, 2)));
    };
    for (const enabled of [true, false]) {
      scanCode.enabled = enabled;
      const j = jit(kinked);
      for (const x of [0.3, 0.31, 0.32, 0.33, 0.34]) expectSame(j(x), kinked(x));
      expect(j.stats.compiled).toBe(enabled ? 2 : 0);
      expect(j.stats.traces).toBe(1);
      // inside the loop: jit's trace ignores f's own ties, so its scan does too (a replay as the trace)
      expectSame(j(0.5), kinked(0.5));
      expect(j.stats.traces).toBe(1);
      // around it: a replay meeting a kink traces again (for a tie to be reported as tracing reports it)
      expectSame(j(2), kinked(2));
      expect(j.stats.traces).toBe(2);
      expectSame(j(0.35), kinked(0.35));
    }
  });
});


describe("a scan's forward sweep (scanTangent) of a body of reals runs compiled", () => {
  type Step = (c: Scalar[], a: Scalar, x: Scalar) => Scalar[];
  const STEPS: Record<string, { step: Step; carry: number }> = {
    "y ← a·sin y + x": { step: ([y], a, x) => [add(mul(a, sin(y)), x)], carry: 1 },
    "decisions that change part way": { step: ([y], a, x) => [lt(y, 1) ? add(mul(1.2, y), mul(a, x)) : mul(0.5, sin(y))], carry: 1 },
    "rules reading carry′ (tanh, exp)": { step: ([y], a, x) => [exp(mul(tanh(mul(a, y)), x))], carry: 1 },
    "two carries, one passed on unchanged": { step: ([u, v], a, x) => [tanh(add(mul(a, u), mul(v, x))), v], carry: 2 },
  };
  const N = 300;
  /**
   * f(θ): the carry from θ's first leaves, a = θ's last, x the iteration's x (θ₀·k/100: a
   * tangent per iteration) or θ₀ captured (its tangent read by every iteration); ys summed.
   */
  const model = (step: Step, carry: number, withXs: boolean) => {
    const xs = (th: Scalar[]): Scalar[] => Array.from({ length: N }, (_, k) => mul(th[0], 0.01 * k));
    const sum = (q: Scalar[], term: (e: Scalar) => Scalar): Scalar => q.reduce<Scalar>((s, e) => add(s, term(e)), 0);
    const out = (c: Scalar[], ys: Scalar[]): Scalar => add(sum(c, (e) => mul(e, e)), sum(ys, (e) => mul(0.1, e)));
    const scanned = (th: Scalar[]): Scalar => {
      const a = th[th.length - 1];
      const body = (cr: Scalar[], x: Scalar): [Scalar[], Scalar] => {
        const next = step(cr, a, x);
        return [next, next[0]];
      };
      const [c, ys] = withXs ? scan(body, th.slice(0, carry), xs(th)) : scan((cr: Scalar[]) => body(cr, th[0]), th.slice(0, carry), N);
      return out(c as Scalar[], ys as Scalar[]);
    };
    const loop = (th: Scalar[]): Scalar => {
      const a = th[th.length - 1];
      let c = th.slice(0, carry);
      const ys: Scalar[] = [];
      for (const x of withXs ? xs(th) : Array.from({ length: N }, () => th[0])) {
        c = step(c, a, x);
        ys.push(c[0]);
      }
      return out(c, ys);
    };
    return { scanned, loop };
  };
  const derivatives = (f: (th: Scalar[]) => Scalar, th: number[], v: number[]): unknown[] => [
    jvp(f, th, v),
    hvp(f, th, v),
    jvp((x: Scalar[]) => grad(f, x), th, v),
  ];
  for (const [name, { step, carry }] of Object.entries(STEPS)) {
    for (const withXs of [true, false]) {
      it(`${name}, ${withXs ? "xs" : "a captured x"}: jvp, hvp, jvp∘grad, the interpreted sweep's numbers and the loop's, bit for bit`, () => {
        const { scanned, loop } = model(step, carry, withXs);
        const th = carry === 1 ? [0.3, 0.8] : [0.3, 0.5, 0.9];
        const v = th.map((_, i) => 0.5 - 0.3 * i);
        const calls = tangentStats.calls;
        const compiled = derivatives(scanned, th, v);
        // a run of iterations with one pattern of present tangents is one call of its compiled block
        expect(tangentStats.calls).toBeGreaterThan(calls);
        scanCode.enabled = false;
        const before = tangentStats.calls;
        const interpreted = derivatives(scanned, th, v);
        expect(tangentStats.calls).toBe(before);
        expectSame(compiled, interpreted);
        expectSame(compiled, derivatives(loop, th, v));
      });
    }
  }
  it("ys read at a few iterations only (seeds part way through the reverse sweep): hvp and jvp∘grad as the loop's, bit for bit", () => {
    const some = (ys: Scalar[]): Scalar => add(mul(ys[150], ys[150]), add(mul(0.5, ys[N - 3]), ys[2]));
    const step = ([y]: Scalar[], a: Scalar): Scalar[] => [add(mul(a, sin(y)), mul(0.1, y))];
    const scanned = (th: Scalar[]): Scalar => {
      const [c, ys] = scan((cr: Scalar[]) => {
        const next = step(cr, th[1]);
        return [next, next[0]];
      }, [th[0]], N);
      return add(some(ys as Scalar[]), (c as Scalar[])[0]);
    };
    const loop = (th: Scalar[]): Scalar => {
      let c = [th[0]];
      const ys: Scalar[] = [];
      for (let k = 0; k < N; k++) {
        c = step(c, th[1]);
        ys.push(c[0]);
      }
      return add(some(ys), c[0]);
    };
    const th = [0.4, 0.9];
    const v = [1, -0.5];
    expectSame(derivatives(scanned, th, v), derivatives(loop, th, v));
  });
  it("W5's chain at 10⁴ steps: hvp's forward sweeps are a few calls, not one per iteration", () => {
    const chain = (x: Scalar): Scalar => scan((y: Scalar): [Scalar] => [add(mul(0.9, y), mul(0.1, sin(y)))], x, LONG)[0];
    const chainLoop = (x: Scalar): Scalar => {
      let y = x;
      for (let i = 0; i < LONG; i++) y = add(mul(0.9, y), mul(0.1, sin(y)));
      return y;
    };
    const calls = tangentStats.calls;
    const h = hvp(chain, 0.3, 1);
    expect(tangentStats.calls - calls).toBeLessThanOrEqual(4);
    expectSame(h, hvp(chainLoop, 0.3, 1));
  });
});
