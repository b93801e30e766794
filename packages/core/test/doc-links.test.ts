/**
 * Every file the documentation points at exists: the relative links of README.md,
 * docs/*.md and the packages' own .md files (their #anchors too, against the headings
 * of the file linked to), and every path to a .md file named in their prose, which
 * resolves from the file's folder or the repository's root (README.md named a
 * WORKLOADS.md that was not in the repository).
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const mdIn = (dir: string): string[] =>
  existsSync(join(root, dir)) ? readdirSync(join(root, dir)).filter((f) => f.endsWith(".md")).sort().map((f) => join(dir, f)) : [];
const packages = readdirSync(join(root, "packages")).filter((p) => statSync(join(root, "packages", p)).isDirectory());
const FILES = ["README.md", ...mdIn("docs"), ...packages.flatMap((p) => mdIn(join("packages", p)))];

/** The text outside fenced code blocks, line by line (code is examples, not references). */
function prose(file: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  let fenced = false;
  readFileSync(join(root, file), "utf8")
    .split("\n")
    .forEach((text, i) => {
      if (/^\s*```/.test(text)) fenced = !fenced;
      else if (!fenced) out.push({ line: i + 1, text });
    });
  return out;
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
const slug = (heading: string): string =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");

/** The anchors of a markdown file's headings (a repeated one gets -1, -2, …). */
function anchors(file: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const { text } of prose(file)) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(text);
    if (!m) continue;
    const s = slug(m[1]);
    const n = seen.get(s) ?? 0;
    seen.set(s, n + 1);
    out.add(n === 0 ? s : `${s}-${n}`);
  }
  return out;
}

/** What is wrong with the link `target` in `file`, or null. */
function brokenLink(file: string, target: string): string | null {
  if (/^[a-z][a-z+.-]*:/i.test(target)) return null; // https:, mailto:
  const [path, anchor] = target.split("#") as [string, string | undefined];
  const to = path === "" ? file : join(dirname(file), decodeURIComponent(path));
  if (!existsSync(join(root, to))) return `${to} does not exist`;
  if (anchor === undefined || !to.endsWith(".md")) return null;
  return anchors(to).has(anchor) ? null : `${to} has no heading with the anchor #${anchor} (it has ${[...anchors(to)].join(", ")})`;
}

describe("links in the documentation", () => {
  it("reads the files it should", () => {
    expect(FILES).toEqual(expect.arrayContaining(["README.md", "docs/tensors.md", "packages/bench/README.md", "packages/bench/WORKLOADS.md"]));
  });

  it("slug: as GitHub makes anchors", () => {
    expect(["Method", "`max`, `min` and ties", "W1 rosenbrock(n): scalar-op heavy [`W1-1000`]", "Ties and kinks"].map(slug)).toEqual([
      "method",
      "max-min-and-ties",
      "w1-rosenbrockn-scalar-op-heavy-w1-1000",
      "ties-and-kinks",
    ]);
  });

  it.each(FILES)("%s: every relative link points at a file (and heading) that exists", (file) => {
    const broken: string[] = [];
    for (const { line, text } of prose(file)) {
      for (const m of text.matchAll(/\]\(([^()\s]+)(?:\s+"[^"]*")?\)/g)) {
        const why = brokenLink(file, m[1]);
        if (why !== null) broken.push(`${file}:${line}: (${m[1]}): ${why}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it.each(FILES)("%s: every .md file named in the text exists, from its folder or the root", (file) => {
    const missing: string[] = [];
    for (const { line, text } of prose(file)) {
      // links are checked above (their text may be a name); addresses are not files here
      const local = text.replace(/\[[^\]]*\]\([^()\s]+\)/g, "").replace(/[a-z][a-z+.-]*:\/\/\S+/gi, "");
      for (const m of local.matchAll(/[\w.-]*(?:\/[\w.-]+)*\.md\b/g)) {
        const name = m[0].replace(/^\.\//, "");
        if (![join(dirname(file), name), name].some((p) => existsSync(join(root, p)))) missing.push(`${file}:${line}: ${name}`);
      }
    }
    expect(missing, "named in the text, but neither in the file's folder nor from the root").toEqual([]);
  });
});
