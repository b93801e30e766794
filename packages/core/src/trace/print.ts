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
import { showDims } from "@wengert/ops";
import { CODE, CONST, FREE, INPUT, IS_TENSOR_OP, primitiveOf, tensorSpec } from "./opcodes.js";
import type { Tape } from "./tape.js";

/**
 * What printing reads of a term: term.ts's TraceTerm, which prints itself with this
 * (declared here so that the term and its printing are not two modules importing each other).
 */
export interface PrintedTerm {
  readonly tape: Tape;
  readonly params: readonly { readonly name: string; readonly shape: Shape; readonly atoms: readonly number[] }[];
  readonly output: { readonly shape: Shape; readonly atoms: readonly number[] };
}

function atom(term: PrintedTerm, v: number): string {
  const t = term.tape;
  return t.op[v] === CONST && !t.isTensor(v) ? String(t.val[v]) : `v${v}`;
}

/** `real`, or `real[3, 4]` for a tensor. */
function typeOf(term: PrintedTerm, v: number): string {
  const d = term.tape.dims(v);
  return d.length === 0 ? "real" : `real${showDims(d)}`;
}

/** A tensor literal, abbreviated: `[1, 2, 3, …]`. */
function literal(data: Float64Array): string {
  const shown = [...data.subarray(0, 6)].join(", ");
  return `[${shown}${data.length > 6 ? `, … (${data.length})` : ""}]`;
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

export function printTerm(term: PrintedTerm): string {
  const t = term.tape;
  const lines: string[] = [];
  for (const p of term.params) {
    lines.push(`${p.name} : ${typeString(p.shape)}.`);
    const binders = p.atoms.map((v) => `v${v}:${typeOf(term, v)}`);
    if (p.shape.kind === "real") lines.push(`let ${binders[0]} = ${p.name} in`);
    else if (binders.length > 0) lines.push(`let ${structure(p.shape, binders)} = ${p.name} in`);
  }
  for (let i = 0; i < t.length; i++) {
    const code = t.op[i];
    if (code === INPUT || (code === CONST && !t.isTensor(i))) continue;
    let rhs: string;
    if (code === CONST) rhs = literal(t.buf(i));
    else if (code === FREE) rhs = t.isTensor(i) ? `free(${literal(t.buf(i))})` : `free(${t.val[i]})`;
    else if (code === CODE.add) rhs = `${atom(term, t.a[i])} + ${atom(term, t.b[i])}`;
    else {
      const p = primitiveOf(code);
      const args = t.args(i).map((v) => atom(term, v));
      const show = IS_TENSOR_OP[code] ? tensorSpec(code).show : undefined;
      if (show !== undefined) args.push(show(t.params(i)));
      rhs = `${p.name}(${args.join(", ")})`;
    }
    lines.push(`let v${i}:${typeOf(term, i)} = ${rhs} in`);
  }
  lines.push(structure(term.output.shape, term.output.atoms.map((v) => atom(term, v))));
  return lines.join("\n");
}
