/**
 * `pnpm bench` end to end on one workload: the parent runs it in a child process of its
 * own (main.ts --part), reads the child's results and prints the table, with progress
 * on stderr. `--help` prints the usage and a mistyped flag is an error, and neither
 * starts a run.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const main = resolve(dirname(fileURLToPath(import.meta.url)), "../dist/main.js");

describe("pnpm bench", () => {
  // the compiled bench: `pnpm test` builds it before running the tests
  it.skipIf(!existsSync(main))("runs a workload in a child process and prints its row", () => {
    const run = spawnSync(process.execPath, ["--expose-gc", main, "--quick", "--only", "W1-1000", "--no-memory", "--no-write"], {
      encoding: "utf8",
      timeout: 120_000,
    });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain("each workload in a process of its own");
    const row = run.stdout.split("\n").find((line) => line.startsWith("| W1 rosenbrock n=1000"));
    expect(row).toBeDefined();
    // every column of the row filled: wengert and compileGrad timed (checked against the hand-written gradient first)
    const cells = row!.split("|").map((c) => c.trim());
    expect(cells[5]).toMatch(/^[\d.]+ (µs|ms)$/); // wengert
    expect(cells[8]).toMatch(/^[\d.]+ (µs|ms)$/); // wengert compileGrad
    expect(run.stdout).not.toContain("W5");
    // progress on stderr only: [k/N], the part, the time elapsed
    expect(run.stderr).toMatch(/^\[1\/1\] W1-1000 \(0:00 elapsed\)$/m);
    expect(run.stderr).toMatch(/^\[1\/1\] W1-1000 done in [\d.]+ s \(\d+:\d\d elapsed\)$/m);
    expect(run.stdout).not.toContain("elapsed");
  }, 150_000);

  const bench = (...args: string[]) => spawnSync(process.execPath, [main, ...args], { encoding: "utf8", timeout: 30_000 });

  it.skipIf(!existsSync(main))("--help prints the usage, with every flag and the run time, and exits 0", () => {
    for (const flag of ["--help", "-h"]) {
      const run = bench("--quick", flag);
      expect(run.status, run.stderr).toBe(0);
      expect(run.stdout).toMatch(/^Usage: pnpm bench \[--quick\] \[--only LIST\] \[--no-memory\] \[--no-write\] \[--ops\] \[-h \| --help\]\n/);
      for (const f of ["--quick", "--only LIST", "--no-memory", "--no-write", "--ops", "-h, --help"]) expect(run.stdout).toContain(`\n  ${f} `);
      expect(run.stdout).toMatch(/a full run takes about \d+–\d+ minutes/);
      expect(run.stderr).toBe("");
    }
  });

  it.skipIf(!existsSync(main))("an unknown flag or a bad value is an error naming it, exit 2, and nothing runs", () => {
    for (const [args, says] of [
      [["--quik"], "unknown flag --quik"],
      [["--only", "W9"], 'no workload "W9"'],
      [["--no-write", "W1"], 'unexpected argument "W1"'],
    ] as const) {
      const run = bench(...args);
      expect(run.status, run.stderr).toBe(2);
      expect(run.stderr).toMatch(/^bench: [^\n]+\.\n$/);
      expect(run.stderr).toContain(says);
      expect(run.stderr).toContain("Run pnpm bench --help for the flags.");
      expect(run.stderr).not.toContain("wengert bench");
      expect(run.stdout).toBe("");
    }
  });
});
