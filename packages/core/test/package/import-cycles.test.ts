/**
 * @file No import cycle in any package's sources: the modules of packages/<name>/src form
 * layers, each importing only those beneath it (README "How it is built"). Every
 * relative import counts, type-only ones and re-exports included: a type cycle is still
 * two files that cannot be read one without the other.
 */
import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { describe, expect, it } from "vitest";
import { importsOf, PACKAGES, packageSources } from "../helpers/sources.js";

/**
 * The strongly connected components of more than one module (Tarjan's algorithm with an
 * explicit stack: no recursion in the number of modules). A module importing itself
 * (`import type * as self`, to check its own exports) is no cycle between files.
 */
function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const found: string[][] = [];
  let next = 0;
  for (const root of graph.keys()) {
    if (index.has(root)) continue;
    const work: { node: string; edge: number }[] = [{ node: root, edge: 0 }];
    index.set(root, next);
    low.set(root, next++);
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const edges = graph.get(frame.node) ?? [];
      if (frame.edge < edges.length) {
        const to = edges[frame.edge++];
        if (!graph.has(to)) continue;
        if (!index.has(to)) {
          index.set(to, next);
          low.set(to, next++);
          stack.push(to);
          onStack.add(to);
          work.push({ node: to, edge: 0 });
        } else if (onStack.has(to)) low.set(frame.node, Math.min(low.get(frame.node)!, index.get(to)!));
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1].node;
        low.set(parent, Math.min(low.get(parent)!, low.get(frame.node)!));
      }
      if (low.get(frame.node) !== index.get(frame.node)) continue;
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== frame.node);
      if (component.length > 1) found.push(component.sort());
    }
  }
  return found;
}

/** One cycle through the component's first module, as a path a → b → … → a. */
function pathThrough(component: readonly string[], graph: ReadonlyMap<string, readonly string[]>): string[] {
  const inside = new Set(component);
  const start = component[0];
  const from = new Map<string, string>();
  const queue = [start];
  for (let i = 0; i < queue.length; i++) {
    for (const to of graph.get(queue[i]) ?? []) {
      if (!inside.has(to)) continue;
      if (to === start) {
        const back = [start];
        for (let at = queue[i]; at !== start; at = from.get(at)!) back.push(at);
        back.push(start);
        return back.reverse();
      }
      if (!from.has(to)) {
        from.set(to, queue[i]);
        queue.push(to);
      }
    }
  }
  return component.slice();
}

describe("import cycles", () => {
  it("finds a cycle, type-only imports and re-exports included, and names its path", () => {
    const g = new Map<string, string[]>([
      ["/a.ts", importsOf("/a.ts", 'import type { B } from "./b.js";\n// import "./d.js"\n')],
      ["/b.ts", importsOf("/b.ts", 'export { c } from "./c.js";')],
      ["/c.ts", importsOf("/c.ts", '/* import "./z.js" */ import "./a.js";')],
      ["/d.ts", importsOf("/d.ts", 'import { a } from "./a.js";')],
    ]);
    expect(g.get("/a.ts")).toEqual(["/b.ts"]);
    const found = cycles(g);
    expect(found).toEqual([["/a.ts", "/b.ts", "/c.ts"]]);
    expect(pathThrough(found[0], g)).toEqual(["/a.ts", "/b.ts", "/c.ts", "/a.ts"]);
    g.set("/c.ts", []);
    expect(cycles(g)).toEqual([]);
  });

  it("none among the modules of packages/*/src", () => {
    const graph = new Map<string, string[]>();
    for (const file of packageSources()) graph.set(file, importsOf(file, readFileSync(file, "utf8")));
    expect(graph.size).toBeGreaterThan(50);
    const named = cycles(graph).map((c) => pathThrough(c, graph).map((f) => relative(PACKAGES, f)).join(" → ") + ` (${c.length} modules)`);
    expect(named).toEqual([]);
  });
});
