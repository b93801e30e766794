/**
 * @file The type checker: Fig. 1 of the paper, one case per rule.
 *
 * Judgements `Φ | Γ ⊢ M : T` and `Φ | Γ ⊢ B`. Beyond Fig. 1, it infers the type
 * subscripts the paper writes on pairs and projections, the types of `let`-bound
 * variables left unannotated, and `U` in `fd_{U,L}`; the evaluators read the inferred
 * types from the result. Function definitions see no outer ordinary variables
 * (Fig. 1's letrec rule checks the body in `x : T` alone).
 */
import { PREDICATE_NAMES } from "@wengert/ops";
import { primitiveOf, scalarCodeOf } from "../trace/opcodes.js";
import { WengertError } from "../errors.js";
import { assertNever } from "../structure.js";
import { prod, REAL_T, UNIT_T, type Type } from "../trace/tree.js";
import type { Binder, BoolTerm, Pos, Term, TypeExpr } from "./syntax.js";
import { call, trampoline, type Rec } from "./trampoline.js";

/** A program of the paper's language is ill-typed (Fig. 1): the message is `FILE:LINE:COL: type error: …`. */
export class TypeCheckError extends WengertError {
  constructor(
    readonly file: string,
    readonly line: number,
    readonly col: number,
    readonly what: string,
  ) {
    super(`${file}:${line}:${col}: type error: ${what}`);
  }
}

/**
 * A type in the language's own syntax: `real`, `unit`, `real * real * (real * real)`.
 * `*` is left-associative, so the left spine of a product (an iterated product, as
 * wide as the program's tuples) prints without parentheses, by a loop.
 */
export function showType(t: Type): string {
  const parts: Type[] = [];
  let left = t;
  while (left.kind === "prod") {
    parts.push(left.snd);
    left = left.fst;
  }
  parts.push(left);
  return parts
    .reverse()
    .map((p, i) => (i > 0 && p.kind === "prod" ? `(${showType(p)})` : p.kind === "prod" ? showType(p) : p.kind))
    .join(" * ");
}

export function sameType(a: Type, b: Type): boolean {
  if (a.kind === "prod" && b.kind === "prod") return sameType(a.fst, b.fst) && sameType(a.snd, b.snd);
  return a.kind === b.kind;
}

export function typeOf(e: TypeExpr): Type {
  switch (e.kind) {
    case "real":
      return REAL_T;
    case "unit":
      return UNIT_T;
    case "prod":
      return prod(typeOf(e.fst), typeOf(e.snd));
    default:
      return assertNever(e);
  }
}

/** The iterated product `T0 × … × Tn−1` (unit for n = 0, T0 for n = 1). */
export function iterated(types: readonly Type[]): Type {
  if (types.length === 0) return UNIT_T;
  return types.slice(1).reduce((acc, t) => prod(acc, t), types[0]);
}

/** The components of an iterated product of n types, or null if `t` is not one. */
export function components(t: Type, n: number): Type[] | null {
  if (n === 0) return t.kind === "unit" ? [] : null;
  const parts: Type[] = [];
  for (let k = n; k > 1; k--) {
    if (t.kind !== "prod") return null;
    parts.push(t.snd);
    t = t.fst;
  }
  parts.push(t);
  return parts.reverse();
}

/** `op : real → real` or `op : real × real → real`, for built-in and user primitives. */
function opArity(name: string): Type | undefined {
  const code = scalarCodeOf(name);
  if (code === undefined) return undefined;
  return primitiveOf(code).spec.arity === 1 ? REAL_T : prod(REAL_T, REAL_T);
}
const PRED_ARITY = new Map<string, Type>(PREDICATE_NAMES.map((n) => [n, prod(REAL_T, REAL_T)] as const));

/** What the checker found: the type of every term node (the evaluators read some). */
export interface Checked {
  readonly type: Type;
  readonly types: Map<Term, Type>;
}

interface FnType {
  readonly param: Type;
  readonly result: Type;
}

/** Check a program: `Γ ⊢ M : T`, with Γ the types of its free variables (none by default). */
export function check(program: Term, file = "<input>", env: Readonly<Record<string, Type>> = {}): Checked {
  const types = new Map<Term, Type>();
  const fail = (pos: Pos, what: string): never => {
    throw new TypeCheckError(file, pos.line, pos.col, what);
  };

  // Γ and Φ as scoped maps: binding pushes, leaving the scope pops.
  const gamma = new Map<string, Type[]>();
  const phi = new Map<string, FnType[]>();
  const bind = <V>(env: Map<string, V[]>, name: string, v: V) => (env.get(name) ?? env.set(name, []).get(name)!).push(v);
  const unbind = <V>(env: Map<string, V[]>, name: string) => env.get(name)!.pop();
  const lookup = <V>(env: Map<string, V[]>, name: string): V | undefined => env.get(name)?.at(-1);
  for (const [name, T] of Object.entries(env)) bind(gamma, name, T);

  const expect = (pos: Pos, got: Type, want: Type, what: string): void => {
    if (!sameType(got, want)) fail(pos, `${what} has type ${showType(got)}, expected ${showType(want)}`);
  };

  // The functions whose bodies are being checked, with the variables they cannot see.
  const hidden: { fn: string; names: Map<string, Type[]> }[] = [];

  /** Check `body` of `fn` with only `x : T` in Γ (function bodies have no free ordinary variables). */
  function* isolated(fn: string, x: Binder, T: Type, body: Term): Rec<Type> {
    const saved = new Map([...gamma].filter(([, v]) => v.length > 0));
    hidden.push({ fn, names: saved });
    gamma.clear();
    bind(gamma, x.name, T);
    const U = yield* call(term(body));
    gamma.clear();
    for (const [k, v] of saved) gamma.set(k, v);
    hidden.pop();
    return U;
  }

  /** Γ[x:T] ⊢ N : U for a differentiation binder (its type inferred from the point). */
  function* under(x: Binder, T: Type, body: Term): Rec<Type> {
    if (x.type) expect(x.pos, T, typeOf(x.type), `the point of differentiation (for ${x.name})`);
    bind(gamma, x.name, T);
    const U = yield* call(term(body));
    unbind(gamma, x.name);
    return U;
  }

  function* boolean(b: BoolTerm): Rec<void> {
    switch (b.kind) {
      case "true":
      case "false":
        return;
      case "pred": {
        const want = PRED_ARITY.get(b.pred) ?? fail(b.pos, `unknown predicate ${b.pred}`);
        expect(b.arg.pos, yield* call(term(b.arg)), want, `the argument of ${b.pred}`);
        return;
      }
      default:
        return assertNever(b);
    }
  }

  function* term(M: Term): Rec<Type> {
    const T = yield* call(synth(M));
    types.set(M, T);
    return T;
  }

  function* synth(M: Term): Rec<Type> {
    switch (M.kind) {
      case "var": {
        const T = lookup(gamma, M.name);
        if (T) return T;
        if (lookup(phi, M.name)) return fail(M.pos, `${M.name} is a function; call it as ${M.name}(…)`);
        const inner = hidden.at(-1);
        if (inner && hidden.some((h) => h.names.has(M.name))) {
          return fail(
            M.pos,
            `the body of ${inner.fn} uses ${M.name}, a variable bound outside it; ` +
              `function definitions have no free variables (Fig. 1): pass ${M.name} as a parameter`,
          );
        }
        return fail(M.pos, `unbound variable ${M.name}`);
      }
      case "num":
        return REAL_T;
      case "add":
        expect(M.left.pos, yield* call(term(M.left)), REAL_T, "the left operand of +");
        expect(M.right.pos, yield* call(term(M.right)), REAL_T, "the right operand of +");
        return REAL_T;
      case "op": {
        const want = opArity(M.op) ?? fail(M.pos, `unknown operation ${M.op}`);
        expect(M.arg.pos, yield* call(term(M.arg)), want, `the argument of ${M.op}`);
        return REAL_T;
      }
      case "let": {
        const T = yield* call(term(M.bound));
        if (M.binder.type) expect(M.bound.pos, T, typeOf(M.binder.type), `the bound term of ${M.binder.name}`);
        bind(gamma, M.binder.name, T);
        const U = yield* call(term(M.body));
        unbind(gamma, M.binder.name);
        return U;
      }
      case "letTuple": {
        const T = yield* call(term(M.bound));
        const parts = components(T, M.binders.length);
        if (!parts) return fail(M.bound.pos, `cannot take ${M.binders.length} components of a value of type ${showType(T)}`);
        M.binders.forEach((b, i) => {
          if (b.type) expect(b.pos, parts[i], typeOf(b.type), `component ${b.name}`);
          bind(gamma, b.name, parts[i]);
        });
        const U = yield* call(term(M.body));
        M.binders.forEach((b) => unbind(gamma, b.name));
        return U;
      }
      case "unit":
        return UNIT_T;
      case "pair":
        return prod(yield* call(term(M.fst)), yield* call(term(M.snd)));
      case "fst":
      case "snd": {
        const T = yield* call(term(M.arg));
        if (T.kind !== "prod") return fail(M.arg.pos, `${M.kind} needs a pair, got a value of type ${showType(T)}`);
        return M.kind === "fst" ? T.fst : T.snd;
      }
      case "if": {
        yield* call(boolean(M.cond));
        const T = yield* call(term(M.then));
        const U = yield* call(term(M.else));
        if (!sameType(T, U)) fail(M.else.pos, `the branches of if have different types: ${showType(T)} and ${showType(U)}`);
        return T;
      }
      case "letrec": {
        const fn = { param: typeOf(M.param.type), result: typeOf(M.result) };
        if (M.recursive) bind(phi, M.name, fn);
        const gotResult = yield* call(isolated(M.name, M.param, fn.param, M.fnBody));
        expect(M.fnBody.pos, gotResult, fn.result, `the body of ${M.name}`);
        if (!M.recursive) bind(phi, M.name, fn);
        const S = yield* call(term(M.body));
        unbind(phi, M.name);
        return S;
      }
      case "call": {
        const fn = lookup(phi, M.fn);
        if (!fn) {
          if (lookup(gamma, M.fn)) return fail(M.pos, `${M.fn} is a variable, not a function`);
          return fail(M.pos, `unknown function ${M.fn}`);
        }
        expect(M.arg.pos, yield* call(term(M.arg)), fn.param, `the argument of ${M.fn}`);
        return fn.result;
      }
      case "rd": {
        // Φ | Γ[x:T] ⊢ N : U   Φ | Γ ⊢ L : T   Φ | Γ ⊢ M : U   ⟹   Φ | Γ ⊢ M.rd_L(x:T. N) : T
        const T = yield* call(term(M.point));
        const U = yield* call(under(M.param, T, M.body));
        expect(M.seed.pos, yield* call(term(M.seed)), U, "the seed of rd");
        return T;
      }
      case "grad": {
        const T = yield* call(term(M.point));
        expect(M.body.pos, yield* call(under(M.param, T, M.body)), REAL_T, "the body of grad");
        return T;
      }
      case "fd": {
        // M.fd_{U,L}(x:T. N) : U, with M : T
        const T = yield* call(term(M.point));
        const U = yield* call(under(M.param, T, M.body));
        if (M.resultType) expect(M.body.pos, U, typeOf(M.resultType), "the body of fd");
        expect(M.direction.pos, yield* call(term(M.direction)), T, "the direction of fd");
        return U;
      }
      default:
        return assertNever(M);
    }
  }

  const type = trampoline(term(program));
  return { type, types };
}
