/**
 * @file The abstract syntax of the paper's language (Abadi & Plotkin, Sec. 2).
 *
 *     M ::= x | r | M + N | op(M) | let x:T = M in N | * | ⟨M, N⟩ | fst(M) | snd(M)
 *         | if B then M else N | letrec f(x:T):U = M in N | f(M) | M.rd_L(x:T. N)
 *     B ::= pred(M) | true | false
 *
 * plus the paper's abbreviations, kept as nodes so that messages can speak of what the
 * user wrote: `let ⟨x0:T0, …⟩ = M in N`, `grad_L(x:T. N)`, `M.fd_{U,L}(x:T. N)`.
 * Type annotations the paper writes as subscripts (on pairs and projections) are not
 * written: the type checker infers them. Every node has the position where it starts.
 */

/** A place in a program's source. */
export interface Pos {
  /** 1-based line and column. */
  readonly line: number;
  readonly col: number;
}

export type TypeExpr =
  | { readonly kind: "real"; readonly pos: Pos }
  | { readonly kind: "unit"; readonly pos: Pos }
  | { readonly kind: "prod"; readonly fst: TypeExpr; readonly snd: TypeExpr; readonly pos: Pos };

export interface Binder {
  readonly name: string;
  /** Omitted where the checker can infer it (let-bound and tuple-bound variables). */
  readonly type?: TypeExpr;
  readonly pos: Pos;
}

/** A term of the paper's language, as parsed (`parse`). */
export type Term =
  | { readonly kind: "var"; readonly name: string; readonly pos: Pos }
  | { readonly kind: "num"; readonly value: number; readonly pos: Pos }
  | { readonly kind: "add"; readonly left: Term; readonly right: Term; readonly pos: Pos }
  /** `op(M)`, with `op(M, N)` read as `op(⟨M, N⟩)` and `M - N`, `M * N`, `M / N`, `-M` as sugar for sub, mul, div, neg. */
  | { readonly kind: "op"; readonly op: string; readonly arg: Term; readonly pos: Pos }
  | { readonly kind: "let"; readonly binder: Binder; readonly bound: Term; readonly body: Term; readonly pos: Pos }
  /** `let <x0:T0, …, xn-1:Tn-1> = M in N` (n = 0: unit; n = 1: plain let). */
  | { readonly kind: "letTuple"; readonly binders: readonly Binder[]; readonly bound: Term; readonly body: Term; readonly pos: Pos }
  | { readonly kind: "unit"; readonly pos: Pos }
  /** `<M, N>`; `<M0, …, Mn-1>` is read as the iterated pair `<<M0, M1>, M2>…`. */
  | { readonly kind: "pair"; readonly fst: Term; readonly snd: Term; readonly pos: Pos }
  | { readonly kind: "fst"; readonly arg: Term; readonly pos: Pos }
  | { readonly kind: "snd"; readonly arg: Term; readonly pos: Pos }
  | { readonly kind: "if"; readonly cond: BoolTerm; readonly then: Term; readonly else: Term; readonly pos: Pos }
  /** `letrec f(x:T):U = M in N`; `let f(x:T):U = M in N` is the same without recursion (`recursive` false). */
  | {
      readonly kind: "letrec";
      readonly name: string;
      readonly param: Binder & { readonly type: TypeExpr };
      readonly result: TypeExpr;
      readonly fnBody: Term;
      readonly body: Term;
      readonly recursive: boolean;
      readonly pos: Pos;
    }
  /** `f(M)`, with `f(M, N)` read as `f(<M, N>)`. */
  | { readonly kind: "call"; readonly fn: string; readonly arg: Term; readonly pos: Pos }
  /** `M.rd_L(x:T. N)`: the reverse derivative of x ↦ N at L, applied to M. */
  | { readonly kind: "rd"; readonly seed: Term; readonly point: Term; readonly param: Binder; readonly body: Term; readonly pos: Pos }
  /** `grad_L(x:T. N)` = `1.rd_L(x:T. N)`. */
  | { readonly kind: "grad"; readonly point: Term; readonly param: Binder; readonly body: Term; readonly pos: Pos }
  /** `M.fd_{U,L}(x:T. N)` = `M.rd_{0_U}(y:U. y.rd_L(x:T. N))`; U may be omitted (`M.fd_L(…)`). */
  | {
      readonly kind: "fd";
      readonly direction: Term;
      readonly resultType?: TypeExpr;
      readonly point: Term;
      readonly param: Binder;
      readonly body: Term;
      readonly pos: Pos;
    };

/** A boolean term: the condition of an `if`. */
export type BoolTerm =
  /** `pred(M)`, with `pred(M, N)` read as `pred(<M, N>)` and `M < N`, `M <= N`, `M = N`, `M != N`, `M > N`, `M >= N` as sugar. */
  | { readonly kind: "pred"; readonly pred: string; readonly arg: Term; readonly pos: Pos }
  | { readonly kind: "true"; readonly pos: Pos }
  | { readonly kind: "false"; readonly pos: Pos };

/** A program: a sequence of top-level definitions and a final term, or just a term. */
export type Program = Term;
