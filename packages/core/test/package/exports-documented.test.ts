/**
 * @file Every export of @wengert/core is documented twice: a doc comment on its declaration
 * (what an editor shows on hover), and its name in the documentation a user reads (README.md,
 * docs/*.md, packages/core/README.md), as code: in a code block or a `span`. A new export
 * without either fails here, naming it.
 *
 * The exports are read by TypeScript's checker from src/index.ts, aliases followed to their
 * declarations; a function's comment may sit on its declaration or its first overload.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { PACKAGES } from "../helpers/sources.js";

const root = join(PACKAGES, "..");
const entry = join(PACKAGES, "core", "src", "index.ts");

interface Export {
  readonly name: string;
  readonly file: string;
  readonly documented: boolean;
}

/** Each export of `entry`: its name, the file declaring it, whether a doc comment says what it is. */
function exportsOf(file: string): Export[] {
  const program = ts.createProgram([file], {
    strict: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    noEmit: true,
  });
  const checker = program.getTypeChecker();
  const module = checker.getSymbolAtLocation(program.getSourceFile(file)!)!;
  return checker.getExportsOfModule(module).map((s) => {
    const symbol = s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s;
    const declaration = symbol.declarations?.[0];
    const comment = (parts: ts.SymbolDisplayPart[]): boolean => ts.displayPartsToString(parts).trim() !== "";
    const signatures = declaration === undefined ? [] : checker.getTypeOfSymbolAtLocation(symbol, declaration).getCallSignatures();
    return {
      name: s.name,
      file: declaration === undefined ? "?" : relative(root, declaration.getSourceFile().fileName),
      documented: comment(symbol.getDocumentationComment(checker)) || signatures.some((g) => comment(g.getDocumentationComment(checker))),
    };
  });
}

/** The code of a Markdown text: its fenced blocks and its `spans`, one after another. */
function codeOf(markdown: string): string {
  const fenced = [...markdown.matchAll(/^```[^\n]*\n([\s\S]*?)^```/gm)].map((m) => m[1]);
  const prose = markdown.replace(/^```[^\n]*\n[\s\S]*?^```/gm, "");
  const spans = [...prose.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]);
  return [...fenced, ...spans].join("\n");
}

const DOCS = ["README.md", ...readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`), "packages/core/README.md"];
const code = DOCS.map((f) => codeOf(readFileSync(join(root, f), "utf8"))).join("\n");
const named = (name: string): boolean => new RegExp(`(^|[^\\w$])${name.replace(/\$/g, "\\$")}(?![\\w$])`).test(code);

describe("@wengert/core's exports are documented", () => {
  const exports = exportsOf(entry);

  it("reads the exports", () => {
    expect(exports.length).toBeGreaterThan(100);
    expect(exports.map((e) => e.name)).toEqual(expect.arrayContaining(["grad", "jit", "Real", "Cotangent", "RdOptions"]));
  });

  it("the harness: code spans and blocks, not prose", () => {
    const md = "Grad is a word here; `jit(f)` is code.\n```ts\nconst x = vmap(f);\n```\n";
    expect(codeOf(md)).toBe("const x = vmap(f);\n\njit(f)");
  });

  it("each has a doc comment on its declaration", () => {
    expect(exports.filter((e) => !e.documented).map((e) => `${e.name} (${e.file})`)).toEqual([]);
  });

  it(`each is named as code in ${DOCS.length} documentation files`, () => {
    expect(exports.filter((e) => !named(e.name)).map((e) => `${e.name} (${e.file})`)).toEqual([]);
  });
});
