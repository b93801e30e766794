/**
 * scripts/run-built.mjs (`pnpm wengert`, `pnpm demo`) builds only when an input changed:
 * run in a copy of the workspace's layout with two tiny projects, it builds the first
 * time, not the second, and again after a source is edited, a file is added, or dist is
 * removed; a type error stops it before the entry runs.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../../../", import.meta.url));
let tmp = "";

function write(path: string, text: string): void {
  mkdirSync(dirname(join(tmp, path)), { recursive: true });
  writeFileSync(join(tmp, path), text);
}

const project = (references: string[]) => JSON.stringify({
  compilerOptions: { composite: true, rootDir: "src", outDir: "dist", target: "ES2022", module: "NodeNext", strict: true, types: [] },
  include: ["src"],
  references: references.map((path) => ({ path })),
});

const main = (version: string) => `import { x } from "../../../ops/dist/index.js";
declare const process: { argv: string[] };
declare const console: { log(...a: unknown[]): void };
console.log("${version}", x, process.argv.slice(2).join(","));
`;

/** Runs the launcher; returns its output and whether it built (the stamp moved). */
function launch(): { status: number | null; out: string; built: boolean } {
  const stamp = join(tmp, "node_modules", ".cache", "wengert-run-built");
  const before = (() => { try { return statSync(stamp).mtimeMs; } catch { return -1; } })();
  const r = spawnSync(process.execPath, ["scripts/run-built.mjs", "packages/core/dist/cli/main.js", "a", "b"], {
    cwd: tmp,
    encoding: "utf8",
    timeout: 120_000,
  });
  const after = (() => { try { return statSync(stamp).mtimeMs; } catch { return -1; } })();
  return { status: r.status, out: r.stdout + r.stderr, built: after !== before };
}

describe("scripts/run-built.mjs", () => {
  beforeAll(() => {
    tmp = mkdtempSync(join(tmpdir(), "wengert-run-built-"));
    mkdirSync(join(tmp, "scripts"));
    copyFileSync(join(root, "scripts", "run-built.mjs"), join(tmp, "scripts", "run-built.mjs"));
    mkdirSync(join(tmp, "node_modules"));
    symlinkSync(join(root, "node_modules", "typescript"), join(tmp, "node_modules", "typescript"));
    write("tsconfig.base.json", "{}");
    write("packages/ops/package.json", JSON.stringify({ type: "module" }));
    write("packages/ops/tsconfig.json", project([]));
    write("packages/ops/src/index.ts", "export const x = 1;\n");
    write("packages/core/package.json", JSON.stringify({ type: "module" }));
    write("packages/core/tsconfig.json", project(["../ops"]));
    write("packages/core/src/index.ts", "export {};\n");
    write("packages/core/src/cli/main.ts", main("v1"));
  });

  afterAll(() => {
    if (tmp !== "") rmSync(tmp, { recursive: true, force: true });
  });

  it("builds when needed, and only then", () => {
    expect(launch()).toEqual({ status: 0, out: "v1 1 a,b\n", built: true });
    expect(launch()).toEqual({ status: 0, out: "v1 1 a,b\n", built: false });
    write("packages/core/src/cli/main.ts", main("v2"));
    expect(launch()).toEqual({ status: 0, out: "v2 1 a,b\n", built: true });
    expect(launch().built).toBe(false);
    write("packages/ops/src/index.ts", "export const x = 2;\n");
    expect(launch()).toEqual({ status: 0, out: "v2 2 a,b\n", built: true });
    write("packages/ops/src/more.ts", "export const y = 3;\n");
    expect(launch().built).toBe(true);
    rmSync(join(tmp, "packages/core/dist"), { recursive: true });
    expect(launch()).toEqual({ status: 0, out: "v2 2 a,b\n", built: true });
    // five builds with tsc: well under a minute on a quiet machine, over it on a loaded one
  }, 180_000);

  it("stops at a type error without running the entry", () => {
    write("packages/core/src/cli/main.ts", `${main("v3")}const n: number = "not a number";\n`);
    const r = launch();
    expect(r.status).toBe(1);
    expect(r.out).toContain("TS2322");
    expect(r.out).not.toContain("v3");
    expect(r.built).toBe(false);
  });
});
