/**
 * README's "How it is built" names every module of @wengert/ops and @wengert/core, so the
 * map a newcomer reads first has no holes: a file added without a line there fails here.
 * (The other packages are described there by folder; their own READMEs map them: optim's
 * file by file, checked the same way, bench's by file and folder.) The other way round,
 * every file those maps name exists, so a file moved or removed leaves no stale line.
 */
import { existsSync, readFileSync } from "node:fs";
import { basename, join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { PACKAGES, sources } from "../helpers/sources.js";

/** The text of `file`'s section under `heading`, up to the next section of its level. */
function section(file: string, heading: string): string {
  const text = readFileSync(join(PACKAGES, "..", file), "utf8");
  const start = text.indexOf(`\n${heading}\n`);
  if (start < 0) return "";
  const next = text.indexOf(`\n${heading.split(" ")[0]} `, start + 1);
  return text.slice(start, next < 0 ? undefined : next);
}

const MAPS = [
  { file: "README.md", heading: "## How it is built", packages: ["ops", "core", "optim", "playground", "bench"] },
  { file: "packages/optim/README.md", heading: "## How it is built", packages: ["optim"] },
  { file: "packages/bench/README.md", heading: "## Layout", packages: ["bench"] },
];

/** A file's name as a word of the text: "tape.ts" must not be found inside "scan-tape.ts". */
const named = (text: string, file: string): boolean => new RegExp(`(^|[\\s(/,])${basename(file).replace(/\./g, "\\.")}\\b`).test(text);

/** The files of a package a map may name: its sources, tests, bench scripts, examples and build script. */
function filesOf(pkg: string): string[] {
  const dir = join(PACKAGES, pkg);
  const extra = ["build.mjs"].map((f) => join(dir, f)).filter(existsSync);
  return [...["src", "test", "bench", "examples"].map((d) => join(dir, d)).filter(existsSync).flatMap(sources), ...extra];
}

describe("the maps of the sources", () => {
  it.each(MAPS)("$file has its section $heading", ({ file, heading }) => expect(section(file, heading).length).toBeGreaterThan(500));

  it.each(["ops", "core"])('README\'s "How it is built" names every module of packages/%s/src', (pkg) => {
    const text = section("README.md", "## How it is built");
    const files = sources(join(PACKAGES, pkg, "src")).filter((f) => basename(f) !== "index.ts" || f.includes("/lang/"));
    expect(files.length).toBeGreaterThan(10);
    expect(files.filter((f) => !named(text, f)).map((f) => relative(PACKAGES, f))).toEqual([]);
  });

  it('packages/optim/README.md\'s "How it is built" names every module of packages/optim/src', () => {
    const text = section("packages/optim/README.md", "## How it is built");
    const files = sources(join(PACKAGES, "optim", "src")).filter((f) => basename(f) !== "index.ts");
    expect(files.filter((f) => !named(text, f)).map((f) => relative(PACKAGES, f))).toEqual([]);
  });

  it.each(MAPS)("every file $file's $heading names exists", ({ file, heading, packages }) => {
    const text = section(file, heading);
    const existing = new Set(packages.flatMap(filesOf).map((f) => basename(f)));
    const names = [...new Set([...text.matchAll(/[\w.-]+\.(?:ts|mjs)\b/g)].map((m) => basename(m[0])))];
    expect(names.length).toBeGreaterThan(5);
    expect(names.filter((n) => !existing.has(n))).toEqual([]);
  });
});
