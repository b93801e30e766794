/**
 * `pnpm bench` end to end on one workload: the parent runs it in a child process of its
 * own (main.ts --part), reads the child's results and prints the table.
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
  }, 150_000);
});
