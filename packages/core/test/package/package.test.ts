/**
 * The built package: `import { rd } from "@wengert/core"` works from plain Node in the
 * workspace, with type declarations, and the `wengert` bin is declared.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../../../", import.meta.url));

describe("@wengert/core as a package", () => {
  beforeAll(() => {
    execFileSync("npx", ["tsc", "-b", "packages/ops", "packages/core"], { cwd: root });
  });

  it("imports from plain Node by its name and computes a gradient", () => {
    const out = execFileSync(
      process.execPath,
      ["--input-type=module", "-e", 'import { grad, mul, sin } from "@wengert/core"; console.log(grad((x) => mul(x, sin(x)), 2));'],
      { cwd: root, encoding: "utf8" },
    );
    expect(Number(out)).toBeCloseTo(Math.sin(2) + 2 * Math.cos(2), 14);
  });

  it("ships type declarations and the wengert bin", () => {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
    expect(existsSync(new URL(`../../${pkg.exports["."].types}`, import.meta.url))).toBe(true);
    expect(existsSync(new URL(`../../${pkg.bin.wengert}`, import.meta.url))).toBe(true);
    expect(readFileSync(new URL(`../../${pkg.bin.wengert}`, import.meta.url), "utf8").startsWith("#!/usr/bin/env node")).toBe(true);
  });
});
