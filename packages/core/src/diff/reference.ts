/**
 * @file Fig. 6, literally: `W.R_V(x:T. C)` rule by rule on tree-shaped trace terms.
 *
 * The executable specification the efficient differentiator is tested against. Its
 * `let` rule differentiates the body twice, so it is exponential in the length of a
 * `let` chain: tests use it on small terms only.
 */
import { assertNever } from "../structure.js";
import { scalarCodeOf, scalarSpec } from "../trace/opcodes.js";
import { letIn, num, pair, prod, REAL_T, treeEmitter, v, type Tree, type Type } from "../trace/tree.js";

let counter = 0;
/** A variable name no term built so far uses (Fig. 6's side conditions). */
const fresh = (base: string): string => `${base}_${++counter}`;

/** `0_T`: 0, `*`, ⟨0_T, 0_U⟩. */
export function zero(T: Type): Tree {
  switch (T.kind) {
    case "real":
      return num(0);
    case "unit":
      return { kind: "unit" };
    case "prod":
      return pair(zero(T.fst), zero(T.snd), [T.fst, T.snd]);
    default:
      return assertNever(T);
  }
}

/** `M +_T N` (Sec. 2): `+` at real, componentwise through `let`s at products. */
export function plus(T: Type, M: Tree, N: Tree): Tree {
  switch (T.kind) {
    case "real":
      return { kind: "add", left: M, right: N };
    case "unit":
      return letIn(fresh("u"), T, M, letIn(fresh("u"), T, N, { kind: "unit" }));
    case "prod": {
      const [m, n] = [fresh("m"), fresh("n")];
      const types = [T.fst, T.snd] as const;
      return letIn(m, T, M, letIn(n, T, N,
        pair(
          plus(T.fst, { kind: "fst", arg: v(m), types }, { kind: "fst", arg: v(n), types }),
          plus(T.snd, { kind: "snd", arg: v(m), types }, { kind: "snd", arg: v(n), types }),
          types,
        ),
      ));
    }
    default:
      return assertNever(T);
  }
}

/** `W.op_r(D)`: the reverse rule of `op` as a trace term, from its declaration (a built-in's or a user's). */
function opReverse(op: string, W: Tree, D: Tree): { S: Type; term: Tree } {
  const e = treeEmitter();
  const p = fresh("p");
  const rule = scalarSpec(scalarCodeOf(op)!);
  const out: Tree = { kind: "op", op, arg: v(p) };
  if (rule.arity === 1) return { S: REAL_T, term: letIn(p, REAL_T, D, rule.reverse(e, v(p), out, W) ?? num(0)) };
  const types = [REAL_T, REAL_T] as const;
  const a: Tree = { kind: "fst", arg: v(p), types };
  const b: Tree = { kind: "snd", arg: v(p), types };
  const S = prod(REAL_T, REAL_T);
  const cts = pair(rule.reverse[0](e, a, b, out, W) ?? num(0), rule.reverse[1](e, a, b, out, W) ?? num(0), types);
  return { S, term: letIn(p, S, D, cts) };
}

/** `W.R_V(x:T. C)` (Fig. 6). `V` and `W` are values (trees of variables and literals). */
export function reverseDerivative(W: Tree, V: Tree, x: string, T: Type, C: Tree): Tree {
  switch (C.kind) {
    case "var":
      return C.name === x ? W : zero(T);
    case "const":
    case "unit":
      return zero(T);
    case "add":
      return plus(T, reverseDerivative(W, V, x, T, C.left), reverseDerivative(W, V, x, T, C.right));
    case "op": {
      // let x:T = V in let y:S = W.op_r(D) in y.R_V(x:T. D)
      if (C.op === "add") {
        const sum: Tree = {
          kind: "add",
          left: { kind: "fst", arg: C.arg, types: [REAL_T, REAL_T] },
          right: { kind: "snd", arg: C.arg, types: [REAL_T, REAL_T] },
        };
        return reverseDerivative(W, V, x, T, sum);
      }
      const y = fresh("y");
      const { S, term } = opReverse(C.op, W, C.arg);
      return letIn(x, T, V, letIn(y, S, term, reverseDerivative(v(y), V, x, T, C.arg)));
    }
    case "let": {
      // let x:T = V in let y:S = D in W.R_V(x:T. E) +_T (let ȳ:S = W.R_y(y:S. E) in ȳ.R_V(x:T. D))
      const ybar = fresh("ybar");
      return letIn(x, T, V, letIn(C.name, C.type, C.bound,
        plus(T,
          reverseDerivative(W, V, x, T, C.body),
          letIn(ybar, C.type, reverseDerivative(W, v(C.name), C.name, C.type, C.body), reverseDerivative(v(ybar), V, x, T, C.bound)),
        ),
      ));
    }
    case "pair": {
      // let ⟨y:U, z:S⟩ = W in y.R_V(x:T. D) +_T z.R_V(x:T. E)
      const [w, y, z] = [fresh("w"), fresh("y"), fresh("z")];
      const [U, S] = C.types;
      return letIn(w, prod(U, S), W,
        letIn(y, U, { kind: "fst", arg: v(w), types: C.types },
          letIn(z, S, { kind: "snd", arg: v(w), types: C.types },
            plus(T, reverseDerivative(v(y), V, x, T, C.fst), reverseDerivative(v(z), V, x, T, C.snd)),
          ),
        ),
      );
    }
    case "fst": {
      // let x:T = V in let y:U×S = D in ⟨W, 0_S⟩.R_V(x:T. D)
      const [U, S] = C.types;
      return letIn(x, T, V, letIn(fresh("y"), prod(U, S), C.arg, reverseDerivative(pair(W, zero(S), C.types), V, x, T, C.arg)));
    }
    case "snd": {
      // let x:T = V in let y:U×S = D in ⟨0_U, W⟩.R_V(x:T. D)
      const [U, S] = C.types;
      return letIn(x, T, V, letIn(fresh("y"), prod(U, S), C.arg, reverseDerivative(pair(zero(U), W, C.types), V, x, T, C.arg)));
    }
    default:
      return assertNever(C);
  }
}
