/**
 * README's "How it is built" names every module of @wengert/ops and @wengert/core, so the
 * map a newcomer reads first has no holes: a file added without a line there fails here.
 * (The other packages are described there by folder, not file by file.)
 */
import { readFileSync } from "node:fs";
import { basename, join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { PACKAGES, sources } from "../helpers/sources.js";

const readme = readFileSync(join(PACKAGES, "..", "README.md"), "utf8");
const start = readme.indexOf("## How it is built");
const section = readme.slice(start, readme.indexOf("\n## ", start + 1));

/** A file's name as a word of the section: "tape.ts" must not be found inside "scan-tape.ts". */
const named = (file: string): boolean => new RegExp(`(^|[\\s(/,])${basename(file).replace(/\./g, "\\.")}\\b`).test(section);

describe('README\'s "How it is built"', () => {
  it("exists", () => expect(start).toBeGreaterThanOrEqual(0));
  it.each(["ops", "core"])("names every module of packages/%s/src", (pkg) => {
    const files = sources(join(PACKAGES, pkg, "src")).filter((f) => basename(f) !== "index.ts" || f.includes("/lang/"));
    expect(files.length).toBeGreaterThan(10);
    expect(files.filter((f) => !named(f)).map((f) => relative(PACKAGES, f))).toEqual([]);
  });
});
