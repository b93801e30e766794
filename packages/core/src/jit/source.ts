/**
 * @file Re-rolled nodes as JavaScript source: loops whose indices are affine in the counters.
 *
 * A statement's code comes from its caller (`template`), given its indices as
 * expressions; this writes the loops around them. Inside `for (let r0 …)` an index of
 * the first repetition `14` moving by 7 becomes `14+7*r0`; nested loops add their own
 * terms. Long code is cut into several functions (chunks): V8 does not optimise a
 * function past a certain size, and a loop-free trace can be long.
 */
import type { Node } from "./reroll.js";

/** The code of one statement of shape `sig`, given its indices as expressions. */
export type Template = (sig: number, idx: readonly string[]) => string;

/** `c + Σ coef·counter`, printed as a JavaScript expression. */
interface Affine {
  readonly c: number;
  readonly terms: string;
}

const show = (x: Affine): string => (x.terms === "" ? String(x.c) : x.c === 0 ? x.terms.replace(/^\+/, "") : `${x.c}${x.terms}`);

const plus = (x: Affine, coef: number, counter: string): Affine =>
  coef === 0 ? x : { c: x.c, terms: `${x.terms}${coef < 0 ? "-" : "+"}${Math.abs(coef) === 1 ? "" : `${Math.abs(coef)}*`}${counter}` };

/** Statements per chunk (a loop's body counts once): well within what V8 optimises. */
export const CHUNK = 1500;

/** The source of each chunk of `nodes`, in order. */
export function chunkSources(nodes: readonly Node[], template: Template): string[] {
  const chunks: string[] = [];
  let lines: string[] = [];
  let size = 0;
  for (const node of nodes) {
    const code = nodeSource(node, node.idx.map((c) => ({ c, terms: "" })), template, 0);
    lines.push(code.text);
    size += code.size;
    if (size >= CHUNK) {
      chunks.push(lines.join("\n"));
      lines = [];
      size = 0;
    }
  }
  if (lines.length > 0) chunks.push(lines.join("\n"));
  return chunks;
}

/** One node's code and its size in statements (recursive in the loop nesting only, which is shallow). */
function nodeSource(node: Node, idx: readonly Affine[], template: Template, depth: number): { text: string; size: number } {
  if (node.kind === "stmt") return { text: template(node.sig, idx.map(show)), size: 1 };
  const r = `r${depth}`;
  const inner = idx.map((x, k) => plus(x, node.step[k], r));
  const lines: string[] = [];
  let size = 0;
  let f = 0;
  for (const x of node.body) {
    const code = nodeSource(x, inner.slice(f, f + x.idx.length), template, depth + 1);
    f += x.idx.length;
    lines.push(code.text);
    size += code.size;
  }
  return { text: `for (let ${r} = 0; ${r} < ${node.count}; ${r}++) {\n${lines.join("\n")}\n}`, size };
}
