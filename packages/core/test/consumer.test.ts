/**
 * @file The packages as a user gets them: @wengert/ops, @wengert/core and @wengert/optim
 * packed with npm (and with pnpm, which must write the same package), installed with npm
 * from the tarballs alone into a fresh project outside the workspace, then used there. A
 * strict TypeScript program (test/consumer/program.ts) is typechecked against the
 * installed declarations, compiled, and run as an ES module, under --enable-source-maps,
 * and through require; the `wengert` bin runs with npx; each ```ts block of the packages'
 * READMEs, a module of its own (blocks may import the same names), typechecks with the
 * program and prints what it says (a `// throws X` line must throw X: helpers/throws.ts).
 * npm install fetches ndarray and @types/node from the registry (or npm's cache).
 */
import { execFileSync, spawnSync, type SpawnSyncReturns } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkThrows } from "./helpers/throws.js";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const here = fileURLToPath(new URL("./consumer/", import.meta.url));
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
const PACKAGES = ["ops", "core", "optim"] as const;

let tmp = "";
let app = "";
/** tsc on the consumer project: the typecheck, and the build the runs use. */
let compiled: SpawnSyncReturns<string> | undefined;
/** The package.json and file list of each tarball, by packer and package. */
const packed: Record<string, Record<string, { manifest: Record<string, unknown>; files: string[] }>> = {};

function run(command: string, args: readonly string[], cwd: string): SpawnSyncReturns<string> {
  return spawnSync(command, args, { cwd, encoding: "utf8", timeout: 300_000, env: { ...process.env, NODE_OPTIONS: "" } });
}

function ok(r: SpawnSyncReturns<string>, what: string): string {
  if (r.status !== 0) throw new Error(`${what} exited with ${r.status}${r.error ? ` (${r.error.message})` : ""}:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

/** pnpm as the test runs under it (`pnpm test` sets npm_execpath), else from PATH. */
function pnpm(): [string, string[]] {
  const exec = process.env.npm_execpath;
  return exec !== undefined && /pnpm/.test(exec) ? [process.execPath, [exec]] : ["pnpm", []];
}

function pack(packer: "npm" | "pnpm", pkg: string, into: string): string {
  mkdirSync(into, { recursive: true });
  const [command, pre] = packer === "npm" ? ["npm", []] : pnpm();
  ok(run(command, [...pre, "pack", "--pack-destination", into], join(root, "packages", pkg)), `${packer} pack of ${pkg}`);
  const tarball = join(into, `wengert-${pkg}-0.1.0.tgz`);
  const files = ok(run("tar", ["-tzf", tarball], into), "tar -t").split("\n").filter(Boolean).map((f) => f.replace(/^package\//, "")).sort();
  const manifest = JSON.parse(ok(run("tar", ["-xzOf", tarball, "package/package.json"], into), "tar -x")) as Record<string, unknown>;
  (packed[packer] ??= {})[pkg] = { manifest, files };
  return tarball;
}

/** The ```ts blocks of a README, and what each console.log line says it prints. */
function readmeExamples(file: string): { code: string; expected: string[] }[] {
  const blocks = [...readFileSync(file, "utf8").matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
  return blocks.map((code) => ({ code, expected: code.split("\n").flatMap((l) => /console\.log\(.*\);\s*\/\/\s*(.*)$/.exec(l)?.slice(1) ?? []) }));
}

/** The 1-based line of `program.*` holding the marker comment. */
function markerLine(file: string): number {
  const i = readFileSync(file, "utf8").split("\n").findIndex((l) => l.includes("// the ShapeError's line"));
  if (i < 0) throw new Error(`${file} has lost the ShapeError marker`);
  return i + 1;
}

describe("the packed packages in a fresh project", () => {
  beforeAll(() => {
    ok(run(process.execPath, [tsc, "-b", ...PACKAGES.map((p) => `packages/${p}`)], root), "tsc -b");
    tmp = mkdtempSync(join(tmpdir(), "wengert-consumer-"));
    const tarballs = PACKAGES.map((p) => pack("npm", p, join(tmp, "npm")));
    for (const p of PACKAGES) pack("pnpm", p, join(tmp, "pnpm"));

    app = join(tmp, "app");
    mkdirSync(app);
    writeFileSync(join(app, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
    const types = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { devDependencies: Record<string, string> }).devDependencies["@types/node"];
    ok(run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", ...tarballs, "ndarray", `@types/node@${types}`], app), "npm install");

    copyFileSync(join(here, "program.ts"), join(app, "program.ts"));
    copyFileSync(join(here, "runner.cjs"), join(app, "runner.cjs"));
    for (const p of PACKAGES) {
      readmeExamples(join(app, "node_modules", "@wengert", p, "README.md")).forEach((e, k) => {
        // a module of its own even if it imports nothing
        writeFileSync(join(app, `readme-${p}-${k}.ts`), `${checkThrows(e.code)}\nexport {};\n`);
      });
    }
    writeFileSync(join(app, "tsconfig.json"), JSON.stringify({
      compilerOptions: {
        target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", lib: ["ES2022"], types: ["node"],
        strict: true, skipLibCheck: false, noEmitOnError: true, sourceMap: true, outDir: "out",
      },
      include: ["*.ts"],
    }));
    compiled = run(process.execPath, [tsc, "-p", app], app);
  }, 600_000);

  afterAll(() => {
    if (tmp !== "") rmSync(tmp, { recursive: true, force: true });
  });

  it("npm and pnpm write the same package.json, with real version ranges and the fields a registry shows", () => {
    for (const p of PACKAGES) {
      const { manifest, files } = packed.npm[p];
      expect(packed.pnpm[p].manifest).toEqual(manifest);
      expect(packed.pnpm[p].files).toEqual(files);
      expect(JSON.stringify(manifest)).not.toMatch(/workspace:|link:|file:/);
      expect(manifest).toMatchObject({ license: "MIT", engines: { node: ">=20.19" }, type: "module", publishConfig: { access: "public" } });
      // only the two modules that mark ops's and core's extent in a bundle (trace/callsite.ts) have effects
      if (p === "optim") expect(manifest.sideEffects).toBe(false);
      else {
        const effects = manifest.sideEffects as string[];
        expect(effects.map((f) => f.replace(/^\.\/(dist|src)\/(trace\/)?/, "").replace(/\.[jt]s$/, "")).sort()).toEqual(["extent", "extent", "extent-end", "extent-end"]);
        for (const f of effects) expect(files).toContain(f.slice(2));
      }
      expect(manifest.repository).toMatchObject({ type: "git", directory: `packages/${p}` });
      const exports = manifest.exports as Record<string, Record<string, string>>;
      expect(Object.keys(exports["."])[0]).toBe("types");
      expect(files).toEqual(expect.arrayContaining(["LICENSE", "README.md", "package.json", exports["."].types.slice(2), exports["."].default.slice(2)]));
      expect(readFileSync(join(root, "packages", p, "LICENSE"), "utf8")).toBe(readFileSync(join(root, "LICENSE"), "utf8"));
    }
    expect((packed.npm.core.manifest.dependencies as Record<string, string>)["@wengert/ops"]).toBe(`^${packed.npm.ops.manifest.version as string}`);
    expect((packed.npm.optim.manifest.dependencies as Record<string, string>)["@wengert/core"]).toBe(`^${packed.npm.core.manifest.version as string}`);
    expect(packed.npm.core.manifest.bin).toEqual({ wengert: "./dist/cli/main.js" });
    expect(packed.npm.ops.manifest.bin).toBeUndefined();
    // the bench, with its wengert-gradbench bin, is the workspace's only
    expect(JSON.parse(readFileSync(join(root, "packages/bench/package.json"), "utf8")).private).toBe(true);
  });

  it("ships nothing that needs the repository: no demo, and every source map's sources", () => {
    expect(packed.npm.core.files.filter((f) => f.includes("demo"))).toEqual([]);
    for (const p of PACKAGES) {
      const dir = join(app, "node_modules", "@wengert", p);
      const maps = packed.npm[p].files.filter((f) => f.endsWith(".map"));
      expect(maps.length).toBeGreaterThan(10);
      for (const map of maps) {
        const { sources } = JSON.parse(readFileSync(join(dir, map), "utf8")) as { sources: string[] };
        for (const source of sources) expect(existsSync(join(dir, dirname(map), source)), `${p}/${map} → ${source}`).toBe(true);
      }
      for (const bin of Object.values((packed.npm[p].manifest.bin ?? {}) as Record<string, string>)) {
        expect(readFileSync(join(dir, bin), "utf8").startsWith("#!/usr/bin/env node\n")).toBe(true);
      }
    }
  });

  it("typechecks a strict program against the installed declarations (tsc --strict, NodeNext, no skipLibCheck)", () => {
    ok(compiled!, "tsc");
    expect(statSync(join(app, "out", "program.js")).isFile()).toBe(true);
  });

  it("runs the program as an ES module; an error names the program's line", () => {
    const out = ok(run(process.execPath, ["out/program.js"], app), "node out/program.js");
    expect(out).toContain("all checks passed");
    expect(out).toContain(`, at ${join(app, "out", "program.js")}:${markerLine(join(app, "out", "program.js"))}:`);
  });

  it("runs under --enable-source-maps; the error names the line of program.ts", () => {
    const out = ok(run(process.execPath, ["--enable-source-maps", "out/program.js"], app), "node --enable-source-maps out/program.js");
    expect(out).toContain("all checks passed");
    expect(out).toContain(`, at ${join(app, "program.ts")}:${markerLine(join(app, "program.ts"))}:`);
  });

  it("runs through require from CommonJS", () => {
    const out = ok(run(process.execPath, ["runner.cjs"], app), "node runner.cjs");
    expect(out).toContain("all checks passed");
  });

  it("runs the wengert bin with npx", () => {
    const out = ok(run("npx", ["--no-install", "wengert", "eval", "grad_2(x: real. x * sin(x))"], app), "npx wengert eval");
    expect(out.trim()).toBe(`${Math.sin(2) + 2 * Math.cos(2)} : real`);
  });

  it.each(PACKAGES)("each example of the README of @wengert/%s prints what it says", (p) => {
    const examples = readmeExamples(join(app, "node_modules", "@wengert", p, "README.md"));
    expect(examples.flatMap((e) => e.expected).length).toBeGreaterThan(0);
    examples.forEach(({ expected }, k) => {
      const out = ok(run(process.execPath, [`out/readme-${p}-${k}.js`], app), `example ${k + 1} of the README of ${p}`);
      expect(out === "" ? [] : out.trim().split("\n"), `example ${k + 1} of the README of ${p}`).toEqual(expected);
    });
  });
});
