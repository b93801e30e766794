/**
 * The compiled replay (jit/): loop re-rolling is exact (unroll ∘ reroll = id) and compact
 * (code size independent of the loop count, counted), the JavaScript emitter computes
 * what the kernels and predicates compute, and compiled gradients are grad's numbers to
 * the bit (toEqual tells −0 from 0) on every primitive and on random programs with loops
 * and branches.
 */
import fc from "fast-check";
import { BINARY_NAMES, binaryOps, PREDICATE_NAMES, predicates, UNARY_NAMES, unaryOps } from "@wengert/ops";
import { describe, expect, it, vi } from "vitest";
import * as api from "../../src/index.js";
import { abs, add, compileGrad, cos, div, exp, grad, gt, hessian, hvp, jit, lt, mul, sin, square, sub, tanh, traceOf, valueAndGrad, type Scalar } from "../../src/index.js";
import { trace } from "../../src/api/tracing.js";
import { compileReplay } from "../../src/jit/gradient.js";
import { compileForward } from "../../src/jit/forward.js";
import { KERNELS } from "../../src/trace/opcodes.js";
import { COMPARISON, javascript, literal } from "../../src/jit/javascript.js";
import { rosenbrock as rosen } from "../helpers/cases.js";
import { loops } from "../helpers/programs/generate.js";
import { pick, TABLE } from "../helpers/programs/ops.js";
import { firstOf } from "../helpers/programs/run.js";
import { pieces, unrolled, type Piece } from "../helpers/programs/statements.js";
import { codeSize, MIN_COUNT, reroll, Shapes, Statements, unroll, type Node, type Stmt } from "../../src/jit/reroll.js";

/** A compileGrad that has been called often enough to run compiled code. */
function hot<P>(f: (x: P) => Scalar, x: api.Like<P>, options?: api.RdOptions): api.CompiledGrad<P> {
  const g = compileGrad(f, options);
  for (let k = 0; k < 4; k++) g(x);
  expect(g.stats.compiled).toBeGreaterThan(0);
  return g;
}

describe("reroll", () => {
  const stmts = (...shapes: number[]) => shapes.map((shape) => ({ shape, back: 1 }));
  /** Each statement defines the next variable and reads a recent one and an input: indices move like a trace's. */
  function statements(ps: readonly Piece[], shapes: Shapes): Stmt[] {
    const out: Stmt[] = [];
    let next = 100;
    let input = 0;
    unrolled(ps, ({ shape }) => out.push({ kind: "stmt", sig: shapes.of(`s${shape}`), idx: [next++, next - 2, shape === 0 ? input++ : 7] }));
    return out;
  }

  it("unroll(reroll(xs)) = xs on random nested loops", () => {
    fc.assert(
      fc.property(pieces({ shapes: 4, count: 6, depth: 3 }), (ps) => {
        const shapes = new Shapes();
        const xs = statements(ps, shapes);
        const rolled = reroll(xs, shapes, 64);
        expect(unroll(rolled)).toEqual(xs);
        expect(codeSize(rolled)).toBeLessThanOrEqual(xs.length);
        // the same from statements in columns (how compileReplay writes them down)
        expect(reroll(Statements.of(xs), shapes, 64)).toEqual(rolled);
      }),
      { numRuns: 300, seed: 3 },
    );
  });

  it("a loop of any length rolls to its body; nested loops to nested loops", () => {
    const shapes = new Shapes();
    const body = (n: number): Stmt[] => statements([{ loop: true, count: n, body: [{ loop: false, stmts: stmts(0, 1, 2, 1) }] }], shapes);
    for (const n of [MIN_COUNT, 10, 1000, 100000]) {
      const rolled = reroll(body(n), shapes);
      expect(rolled).toHaveLength(1);
      expect(codeSize(rolled)).toBe(4);
    }
    // fewer repetitions stay written out (cheaper than a loop's entry and exit)
    expect(codeSize(reroll(body(MIN_COUNT - 1), shapes))).toBe(4 * (MIN_COUNT - 1));
    // from columns, a statement becomes an object only if the code keeps it (counted)
    const columns = Statements.of(body(100000));
    const node = vi.spyOn(columns, "node");
    expect(codeSize(reroll(columns, shapes))).toBe(4);
    expect(node.mock.calls.length).toBe(4);
    const nested = statements(
      [
        {
          loop: true,
          count: 50,
          body: [
            { loop: false, stmts: stmts(1, 2) },
            { loop: true, count: 20, body: [{ loop: false, stmts: stmts(3, 1) }] },
          ],
        },
      ],
      shapes,
    );
    const rolled = reroll(nested, shapes);
    expect(codeSize(rolled)).toBe(4);
    expect((rolled[0] as Extract<Node, { kind: "loop" }>).count).toBe(50);
    expect(unroll(rolled)).toEqual(nested);
  });
});

describe("the JavaScript emitter", () => {
  it("literals read back as the same double", () => {
    for (const c of [0, -0, 1, -5, 0.1, 1e-300, -1e300, 5e-324, Math.PI, NaN, Infinity, -Infinity]) {
      expect(Object.is(new Function(`return ${literal(c)};`)(), c)).toBe(true);
    }
  });

  it("comparison operators decide as the predicates do", () => {
    const values = [-1, 0, -0, 1, NaN, Infinity];
    for (const name of PREDICATE_NAMES) {
      const test = new Function("a", "b", `return a ${COMPARISON[name]} b;`) as (a: number, b: number) => boolean;
      for (const a of values) for (const b of values) expect(test(a, b)).toBe(predicates[name].test(a, b));
    }
  });

  it("every primitive's expression computes its kernel (to the bit)", () => {
    const points = [-2.5, -1, -0.3, 0, 0.4, 0.9, 1.7, 3];
    for (const name of UNARY_NAMES) {
      const f = new Function("K", "x", `return ${javascript[name]("x")};`);
      const K = KERNELS;
      for (const x of points)
        expect(Object.is(f(K, x), unaryOps[name].forward(x)) || (Number.isNaN(f(K, x)) && Number.isNaN(unaryOps[name].forward(x)))).toBe(true);
    }
    for (const name of BINARY_NAMES) {
      const f = new Function("K", "a", "b", `return ${javascript[name]("a", "b")};`);
      const K = KERNELS;
      for (const a of points) for (const b of points) {
        const want = binaryOps[name].forward(a, b);
        const got = f(K, a, b);
        expect(Object.is(got, want) || (Number.isNaN(got) && Number.isNaN(want))).toBe(true);
      }
    }
  });
});

describe("compiled gradients = grad, to the bit", () => {
  const unaryDomain: Partial<Record<string, [number, number]>> = {
    log: [0.1, 3],
    sqrt: [0.1, 3],
    asin: [-0.9, 0.9],
    acos: [-0.9, 0.9],
    safeLog: [0.1, 3],
    log1p: [-0.5, 3],
  };
  it.each(UNARY_NAMES.filter((n) => n !== "sign"))("%s, through a loop of 30 steps", (name) => {
    const op = (api as unknown as Record<string, (x: Scalar) => Scalar>)[name];
    const [lo, hi] = unaryDomain[name] ?? [-1.5, 1.5];
    // y_{k+1} = y_k + 0.01·op(x_j): the op's rule meets the loop's re-rolled code
    const f = (x: readonly Scalar[]): Scalar => {
      let y: Scalar = 0;
      for (let k = 0; k < 30; k++) y = add(y, mul(0.01, op(x[k % x.length])));
      return y;
    };
    const xs = [lo + 0.3 * (hi - lo), lo + 0.7 * (hi - lo), lo + 0.5 * (hi - lo)];
    const g = hot(f, xs, { ties: "ignore" });
    fc.assert(
      fc.property(fc.array(fc.double({ min: lo, max: hi, noNaN: true }), { minLength: 3, maxLength: 3 }), (x) => {
        expect(g(x)).toEqual(grad(f, x, { ties: "ignore" }));
      }),
      { numRuns: 25, seed: 11 },
    );
  });

  it.each(BINARY_NAMES)("%s, through a loop of 30 steps", (name) => {
    const op = (api as unknown as Record<string, (a: Scalar, b: Scalar) => Scalar>)[name];
    const f = (x: readonly Scalar[]): Scalar => {
      let y: Scalar = 0;
      for (let k = 0; k < 30; k++) y = add(y, mul(0.01, op(x[k % 2], x[2])));
      return y;
    };
    const g = hot(f, [0.7, 1.3, 0.9]);
    fc.assert(
      fc.property(fc.array(fc.double({ min: 0.2, max: 2, noNaN: true }), { minLength: 3, maxLength: 3 }), (x) => {
        expect(g(x)).toEqual(grad(f, x));
      }),
      { numRuns: 25, seed: 12 },
    );
  });

  it("random programs: loops whose trip counts and branches depend on the point", () => {
    const programs = loops({ ops: [...pick("sin", "cos", "tanh", "square", "exp02"), ...TABLE], length: [1, 5], reach: 6, recent: true, branches: true, trips: 40 });
    fc.assert(
      fc.property(
        programs,
        fc.array(fc.double({ min: -2, max: 2, noNaN: true }), { minLength: 2, maxLength: 2 }),
        fc.array(fc.array(fc.double({ min: -2, max: 2, noNaN: true }), { minLength: 2, maxLength: 2 }), { minLength: 4, maxLength: 4 }),
        (prog, x0, points) => {
          const f = firstOf(prog);
          const g = compileGrad(f, { ties: "ignore" });
          // the same point first (compiled after two replays), then others: replayed where the guards hold;
          // the gradient alone and with the value are compiled apart (the value's chain only in the latter)
          for (const x of [x0, x0, x0, x0, ...points, x0]) {
            expect(g(x)).toEqual(grad(f, x, { ties: "ignore" }));
            expect(g.valueAndGrad(x)).toEqual(valueAndGrad(f, x, { ties: "ignore" }));
          }
          expect(g.stats.compiled).toBeGreaterThan(0);
        },
      ),
      { numRuns: 120, seed: 5 },
    );
  });

  it("a guard that fails in compiled code means a new trace; a kink on replay is reported again", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const f = (x: readonly Scalar[]): Scalar => {
      let s: Scalar = 0;
      for (let i = 0; i < x.length; i++) s = add(s, lt(x[i], 0) ? mul(x[i], x[i]) : abs(sin(x[i])));
      return s;
    };
    const x = [0.5, -0.5, 1, 2, -3, 0.25, 1.5, -1];
    const g = hot(f, x);
    const traces = g.stats.traces;
    const y = [...x];
    y[3] = -2;
    expect(g(y)).toEqual(grad(f, y));
    expect(g.stats.traces).toBe(traces + 1);
    // abs at its kink: traced again, and the tie reported
    const z = [...x];
    z[0] = 0;
    warn.mockClear();
    expect(g(z)).toEqual(grad(f, z));
    expect(warn).toHaveBeenCalled();
    warn.mockRestore();
  });
});

describe("compiled code size is counted, not timed", () => {
  const stats = (f: (x: readonly Scalar[]) => Scalar, x: readonly number[]) => {
    const t = trace("test", f as never, x, {}, "replay");
    return compileReplay(t.term, t.trace.guards, true)!.stats;
  };

  it("rosenbrock: the same code at n = 100 and n = 10^4", () => {
    const small = stats(rosen, Array.from({ length: 100 }, (_, i) => 0.5 * Math.cos(i)));
    const large = stats(rosen, Array.from({ length: 10000 }, (_, i) => 0.5 * Math.cos(i)));
    expect(large).toEqual(small);
    expect(small.forward + small.reverse).toBeLessThan(120);
  });

  it("a 10^5-step chain compiles to a loop (no stack overflow) and gives grad's derivative", () => {
    const N = 100000;
    const chain = (x: readonly Scalar[]): Scalar => {
      let y: Scalar = x[0];
      for (let i = 0; i < N; i++) y = add(mul(0.9, y), mul(0.1, sin(y)));
      return y;
    };
    const s = stats(chain, [0.3]);
    expect(s.forward + s.reverse).toBeLessThan(30);
    const g = hot(chain, [0.3]);
    expect(g([0.4])).toEqual(grad(chain, [0.4]));
  });

  it("a cheap function of an input is computed again where it is read, and a value read once where it is read: rosenbrock's hvp is one loop storing its output alone", () => {
    const x = Array.from({ length: 200 }, (_, i) => 0.5 * Math.cos(i));
    const v = x.map((_, i) => Math.sin(i));
    const f = ([p, w]: [Scalar[], Scalar[]]) => hvp(rosen, p, w);
    const t = trace("test", f as never, [x, v], { ties: "ignore" }, "evaluate");
    const { source } = compileForward(t.term, t.trace.guards, true, t.term.output.atoms, [x, v])!;
    const loops = [...source.join("\n").matchAll(/for \(let r0[^{]*\{\n([^}]*)\n\}/g)].map((m) => m[1]);
    // the primal's t_i, the gradient's cotangents and their tangents each sunk to the one
    // statement reading it (jit/schedule.ts): the four loops the sweeps' order gives, fused
    expect(loops.length).toBe(1);
    // 2x and −v (a square's and a product's rule on inputs) are not stored either
    for (const body of loops) expect(body.match(/^v\[[^\]]*\] = /gm) ?? []).toHaveLength(1);
    // and the numbers are hvp's, compiled
    const j = jit(f);
    for (let k = 0; k < 4; k++) expect(j([x.map((t) => t + k / 3), v])).toEqual(hvp(rosen, x.map((t) => t + k / 3), v));
    expect(j.stats.compiled).toBe(1);
  });

  it("a dense Hessian into the caller's buffer: its entries written there by the code that computes them, none copied out of v after it", () => {
    const n = 30;
    const x = Array.from({ length: n }, (_, i) => 0.5 * Math.cos(i));
    const f = (p: Scalar[]) => hessian(rosen, p);
    const t = trace("test", f as never, x, { ties: "ignore" }, "evaluate");
    const outputs = t.term.output.atoms;
    const into = compileForward(t.term, t.trace.guards, true, outputs, [x], { kind: "into", rows: Array(n).fill(n) })!;
    // before: 3n − 2 entries (the tridiagonal's) read from v one by one
    expect(into.copied).toBe(0);
    const dest = new Float64Array(n * n).fill(7);
    expect(into.replay([x], dest)).toBe(dest);
    expect(Array.from(dest)).toEqual((hessian(rosen, x) as number[][]).flat());
  });

  it("into, outputs placed in the caller's array beside one repeated (kept in v, written after the code): the numbers of f, −0 and NaN too", () => {
    const n = 40;
    const x = Array.from({ length: n }, (_, i) => 0.5 * Math.cos(i));
    // sin(x0) twice among the outputs: not placed, where the others are
    const f = (p: Scalar[]) => {
      const s = p.map((t) => sin(t));
      return [...s, s[0]];
    };
    const t = trace("test", f as never, x, { ties: "ignore" }, "evaluate");
    const outputs = t.term.output.atoms;
    expect(outputs[0]).toBe(outputs[n]);
    const into = compileForward(t.term, t.trace.guards, true, outputs, [x], { kind: "into", rows: null })!;
    expect(into.copied).toBe(0);
    for (const at of [x, x.map((v) => -v), [-0, ...x.slice(1)], x.map((v, i) => (i % 3 === 0 ? Infinity : v))]) {
      const dest = new Float64Array(n + 1).fill(7);
      expect(Array.from(into.replay([at], dest) as Float64Array)).toEqual(f(at as never));
    }
  });

  it("traceOf's tape and the compiled replay agree on the value", () => {
    const x = [0.1, 0.2, 0.3, 0.4];
    const g = hot(rosen, x);
    expect(g.valueAndGrad(x)[0]).toBe(traceOf(rosen, x).evaluate(x));
  });
});
