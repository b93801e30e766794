/**
 * The GradBench adapter on recorded message sequences: a whole `hello` session, the
 * protocol's edge cases (unknown module and function, a function or an input that
 * fails, the min_runs/min_seconds loop, unknown message kinds, lines that are not
 * JSON, a line of a million numbers read in small chunks), and the bin itself as a
 * child process (stdout holds the answers and nothing else; it exits when stdin
 * closes).
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import ndarray from "ndarray";
import { describe, expect, it } from "vitest";
import { defineFunction } from "../src/gradbench/define.js";
import { jsonable } from "../src/gradbench/json.js";
import type { EvalModule } from "../src/gradbench/module.js";
import { modules } from "../src/gradbench/modules/index.js";
import { linesOf, respond, runsOf, serve, type Registry, type ServeOptions } from "../src/gradbench/protocol.js";

type Answer = Record<string, unknown> & { id: unknown; timings?: { name: string; nanoseconds: number }[] };

/** Feed `messages` (objects or raw lines) to `serve` and collect the parsed answers. */
async function session(messages: readonly (object | string)[], registry: Registry = modules, options: ServeOptions = {}): Promise<Answer[]> {
  const lines = messages.map((m) => (typeof m === "string" ? m : JSON.stringify(m)));
  const out: string[] = [];
  async function* feed() {
    yield* lines;
  }
  await serve(feed(), (line) => out.push(line), registry, options);
  for (const line of out) expect(line).not.toContain("\n");
  return out.map((line) => JSON.parse(line) as Answer);
}

const evaluateTimings = (a: Answer) => (a.timings ?? []).filter((t) => t.name === "evaluate");

/** A clock that advances `step` nanoseconds at each reading. */
function fakeClock(step: bigint): () => bigint {
  let now = 0n;
  return () => (now += step);
}

let calls = 0;
const fake: EvalModule = {
  ok: defineFunction({ run: (x: unknown) => (calls++, { echo: x, v: new Float64Array([1, 2]) }) }),
  boom: defineFunction({
    run: () => {
      throw new RangeError("boom: the function failed");
    },
  }),
  badPrepare: defineFunction({
    prepare: (): number => {
      throw new TypeError("cannot prepare this input");
    },
    run: (x: number) => x,
  }),
  nothing: defineFunction({ run: () => undefined }),
};

describe("a recorded hello session", () => {
  it("answers start, define, evaluate and analysis in order, one line each", async () => {
    const answers = await session([
      { id: 0, kind: "start", eval: "hello" },
      { id: 1, kind: "define", module: "hello" },
      { id: 2, kind: "evaluate", module: "hello", function: "square", input: 1.0 },
      { id: 3, kind: "analysis", of: 2, valid: true },
      { id: 4, kind: "evaluate", module: "hello", function: "double", input: 1.0 },
      { id: 5, kind: "analysis", of: 4, valid: true },
      { id: 6, kind: "evaluate", module: "hello", function: "square", input: 2.0 },
      { id: 7, kind: "analysis", of: 6, valid: true },
      { id: 8, kind: "evaluate", module: "hello", function: "double", input: 4.0 },
      { id: 9, kind: "analysis", of: 8, valid: false, error: "wrong" },
    ]);
    expect(answers.map((a) => a.id)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(answers[0]).toEqual({ id: 0, tool: "wengert" });
    // hello's functions are warmed up at define, timed as one "warm up" timing
    expect(answers[1]).toMatchObject({ id: 1, success: true });
    expect((answers[1].timings ?? []).map((t) => t.name)).toEqual(["warm up"]);
    expect([answers[2].output, answers[4].output, answers[6].output, answers[8].output]).toEqual([1, 2, 4, 8]);
    for (const i of [2, 4, 6, 8]) {
      expect(answers[i].success).toBe(true);
      expect(answers[i].error).toBeUndefined();
      // hello's inputs have no min_runs: one run, one "evaluate" timing, integer nanoseconds
      const t = evaluateTimings(answers[i]);
      expect(t).toHaveLength(1);
      expect(Number.isInteger(t[0].nanoseconds) && t[0].nanoseconds >= 0).toBe(true);
    }
    for (const i of [3, 5, 7, 9]) expect(answers[i]).toEqual({ id: i });
  });
});

describe("warm-up at define", () => {
  it("runs the functions on their warm-up inputs a round at a time, in the module's order, before any timed run", async () => {
    const seen: string[] = [];
    const warmed: EvalModule = {
      a: defineFunction({ run: (x: number) => (seen.push(`a${x}`), x), warmUp: { input: (r) => r, rounds: 3 } }),
      cold: defineFunction({ run: (x: number) => (seen.push(`c${x}`), x) }),
      b: defineFunction({ prepare: (x) => 10 * (x as number), run: (x: number) => (seen.push(`b${x}`), x), warmUp: { input: (r) => r, rounds: 2 } }),
    };
    const [d, e] = await session(
      [
        { id: 0, kind: "define", module: "m" },
        { id: 1, kind: "evaluate", module: "m", function: "cold", input: 7 },
      ],
      { m: warmed },
      { clock: fakeClock(5n) },
    );
    expect(seen).toEqual(["a0", "b0", "a1", "b10", "a2", "c7"]);
    expect(d).toMatchObject({ id: 0, success: true });
    expect(d.timings).toHaveLength(1);
    expect(d.timings![0].name).toBe("warm up");
    expect(d.timings![0].nanoseconds).toBeGreaterThan(0);
    expect(e).toMatchObject({ id: 1, success: true, output: 7 });
  });

  it("a module without warm-up inputs answers define with no timings", async () => {
    const [d] = await session([{ id: 0, kind: "define", module: "lse" }]);
    expect(d).toEqual({ id: 0, success: true });
  });

  it("a function that fails its warm-up fails define, naming the function and the round", async () => {
    const failing: EvalModule = {
      f: defineFunction({
        run: (x: number) => {
          if (x === 2) throw new RangeError("no square root of that");
          return x;
        },
        warmUp: { input: (r) => r, rounds: 5 },
      }),
    };
    const [d] = await session([{ id: 3, kind: "define", module: "m" }], { m: failing });
    expect(d.success).toBe(false);
    expect(d.error).toMatch(/warming up f \(round 2\): RangeError: no square root of that/);
  });
});

describe("protocol edge cases", () => {
  it("define of an unknown module answers success: false, and evaluating it too", async () => {
    const [d, e, known] = await session([
      { id: 0, kind: "define", module: "enzyme" },
      { id: 1, kind: "evaluate", module: "enzyme", function: "primal", input: {} },
      { id: 2, kind: "define", module: "lse" },
    ]);
    expect(d.success).toBe(false);
    expect(d.error).toMatch(/no module "enzyme"/);
    expect(e.success).toBe(false);
    expect(e.error).toMatch(/no module "enzyme"/);
    expect(known).toEqual({ id: 2, success: true });
  });

  it("does not mistake Object.prototype's names for modules or functions", async () => {
    const [d, e] = await session([
      { id: 0, kind: "define", module: "constructor" },
      { id: 1, kind: "evaluate", module: "lse", function: "toString", input: { x: [1] } },
    ]);
    expect(d.success).toBe(false);
    expect(e.success).toBe(false);
    expect(e.error).toMatch(/no function "toString"/);
  });

  it("an unknown function of a known module answers success: false", async () => {
    const [a] = await session([{ id: 7, kind: "evaluate", module: "lse", function: "hessian", input: { x: [1, 2] } }]);
    expect(a).toMatchObject({ id: 7, success: false });
    expect(a.error).toMatch(/no function "hessian"/);
  });

  it("a function that throws answers success: false with its message, and the session goes on", async () => {
    const answers = await session(
      [
        { id: 0, kind: "evaluate", module: "fake", function: "boom", input: { min_runs: 3 } },
        { id: 1, kind: "evaluate", module: "fake", function: "badPrepare", input: 1 },
        { id: 2, kind: "evaluate", module: "fake", function: "ok", input: 5 },
      ],
      { fake },
    );
    expect(answers[0]).toMatchObject({ id: 0, success: false });
    expect(answers[0].error).toMatch(/^RangeError: boom: the function failed/);
    expect(answers[0].output).toBeUndefined();
    expect(answers[1]).toMatchObject({ id: 1, success: false });
    expect(answers[1].error).toMatch(/TypeError: cannot prepare this input/);
    expect(answers[2]).toMatchObject({ id: 2, success: true, output: { echo: 5, v: [1, 2] } });
  });

  it("a malformed input of a real module answers success: false naming the field", async () => {
    const answers = await session([
      { id: 0, kind: "evaluate", module: "lse", function: "gradient", input: { x: [1, "two", 3] } },
      { id: 1, kind: "evaluate", module: "det", function: "primal", input: { A: [1, 2, 3], ell: 2 } },
      { id: 2, kind: "evaluate", module: "kmeans", function: "cost", input: { points: [[1, 2]] } },
    ]);
    expect(answers.map((a) => a.success)).toEqual([false, false, false]);
    expect(answers[0].error).toMatch(/x\[1\] is string "two"; expected a number/);
    expect(answers[1].error).toMatch(/A has 3 elements; expected ell² = 4/);
    expect(answers[2].error).toMatch(/no field "centroids"/);
  });

  it("a function returning nothing still answers with an output (null)", async () => {
    const [a] = await session([{ id: 0, kind: "evaluate", module: "fake", function: "nothing", input: 0 }], { fake });
    expect(a).toMatchObject({ id: 0, success: true, output: null });
  });

  it("unknown message kinds, analysis and blank lines", async () => {
    const answers = await session([
      "",
      { id: 0, kind: "end" },
      "   ",
      { id: 1, kind: "frobnicate", payload: [1, 2] },
      { id: 2, kind: "analysis", of: 1, valid: true },
    ]);
    expect(answers).toEqual([{ id: 0 }, { id: 1 }, { id: 2 }]);
  });

  it("a line that is not a JSON object answers success: false with id null", async () => {
    const answers = await session(["{not json", "[1, 2]", { id: 3, kind: "start" }]);
    expect(answers[0]).toMatchObject({ id: null, success: false });
    expect(answers[0].error).toMatch(/cannot read the message/);
    expect(answers[1]).toMatchObject({ id: null, success: false });
    expect(answers[2]).toEqual({ id: 3, tool: "wengert" });
  });
});

describe("the min_runs / min_seconds loop", () => {
  it("reads min_runs, min_seconds (and older evals' runs) with safe defaults", () => {
    expect(runsOf(3.5)).toEqual({ minRuns: 1, minSeconds: 0 });
    expect(runsOf({ x: [1] })).toEqual({ minRuns: 1, minSeconds: 0 });
    expect(runsOf({ min_runs: 4, min_seconds: 0.5 })).toEqual({ minRuns: 4, minSeconds: 0.5 });
    expect(runsOf({ runs: 3 })).toEqual({ minRuns: 3, minSeconds: 0 });
    expect(runsOf({ min_runs: 0, min_seconds: -1 })).toEqual({ minRuns: 1, minSeconds: 0 });
    expect(runsOf({ min_runs: "5", min_seconds: "1" })).toEqual({ minRuns: 1, minSeconds: 0 });
  });

  it("runs until both are met, one evaluate timing per run, timing the function only", async () => {
    // every clock reading advances 10 ms: each run (and the prepare) measures 10 ms
    const clock = fakeClock(10_000_000n);
    calls = 0;
    const answers = await session(
      [
        { id: 0, kind: "evaluate", module: "fake", function: "ok", input: { min_runs: 2, min_seconds: 0.035 } },
        { id: 1, kind: "evaluate", module: "fake", function: "ok", input: { min_runs: 5, min_seconds: 0.001 } },
        { id: 2, kind: "evaluate", module: "fake", function: "ok", input: { min_runs: 1, min_seconds: 0 } },
        { id: 3, kind: "evaluate", module: "fake", function: "ok", input: { runs: 3 } },
        { id: 4, kind: "evaluate", module: "fake", function: "ok", input: { min_runs: 1, min_seconds: 0.04 } },
      ],
      { fake },
      { clock },
    );
    // 0.035 s needs 4 runs of 10 ms; 5 runs are needed anyway; 1; 3; exactly 0.04 s in 4 runs
    expect(answers.map((a) => evaluateTimings(a).length)).toEqual([4, 5, 1, 3, 4]);
    expect(calls).toBe(4 + 5 + 1 + 3 + 4);
    for (const a of answers) {
      expect(a.success).toBe(true);
      expect(evaluateTimings(a).every((t) => t.nanoseconds === 10_000_000)).toBe(true);
      // the one "prepare" timing comes first; GradBench counts only "evaluate"
      expect(a.timings![0]).toEqual({ name: "prepare", nanoseconds: 10_000_000 });
      expect(a.timings!.filter((t) => t.name === "prepare")).toHaveLength(1);
    }
  });

  it("with the real clock, min_seconds is met by the sum of the runs' times", async () => {
    const busy: EvalModule = {
      spin: defineFunction({
        run: () => {
          const t = process.hrtime.bigint();
          while (process.hrtime.bigint() - t < 2_000_000n);
          return 1;
        },
      }),
    };
    const [a] = await session([{ id: 0, kind: "evaluate", module: "busy", function: "spin", input: { min_runs: 1, min_seconds: 0.02 } }], { busy });
    const t = evaluateTimings(a);
    // met, and by the last run only (how many runs that takes depends on the machine's load:
    // a preempted 2 ms spin can take 20 ms)
    const total = t.reduce((s, x) => s + x.nanoseconds, 0);
    expect(total).toBeGreaterThanOrEqual(20_000_000);
    expect(total - t[t.length - 1].nanoseconds).toBeLessThan(20_000_000);
    expect(t.every((x) => Number.isInteger(x.nanoseconds) && x.nanoseconds >= 2_000_000)).toBe(true);
  });
});

describe("outputs as JSON", () => {
  it("typed arrays become arrays, ndarrays nested arrays (row-major, through strides), NaN null", () => {
    const m = ndarray(new Float64Array([1, 2, 3, 4, 5, 6]), [2, 3]);
    expect(jsonable(m)).toEqual([
      [1, 2, 3],
      [4, 5, 6],
    ]);
    expect(jsonable(m.transpose(1, 0))).toEqual([
      [1, 4],
      [2, 5],
      [3, 6],
    ]);
    expect(jsonable({ a: new Float64Array([1, NaN, Infinity]), b: [2, { c: new Int32Array([3]) }], s: "x", n: null })).toEqual({
      a: [1, null, null],
      b: [2, { c: [3] }],
      s: "x",
      n: null,
    });
  });
});

describe("huge lines", () => {
  it("a million numbers on one line, arriving in 64 KiB chunks, are one message", async () => {
    const n = 1_000_000;
    const x = Array.from({ length: n }, (_, i) => ((i * 7919) % 1000) / 1000);
    const big = JSON.stringify({ id: 1, kind: "evaluate", module: "lse", function: "primal", input: { x, min_runs: 1, min_seconds: 0 } });
    expect(big.length).toBeGreaterThan(5_000_000);
    const text = `${JSON.stringify({ id: 0, kind: "define", module: "lse" })}\n${big}\n${JSON.stringify({ id: 2, kind: "start" })}\n`;
    const chunks: string[] = [];
    for (let i = 0; i < text.length; i += 65536) chunks.push(text.slice(i, i + 65536));
    const out: string[] = [];
    await serve(linesOf(Readable.from(chunks)), (line) => out.push(line), modules);
    const answers = out.map((l) => JSON.parse(l) as Answer);
    expect(answers.map((a) => a.id)).toEqual([0, 1, 2]);
    expect(answers[1].success).toBe(true);
    // plain JS: max = 0.999, Σ exp(x − max) over the 1000 values repeated
    let s = 0;
    for (const v of x) s += Math.exp(v - 0.999);
    expect(answers[1].output as number).toBeCloseTo(Math.log(s) + 0.999, 9);
  });

  it("respond() parses and answers a single huge evaluate with a gradient of the same length", () => {
    const n = 200_000;
    const x = Array.from({ length: n }, (_, i) => Math.sin(i));
    const a = respond(JSON.stringify({ id: 9, kind: "evaluate", module: "lse", function: "gradient", input: { x } }), modules);
    expect(a.success).toBe(true);
    const g = a.output as number[];
    expect(Array.isArray(g)).toBe(true);
    expect(g).toHaveLength(n);
    expect(g.reduce((p, v) => p + v, 0)).toBeCloseTo(1, 10);
  });
});

const here = dirname(fileURLToPath(import.meta.url));
const bin = resolve(here, "../dist/gradbench/main.js");

describe("the wengert-gradbench bin", () => {
  // the bin is the compiled adapter: `pnpm test` builds it before running the tests
  it.skipIf(!existsSync(bin))("speaks the protocol on stdio: only answers on stdout, exit 0 when stdin closes", async () => {
    const x = Array.from({ length: 300_000 }, (_, i) => (i % 977) / 977);
    const messages = [
      { id: 0, kind: "start", eval: "lse" },
      { id: 1, kind: "define", module: "lse" },
      { id: 2, kind: "evaluate", module: "lse", function: "primal", input: { x, min_runs: 2, min_seconds: 0 }, description: "n=300000" },
      { id: 3, kind: "analysis", of: 2, valid: true },
      { id: 4, kind: "evaluate", module: "lse", function: "gradient", input: { x, min_runs: 1, min_seconds: 0 }, description: "n=300000" },
      { id: 5, kind: "define", module: "tapenade" },
      { id: 6, kind: "evaluate", module: "det", function: "gradient", input: { A: [1, 2], ell: 2 } },
    ];
    const child = spawn(process.execPath, [bin], { stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const exited = new Promise<number | null>((done) => child.on("close", (code) => done(code)));
    for (const m of messages) child.stdin.write(`${JSON.stringify(m)}\n`);
    child.stdin.end();
    const code = await exited;
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout.endsWith("\n")).toBe(true);
    const lines = stdout.slice(0, -1).split("\n");
    expect(lines).toHaveLength(messages.length);
    const answers = lines.map((l) => JSON.parse(l) as Answer);
    expect(answers.map((a) => a.id)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(answers[0]).toEqual({ id: 0, tool: "wengert" });
    expect(evaluateTimings(answers[2])).toHaveLength(2);
    expect((answers[4].output as number[]).length).toBe(x.length);
    expect(answers[5].success).toBe(false);
    expect(answers[6].success).toBe(false);
  });
});
