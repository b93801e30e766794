/**
 * @file README's diagram of core's layers ("The modules form layers, each importing only
 * those beneath it") holds: a module the diagram places imports no module placed on a line
 * above its own. A line names files (`trace/tape.ts columns.ts`: a bare name is in the
 * folder of the name before it) or folders (`diff/`); a file's line is the one naming it,
 * else the one naming its folder; modules the diagram does not place are not checked.
 * (diff/ importing jit/javascript.ts once contradicted a diagram that put jit/ on top.)
 */
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { importsOf, PACKAGES, sources } from "../helpers/sources.js";

const SRC = join(PACKAGES, "core", "src");

/** The names of each line of the diagram, top first, as paths under core/src ("diff/" a folder). */
function layers(diagram: string): string[][] {
  return diagram
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => {
      const names: string[] = [];
      let folder = "";
      for (const token of line.trim().split(/\s+/)) {
        if (!/^[\w@.-]+(\/[\w.-]*)*$/.test(token) || !(token.includes("/") || token.endsWith(".ts"))) break;
        const path = token.includes("/") || token.startsWith("@") ? token : folder + token;
        folder = path.slice(0, path.lastIndexOf("/") + 1);
        names.push(path);
      }
      return names;
    });
}

/** A module's line in the diagram (its own name's, else its folder's), or -1. */
function lineOf(lines: readonly string[][], path: string): number {
  const own = lines.findIndex((l) => l.includes(path));
  if (own >= 0) return own;
  const folder = path.slice(0, path.lastIndexOf("/") + 1);
  return folder === "" ? -1 : lines.findIndex((l) => l.includes(folder));
}

/** Each import from a module to one placed above it, as `a (line i) imports b (line j)`. */
function upward(lines: readonly string[][], imports: ReadonlyMap<string, readonly string[]>): string[] {
  const found: string[] = [];
  for (const [from, tos] of imports) {
    const at = lineOf(lines, from);
    if (at < 0) continue;
    for (const to of tos) {
      const there = lineOf(lines, to);
      if (there >= 0 && there < at) found.push(`${from} (line ${at + 1}) imports ${to} (line ${there + 1})`);
    }
  }
  return found;
}

const readme = readFileSync(join(PACKAGES, "..", "README.md"), "utf8");
const intro = readme.indexOf("The modules form layers");
const open = readme.indexOf("```\n", intro) + 4;
const diagram = readme.slice(open, readme.indexOf("```", open));

describe("README's layers of @wengert/core", () => {
  it("the harness: names, bare names in the folder before, folders, and imports upward", () => {
    const lines = layers("api/ jit/      the user's functions\n  api/tracing.ts  f traced\ntrace/tape.ts columns.ts   the tape\n");
    expect(lines).toEqual([["api/", "jit/"], ["api/tracing.ts"], ["trace/tape.ts", "trace/columns.ts"]]);
    expect(lineOf(lines, "api/jit.ts")).toBe(0);
    expect(lineOf(lines, "diff/sweep.ts")).toBe(-1);
    const imports = new Map([
      ["api/tracing.ts", ["trace/columns.ts", "api/jit.ts"]],
      ["api/jit.ts", ["api/tracing.ts"]],
    ]);
    expect(upward(lines, imports)).toEqual(["api/tracing.ts (line 2) imports api/jit.ts (line 1)"]);
  });

  it("places most of core's modules", () => {
    const lines = layers(diagram);
    expect(lines.length).toBeGreaterThan(10);
    const placed = sources(SRC).filter((f) => lineOf(lines, relative(SRC, f)) >= 0);
    expect(placed.length).toBeGreaterThan(80);
  });

  it("no module imports one placed above it", () => {
    const imports = new Map(
      sources(SRC).map((f) => [relative(SRC, f), importsOf(f, readFileSync(f, "utf8")).map((t) => relative(SRC, t))] as const),
    );
    expect(upward(layers(diagram), imports)).toEqual([]);
  });
});
