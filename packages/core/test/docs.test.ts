/**
 * The examples of README.md and docs/*.md run as written. Every ```ts block that imports
 * from "@wengert/core" (written as plain JavaScript) is saved as an .mjs file under
 * node_modules/.cache/wengert-docs/ (inside the repository, so "@wengert/core" resolves
 * to the built package) and run with node; it must exit with status 0.
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
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const cache = join(root, "node_modules", ".cache", "wengert-docs");
const GUIDES = ["docs/forward-mode.md", "docs/jacobians.md", "docs/define-op.md", "docs/checking.md", "docs/scan.md"];

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
    if (!/from\s+["']@wengert\/core["']/.test(code)) continue;
    const logs = body.filter((l) => l.includes("console.log("));
    const comments = logs.map(expectedComment);
    const checked = logs.length > 0 && comments.every((c) => c !== null && c !== "");
    out.push({ name: `${file}:${start}`, code, expected: checked ? (comments as string[]) : null });
  }
  return out;
}

/** The block as a module: one-line console.log, and `// throws X` lines wrapped. */
function program(code: string): string {
  const prelude = [
    'import { inspect as __inspect } from "node:util";',
    "console.log = (...args) => process.stdout.write(args.map((a) => (typeof a === \"string\" ? a : " +
      "__inspect(a, { depth: null, breakLength: Infinity, maxArrayLength: null, maxStringLength: null }))).join(\" \") + \"\\n\");",
  ];
  const body = code.split("\n").map((line, k) => {
    const m = /^(\s*)(.*;)\s*\/\/ throws (\w+)\s*$/.exec(line);
    if (!m || line.includes("console.log(")) return line;
    const [, indent, stmt, name] = m;
    return `${indent}{ let __threw = false; try { ${stmt} } catch (__e) { if (__e?.name !== "${name}") throw __e; __threw = true; } ` +
      `if (!__threw) throw new Error("line ${k + 1} of the example should throw ${name}"); }`;
  });
  return [...prelude, ...body, ""].join("\n");
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

const files = ["README.md", ...readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md")).sort().map((f) => `docs/${f}`)];
const examples = files.flatMap(blocks);

describe("documentation examples", () => {
  beforeAll(() => {
    execFileSync("npx", ["tsc", "-b", "packages/ops", "packages/core"], { cwd: root, stdio: "pipe" });
    mkdirSync(cache, { recursive: true });
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

  it("every guide exists and has a checked example", () => {
    for (const guide of GUIDES) {
      expect(existsSync(join(root, guide)), guide).toBe(true);
      expect(examples.some((e) => e.name.startsWith(`${guide}:`) && e.expected !== null), guide).toBe(true);
    }
  });

  it.each(examples.map((e) => ({ ...e, kind: e.expected ? "checked" : "run only" })))("$name ($kind)", ({ name, code, expected }) => {
    const path = join(cache, `${name.replace(/[^A-Za-z0-9]+/g, "_")}.mjs`);
    writeFileSync(path, program(code));
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
