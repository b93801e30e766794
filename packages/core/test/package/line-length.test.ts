/**
 * @file No line of any package's sources (packages/<name>/src/**.ts) is over 160
 * characters (issue #23): a longer line is read by scrolling, and a long message, parameter
 * list or conditional reads better split at its clauses. Characters are code points, as an
 * editor counts them (a "≥", or a "𝑥" of two UTF-16 units, is one).
 */
import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { describe, expect, it } from "vitest";
import { PACKAGES, packageSources } from "../helpers/sources.js";

const MAX = 160;

/** `file:line (n characters)` for each line of `text` over `max` code points. */
function longLines(file: string, text: string, max: number): string[] {
  const found: string[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    const length = [...line].length;
    if (length > max) found.push(`${file}:${i + 1} (${length} characters)`);
  });
  return found;
}

const files = packageSources().map((path) => ({ path, name: relative(PACKAGES, path).split("\\").join("/") }));

describe("line length", () => {
  it("finds the lines over the limit, by file and line, counting code points", () => {
    const text = ["short", "x".repeat(MAX), "y".repeat(MAX + 1), "𝑥".repeat(MAX), "z".repeat(MAX) + "\r", ""].join("\n");
    expect(longLines("a.ts", text, MAX)).toEqual([`a.ts:3 (${MAX + 1} characters)`]);
  });

  it(`no line of packages/*/src over ${MAX} characters`, () => {
    expect(files.length).toBeGreaterThan(50);
    const found = files.flatMap((f) => longLines(`packages/${f.name}`, readFileSync(f.path, "utf8"), MAX));
    expect(found).toEqual([]);
  });
});
