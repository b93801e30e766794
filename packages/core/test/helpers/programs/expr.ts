/**
 * @file Random programs of reals as data: the expression tree every random-program test
 * draws (generate.ts), runs with wengert's functions (run.ts) and prints in the paper's
 * language (source.ts). Variables are indices into the scope, taken modulo its length
 * (negative ones count from its end); binders (let, loops, inner derivatives) push onto it.
 */
import type { Op } from "./ops.js";

export type Pred = "lt" | "le" | "gt" | "ge";

export type Expr =
  | { readonly k: "var"; readonly i: number }
  | { readonly k: "const"; readonly c: number }
  /** an operation of ops.ts (or a test's own) */
  | { readonly k: "op"; readonly op: Op; readonly args: readonly Expr[] }
  /** let v = a in body */
  | { readonly k: "let"; readonly a: Expr; readonly body: Expr }
  /** fst(<a, b>) or snd(<a, b>) */
  | { readonly k: "proj"; readonly first: boolean; readonly a: Expr; readonly b: Expr }
  /** let <v, w> = <a, b> in body */
  | { readonly k: "tuple"; readonly a: Expr; readonly b: Expr; readonly body: Expr }
  /** if pred(l, r) then t else e (written infix, l < r, or named, lt(l, r), in the language) */
  | { readonly k: "if"; readonly pred: Pred; readonly infix: boolean; readonly l: Expr; readonly r: Expr; readonly t: Expr; readonly e: Expr }
  /**
   * acc = init; up to n times: acc = body (which sees the scope and then acc), stopping
   * early once exit (same scope) is below 0: a trip count that depends on the data.
   */
  | { readonly k: "for"; readonly n: number; readonly init: Expr; readonly body: Expr; readonly exit: Expr | null }
  /** h(a, b), h being the program's function of two parameters */
  | { readonly k: "call"; readonly a: Expr; readonly b: Expr }
  /** rep(a, n): the n-fold recursion v ↦ sin(rep(v, n − 1)) + v / 2 */
  | { readonly k: "rep"; readonly a: Expr; readonly n: number }
  /** grad_{at}(y. body), seed.rd_{at}(y. body), dir.fd_{at}(y. body): body sees the scope and then y */
  | { readonly k: "grad"; readonly at: Expr; readonly body: Expr }
  | { readonly k: "rd"; readonly seed: Expr; readonly at: Expr; readonly body: Expr }
  | { readonly k: "fd"; readonly dir: Expr; readonly at: Expr; readonly body: Expr };

export type Kind = Expr["k"];

/**
 * A program of inputs x0, x1, …: straight-line steps, each pushing its value onto the
 * scope (the inputs first), then its outputs in that scope; and the body of h(u, w) when
 * it calls h (h has no calls).
 */
export interface Program {
  readonly steps: readonly Expr[];
  readonly outputs: readonly Expr[];
  readonly h: Expr | null;
}

/** Every node of a program (its steps, outputs and h), walked without recursion. */
export function nodesOf(p: Program): Expr[] {
  const out: Expr[] = [];
  const stack: Expr[] = [...p.steps, ...p.outputs, ...(p.h === null ? [] : [p.h])];
  while (stack.length > 0) {
    const e = stack.pop()!;
    out.push(e);
    if (e.k === "op") stack.push(...e.args);
    else for (const v of Object.values(e)) if (v !== null && typeof v === "object" && "k" in v) stack.push(v as Expr);
  }
  return out;
}

/** The constructs a program uses (an `if` as if-infix or if-named, a loop that may stop early as for-exit, an operation by its arity). */
export const kindsOf = (p: Program): Set<string> =>
  new Set(nodesOf(p).map((e) => (e.k === "if" ? `if-${e.infix ? "infix" : "named"}` : e.k === "for" && e.exit !== null ? "for-exit" : e.k === "op" ? `op/${e.op.arity}` : e.k)));

/** The names of the operations a program uses. */
export const opsOf = (p: Program): Set<string> => new Set(nodesOf(p).flatMap((e) => (e.k === "op" ? [e.op.name] : [])));
