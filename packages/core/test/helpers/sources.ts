/**
 * @file The TypeScript sources of the workspace's packages (packages/<name>/src/**.ts),
 * for the tests that check them as text: import cycles, layers, line length.
 */
import { existsSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The packages/ folder of the workspace. */
export const PACKAGES = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

/** Every .ts file under `dir`, sorted, by an explicit stack (no recursion); node_modules and dist are not sources. */
export function sources(dir: string): string[] {
  const files: string[] = [];
  const stack = [dir];
  while (stack.length > 0) {
    const here = stack.pop()!;
    for (const entry of readdirSync(here, { withFileTypes: true })) {
      const path = join(here, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== "node_modules" && entry.name !== "dist") stack.push(path);
      } else if (entry.name.endsWith(".ts")) files.push(path);
    }
  }
  return files.sort();
}

/** Every .ts file of every package's src folder (packages without one have none). */
export function packageSources(): string[] {
  return readdirSync(PACKAGES)
    .sort()
    .map((pkg) => join(PACKAGES, pkg, "src"))
    .filter((src) => existsSync(src))
    .flatMap(sources);
}

// `import … from "./x.js"`, `export … from "./x.js"`, `import "./x.js"`, `import("./x.js")`,
// `import type * as self from "./x.js"`; comments are removed first.
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(?\s*)["'](\.{1,2}\/[^"']+)["']/g;

/** The relative imports of `source` (a module of `file`), as absolute .ts paths. */
export function importsOf(file: string, source: string): string[] {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`])\/\/.*$/gm, "$1");
  const found: string[] = [];
  for (const m of code.matchAll(SPECIFIER)) found.push(resolve(dirname(file), m[1].replace(/\.js$/, ".ts")));
  return found;
}
