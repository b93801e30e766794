/**
 * The consumer program (test/consumer/program.ts), a strict TypeScript program with no
 * casts that imports "@wengert/core" as a user does (here the workspace's build), compiles
 * under its own strict tsconfig, library declarations checked too, and runs: each of its
 * derivatives holds against its closed form.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

const root = fileURLToPath(new URL("../../../", import.meta.url));
// inside packages/core, so that the compiled program resolves "@wengert/core" and "ndarray" as the source does
const out = join(root, "packages", "core", "node_modules", ".cache", "wengert-consumer");

it("the consumer program typechecks under --strict and its checks hold", () => {
  execFileSync("npx", ["tsc", "-b", "packages/ops", "packages/core"], { cwd: root, stdio: "pipe" });
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  // node_modules ends the lookup of a package.json: say here that the output is a module
  writeFileSync(join(out, "package.json"), JSON.stringify({ type: "module" }));
  const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
  const compiled = spawnSync(process.execPath, [tsc, "-p", "packages/core/test/consumer/tsconfig.json", "--noEmit", "false", "--rootDir", "packages/core/test/consumer", "--outDir", out, "--pretty", "false"], { cwd: root, encoding: "utf8" });
  expect(compiled.stdout + compiled.stderr, "tsc reports").toBe("");
  expect(compiled.status).toBe(0);
  const run = spawnSync(process.execPath, [join(out, "program.js")], { cwd: root, encoding: "utf8", timeout: 60_000 });
  expect(run.stderr).toBe("");
  expect(run.status).toBe(0);
  expect(run.stdout).toBe("consumer program: every check holds\n");
}, 180_000);
