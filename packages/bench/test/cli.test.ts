/**
 * The command line of `pnpm bench`, read strictly: every flag and its forms, and each
 * mistake an error that names it (a typo must not start a run of many minutes); the usage lists
 * every flag and the run time. Progress lines: `[k/N]`, the part, the time elapsed.
 */
import { describe, expect, it } from "vitest";
import { evalsOf, parseFlags, RUN_TIME, usage, type Flags, type Names } from "../src/cli.js";
import { clock, progressLine } from "../src/progress.js";

const names: Names = { ids: ["W1-1000", "W1-10000", "W2", "W5-100000"], families: ["W1", "W2", "W5"] };
const DEFAULTS: Flags = { quick: false, only: undefined, memory: true, write: true, ops: false, part: undefined };
const run = (...args: string[]) => parseFlags(args, names);
const errorOf = (...args: string[]): string => {
  const p = run(...args);
  if (p.kind !== "error") throw new Error(`expected an error for ${args.join(" ")}, got ${p.kind}`);
  return p.message;
};

describe("parseFlags", () => {
  it("takes one GradBench eval as GB:name, and evalsOf names the evals to time (all with GB)", () => {
    const withEvals = { ...names, evals: ["ht", "lse"] };
    expect(parseFlags(["--only", "GB:ht"], withEvals)).toEqual({ kind: "run", flags: { ...DEFAULTS, only: ["GB:ht"] } });
    const bad = parseFlags(["--only", "GB:nope"], withEvals);
    expect(bad.kind === "error" && bad.message).toContain('--only: no workload "GB:nope"; expected some of W1, W2, W5, W1-1000, W1-10000, W5-100000, GB, SCAN, FLOOR, GB:ht, GB:lse');
    expect(evalsOf(["GB:ht", "W1"])).toEqual(["ht"]);
    expect(evalsOf(["GB:ht", "GB"])).toBeUndefined();
    expect(evalsOf(["W1"])).toBeUndefined();
    expect(evalsOf(undefined)).toBeUndefined();
  });

  it("reads every flag, in either order, --only as one value or several, with = or apart", () => {
    expect(run()).toEqual({ kind: "run", flags: DEFAULTS });
    expect(run("--quick", "--no-memory", "--no-write")).toEqual({ kind: "run", flags: { ...DEFAULTS, quick: true, memory: false, write: false } });
    expect(run("--only", "W1,W5-100000", "--quick")).toEqual({ kind: "run", flags: { ...DEFAULTS, quick: true, only: ["W1", "W5-100000"] } });
    expect(run("--", "--ops")).toEqual({ kind: "run", flags: { ...DEFAULTS, ops: true } });
    expect(run("--ops", "--no-write")).toEqual({ kind: "run", flags: { ...DEFAULTS, ops: true, write: false } });
    expect(run("--only=GB")).toEqual({ kind: "run", flags: { ...DEFAULTS, only: ["GB"] } });
    expect(run("--only", "W1", "--only=W2")).toEqual({ kind: "run", flags: { ...DEFAULTS, only: ["W1", "W2"] } });
    expect(run("--only", "SCAN")).toEqual({ kind: "run", flags: { ...DEFAULTS, only: ["SCAN"] } });
    expect(run("--part", "SCAN")).toEqual({ kind: "run", flags: { ...DEFAULTS, part: "SCAN" } });
    expect(run("--quick", "--part", "memory")).toEqual({ kind: "run", flags: { ...DEFAULTS, quick: true, part: "memory" } });
  });

  it("--help and -h, wherever they stand, ask for the usage and run nothing", () => {
    expect(run("--help")).toEqual({ kind: "help" });
    expect(run("--quick", "-h")).toEqual({ kind: "help" });
  });

  it("an unknown flag, a stray argument or a bad value is an error naming it", () => {
    expect(errorOf("--quik")).toBe("bench: unknown flag --quik. Run pnpm bench --help for the flags.");
    expect(errorOf("-q")).toContain("unknown flag -q");
    expect(errorOf("W1")).toBe('bench: unexpected argument "W1" (to run only it: --only W1). Run pnpm bench --help for the flags.');
    expect(errorOf("fast")).toContain('unexpected argument "fast". Run');
    expect(errorOf("--only")).toContain("--only needs a value (e.g. --only W1,W5)");
    expect(errorOf("--only", "--quick")).toContain("--only needs a value");
    expect(errorOf("--only=")).toContain("--only needs a value");
    expect(errorOf("--only", "W9")).toContain('--only: no workload "W9"; expected some of W1, W2, W5, W1-1000, W1-10000, W5-100000, GB, SCAN');
    expect(errorOf("--only", "W1,,W2")).toContain("--only: an empty name");
    expect(errorOf("--quick=yes")).toContain("--quick takes no value (got --quick=yes)");
    expect(errorOf("--part", "W3")).toContain('--part: no part "W3"');
    // the error wins over a --help after it: nothing is run either way
    expect(errorOf("--quik", "--help")).toContain("unknown flag --quik");
  });
});

describe("usage", () => {
  const text = usage(names, { seconds: 316.2, date: "2026-11-24T06:52:25.137Z" });

  it("lists every flag with what it does, the names --only takes, and the run time", () => {
    for (const flag of ["--quick", "--only LIST", "--no-memory", "--no-write", "-h, --help", "BENCH_DEBUG=1"]) expect(text).toContain(`  ${flag}`.trimStart());
    expect(text).toMatch(/--only LIST +only these, comma-separated: workloads W1, W2, W5,\n +one size of one: W1-1000, W1-10000, W5-100000,/);
    expect(text).toContain(`a full run takes ${RUN_TIME.full} (the one in\nresults/latest.json, of 2026-11-24, took 316 s),\n--quick ${RUN_TIME.quick}.`);
    expect(usage(names, undefined)).toContain(`a full run takes ${RUN_TIME.full},\n--quick`);
  });

  it("fits 90 columns", () => {
    for (const line of text.split("\n")) expect(line.length, line).toBeLessThanOrEqual(90);
  });
});

describe("progress lines", () => {
  it("clock: m:ss, and h:mm:ss from an hour on", () => {
    expect([0, 5.9, 65, 599, 3600, 3725].map(clock)).toEqual(["0:00", "0:05", "1:05", "9:59", "1:00:00", "1:02:05"]);
  });

  it("[k/N], the part, what it took once done, and the time elapsed; k padded to N's width", () => {
    expect(progressLine({ k: 3, n: 10, part: "W2", elapsed: 65.2 })).toBe("[ 3/10] W2 (1:05 elapsed)");
    expect(progressLine({ k: 3, n: 10, part: "W2", elapsed: 100.4, took: 35.24 })).toBe("[ 3/10] W2 done in 35.2 s (1:40 elapsed)");
    expect(progressLine({ k: 1, n: 1, part: "GB", elapsed: 0 })).toBe("[1/1] GB (0:00 elapsed)");
  });
});
