/**
 * @file A documentation example's `// throws SomeError` lines made checks, for the tests
 * that run the examples (docs.test.ts: README.md and docs/*.md; consumer.test.ts: the
 * packages' READMEs, installed): the statement must throw an error of that name, and the
 * example goes on after it. Each line stays on its line, so errors keep their lines.
 */

/** `code` with each statement line ending `// throws Name` wrapped in a check that it throws `Name`. */
export function checkThrows(code: string): string {
  return code
    .split("\n")
    .map((line, k) => {
      const m = /^(\s*)(.*;)\s*\/\/ throws (\w+)\s*$/.exec(line);
      if (!m || line.includes("console.log(")) return line;
      const [, indent, stmt, name] = m;
      return `${indent}{ let __threw = false; try { ${stmt} } catch (__e) { if ((__e as Error | null)?.name !== "${name}") throw __e; __threw = true; } ` +
        `if (!__threw) throw new Error("line ${k + 1} of the example should throw ${name}"); }`;
    })
    .join("\n");
}
