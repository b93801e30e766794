/**
 * The examples of README.md, docs/*.md and the packages' READMEs typecheck and run as written. Every ```ts block
 * is TypeScript a user would write (a snippet only to be read goes in a ```js block): it
 * is saved as an .mts file under packages/core/node_modules/.cache/wengert-docs/ (so "@wengert/core" and
 * "ndarray", with its types, resolve as they do for a user of the built package), all of
 * them are compiled by one `tsc --strict` run, which must report no error in any block,
 * and each compiled block is run with node; it must exit with status 0.
 *
 * Conventions:
 * - A block is *checked* when every line with `console.log(…)` ends with a comment,
 *   `console.log(x); // <expected>`. Its printed lines are then compared in order with
 *   the comments. A line and its comment are equal when their texts are, or when both
 *   are JavaScript literals (numbers, arrays, plain objects, `Infinity`…) with the same
 *   structure, numbers agreeing within 1e-9 relative (1e-12 absolute). Each
 *   console.log prints one line: the harness prints non-string arguments with
 *   util.inspect on one line (Node's own format, without line breaks).
 * - A statement line ending with `// throws SomeError` must throw an error of that name
 *   (the example goes on after it).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { checkThrows } from "../helpers/throws.js";

const root = fileURLToPath(new URL("../../../../", import.meta.url));
const cache = join(root, "packages", "core", "node_modules", ".cache", "wengert-docs");
const GUIDES = [
  "docs/forward-mode.md", "docs/jacobians.md", "docs/define-op.md", "docs/checking.md", "docs/scan.md", "docs/jit-vmap.md", "docs/tensors.md",
  "docs/compile.md", "docs/ties.md",
];

interface Example {
  readonly name: string;
  readonly code: string;
  /** The expected printed lines, or null when the block is only run. */
  readonly expected: string[] | null;
}

/** The trailing `// …` comment after the console.log(…) call on this line, or null. */
function expectedComment(line: string): string | null {
  const start = line.indexOf("console.log(");
  if (start < 0) return null;
  let depth = 0;
  let quote = "";
  for (let i = start + "console.log".length; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === "\\") i++;
      else if (c === quote) quote = "";
    } else if (c === '"' || c === "'" || c === "`") quote = c;
    else if (c === "(") depth++;
    else if (c === ")" && --depth === 0) {
      const m = /^;?\s*\/\/ ?(.*)$/.exec(line.slice(i + 1));
      return m ? m[1].trim() : null;
    }
  }
  return null;
}

function blocks(file: string): Example[] {
  const lines = readFileSync(join(root, file), "utf8").split("\n");
  const out: Example[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^```ts\s*$/.test(lines[i])) continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && !/^```\s*$/.test(lines[end])) end++;
    const body = lines.slice(start, end);
    i = end;
    const code = body.join("\n");
    const logs = body.filter((l) => l.includes("console.log("));
    const comments = logs.map(expectedComment);
    const checked = logs.length > 0 && comments.every((c) => c !== null && c !== "");
    out.push({ name: `${file}:${start}`, code, expected: checked ? (comments as string[]) : null });
  }
  return out;
}

/** console.log printing each call on one line, imported first by every block. */
const PRELUDE = [
  'import { inspect } from "node:util";',
  "console.log = (...args: unknown[]) => {",
  '  process.stdout.write(args.map((a) => (typeof a === "string" ? a : ' +
    'inspect(a, { depth: null, breakLength: Infinity, maxArrayLength: null, maxStringLength: null }))).join(" ") + "\\n");',
  "};",
  "",
].join("\n");

/** The compiler's settings for the blocks: strict, as a user's project would be. */
const TSCONFIG = {
  compilerOptions: {
    strict: true,
    target: "ES2022",
    module: "NodeNext",
    moduleResolution: "NodeNext",
    lib: ["ES2022"],
    types: ["node"],
    skipLibCheck: true,
    rootDir: ".",
    outDir: "out",
  },
};

/**
 * The block as a module: the prelude imported on a line of its own (so line k + 1 of the
 * file is line k of the block), and `// throws X` lines wrapped, each on its line.
 */
function program(code: string): string {
  return ['import "./__prelude.mjs";', checkThrows(code), ""].join("\n");
}

const fileOf = (name: string): string => name.replace(/[^A-Za-z0-9]+/g, "_");

/**
 * Compile every block with one tsc run; returns each block's errors, by block name, as
 * `FILE.md:LINE:COL: message` (the line in the Markdown file).
 */
function compile(examples: readonly Example[]): Map<string, string[]> {
  rmSync(cache, { recursive: true, force: true });
  mkdirSync(cache, { recursive: true });
  writeFileSync(join(cache, "__prelude.mts"), PRELUDE);
  const files = ["__prelude.mts"];
  for (const e of examples) {
    writeFileSync(join(cache, `${fileOf(e.name)}.mts`), program(e.code));
    files.push(`${fileOf(e.name)}.mts`);
  }
  writeFileSync(join(cache, "tsconfig.json"), JSON.stringify({ ...TSCONFIG, files }, null, 2));
  const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
  const r = spawnSync(process.execPath, [tsc, "-p", join(cache, "tsconfig.json"), "--pretty", "false"], { cwd: root, encoding: "utf8" });
  const errors = new Map<string, string[]>(examples.map((e) => [e.name, []]));
  const byFile = new Map(examples.map((e) => [`${fileOf(e.name)}.mts`, e]));
  let last: string[] | null = null;
  for (const line of r.stdout.split("\n")) {
    const m = /^(.*?)\((\d+),(\d+)\): error (.*)$/.exec(line);
    if (m === null) {
      // a message's continuation lines, indented
      if (last !== null && line.trim() !== "") last.push(`    ${line.trim()}`);
      continue;
    }
    const e = byFile.get(m[1].replace(/^.*[\\/]/, ""));
    if (e === undefined) throw new Error(`tsc reports an error outside the examples: ${line}`);
    const [file, start] = e.name.split(":");
    last = errors.get(e.name)!;
    last.push(`${file}:${Number(start) + Number(m[2]) - 1}:${m[3]}: ${m[4]}`);
  }
  if (r.status !== 0 && [...errors.values()].every((l) => l.length === 0)) throw new Error(`tsc failed:\n${r.stdout}${r.stderr}`);
  return errors;
}

/** A JavaScript literal's value, or undefined if the text is not one. */
function literal(text: string): { value: unknown } | undefined {
  try {
    return { value: new Function(`"use strict"; return (${text});`)() };
  } catch {
    return undefined;
  }
}

function close(a: unknown, e: unknown): boolean {
  if (typeof a === "number" && typeof e === "number") {
    return a === e || (Number.isNaN(a) && Number.isNaN(e)) || Math.abs(a - e) <= 1e-9 * Math.max(Math.abs(a), Math.abs(e)) + 1e-12;
  }
  if (Array.isArray(a) || Array.isArray(e)) {
    return Array.isArray(a) && Array.isArray(e) && a.length === e.length && a.every((x, i) => close(x, e[i]));
  }
  if (a !== null && e !== null && typeof a === "object" && typeof e === "object") {
    const ka = Object.keys(a);
    const ke = Object.keys(e);
    return ka.length === ke.length && ka.every((k, i) => k === ke[i] && close((a as never)[k], (e as never)[k]));
  }
  return a === e;
}

/** A printed line matches its expected comment (see the file's header). */
function same(actual: string, expected: string): boolean {
  if (actual.trim() === expected.trim()) return true;
  const a = literal(actual);
  const e = literal(expected);
  return a !== undefined && e !== undefined && close(a.value, e.value);
}

const files = [
  "README.md",
  ...readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md")).sort().map((f) => `docs/${f}`),
  "packages/core/README.md",
  "packages/ops/README.md",
  "packages/optim/README.md",
];
const examples = files.flatMap(blocks);
let typeErrors = new Map<string, string[]>();
/** A block with a type error on its second line, compiled with the others: the harness must report it there. */
const WRONG: Example = { name: "wrong.md:10", code: 'import { grad } from "@wengert/core";\nconst s: string = grad((x) => x, 1);', expected: null };

describe("documentation examples", () => {
  beforeAll(() => {
    execFileSync("npx", ["tsc", "-b", "packages/ops", "packages/core", "packages/optim"], { cwd: root, stdio: "pipe" });
    typeErrors = compile([...examples, WRONG]);
  }, 180_000);

  it("the harness: comments, literals and tolerances", () => {
    expect(expectedComment('console.log(f("a)", 1)); // [ 6, 12 ]')).toBe("[ 6, 12 ]");
    expect(expectedComment("console.log(x);")).toBeNull();
    expect(expectedComment("console.log(a, // not the end")).toBeNull();
    expect(same("[ 6, 0.9092974268256817 ]", "[6, 0.9092974268]")).toBe(true);
    expect(same("{ x: { r: 1 }, y: [ 2 ] }", "{ x: { r: 1.0000000001 }, y: [2] }")).toBe(true);
    expect(same("[ 6, 0.91 ]", "[6, 0.9]")).toBe(false);
    expect(same("{ x: 1 }", "{ y: 1 }")).toBe(false);
    expect(same("Infinity", "Infinity")).toBe(true);
    expect(same("grad: the trace reached 3", "grad: the trace reached 3")).toBe(true);
    expect(same("reverse vs finite differences", "forward vs reverse")).toBe(false);
  });

  it("the harness: a type error is reported at its line in the Markdown file", () => {
    expect(typeErrors.get(WRONG.name)).toEqual([expect.stringMatching(/^wrong\.md:12:7: TS2322: Type 'number' is not assignable to type 'string'/)]);
  });

  it("every guide exists and has a checked example", () => {
    for (const guide of GUIDES) {
      expect(existsSync(join(root, guide)), guide).toBe(true);
      expect(examples.some((e) => e.name.startsWith(`${guide}:`) && e.expected !== null), guide).toBe(true);
    }
  });

  it.each(examples.map((e) => ({ ...e, kind: e.expected ? "checked" : "run only" })))("$name ($kind)", ({ name, expected }) => {
    const errors = typeErrors.get(name) ?? [];
    expect(errors, `${name} does not typecheck under --strict:\n${errors.join("\n")}`).toEqual([]);
    const path = join(cache, "out", `${fileOf(name)}.mjs`);
    const r = spawnSync(process.execPath, [path], { cwd: root, encoding: "utf8", timeout: 30_000 });
    expect(r.status, `${name} exited with ${r.status}${r.signal ? ` (${r.signal})` : ""}:\n${r.stderr}`).toBe(0);
    if (expected === null) return;
    const printed = r.stdout.split("\n");
    if (printed.at(-1) === "") printed.pop();
    expect(printed.length, `${name}: printed ${printed.length} lines, the comments expect ${expected.length}:\n${r.stdout}`).toBe(expected.length);
    expected.forEach((want, k) => {
      expect(same(printed[k], want), `${name}, console.log #${k + 1}:\n  printed:  ${printed[k]}\n  expected: ${want}`).toBe(true);
    });
  });
});
