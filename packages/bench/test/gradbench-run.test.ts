/**
 * `pnpm gradbench` without GradBench: its flags, the relay's log read back, the plan per
 * eval on a fake checkout (a temporary directory shaped like one), the tools' evals.txt,
 * and the table written from a made-up run.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ALL_EVALS, evalFlags, parseRunArgs, type RunOptions } from "../src/gradbench/run/args.js";
import { findRelay, planEval, type Setup } from "../src/gradbench/run/checkout.js";
import { GradbenchSetupError, GradbenchUsageError } from "../src/gradbench/run/errors.js";
import { parseRelayLog, timingStats, type Evaluation } from "../src/gradbench/run/log.js";
import type { RelayRun } from "../src/gradbench/run/relay.js";
import { allValid, gradbenchMarkdown, verdict, type RunReport } from "../src/gradbench/run/table.js";
import { parseEvalsTxt, planTool, shellWord } from "../src/gradbench/run/tools.js";

const context = { cwd: "/home/me/wengert", defaultOut: "/home/me/wengert/packages/bench/results/gradbench.md" };
const parse = (...argv: string[]) => parseRunArgs(argv, context);
const runOf = (...argv: string[]): RunOptions => {
  const c = parse(...argv);
  if (c.kind !== "run") throw new Error("expected a run");
  return c;
};

describe("the flags", () => {
  it("defaults: all twelve evals in order, wengert alone, GradBench's sizes, the default table path", () => {
    const o = runOf("--gradbench", "/src/gradbench");
    expect(o.evals).toEqual(["hello", "lse", "llsq", "det", "ode", "kmeans", "gmm", "ba", "ht", "lstm", "particle", "saddle"]);
    expect(ALL_EVALS).toHaveLength(12);
    expect(o).toMatchObject({ gradbench: "/src/gradbench", tools: [], evalArgs: {}, out: context.defaultOut });
    expect(o.minRuns).toBeUndefined();
    expect(o.relay).toBeUndefined();
    expect(evalFlags(o, "gmm")).toEqual([]);
  });

  it("pnpm's lone --, lists in the canonical order, = or a separate value, paths against the cwd", () => {
    const o = runOf(
      "--",
      "--evals",
      "gmm,lse",
      "--gradbench=../gb",
      "--tools",
      "pytorch,manual",
      "--relay",
      "shared/gradbench",
      "--out",
      "/tmp/x.md",
      "--min-seconds",
      "0.5",
      "--min-runs=3",
    );
    expect(o.evals).toEqual(["lse", "gmm"]);
    expect(o.gradbench).toBe("/home/me/gb");
    expect(o.tools).toEqual(["manual", "pytorch"]);
    expect(o.relay).toBe("/home/me/wengert/shared/gradbench");
    expect(o.out).toBe("/tmp/x.md");
    expect(evalFlags(o, "lse")).toEqual(["--min-runs", "3", "--min-seconds", "0.5"]);
  });

  it("--args gives an eval's run.py its size flags, repeatable; --no-write writes nothing", () => {
    const o = runOf("--gradbench", "/g", "--args", "gmm=-d 2 10  -k 5", "--args", "gmm=-n 100", "--args=lse=-n 2500", "--no-write");
    expect(evalFlags(o, "gmm")).toEqual(["-d", "2", "10", "-k", "5", "-n", "100"]);
    expect(evalFlags(o, "lse")).toEqual(["-n", "2500"]);
    expect(o.out).toBeUndefined();
  });

  it("--render reads a run's JSON and needs no checkout", () => {
    expect(parse("--render", "results/gradbench.json")).toEqual({ kind: "render", json: "/home/me/wengert/results/gradbench.json", out: context.defaultOut });
  });

  it("says what is wrong: no checkout, unknown eval, tool or flag, a missing value, a bad number, a malformed --args", () => {
    expect(() => parse("--evals", "lse")).toThrow(GradbenchUsageError);
    expect(() => parse("--evals", "lse")).toThrow(/--gradbench PATH is required: the root of a checkout of github.com\/gradbench\/gradbench/);
    expect(() => parse("--gradbench", "/g", "--evals", "lse,gmmm")).toThrow(/--evals names "gmmm"; known: hello, lse/);
    expect(() => parse("--gradbench", "/g", "--tools", "jax")).toThrow(/--tools names "jax"; known: manual, pytorch/);
    expect(() => parse("--gradbench", "/g", "--evals", ",")).toThrow(/--evals is empty/);
    expect(() => parse("--gradbench", "/g", "--quick")).toThrow(/unknown argument "--quick"/);
    expect(() => parse("--gradbench")).toThrow(/--gradbench needs a value/);
    expect(() => parse("--gradbench", "/g", "--min-runs", "1.5")).toThrow(/--min-runs "1.5" is not an integer ≥ 0/);
    expect(() => parse("--gradbench", "/g", "--out", "/tmp/x.md", "--no-write")).toThrow(/--out and --no-write exclude each other/);
    expect(() => parse("--gradbench", "/g", "--no-write", "--out", "/tmp/x.md")).toThrow(/--out and --no-write exclude each other/);
    expect(() => parse("--gradbench", "/g", "--min-seconds", "-1")).toThrow(/--min-seconds "-1" is not a number ≥ 0/);
    expect(() => parse("--gradbench", "/g", "--args", "-d 2")).toThrow(/--args "-d 2" should be EVAL=FLAGS/);
    expect(() => parse("--gradbench", "/g", "--args", "gnn=-d 2")).toThrow(/EVAL one of hello/);
    expect(() => parse("--help")).toThrow(/usage: pnpm gradbench/);
  });
});

describe("the relay's log", () => {
  const line = (kind: "message" | "response", v: unknown) => `{ "elapsed": { "nanoseconds": 5 }, "${kind}": ${JSON.stringify(v)} }`;

  it("pairs each evaluate with its answer and the eval's verdict; timings as runs, mean and median", async () => {
    const log = [
      line("message", { id: 0, kind: "start", eval: "gmm" }),
      line("response", { id: 0, tool: "wengert" }),
      line("message", { id: 1, kind: "define", module: "gmm" }),
      line("response", { id: 1, success: true }),
      line("message", { id: 2, kind: "evaluate", module: "gmm", function: "objective", input: { x: [1, 2] }, description: "2_5_1000" }),
      line("response", {
        id: 2,
        success: true,
        output: 1.5,
        timings: [
          { name: "prepare", nanoseconds: 99 },
          { name: "evaluate", nanoseconds: 30 },
          { name: "evaluate", nanoseconds: 10 },
          { name: "evaluate", nanoseconds: 20 },
        ],
      }),
      line("message", { id: 3, kind: "analysis", of: 2, valid: true }),
      line("response", { id: 3 }),
      line("message", { id: 4, kind: "evaluate", module: "gmm", function: "jacobian", input: {}, description: "2_5_1000" }),
      line("response", { id: 4, success: true, output: {}, timings: [{ name: "evaluate", nanoseconds: 7 }] }),
      line("message", { id: 5, kind: "analysis", of: 4, valid: false, error: "Found 1 mismatches, showing 1:\nq[0][1]: 1.0 != 2.0" }),
      line("response", { id: 5 }),
      "",
      line("message", { id: 6, kind: "evaluate", module: "gmm", function: "objective", input: {}, description: "2_10_1000" }),
      line("response", { id: 6, success: false, error: 'InputError: the input has no field "mu"', timings: [] }),
    ];
    const r = await parseRelayLog(log);
    expect(r.defined).toBe(true);
    expect(r.evaluations).toEqual([
      { id: 2, function: "objective", description: "2_5_1000", success: true, valid: true, runs: 3, meanNs: 20, medianNs: 20 },
      {
        id: 4,
        function: "jacobian",
        description: "2_5_1000",
        success: true,
        valid: false,
        mismatch: "Found 1 mismatches, showing 1:\nq[0][1]: 1.0 != 2.0",
        runs: 1,
        meanNs: 7,
        medianNs: 7,
      },
      { id: 6, function: "objective", description: "2_10_1000", success: false, error: 'InputError: the input has no field "mu"', runs: 0 },
    ]);
  });

  it("a module the tool does not define", async () => {
    const r = await parseRelayLog([
      line("message", { id: 0, kind: "define", module: "particle" }),
      line("response", { id: 0, success: false, error: "no particle" }),
    ]);
    expect(r).toEqual({ defined: false, defineError: "no particle", evaluations: [] });
  });

  it("the median of an even count is the mean of the middle two", () => {
    expect(timingStats([4, 1, 3, 2])).toEqual({ runs: 4, meanNs: 2.5, medianNs: 2.5 });
    expect(timingStats([])).toEqual({ runs: 0 });
  });
});

describe("on a fake checkout", () => {
  const root = mkdtempSync(join(tmpdir(), "fake-gradbench-"));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const write = (path: string, text = "") => {
    mkdirSync(join(root, path, ".."), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  for (const e of ["hello", "gmm", "lstm", "ht"])
    write(`python/gradbench/gradbench/evals/${e}/run.py`, e === "hello" ? "assertion(check)" : 'cpp.evaluate(tool="manual", module="x")');
  write("tools/manual/bin/gmm");
  write("tools/manual/bin/lstm");
  write("tools/manual/bin/ht");
  for (let i = 1; i <= 11; i++) write(`evals/ht/data/complicated_big/hand${i}_t26_c${i * 100}.txt`);
  write("tools/manual/evals.txt", "gmm\nhello\nlstm\nba error\n");
  const setup: Setup = { gradbench: root, relay: "/r", python: "/usr/bin/python3", commit: "abc", changed: [] };
  const options = runOf("--gradbench", root, "--min-seconds", "0");

  it("an eval that checks against the manual tool runs once that is built; hello needs nothing", () => {
    expect(planEval(setup, options, "gmm")).toEqual({ kind: "run", flags: ["--min-seconds", "0"], notes: [] });
    expect(planEval(setup, options, "hello")).toEqual({ kind: "run", flags: ["--min-seconds", "0"], notes: [] });
    rmSync(join(root, "tools/manual/bin/gmm"));
    const p = planEval(setup, options, "gmm");
    expect(p.kind === "not run" && p.reason).toMatch(
      /C\+\+ manual tool, not built in the checkout \(no tools\/manual\/bin\/gmm\): build it as tools\/manual\/README.md says/,
    );
    write("tools/manual/bin/gmm");
  });

  it("lstm without its text is not run, and says what would do", () => {
    const p = planEval(setup, options, "lstm");
    expect(p.kind === "not run" && p.reason).toMatch(/evals\/lstm\/data\/lstm_full.txt .* is absent from the checkout.*at least 8192 characters/);
    write("evals/lstm/data/lstm_full.txt", "text");
    expect(planEval(setup, options, "lstm").kind).toBe("run");
  });

  it("ht ends its range at the last hand file present, unless given its flags", () => {
    expect(planEval(setup, options, "ht")).toEqual({
      kind: "run",
      flags: ["--max", "11", "--min-seconds", "0"],
      notes: ["ht: hand12 is absent from the checkout's evals/ht/data/complicated_big; run with --max 11"],
    });
    const mine = runOf("--gradbench", root, "--args", "ht=--max 3");
    expect(planEval(setup, mine, "ht")).toEqual({ kind: "run", flags: ["--max", "3"], notes: [] });
  });

  it("a GradBench tool runs an eval its evals.txt lists without an expected outcome", () => {
    expect(planTool("manual", setup, "gmm", "/w/main.js")).toEqual({
      kind: "not run",
      reason: "the checkout has no cpp/json.hpp, which GradBench's C++ tools include (cpp/Makefile fetches it)",
    });
    write("cpp/json.hpp");
    expect(planTool("manual", setup, "gmm", "/w/main.js")).toEqual({ kind: "run", command: "/usr/bin/python3 python/gradbench/gradbench/cpp.py manual" });
    expect(planTool("manual", setup, "ba", "/w/main.js")).toEqual({ kind: "not run", reason: `GradBench's tools/manual/evals.txt expects "error" on ba` });
    expect(planTool("manual", setup, "saddle", "/w/main.js")).toEqual({ kind: "not run", reason: "GradBench's manual has no saddle (tools/manual/evals.txt)" });
    expect(planTool("pytorch", setup, "gmm", "/w/main.js")).toMatchObject({
      kind: "not run",
      reason: "GradBench's pytorch has no gmm (tools/pytorch/evals.txt)",
    });
    expect(planTool("wengert", setup, "saddle", "/w/my main.js")).toEqual({ kind: "run", command: `${shellWord(process.execPath)} '/w/my main.js'` });
  });

  it("the pytorch tool runs with one thread: OMP_NUM_THREADS and MKL_NUM_THREADS set to 1 before its command", () => {
    write("tools/pytorch/evals.txt", "lse\nba error\n");
    // a Python that imports anything: the probe for torch passes without torch installed
    write("bin/python-with-torch", "#!/bin/sh\nexit 0\n");
    chmodSync(join(root, "bin/python-with-torch"), 0o755);
    const python = join(root, "bin/python-with-torch");
    expect(planTool("pytorch", { ...setup, python }, "lse", "/w/main.js")).toEqual({
      kind: "run",
      command: `OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 ${shellWord(python)} python/gradbench/gradbench/tools/pytorch/run.py`,
    });
  });

  it("the relay: --relay must hold driver.py and run_eval.py; else shared/gradbench in a parent directory", () => {
    expect(() => findRelay(join(root, "nowhere"), root)).toThrow(GradbenchSetupError);
    expect(() => findRelay(join(root, "nowhere"), root)).toThrow(/has no driver.py and run_eval.py. Pass the directory that holds both/);
    write("shared/gradbench/driver.py");
    write("shared/gradbench/run_eval.py");
    expect(findRelay(undefined, join(root, "wt", "mine"))).toBe(join(root, "shared", "gradbench"));
    expect(findRelay(join(root, "shared/gradbench"), "/")).toBe(join(root, "shared/gradbench"));
  });
});

it("evals.txt: an eval per line, with the outcome the tool is known to have", () => {
  expect([...parseEvalsTxt("ba error\ngmm\n\nht timeout\n").entries()]).toEqual([["ba", "error"], ["gmm", undefined], ["ht", "timeout"]]);
  expect(shellWord("/usr/bin/node")).toBe("/usr/bin/node");
  expect(shellWord("it's")).toBe(`'it'\\''s'`);
});

describe("the table", () => {
  const ev = (id: number, fn: string, description: string, medianMs: number, rest: Partial<Evaluation> = {}): Evaluation => ({
    id, function: fn, description, success: true, valid: true, runs: 3, meanNs: medianMs * 1.1e6, medianNs: medianMs * 1e6, ...rest,
  });
  const ran = (evaluations: Evaluation[], rest: Partial<RelayRun> = {}) => ({
    kind: "ran" as const,
    run: { defined: true, evaluations, exitCode: 0, stderrTail: [], seconds: 1, ...rest },
  });
  const report: RunReport = {
    meta: {
      date: "2026-01-01T00:00:00.000Z",
      node: "20.0.0",
      cpu: "Fake CPU",
      cpus: 2,
      load: [3.2, 4.9],
      seconds: 61,
      commit: "f26651a7bcc1",
      changed: [" M evals/lstm/data/lstm_full.txt"],
    },
    evals: [
      {
        eval: "gmm",
        flags: [],
        notes: [],
        tools: [
          {
            tool: "wengert",
            outcome: ran([
              ev(2, "objective", "2_5_1000", 2),
              ev(4, "jacobian", "2_5_1000", 8),
              ev(6, "objective", "10_5_1000", 3),
              ev(8, "jacobian", "10_5_1000", 20, { valid: false, mismatch: "Found 2 mismatches, showing 2:\nq[0][0]: 1 != 2 | x\nq[0][1]: 3 != 4" }),
            ]),
          },
          {
            tool: "manual",
            outcome: ran([
              ev(2, "objective", "2_5_1000", 1),
              ev(4, "jacobian", "2_5_1000", 2),
              ev(6, "objective", "10_5_1000", 3),
              ev(8, "jacobian", "10_5_1000", 4),
            ]),
          },
          { tool: "pytorch", outcome: { kind: "not run", reason: "/usr/bin/python3 cannot import torch" } },
        ],
      },
      { eval: "lstm", notes: [], notRun: "evals/lstm/data/lstm_full.txt is absent", tools: [] },
      {
        eval: "saddle",
        flags: ["--min-seconds", "0"],
        notes: ["a note"],
        tools: [
          {
            tool: "wengert",
            outcome: ran([
              ev(2, "rr", "start=[1,1]", 500),
              ev(4, "ff", "start=[1,1]", 0.0004, {
                success: false,
                valid: undefined,
                error: "RangeError: too deep\n  at f",
                runs: 0,
                meanNs: undefined,
                medianNs: undefined,
              }),
            ]),
          },
          { tool: "manual", outcome: { kind: "not run", reason: "GradBench's manual has no saddle (tools/manual/evals.txt)" } },
        ],
      },
    ],
  };
  const md = gradbenchMarkdown(report);

  it("the header says when, where, how, and that the machine is shared", () => {
    expect(md).not.toContain("PyTorch ran");
    const withTorch: RunReport = {
      ...report,
      evals: [{ eval: "lse", notes: [], tools: [{ tool: "pytorch", outcome: ran([ev(2, "primal", "n=10", 1)]) }] }],
    };
    expect(gradbenchMarkdown(withTorch)).toContain("PyTorch ran with one thread (`OMP_NUM_THREADS=1 MKL_NUM_THREADS=1` in its environment)");
    expect(md).toContain(
      "GradBench at f26651a7 (1 tracked file(s) of the checkout differ from it: `M evals/lstm/data/lstm_full.txt`), Node 20.0.0, 2 × Fake CPU",
    );
    expect(md).toContain("repeated as the evals ask by default (at least 1 run and 1 s)");
    expect(md).toContain("load average 3.2 at the start, 4.9 at the end");
  });

  it("the summary: valid counts per tool; wengert / manual as geometric mean, worst and largest workload of the median ratios", () => {
    expect(md).toContain(
      "| eval | function | workloads | wengert | manual | pytorch | wengert / manual: geometric mean, worst, largest workload |" +
        " wengert / pytorch: geometric mean, worst, largest workload |",
    );
    expect(md).toContain("| gmm | objective | 2 | 2/2 valid | 2/2 valid | not run | ×1.41, ×2, ×1 | — |");
    expect(md).toContain("| gmm | jacobian | 2 | 1/2 valid | 2/2 valid | not run | ×4.47, ×5, ×5 | — |");
    expect(md).toContain("| lstm | — | not run: evals/lstm/data/lstm_full.txt is absent |");
    expect(md).toContain("| saddle | rr | 1 | 1/1 valid | not run | — | — | — |");
    expect(md).toContain("| saddle | ff | 1 | 0/1 valid | not run | — | — | — |");
  });

  it("per eval: each workload's mean, median and verdict per tool side by side, the ratio of medians", () => {
    expect(md).toContain("| workload | function | wengert mean | wengert median | wengert | manual mean | manual median | manual | wengert / manual |");
    expect(md).toContain("| 2_5_1000 | jacobian | 8.8 ms | 8 ms | valid | 2.2 ms | 2 ms | valid | ×4 |");
    expect(md).toContain("| 10_5_1000 | jacobian | 22 ms | 20 ms | INVALID: q[0][0]: 1 != 2 \\| x | 4.4 ms | 4 ms | valid | ×5 |");
    expect(md).toContain("pytorch: not run (/usr/bin/python3 cannot import torch).");
    expect(md).toContain("run.py flags: `--min-seconds 0`.\na note.\nmanual: not run (GradBench's manual has no saddle (tools/manual/evals.txt)).");
    expect(md).toContain("| start=[1,1] | ff | — | — | failed: RangeError: too deep |");
    expect(md).toContain("## lstm\n\nNot run: evals/lstm/data/lstm_full.txt is absent.");
  });

  it("verdicts, and whether all of a tool's evaluations were valid", () => {
    expect(verdict(undefined)).toBe("not reached");
    expect(verdict(ev(1, "f", "", 1, { valid: undefined }))).toBe("not checked");
    expect(allValid(report, "wengert")).toBe(false);
    expect(allValid(report, "manual")).toBe(true);
    const good: RunReport = { ...report, evals: [report.evals[1], { ...report.evals[0], tools: [report.evals[0].tools[1]] }] };
    expect(allValid({ ...good, evals: good.evals.map((e) => ({ ...e, tools: e.tools.map((t) => ({ ...t, tool: "wengert" as const })) })) }, "wengert")).toBe(
      true,
    );
    expect(allValid({ ...report, evals: [] }, "wengert")).toBe(false);
  });
});
