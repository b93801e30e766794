/**
 * @file Random small programs of reals as data: an expression AST with branches
 * (`if lt`), bounded loops and nested grad/rd, its printed form, and one interpreter,
 * written with wengert's functions, that runs it on numbers and on traced reals alike.
 * The property tests (api/properties.test.ts, api/forward.test.ts) draw their programs
 * over this AST, each with the operations and features it needs.
 */
import { add, atan, cos, div, exp, grad, log, lt, mul, primal, rd, sigmoid, sin, softplus, sqrt, square, sub, tanh, type Scalar } from "../../src/index.js";
import { decided } from "./branches.js";
import { IGNORE } from "./ties.js";

// Unary operations that are smooth and finite on all of R.
export const UNARY = {
  sin,
  cos,
  tanh,
  sigmoid,
  softplus,
  square,
  atan,
  expTanh: (a: Scalar) => exp(tanh(a)),
  log1sq: (a: Scalar) => log(add(1, square(a))),
  sqrt1sq: (a: Scalar) => sqrt(add(1, square(a))),
} satisfies Record<string, (a: Scalar) => Scalar>;
export const BINARY = {
  add,
  sub,
  mul,
  div1sq: (a: Scalar, b: Scalar) => div(a, add(1, square(b))),
} satisfies Record<string, (a: Scalar, b: Scalar) => Scalar>;
export type UnOp = keyof typeof UNARY;
export type BinOp = keyof typeof BINARY;

/** Variables are indices into the environment (taken modulo its length). */
export type Expr =
  | { readonly k: "var"; readonly i: number }
  | { readonly k: "const"; readonly c: number }
  | { readonly k: "un"; readonly op: UnOp; readonly a: Expr }
  | { readonly k: "bin"; readonly op: BinOp; readonly a: Expr; readonly b: Expr }
  /** if lt(l, r) then t else e */
  | { readonly k: "if"; readonly l: Expr; readonly r: Expr; readonly t: Expr; readonly e: Expr }
  /** acc = init; repeat n times: acc = body (body sees the environment and then acc) */
  | { readonly k: "for"; readonly n: number; readonly init: Expr; readonly body: Expr }
  /** rd(z ↦ body, at, seed), or grad(z ↦ body, at) when seed is null (body sees the environment and then z) */
  | { readonly k: "rd"; readonly at: Expr; readonly seed: Expr | null; readonly body: Expr };

export function show(e: Expr, names: string[]): string {
  const fresh = `v${names.length}`;
  switch (e.k) {
    case "var":
      return names[e.i % names.length];
    case "const":
      return String(e.c);
    case "un":
      return `${e.op}(${show(e.a, names)})`;
    case "bin":
      return `${e.op}(${show(e.a, names)}, ${show(e.b, names)})`;
    case "if":
      return `(if lt(${show(e.l, names)}, ${show(e.r, names)}) then ${show(e.t, names)} else ${show(e.e, names)})`;
    case "for":
      return `(for ${e.n}: ${fresh} = ${show(e.init, names)}; ${fresh} ← ${show(e.body, [...names, fresh])})`;
    case "rd":
      return e.seed === null
        ? `grad(${fresh}. ${show(e.body, [...names, fresh])}, ${show(e.at, names)})`
        : `rd(${fresh}. ${show(e.body, [...names, fresh])}, ${show(e.at, names)}, ${show(e.seed, names)})`;
  }
}

export function interp(e: Expr, env: readonly Scalar[]): Scalar {
  switch (e.k) {
    case "var":
      return env[e.i % env.length];
    case "const":
      return e.c;
    case "un":
      return UNARY[e.op](interp(e.a, env));
    case "bin":
      return BINARY[e.op](interp(e.a, env), interp(e.b, env));
    case "if": {
      const l = interp(e.l, env);
      const r = interp(e.r, env);
      const taken = lt(l, r);
      decided(primal(l), primal(r), taken);
      return interp(taken ? e.t : e.e, env);
    }
    case "for": {
      let acc = interp(e.init, env);
      for (let j = 0; j < e.n; j++) acc = interp(e.body, [...env, acc]);
      return acc;
    }
    case "rd": {
      const body = (z: Scalar) => interp(e.body, [...env, z]);
      const at = interp(e.at, env);
      return e.seed === null ? grad(body, at, IGNORE) : (rd(body, at, interp(e.seed, env), IGNORE) as Scalar);
    }
  }
}

export const program = (e: Expr) => (x: Scalar[]): Scalar => interp(e, x);
