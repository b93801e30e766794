/**
 * Chains of elementwise operations in a jitted trace of tensors (and in scan bodies) run
 * as compiled loops (jit/chains.ts), the rest by the kernels between them: the kernels'
 * numbers to the bit (fusedCode off is the kernels alone), fewer buffers from the pool.
 */
import fc from "fast-check";
import ndarray from "ndarray";
import { afterEach, describe, expect, it } from "vitest";
import { poolStats } from "@wengert/ops";
import {
  abs, add, compileGrad, concat, exp, gather, grad, gt, jit, jvp, lt, mul, scan, shapeOf, sin, slice, square, sub, sum, tanh, traceOf, where,
  type Operand, type Scalar, type Tensor, type TensorArg,
} from "../../src/index.js";
import { fusedCode, fusedStats, planChains } from "../../src/jit/chains.js";
import { CODE } from "../../src/trace/opcodes.js";
import type { ChainCode } from "../../src/jit/chain-code.js";
import { rosenbrockTensor } from "../helpers/cases.js";
import { tensorChains } from "../helpers/programs/tensor-chains.js";
import { expectSame } from "../helpers/same-bits.js";
import { random, rng } from "../helpers/tensors.js";

afterEach(() => {
  fusedCode.enabled = true;
});

/** `make`'s function, made and first called (traced: the plan is made then) with compiled chains on or off, then at every point. */
function callAll(make: () => (x: never) => unknown, points: readonly unknown[], fused: boolean): { results: unknown[]; runs: number } {
  fusedCode.enabled = fused;
  const f = make();
  const before = fusedStats.runs;
  const results = points.map((x) => f(x as never));
  fusedCode.enabled = true;
  return { results, runs: fusedStats.runs - before };
}

describe("chains of elementwise operations compiled in jit's tensor replays", () => {
  it("property: random tensor programs, jit and compileGrad: compiled chains give the kernels' numbers, bit for bit", () => {
    let chained = 0;
    fc.assert(
      fc.property(tensorChains, fc.integer({ min: 1, max: 1e6 }), (chain, seed) => {
        const f = (p: { x: Tensor; W: Tensor }): Scalar => sum(tanh(chain.f(p.x as never, p.W as never)));
        const r = rng(seed);
        const points = Array.from({ length: 4 }, () => ({ x: ndarray(random(r, 12), [3, 4]), W: ndarray(random(r, 16, 0.7), [4, 4]) }));
        for (const make of [() => compileGrad(f), () => jit((p: { x: Tensor; W: Tensor }) => chain.f(p.x as never, p.W as never))]) {
          const fused = callAll(make, points, true);
          const kernels = callAll(make, points, false);
          expect(kernels.runs).toBe(0);
          chained += fused.runs;
          expectSame(fused.results, kernels.results);
        }
      }),
      { numRuns: 40, seed: 11 },
    );
    expect(chained).toBeGreaterThan(0);
  });

  it("W1's gradient: one compiled chain per replay (forward, sum and derivative in one loop), the kernels' numbers", () => {
    const r = rng(5);
    const points = Array.from({ length: 5 }, () => random(r, 1000));
    const fused = callAll(() => compileGrad(rosenbrockTensor), points, true);
    const kernels = callAll(() => compileGrad(rosenbrockTensor), points, false);
    // the first call traces (kernels); each of the 4 replays runs the one chain
    expect(fused.runs).toBe(4);
    expectSame(fused.results, kernels.results);
  });

  it("a replay takes two buffers from the pool (the seed's broadcast gone, the gradient handed over), where the kernels take one per operation", () => {
    const x = random(rng(6), 1000);
    const taken = (fused: boolean): number => {
      fusedCode.enabled = fused;
      const g = compileGrad(rosenbrockTensor);
      g(x);
      g(x);
      const before = poolStats.fresh + poolStats.reused;
      g(x);
      return poolStats.fresh + poolStats.reused - before;
    };
    expect(taken(true)).toBeLessThanOrEqual(2);
    expect(taken(false)).toBeGreaterThan(10);
  });

  it("a sum of a chain adds as the sum kernel does (in order, from 0): the same number where another order would differ", () => {
    // 1e16 + 1 + 1 … loses every 1 in order; pairwise or reversed sums would keep some
    const x = Float64Array.from({ length: 64 }, (_, i) => (i === 0 ? 1e16 : 1));
    const f = (v: Tensor): Scalar => sum(mul(v, 1));
    const fused = callAll(() => jit(f), [x, x], true);
    const kernels = callAll(() => jit(f), [x, x], false);
    expect(fused.runs).toBe(1);
    expectSame(fused.results, kernels.results);
    expect(fused.results[1]).toBe(x.reduce((s, e) => s + e, 0));
    expect(fused.results[1]).not.toBe([...x].reverse().reduce((s, e) => s + e, 0));
  });

  it("masks, concatenations, slices and −0: the kernels' numbers", () => {
    // a mask of concrete values, captured (one computed from traced values is a literal, and such a trace is not replayed)
    const mask = gt(Float64Array.of(1, -1, 0, 2, -3), 0);
    const f = (v: Tensor): Operand => {
      const n = shapeOf(v)[0];
      const m = where(mask, mul(v, -0), exp(v));
      return concat([slice(m, [1], [n]), mul(slice(v, [0], [1]), -1)], 0);
    };
    const points = [Float64Array.of(0.5, -0, 0, -2, 3), Float64Array.of(-1, 2, -0, 4, -5), Float64Array.of(0, 0, 1, 1, -1)];
    const fused = callAll(() => jit(f), points, true);
    const kernels = callAll(() => jit(f), points, false);
    expect(fused.runs).toBeGreaterThan(0);
    expectSame(fused.results, kernels.results);
  });

  it("a decision on a sum (a guard) and a kink checked for ties: each runs by the kernels and is checked; other points trace again", () => {
    const f = (v: Tensor): Scalar => (lt(sum(square(v)), 2) ? sum(abs(mul(v, 3))) : sum(exp(v)));
    const r = rng(8);
    const points = Array.from({ length: 12 }, () => random(r, 4));
    points.push(Float64Array.of(0, 0.5, 0.25, 0.1));
    const fused = callAll(() => compileGrad(f), points, true);
    const kernels = callAll(() => compileGrad(f), points, false);
    expect(fused.runs).toBeGreaterThan(0);
    expectSame(fused.results, kernels.results);
  });

  it("a scan body with a reduction runs its chains compiled around the sum kernel: the kernels' numbers", () => {
    const body = (y: TensorArg): Operand => add(mul(0.5, y), mul(sum(mul(y, y)) as Scalar, 0.01));
    const f = (x: TensorArg) => scan((y: Operand): [Operand] => [body(y as TensorArg)], x as Operand, 5)[0];
    const points = [Float64Array.of(0.1, 0.2, 0.3), Float64Array.of(0.4, -0.2, 0.3), Float64Array.of(1, 2, 3)];
    const fused = callAll(() => jit(f), points, true);
    const kernels = callAll(() => jit(f), points, false);
    expect(fused.runs).toBeGreaterThan(0);
    expectSame(fused.results, kernels.results);
  });
});

/** The compiled chains planned for f's trace at x (every instruction needed, the outputs kept). */
function chainsOf(f: (x: TensorArg) => unknown, x: Float64Array): ChainCode[] {
  const term = traceOf(f as never, x);
  const n = term.tape.length;
  const kept = new Uint8Array(n);
  for (const v of term.output.atoms) kept[v] = 1;
  return planChains(term.tape, { live: new Uint8Array(n).fill(1), kept }).filter((s): s is ChainCode => typeof s !== "number");
}

describe("the loops of a chain", () => {
  const n = 50;
  // a read one element back, at its own element and one ahead: kept three iterations
  const bothWays = (m: number) => (x: TensorArg) => {
    const a = sin(x);
    const back = concat([slice(x, [0], [1]), slice(a, [0], [m - 1])], 0);
    const ahead = concat([slice(a, [1], [m]), slice(x, [m - 1], [m])], 0);
    return add(add(ahead, mul(back, 3)), mul(a, a));
  };
  const points = [1, 2, 3].map((seed) => Float64Array.from({ length: n }, (_, i) => Math.sin(seed + 0.7 * i) - 0.2));

  it("values read one element back and others one element ahead are one loop: only the result is stored; the kernels' numbers", () => {
    // as a Runge–Kutta step's derivative reads its stages (back) and its cotangents (ahead)
    const f = (x: TensorArg) => {
      const a = mul(x, x);
      const back = concat([slice(x, [0], [1]), slice(a, [0], [n - 1])], 0);
      const c = mul(back, 3);
      const ahead = concat([slice(c, [1], [n]), slice(x, [n - 1], [n])], 0);
      return add(ahead, a);
    };
    const chains = chainsOf(f, points[0]);
    expect(chains.length).toBe(1);
    expect(chains[0].made.length).toBe(1);
    const fused = callAll(() => jit(f), points, true);
    const kernels = callAll(() => jit(f), points, false);
    expect(fused.runs).toBeGreaterThan(0);
    expectSame(fused.results, kernels.results);
  });

  it("a loop whose values are read from earlier iterations runs 4 iterations at once (its registers shifted once per block): the kernels' numbers at every length", () => {
    expect(chainsOf(bothWays(n), points[0])[0].source).toContain("i += 4");
    for (const m of [2, 3, 15, 16, 17, 18, 19, 20, 33]) {
      const at = [1, 2, 3].map((seed) => Float64Array.from({ length: m }, (_, i) => Math.sin(seed + 0.7 * i) - 0.2));
      const fused = callAll(() => jit(bothWays(m)), at, true);
      const kernels = callAll(() => jit(bothWays(m)), at, false);
      expectSame(fused.results, kernels.results);
    }
  });

  it("a chain on longer vectors has the same code (its bounds near the end are arguments): compiled once for every length, the kernels' numbers at each", () => {
    // a GradBench eval's sizes one after another: each length's first call ran fresh, unoptimised loops
    const lengths = [100, 400, 4000];
    const sources = lengths.map((m) => chainsOf(bothWays(m), Float64Array.from({ length: m }, (_, i) => Math.sin(0.7 * i)))[0].source);
    expect(sources[0]).toContain("i += 4");
    expect(sources[1]).toBe(sources[0]);
    expect(sources[2]).toBe(sources[0]);
    // the bounds near the start are written in (V8 then knows the counter's range); a short vector's all are
    expect(sources[0]).toContain("let i = 1;");
    expect(chainsOf(bothWays(40), Float64Array.from({ length: 40 }, (_, i) => Math.sin(0.7 * i)))[0].source).not.toContain("E[");
    for (const m of lengths) {
      const at = [1, 2].map((seed) => Float64Array.from({ length: m }, (_, i) => Math.sin(seed + 0.7 * i) - 0.2));
      const fused = callAll(() => jit(bothWays(m)), at, true);
      const kernels = callAll(() => jit(bothWays(m)), at, false);
      expect(fused.runs).toBeGreaterThan(0);
      expectSame(fused.results, kernels.results);
    }
  });

  it("a where's constant mask that changes twice is decided in the code (no element read); one that changes at every element is read", () => {
    const blocks = Float64Array.from({ length: n }, (_, i) => (i < 20 || i >= 40 ? 1 : 0));
    const alternating = Float64Array.from({ length: n }, (_, i) => i % 2);
    for (const [mask, read] of [[blocks, false], [alternating, true]] as const) {
      const f = (x: TensorArg) => add(where(mask, mul(x, 2), sin(x)), x);
      const [chain] = chainsOf(f, points[0]);
      expect(chain.source.includes("!== 0")).toBe(read);
      const fused = callAll(() => jit(f), points, true);
      const kernels = callAll(() => jit(f), points, false);
      expect(fused.runs).toBeGreaterThan(0);
      expectSame(fused.results, kernels.results);
    }
  });

  it("a value read far back (concatenated with itself, as the adjoint of slices of one product embeds one cotangent) reads its buffer, not registers", () => {
    // a's element i is read at i (the first half) and m iterations later (the second): registers up to 16 back, the buffer past
    const twice = (m: number) => (x: TensorArg) => {
      const a = sin(x);
      return add(concat([a, a], 0), concat([x, x], 0));
    };
    for (const m of [3, 16, 17, 40]) {
      const at = [1, 2, 3].map((seed) => Float64Array.from({ length: m }, (_, i) => Math.sin(seed + 0.7 * i) - 0.2));
      const [chain] = chainsOf(twice(m), at[0]);
      const registers = new Set(chain.source.match(/\br\d+_\d+\b/g)).size;
      // a's m + 1 registers (or one), and one each for the concatenations and the sum
      expect(registers, `m = ${m}`).toBe(m <= 16 ? m + 4 : 4);
      expect(chain.source.includes(`[i-${m}]`)).toBe(true);
      const fused = callAll(() => jit(twice(m)), at, true);
      const kernels = callAll(() => jit(twice(m)), at, false);
      expect(fused.runs).toBeGreaterThan(0);
      expectSame(fused.results, kernels.results);
    }
  });

  it("a value read once by a slice that is read twice is computed once per element (a Runge–Kutta stage's y + h/2·k)", () => {
    const f = (x: TensorArg) => {
      const s = slice(add(x, 1) as TensorArg, [0], [n - 1]);
      return concat([slice(x, [0], [1]), add(mul(s, 3), sin(s)) as TensorArg], 0);
    };
    const [chain] = chainsOf(f, points[0]);
    // the statement of the sum reads x + 1 made before it (written where each of its readers is, it was made twice)
    const sums = chain.source.split("\n").filter((line) => line.includes("sin("));
    expect(sums.length).toBeGreaterThan(0);
    for (const line of sums) expect(line).not.toContain(" + 1)");
    const fused = callAll(() => jit(f), points, true);
    const kernels = callAll(() => jit(f), points, false);
    expectSame(fused.results, kernels.results);
  });
});

describe("gathers of rows at traced positions in a chain", () => {
  // kmeans' cost and its Newton direction: rows of the centroids at each point's assignment
  const cost = (P: ndarray.NdArray, c: Tensor, at: Tensor): Scalar => sum(square(sub(gather(c, at), P)));
  const r = rng(21);
  const case_ = (inner: number) => {
    const P = ndarray(random(r, 30 * inner), [30, inner]);
    const points = [0, 1, 2].map(() => ({ c: ndarray(random(r, 4 * inner), [4, inner]), at: Float64Array.from({ length: 30 }, () => Math.floor(4 * r())) }));
    return { P, points };
  };

  it.each([8, 16, 3])("rows of %i: the gather is read in the loop (never stored), the scatters of its derivative added in it, the kernels' numbers", (inner) => {
    const { P, points } = case_(inner);
    const ones = ndarray(new Float64Array(4 * inner).fill(1), [4, inner]);
    const value = () => jit((x: { c: Tensor; at: Tensor }) => cost(P, x.c, x.at));
    const dir = () =>
      jit((x: { c: Tensor; at: Tensor }) => jvp((c: Tensor) => grad((c2: Tensor) => cost(P, c2, x.at), c), x.c, ones));
    for (const make of [value, dir]) {
      const fused = callAll(make, points, true);
      const kernels = callAll(make, points, false);
      expect(fused.runs).toBeGreaterThan(0);
      expectSame(fused.results, kernels.results);
    }
    const term = traceOf((x: { c: Tensor; at: Tensor }) => cost(P, x.c, x.at), points[0]);
    const n = term.tape.length;
    const kept = new Uint8Array(n);
    for (const v of term.output.atoms) kept[v] = 1;
    const steps = planChains(term.tape, { live: new Uint8Array(n).fill(1), kept });
    // one chain: the gather, sub, square and sum, nothing stored
    const chains = steps.filter((s): s is ChainCode => typeof s !== "number");
    expect(chains.length).toBe(1);
    expect(chains[0].made.length).toBe(0);
    expect(chains[0].source).toContain(`positions("gatherAt"`);
    // by rows: each row's place in the centroids found once per row (no shift or division per element)
    expect(chains[0].source).toMatch(/for \(let w = 0; i < \d+; w\+\+\)/);
    expect(chains[0].source).not.toMatch(/>> \d|\/ \d+ \|/);
    // the direction's scatters are sinks of the chain that computes their values: no kernel runs a gather or a scatter
    const dirTerm = traceOf((x: { c: Tensor; at: Tensor }) => jvp((c: Tensor) => grad((c2: Tensor) => cost(P, c2, x.at), c), x.c, ones), points[0]);
    const m = dirTerm.tape.length;
    const keptDir = new Uint8Array(m);
    for (const v of dirTerm.output.atoms) keptDir[v] = 1;
    const dirSteps = planChains(dirTerm.tape, { live: new Uint8Array(m).fill(1), kept: keptDir });
    const byKernels = dirSteps.filter((s): s is number => typeof s === "number").map((v) => dirTerm.tape.op[v]);
    expect(byKernels).not.toContain(CODE.gatherAt);
    expect(byKernels).not.toContain(CODE.scatterAddAt);
    expect(dirSteps.some((s) => typeof s !== "number" && s.source.includes("] += ") && s.source.includes("let w = 0"))).toBe(true);
  });

  it("a gather read at an offset (a slice of its rows) runs element by element, the kernels' numbers", () => {
    const inner = 8;
    const { P, points } = case_(inner);
    // rows 1… of the gathered rows, less rows 0… of the points: the gather's element i + inner at element i
    const shifted = (c: Tensor, at: Tensor): Scalar => sum(square(sub(slice(gather(c, at), [1, 0], [30, inner]), slice(P, [0, 0], [29, inner]))));
    const make = () => jit((x: { c: Tensor; at: Tensor }) => shifted(x.c, x.at));
    const fused = callAll(make, points, true);
    const kernels = callAll(make, points, false);
    expect(fused.runs).toBeGreaterThan(0);
    expectSame(fused.results, kernels.results);
    const term = traceOf((x: { c: Tensor; at: Tensor }) => shifted(x.c, x.at), points[0]);
    const n = term.tape.length;
    const kept = new Uint8Array(n);
    for (const v of term.output.atoms) kept[v] = 1;
    const sources = planChains(term.tape, { live: new Uint8Array(n).fill(1), kept })
      .filter((s): s is ChainCode => typeof s !== "number")
      .map((c) => c.source);
    expect(sources.some((s) => s.includes(`positions("gatherAt"`) && !s.includes("let w = 0"))).toBe(true);
  });

  it("refuses positions outside the source's rows, as the kernel does", () => {
    const { P, points } = case_(8);
    const f = jit((x: { c: Tensor; at: Tensor }) => cost(P, x.c, x.at));
    f(points[0]);
    f(points[1]);
    const bad = { c: points[0].c, at: Float64Array.from(points[0].at, (v, i) => (i === 7 ? 4 : v)) };
    expect(() => f(bad)).toThrow(/gatherAt: index 4 \(position 7\)/);
  });
});
