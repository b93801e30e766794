/**
 * The call site in an error message is the user's line in every layout, or nothing:
 * the stack formats of V8 (Node, Chromium) and Firefox/Safari; wengert in the
 * workspace, installed by npm or pnpm, under `node --enable-source-maps`, served
 * unbundled to a browser, and bundled with the user's code into one file (plain and
 * minified). The layouts are fabricated stacks here (the places each package's first and
 * last modules capture, and a stack from inside wengert); real runs of an installed
 * copy and of esbuild bundles in Node, with and without source maps, follow (the browser's
 * own run is in browser.test.ts).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Extent } from "@wengert/ops";
import { callSiteIn } from "../../src/trace/callsite.js";
import { parseFrame } from "../../src/trace/frames.js";

/** V8's "at f (place)" lines under an "Error" line. */
const v8 = (...frames: string[]) => ["Error", ...frames.map((f) => `    at ${f}`)].join("\n");
/** Firefox's and Safari's "f@place" lines, with no header. */
const gecko = (...frames: string[]) => frames.join("\n");

/** What core and ops capture in their first and last modules, at these places. */
function extents(core: [string, string | undefined], ops: [string, string | undefined], format: "v8" | "gecko" = "v8"): { core: Extent; ops: Extent } {
  const stack = (name: string, place: string) => (format === "v8" ? v8(`${name} (${place})`) : gecko(`${name}@${place}`));
  const extent = ([start, end]: [string, string | undefined]): Extent => ({
    start: () => stack("Object.start", start),
    end: end === undefined ? undefined : () => stack("end", end),
  });
  return { core: extent(core), ops: extent(ops) };
}

describe("reading a stack line", () => {
  it.each([
    ["at f (file:///a/b.js:1:2)", { file: "file:///a/b.js", line: 1, column: 2, evaluated: false }],
    ["at file:///a/b.js:3:4", { file: "file:///a/b.js", line: 3, column: 4, evaluated: false }],
    ["at async f (/a/b.js:3:4)", { file: "/a/b.js", line: 3, column: 4, evaluated: false }],
    ["at new Tape (http://127.0.0.1:8080/x.js?v=1:5:6)", { file: "http://127.0.0.1:8080/x.js?v=1", line: 5, column: 6, evaluated: false }],
    ["at f (/home/u/my (copy)/b.js:7:8)", { file: "/home/u/my (copy)/b.js", line: 7, column: 8, evaluated: false }],
    ["at f (C:\\app\\b.js:7:8)", { file: "C:\\app\\b.js", line: 7, column: 8, evaluated: false }],
    ["at eval (eval at compile (file:///a/jit.js:10:5), <anonymous>:3:4)", { file: "file:///a/jit.js", line: 10, column: 5, evaluated: true }],
    ["at eval (eval at g (eval at h (/a/c.js:1:9), <anonymous>:2:3), <anonymous>:4:5)", { file: "/a/c.js", line: 1, column: 9, evaluated: true }],
    ["f@http://host/b.js:1:2", { file: "http://host/b.js", line: 1, column: 2, evaluated: false }],
    [
      "@http://host/node_modules/.pnpm/@wengert+core@0.1.0/b.js:1:2",
      { file: "http://host/node_modules/.pnpm/@wengert+core@0.1.0/b.js", line: 1, column: 2, evaluated: false },
    ],
    ["f@http://host/b.js line 3 > Function:1:2", { file: "http://host/b.js", line: 3, column: 0, evaluated: true }],
  ])("%s", (line, frame) => {
    expect(parseFrame(line)).toEqual(frame);
  });

  it.each(["Error", "Error: boom", "at Array.map (<anonymous>)", "at async Promise.all (index 0)", "at native", ""])("%j names no place", (line) => {
    expect(parseFrame(line)).toBeNull();
  });
});

describe("the user's frame, layout by layout", () => {
  it("the workspace's packages/core/dist and packages/ops/dist (Node, file: URLs); a test file beside them is the user's", () => {
    const w = "file:///w/packages";
    const stack = v8(
      `callSite (${w}/core/dist/trace/callsite.js:40:17)`,
      `atCallSite (${w}/core/dist/trace/callsite.js:30:16)`,
      `shapeError (${w}/core/dist/trace/tracer.js:300:5)`,
      "Array.forEach (<anonymous>)",
      `Object.reverse (${w}/ops/dist/scalar.js:10:5)`,
      `add (${w}/core/dist/api/primitives.js:12:10)`,
      `loss (${w}/core/test/fit.test.js:7:3)`,
      `${w}/core/test/fit.test.js:9:1`,
      "ModuleJob.run (node:internal/modules/esm/module_job:234:25)",
    );
    const ex = extents(
      [`${w}/core/dist/trace/extent.js:1:42`, `${w}/core/dist/trace/extent-end.js:5:24`],
      [`${w}/ops/dist/extent.js:10:41`, `${w}/ops/dist/extent-end.js:2:20`],
    );
    expect(callSiteIn(stack, ex)).toBe("/w/packages/core/test/fit.test.js:7:3");
  });

  it("installed by npm: node_modules/@wengert/core/dist and …/ops/dist; the user's own src/ is not wengert's", () => {
    const nm = "/app/node_modules/@wengert";
    const stack = v8(
      `callSite (${nm}/core/dist/trace/callsite.js:40:17)`,
      `Object.reverse (${nm}/ops/dist/scalar.js:10:5)`,
      `add (${nm}/core/dist/api/primitives.js:12:10)`,
      "step (/app/src/train.js:22:9)",
    );
    const ex = extents(
      [`${nm}/core/dist/trace/extent.js:1:42`, `${nm}/core/dist/trace/extent-end.js:5:24`],
      [`${nm}/ops/dist/extent.js:10:41`, `${nm}/ops/dist/extent-end.js:2:20`],
    );
    expect(callSiteIn(stack, ex)).toBe("/app/src/train.js:22:9");
  });

  it("installed by pnpm: core and ops in separate .pnpm directories", () => {
    const core = "/app/node_modules/.pnpm/@wengert+core@0.1.0/node_modules/@wengert/core";
    const ops = "/app/node_modules/.pnpm/@wengert+ops@0.1.0/node_modules/@wengert/ops";
    const stack = v8(
      `callSite (${core}/dist/trace/callsite.js:40:17)`,
      `Object.reverse (${ops}/dist/tensor/ops.js:10:5)`,
      `add (${core}/dist/api/primitives.js:12:10)`,
      "step (/app/train.js:22:9)",
    );
    const ex = extents(
      [`${core}/dist/trace/extent.js:1:42`, `${core}/dist/trace/extent-end.js:5:24`],
      [`${ops}/dist/extent.js:10:41`, `${ops}/dist/extent-end.js:2:20`],
    );
    expect(callSiteIn(stack, ex)).toBe("/app/train.js:22:9");
  });

  it("node --enable-source-maps: frames at the packages' src/*.ts (one left in dist/), the user's at their .ts", () => {
    const nm = "/app/node_modules/@wengert";
    const stack = v8(
      `callSite (${nm}/core/src/trace/callsite.ts:40:17)`,
      `shapeError (${nm}/core/src/trace/tracer.ts:300:5)`,
      `Object.reverse (${nm}/ops/src/scalar.ts:10:5)`,
      `add (${nm}/core/dist/api/primitives.js:12:10)`,
      "step (/app/src/train.ts:22:9)",
    );
    const ex = extents(
      [`${nm}/core/src/trace/extent.ts:13:50`, `${nm}/core/src/trace/extent-end.ts:6:24`],
      [`${nm}/ops/src/extent.ts:19:49`, `${nm}/ops/src/extent-end.ts:6:24`],
    );
    expect(callSiteIn(stack, ex)).toBe("/app/src/train.ts:22:9");
  });

  it("node --enable-source-maps: a primitive wengert made with new Function, its origin still a file: URL", () => {
    for (const [nm, url] of [
      ["/app/node_modules/@wengert", "file:///app/node_modules/@wengert"],
      ["C:\\app\\node_modules\\@wengert", "file:///C:/app/node_modules/@wengert"],
    ]) {
      const sep = nm.startsWith("C:") ? "\\" : "/";
      const stack = v8(
        `callSite (${nm}${sep}core${sep}src${sep}trace${sep}callsite.ts:40:17)`,
        `applyBinary (${nm}${sep}core${sep}src${sep}trace${sep}record.ts:71:10)`,
        `add (eval at specialised (${url}/core/dist/trace/record.js:123:12), <anonymous>:19:10)`,
        "step (/app/src/train.ts:22:9)",
      );
      const ex = extents(
        [`${nm}${sep}core${sep}src${sep}trace${sep}extent.ts:13:50`, `${nm}${sep}core${sep}src${sep}trace${sep}extent-end.ts:6:24`],
        [`${nm}${sep}ops${sep}src${sep}extent.ts:19:49`, `${nm}${sep}ops${sep}src${sep}extent-end.ts:6:24`],
      );
      expect(callSiteIn(stack, ex)).toBe("/app/src/train.ts:22:9");
    }
  });

  it("Windows paths", () => {
    const nm = "C:\\app\\node_modules\\@wengert";
    const stack = v8(
      `callSite (${nm}\\core\\dist\\trace\\callsite.js:40:17)`,
      `add (${nm}\\core\\dist\\api\\primitives.js:12:10)`,
      "step (C:\\app\\train.js:22:9)",
    );
    const ex = extents(
      [`${nm}\\core\\dist\\trace\\extent.js:1:42`, `${nm}\\core\\dist\\trace\\extent-end.js:5:24`],
      [`${nm}\\ops\\dist\\extent.js:10:41`, undefined],
    );
    expect(callSiteIn(stack, ex)).toBe("C:\\app\\train.js:22:9");
  });

  it("file: URLs are shown as paths, spaces and drive letters included", () => {
    const core = "file:///C:/my%20app/node_modules/@wengert/core/dist";
    const stack = v8(`callSite (${core}/trace/callsite.js:40:17)`, "step (file:///C:/my%20app/train.js:22:9)");
    const ex = extents(
      [`${core}/trace/extent.js:1:42`, `${core}/trace/extent-end.js:5:24`],
      ["file:///C:/my%20app/node_modules/@wengert/ops/dist/extent.js:1:1", undefined],
    );
    expect(callSiteIn(stack, ex)).toBe("C:/my app/train.js:22:9");
  });

  it("Chromium, unbundled (each module at its URL, as a dev server serves them)", () => {
    const nm = "http://localhost:5173/node_modules/@wengert";
    const stack = v8(
      `callSite (${nm}/core/dist/trace/callsite.js:40:17)`,
      `add (${nm}/core/dist/api/primitives.js:12:10)`,
      "HTMLButtonElement.step (http://localhost:5173/src/main.ts?t=17:22:9)",
    );
    const ex = extents(
      [`${nm}/core/dist/trace/extent.js:1:42`, `${nm}/core/dist/trace/extent-end.js:5:24`],
      [`${nm}/ops/dist/extent.js:10:41`, `${nm}/ops/dist/extent-end.js:2:20`],
    );
    expect(callSiteIn(stack, ex)).toBe("http://localhost:5173/src/main.ts?t=17:22:9");
  });

  it("Vite's dev server serving a linked package's files, with a ?v= query", () => {
    const fs = "http://localhost:5173/@fs/w/packages";
    const stack = v8(
      `callSite (${fs}/core/dist/trace/callsite.js?v=1a2b:40:17)`,
      `add (${fs}/core/dist/api/primitives.js?v=1a2b:12:10)`,
      "step (http://localhost:5173/src/main.ts:22:9)",
    );
    const ex = extents(
      [`${fs}/core/dist/trace/extent.js?v=1a2b:1:42`, `${fs}/core/dist/trace/extent-end.js?v=1a2b:5:24`],
      [`${fs}/ops/dist/extent.js?v=1a2b:10:41`, undefined],
    );
    expect(callSiteIn(stack, ex)).toBe("http://localhost:5173/src/main.ts:22:9");
  });

  it("Vite's dev server: wengert prebundled alone into one file, the user's modules apart", () => {
    const dep = "http://localhost:5173/node_modules/.vite/deps/@wengert_core.js?v=9a1b";
    const stack = v8(`callSite (${dep}:2219:17)`, `add (${dep}:3004:10)`, "step (http://localhost:5173/src/main.ts:22:9)");
    expect(callSiteIn(stack, extents([`${dep}:326:34`, `${dep}:4115:22`], [`${dep}:329:33`, `${dep}:1890:19`]))).toBe("http://localhost:5173/src/main.ts:22:9");
  });

  describe("one bundle holding wengert and the user's code (Chromium)", () => {
    const page = "http://127.0.0.1:8080/page.js";
    // a bundler's order: the user's modules that import nothing of wengert, then wengert
    // (core's first module, ops inside it, core's last module), then the user's modules that import it
    const ex = extents([`${page}:326:34`, `${page}:4115:22`], [`${page}:329:33`, `${page}:1890:19`]);
    const inside = [`callSite (${page}:2219:17)`, `atCallSite (${page}:2210:16)`, `Object.reverse (${page}:1000:5)`, `add2 (${page}:3004:10)`];

    it("the user's module after wengert's", () => {
      expect(callSiteIn(v8(...inside, `loss (${page}:4120:3)`, `grad (${page}:3500:7)`, `${page}:4125:19`), ex)).toBe(`${page}:4120:3`);
    });
    it("a user's helper before wengert's first module", () => {
      expect(callSiteIn(v8(...inside, `apply (${page}:120:3)`, `${page}:4125:19`), ex)).toBe(`${page}:120:3`);
    });
    it("a user's script in another file (a page's inline script calling an IIFE's global)", () => {
      expect(callSiteIn(v8(...inside, "http://127.0.0.1:8080/index.html:12:5"), ex)).toBe("http://127.0.0.1:8080/index.html:12:5");
    });
    it("minified onto one line: columns decide", () => {
      const min = "http://127.0.0.1:8080/min.js";
      const mex = extents([`${min}:4:120`, `${min}:4:90000`], [`${min}:4:150`, `${min}:4:40000`]);
      expect(callSiteIn(v8(`a (${min}:4:52000)`, `b (${min}:4:61000)`, `c (${min}:4:90100)`), mex)).toBe(`${min}:4:90100`);
      expect(callSiteIn(v8(`a (${min}:4:52000)`, `b (${min}:4:61000)`, `c (${min}:4:100)`), mex)).toBe(`${min}:4:100`);
    });
    it("Firefox's and Safari's format", () => {
      const gex = extents([`${page}:326:34`, `${page}:4115:22`], [`${page}:329:33`, `${page}:1890:19`], "gecko");
      expect(callSiteIn(gecko(`callSite@${page}:2219:17`, `add2@${page}:3004:10`, `loss@${page}:4120:3`, `@${page}:4125:19`), gex)).toBe(`${page}:4120:3`);
    });
  });

  it("wengert's own code made with new Function is skipped; the user's has no place to name", () => {
    const core = "/w/packages/core/dist";
    const ex = extents([`${core}/trace/extent.js:1:42`, `${core}/trace/extent-end.js:5:24`], ["/w/packages/ops/dist/extent.js:1:1", undefined]);
    const top = [`callSite (${core}/trace/callsite.js:40:17)`, `add (${core}/api/primitives.js:12:10)`];
    expect(callSiteIn(v8(...top, `eval (eval at compileReplay (${core}/jit/gradient.js:50:12), <anonymous>:3:4)`, "main (/w/main.js:5:1)"), ex)).toBe(
      "/w/main.js:5:1",
    );
    expect(callSiteIn(v8(...top, "eval (eval at run (/w/main.js:3:9), <anonymous>:3:4)", "main (/w/main.js:5:1)"), ex)).toBe("");
  });

  describe("a layout it cannot read gives no place rather than a wrong one", () => {
    const page = "http://127.0.0.1:8080/page.js";
    const frames = [`callSite (${page}:2219:17)`, `add2 (${page}:3004:10)`, `loss (${page}:4120:3)`];
    it("a bundle whose last modules were dropped (a bare import removed as side-effect free)", () => {
      expect(callSiteIn(v8(...frames), extents([`${page}:326:34`, undefined], [`${page}:329:33`, undefined]))).toBe("");
    });
    it("a bundle that does not keep modules in order (this module outside the span)", () => {
      expect(callSiteIn(v8(...frames), extents([`${page}:3000:34`, `${page}:4115:22`], [`${page}:3001:33`, `${page}:3500:19`]))).toBe("");
    });
    it("wengert split over chunks: first and last module in different files", () => {
      const ex = extents(["http://h/chunk-a.js:1:1", "http://h/chunk-b.js:9:1"], ["http://h/chunk-a.js:2:1", "http://h/chunk-b.js:3:1"]);
      expect(callSiteIn(v8(`callSite (http://h/chunk-a.js:5:1)`, `loss (${page}:4120:3)`), ex)).toBe("");
    });
  });
});

// Real runs: an installed copy and esbuild bundles, each run by Node with and without
// source maps, raising the same ShapeError twice (untraced, and inside grad).
const root = fileURLToPath(new URL("../../../../", import.meta.url));
const USER = `import ndarray from "ndarray";
import { add, grad, sum } from "@wengert/core";
const nd = (d) => ndarray(new Float64Array(d.reduce((a, b) => a * b, 1)), d);
try { add(nd([2, 3]), nd([4])); } catch (e) { console.log(e.message); }
try { grad((t) => sum(add(t, nd([4]))), nd([2, 3])); } catch (e) { console.log(e.message); }
`;
/** The places USER's two errors must name: line 4 at add, line 5 at the inner add. */
const PLACES = [":4:7.", ":5:23."];

describe("real runs in Node", () => {
  let dir: string;
  beforeAll(() => {
    execFileSync("npx", ["tsc", "-b", "packages/ops", "packages/core"], { cwd: root, stdio: "pipe" });
    dir = mkdtempSync(join(tmpdir(), "wengert-callsite-"));
    // an installed copy: the packages' files as npm would lay them out (package.json and dist/)
    for (const name of ["core", "ops"]) {
      cpSync(join(root, "packages", name, "package.json"), join(dir, "node_modules/@wengert", name, "package.json"));
      cpSync(join(root, "packages", name, "dist"), join(dir, "node_modules/@wengert", name, "dist"), { recursive: true });
    }
    symlinkSync(join(root, "node_modules/ndarray"), join(dir, "node_modules/ndarray"));
    writeFileSync(join(dir, "user.mjs"), USER);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** Node's output running `file` in the temporary directory. */
  function run(file: string, ...flags: string[]): string[] {
    const r = spawnSync(process.execPath, [...flags, file], { cwd: dir, encoding: "utf8", timeout: 30_000 });
    expect(r.stderr).toBe("");
    return r.stdout.trim().split("\n");
  }

  it.each([
    ["without source maps", []],
    ["with --enable-source-maps", ["--enable-source-maps"]],
  ])("an installed copy (node_modules/@wengert/core/dist), %s", (_, flags) => {
    const lines = run("user.mjs", ...flags);
    expect(lines).toHaveLength(2);
    lines.forEach((line, k) => expect(line).toContain(`, at ${join(dir, "user.mjs")}${PLACES[k]}`));
  });

  it.each([
    ["esm", false],
    ["iife", false],
    ["esm", true],
    ["iife", true],
  ] as const)("an esbuild bundle (%s, minified: %s): the user's line in the bundle, or in user.mjs under source maps", async (format, minify) => {
    const out = join(dir, `bundle-${format}-${minify}.js`);
    await build({ entryPoints: [join(dir, "user.mjs")], bundle: true, format, minify, sourcemap: true, outfile: out, logLevel: "silent", absWorkingDir: dir });
    const bundle = readFileSync(out, "utf8").split("\n");
    for (const line of run(out)) {
      // the place named is in the bundle, and the text there is the user's call of add
      const m = new RegExp(`, at ${out.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:(\\d+):(\\d+)\\.$`).exec(line);
      expect(m, line).not.toBeNull();
      const at = bundle[Number(m![1]) - 1].slice(Number(m![2]) - 1, Number(m![2]) + 40);
      expect(at, line).toMatch(minify ? /^[\w$]+\(/ : /^add\d*\(/);
      expect(at, line).toContain("[4]");
    }
    const mapped = run(out, "--enable-source-maps");
    mapped.forEach((line, k) => expect(line).toContain(`, at ${join(dir, "user.mjs")}${PLACES[k]}`));
  });
});
