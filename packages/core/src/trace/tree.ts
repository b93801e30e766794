/**
 * @file Tree-shaped trace terms: the paper's grammar of trace terms (Sec. 3), as data.
 *
 *     C ::= x | r | C + D | op(C) | let x:T = C in D | * | ⟨C, D⟩_{T,U} | fst_{T,U}(C) | snd_{T,U}(C)
 *
 * with the paper's types `real`, `unit`, `T × U`. Binary primitives take a pair, as
 * `op : real × real → real` does in the paper. These trees are what the literal Fig. 6
 * differentiator (diff/reference.ts) works on; `toTree` converts a tape to one, and
 * `evaluateTree` is Fig. 2's ordinary evaluation of a trace term. Both recurse on the
 * term's depth: they are an executable specification for small terms, not a
 * production path (the tape is).
 */
import { BINARY_NAMES, UNARY_NAMES } from "@wengert/ops";
import { assemble, assertNever, type Shape } from "../structure.js";
import { WengertError } from "../errors.js";
import type { CodeEmitter } from "./lifted.js";
import { CODE, CONST, FREE, INPUT, primitiveOf, scalarCodeOf, scalarSpec } from "./opcodes.js";
import type { TraceTerm } from "./term.js";

export type Type = { readonly kind: "real" } | { readonly kind: "unit" } | { readonly kind: "prod"; readonly fst: Type; readonly snd: Type };

export type Tree =
  | { readonly kind: "var"; readonly name: string }
  | { readonly kind: "const"; readonly value: number }
  | { readonly kind: "add"; readonly left: Tree; readonly right: Tree }
  /** A primitive on reals, built-in or user-defined, by name; a binary one's argument is a pair. */
  | { readonly kind: "op"; readonly op: string; readonly arg: Tree }
  | { readonly kind: "let"; readonly name: string; readonly type: Type; readonly bound: Tree; readonly body: Tree }
  | { readonly kind: "unit" }
  | { readonly kind: "pair"; readonly fst: Tree; readonly snd: Tree; readonly types: readonly [Type, Type] }
  | { readonly kind: "fst"; readonly arg: Tree; readonly types: readonly [Type, Type] }
  | { readonly kind: "snd"; readonly arg: Tree; readonly types: readonly [Type, Type] };

/** Closed values: `r`, `*`, `⟨V, W⟩`. */
export type TreeValue = number | "*" | readonly [TreeValue, TreeValue];

export const REAL_T: Type = { kind: "real" };
export const UNIT_T: Type = { kind: "unit" };
export const prod = (fst: Type, snd: Type): Type => ({ kind: "prod", fst, snd });
export const v = (name: string): Tree => ({ kind: "var", name });
export const num = (value: number): Tree => ({ kind: "const", value });
export const pair = (fst: Tree, snd: Tree, types: readonly [Type, Type]): Tree => ({ kind: "pair", fst, snd, types });
export const letIn = (name: string, type: Type, bound: Tree, body: Tree): Tree => ({ kind: "let", name, type, bound, body });

/** `op(a)`, or `op(⟨a, b⟩)` for a binary one: the paper's `+` for add, a primitive otherwise. */
export function opTree(code: number, a: Tree, b: Tree): Tree {
  if (code === CODE.add) return { kind: "add", left: a, right: b };
  const op = primitiveOf(code).name;
  return scalarSpec(code).arity === 1 ? { kind: "op", op, arg: a } : { kind: "op", op, arg: pair(a, b, [REAL_T, REAL_T]) };
}

/** Primitives building trees, so reverse rules (a user primitive's too) write `op_r` as a trace term. */
export function treeEmitter(): CodeEmitter<Tree> {
  const e: Record<string, unknown> = { lit: num, apply: opTree, context: "the Fig. 6 reference (rules as trace terms)" };
  for (const name of UNARY_NAMES) e[name] = (x: Tree): Tree => opTree(CODE[name], x, x);
  for (const name of BINARY_NAMES) e[name] = (a: Tree, b: Tree): Tree => opTree(CODE[name], a, b);
  return e as CodeEmitter<Tree>;
}

/**
 * The paper's type of a structure: tuples are iterated products
 * (`T0 × … × Tn−1` = `(T0 × … × Tn−2) × Tn−1`, `unit` for n = 0, `T0` for n = 1);
 * records are tuples of their fields.
 */
export function typeOfShape(shape: Shape): Type {
  switch (shape.kind) {
    case "real":
      return REAL_T;
    case "tensor":
      throw new WengertError("the paper's language has no tensor types (they are its future work); tree trace terms are for reals");
    case "tuple":
    case "record": {
      const items = (shape.kind === "tuple" ? shape.items : shape.fields).map(typeOfShape);
      if (items.length === 0) return UNIT_T;
      return items.slice(1).reduce((acc, t) => prod(acc, t), items[0]);
    }
    default:
      return assertNever(shape);
  }
}

/** The leaves of a structure-typed term, as projections: `snd(fst(x))`, … */
function projections(shape: Shape, base: Tree): Tree[] {
  switch (shape.kind) {
    case "real":
      return [base];
    case "tensor":
      return [typeOfShape(shape) as never];
    case "tuple":
    case "record": {
      const items = shape.kind === "tuple" ? shape.items : shape.fields;
      if (items.length === 0) return [];
      if (items.length === 1) return projections(items[0], base);
      const init: Shape = { kind: "tuple", items: items.slice(0, -1) };
      const types = [typeOfShape(init), typeOfShape(items[items.length - 1])] as const;
      return [...projections(init, { kind: "fst", arg: base, types }), ...projections(items[items.length - 1], { kind: "snd", arg: base, types })];
    }
    default:
      return assertNever(shape);
  }
}

/** Build a structure-typed term from its leaves (inverse of `projections`). */
function construct(shape: Shape, leaves: Tree[]): Tree {
  const tuple = (items: Tree[], shapes: readonly Shape[]): Tree => {
    if (items.length === 0) return { kind: "unit" };
    let acc = items[0];
    let accType = typeOfShape(shapes[0]);
    for (let i = 1; i < items.length; i++) {
      const t = typeOfShape(shapes[i]);
      acc = pair(acc, items[i], [accType, t]);
      accType = prod(accType, t);
    }
    return acc;
  };
  return assemble(shape, leaves, tuple, (_keys, fields, shapes) => tuple(fields, shapes));
}

/** A structure of numbers as a closed value of its type. */
export function valueOf(shape: Shape, leaves: readonly number[]): Tree {
  return construct(shape, leaves.map(num));
}

/** The leaves of a closed value, in order. */
export function leavesOf(value: TreeValue): number[] {
  const out: number[] = [];
  const stack: TreeValue[] = [value];
  while (stack.length > 0) {
    const x = stack.pop()!;
    if (typeof x === "number") out.push(x);
    else if (x !== "*") stack.push(x[1], x[0]);
  }
  return out;
}

/**
 * The tape of a one-parameter term as a tree `C` with the parameter free as `x`: one
 * `let` per instruction. Free variables of outer traces become their recorded values.
 */
export function toTree(term: TraceTerm): { C: Tree; T: Type; U: Type } {
  const tape = term.tape;
  if (tape.tensorCount > 0) throw new WengertError("toTree: the term has tensor instructions; the paper's language has reals only");
  const param = term.params[0];
  const inputs = projections(param.shape, v("x"));
  let body = construct(term.output.shape, term.output.atoms.map((a) => v(`v${a}`)));
  for (let i = tape.length - 1; i >= 0; i--) {
    const code = tape.op[i];
    let bound: Tree;
    if (code === INPUT) bound = inputs[tape.a[i]];
    else if (code === CONST || code === FREE) bound = num(tape.val[i]);
    else bound = opTree(code, v(`v${tape.a[i]}`), v(`v${tape.b[i]}`));
    body = letIn(`v${i}`, REAL_T, bound, body);
  }
  return { C: body, T: typeOfShape(param.shape), U: typeOfShape(term.output.shape) };
}

interface Env {
  readonly name: string;
  readonly value: TreeValue;
  readonly next: Env | null;
}

/** Ordinary evaluation of a trace term (Fig. 2) under an environment of closed values. */
export function evaluateTree(t: Tree, bindings: Record<string, TreeValue> = {}): TreeValue {
  let env: Env | null = null;
  for (const [name, value] of Object.entries(bindings)) env = { name, value, next: env };
  return evalIn(t, env);
}

function evalIn(t: Tree, env: Env | null): TreeValue {
  switch (t.kind) {
    case "var": {
      for (let e = env; e !== null; e = e.next) if (e.name === t.name) return e.value;
      throw new Error(`unbound variable ${t.name}`);
    }
    case "const":
      return t.value;
    case "add":
      return (evalIn(t.left, env) as number) + (evalIn(t.right, env) as number);
    case "op": {
      const arg = evalIn(t.arg, env);
      const spec = scalarSpec(scalarCodeOf(t.op)!);
      if (spec.arity === 1) return spec.forward(arg as number);
      const [a, b] = arg as readonly [number, number];
      return spec.forward(a, b);
    }
    case "let":
      return evalIn(t.body, { name: t.name, value: evalIn(t.bound, env), next: env });
    case "unit":
      return "*";
    case "pair":
      return [evalIn(t.fst, env), evalIn(t.snd, env)];
    case "fst":
      return (evalIn(t.arg, env) as readonly [TreeValue, TreeValue])[0];
    case "snd":
      return (evalIn(t.arg, env) as readonly [TreeValue, TreeValue])[1];
    default:
      return assertNever(t);
  }
}
