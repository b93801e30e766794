/**
 * @file Printing trace terms in the paper's notation, one `let` per line:
 *
 *     x : real × real.
 *     let ⟨v0:real, v1:real⟩ = x in
 *     let v2:real = sin(v0) in
 *     let v3:real = v2 + v1 in
 *     ⟨v3, v2⟩
 *
 * Literals are written in place; `+` is the paper's infix addition. Iterative in the
 * length of the term.
 */
import { assemble, typeString, type Shape } from "../structure.js";
import { CODE, CONST, FREE, INPUT, primitiveOf } from "./opcodes.js";
import type { TraceTerm } from "./term.js";

function atom(term: TraceTerm, v: number): string {
  const t = term.tape;
  return t.op[v] === CONST ? String(t.val[v]) : `v${v}`;
}

/** A structure of atoms: `v3`, `⟨v3, v4⟩`, `*`, `{w: v3, b: v4}`. */
function structure(shape: Shape, names: readonly string[]): string {
  return assemble(
    shape,
    names,
    (items) => (items.length === 0 ? "*" : `⟨${items.join(", ")}⟩`),
    (keys, fields) => `{${keys.map((k, i) => `${k}: ${fields[i]}`).join(", ")}}`,
  );
}

export function printTerm(term: TraceTerm): string {
  const t = term.tape;
  const lines: string[] = [];
  for (const p of term.params) {
    lines.push(`${p.name} : ${typeString(p.shape)}.`);
    const binders = p.atoms.map((v) => `v${v}:real`);
    if (p.shape.kind === "real") lines.push(`let ${binders[0]} = ${p.name} in`);
    else if (binders.length > 0) lines.push(`let ${structure(p.shape, binders)} = ${p.name} in`);
  }
  for (let i = 0; i < t.length; i++) {
    const code = t.op[i];
    if (code === INPUT || code === CONST) continue;
    let rhs: string;
    if (code === FREE) rhs = `free(${t.val[i]})`;
    else if (code === CODE.add) rhs = `${atom(term, t.a[i])} + ${atom(term, t.b[i])}`;
    else {
      const p = primitiveOf(code);
      rhs = p.spec.arity === 1 ? `${p.name}(${atom(term, t.a[i])})` : `${p.name}(${atom(term, t.a[i])}, ${atom(term, t.b[i])})`;
    }
    lines.push(`let v${i}:real = ${rhs} in`);
  }
  lines.push(structure(term.output.shape, term.output.atoms.map((v) => atom(term, v))));
  return lines.join("\n");
}
