/**
 * @file A hand-written recursive-descent parser for the language of Abadi & Plotkin,
 * Sec. 2, in the ASCII syntax of docs/language.md. A program is one term.
 *
 *     term    ::= let-chain* sum                          (let, letrec, if: as far right as possible)
 *     sum     ::= product (("+" | "-") product)*
 *     product ::= unary (("*" | "/") unary)*
 *     unary   ::= "-" unary | let/letrec/if | postfix     ("-" directly before a number: a literal)
 *     postfix ::= primary ("." ("rd_" | "fd_") sub "(" binder "." term ")")*
 *     primary ::= num | x | "*" | "()" | "(" term ")" | "<" terms? ">" | fst(M) | snd(M)
 *               | "grad_" sub "(" binder "." term ")" | name "(" terms? ")"
 *     bool    ::= true | false | pred "(" terms ")" | "(" bool ")" | term cmp term
 *
 * Recursion follows the nesting of the source only: infix operators, postfix chains,
 * tuples and types are loops, and a chain of `let … in`, `letrec … in` and
 * `if … else` in body position is collected in a loop (`parseTermChain`), so that 10^4
 * chained lets do not grow the stack. The term parser never consumes `>` (nor `<`, `=`):
 * only the pair parser and the boolean parser do, so `<if x > 0 then 1 else 2, 3>` works.
 * Two places backtrack, both over a bounded choice: `(` in a condition (`(x < 0)` or
 * `(x) < 0`), and `fd_{(` (a result type or a term); terms are memoised by position so
 * that backtracking never re-parses one.
 */
import { PREDICATE_NAMES } from "@wengert/ops";
import { scalarCodeOf } from "../trace/opcodes.js";
import { describe, KEYWORDS, Lexer, ParseError, type Token, type TokenType } from "./lexer.js";
import type { Binder, BoolTerm, Pos, Term, TypeExpr } from "./syntax.js";

export { ParseError } from "./lexer.js";

/**
 * Primitives on reals by name, built-in or defined with defineOp before parsing (not the
 * tensor primitives: `sum(1)` is a call of a function sum).
 */
const OP_NAMES = { has: (name: string): boolean => scalarCodeOf(name) !== undefined };
const PRED_NAMES: ReadonlySet<string> = new Set<string>(PREDICATE_NAMES);
const KEYWORD_SET: ReadonlySet<string> = new Set<string>(KEYWORDS);
const MAX_POWER = 1_000_000;
/** The parameter a function of several parameters takes them in, as a tuple. */
const ARGS = "#args";

/** Parse a whole program (one term). `file` only names the source in messages. */
export function parse(source: string, file?: string): Term {
  const p = new Parser(source, file ?? "<input>");
  const term = p.parseTerm();
  p.expectEnd("an operator or the end of input");
  return term;
}

/** Parse a type alone: `real * real`, `real^3`, `(real * unit)^2`. */
export function parseType(source: string): TypeExpr {
  const p = new Parser(source, "<input>");
  const type = p.parseType();
  p.expectEnd("the end of the type");
  return type;
}

const posOf = (t: Token): Pos => ({ line: t.line, col: t.col });
const at = (p: Pos): string => `${p.line}:${p.col}`;

/** The iterated pair `<<M0, M1>, M2>…` (n ≥ 1), every pair at `pos`. */
function iteratedPair(items: readonly Term[], pos: Pos): Term {
  let t = items[0] as Term;
  for (let i = 1; i < items.length; i++) t = { kind: "pair", fst: t, snd: items[i] as Term, pos };
  return t;
}

/** The iterated product `(T0 × T1) × T2 …` (n ≥ 1), at the position of T0. */
function iteratedProduct(items: readonly TypeExpr[]): TypeExpr {
  let t = items[0] as TypeExpr;
  for (let i = 1; i < items.length; i++) t = { kind: "prod", fst: t, snd: items[i] as TypeExpr, pos: t.pos };
  return t;
}

class Parser {
  private readonly lexer: Lexer;
  private readonly tokens: Token[] = [];
  private index = 0;
  /** Terms parsed so far, by the index of their first token (see `parseTerm`). */
  private readonly terms = new Map<number, { readonly term: Term; readonly end: number } | ParseError>();

  constructor(source: string, file: string) {
    this.lexer = new Lexer(source, file);
  }

  // ---- tokens ----

  private peek(k = 0): Token {
    while (this.tokens.length <= this.index + k) {
      const last = this.tokens[this.tokens.length - 1];
      this.tokens.push(last?.type === "eof" ? last : this.lexer.next());
    }
    return this.tokens[this.index + k] as Token;
  }
  private is(type: TokenType): boolean {
    return this.peek().type === type;
  }
  private next(): Token {
    const t = this.peek();
    this.index++;
    return t;
  }
  /** `b` starts right where `a` ends (no space or comment between them). */
  private static adjacent(a: Token, b: Token): boolean {
    return a.end === b.start;
  }

  /** An error at the current token: "expected X, found Y" (or "unexpected end of input: expected X"). */
  private fail(expected: string, hint = ""): ParseError {
    const t = this.peek();
    const what =
      t.type === "eof" ? `unexpected end of input: expected ${expected}${hint}` : `expected ${expected}, found ${describe(t)}${hint}`;
    return this.lexer.error(posOf(t), what);
  }
  private expect(type: TokenType, context: string): Token {
    if (!this.is(type)) throw this.fail(`"${type}" ${context}`);
    return this.next();
  }
  expectEnd(expected: string): void {
    if (!this.is("eof")) throw this.fail(expected);
  }
  private ident(context: string): Token {
    if (!this.is("ident")) throw this.fail(`a name ${context}`);
    return this.next();
  }

  /** Run `attempt`; on a ParseError, rewind and return the error. */
  private attempt<T>(attempt: () => T): T | ParseError {
    const saved = this.index;
    try {
      return attempt();
    } catch (e) {
      if (!(e instanceof ParseError)) throw e;
      this.index = saved;
      return e;
    }
  }

  // ---- types ----

  /** type ::= power ("*" power)*   (left-associative: the paper's iterated product) */
  parseType(): TypeExpr {
    const items = [this.parseTypePower()];
    while (this.is("*")) {
      this.next();
      items.push(this.parseTypePower());
    }
    return iteratedProduct(items);
  }

  /** power ::= atom ("^" n)* — `T^n` is the n-fold iterated product of T (unit for n = 0). */
  private parseTypePower(): TypeExpr {
    let t = this.parseTypeAtom();
    while (this.is("^")) {
      this.next();
      const n = this.peek();
      if (n.type !== "num" || !/^[0-9]+$/.test(n.text)) throw this.fail(`a non-negative integer after "^"`);
      if ((n.value ?? 0) > MAX_POWER) throw this.fail(`an exponent of at most ${MAX_POWER} after "^"`);
      this.next();
      t = n.value === 0 ? { kind: "unit", pos: t.pos } : iteratedProduct(new Array<TypeExpr>(n.value ?? 1).fill(t));
    }
    return t;
  }

  private parseTypeAtom(): TypeExpr {
    const t = this.peek();
    if (t.type === "real" || t.type === "unit") {
      this.next();
      return { kind: t.type, pos: posOf(t) };
    }
    if (t.type === "(") {
      this.next();
      const inner = this.parseType();
      if (!this.is(")")) throw this.fail(`")" to close the "(" at ${at(posOf(t))}`);
      this.next();
      return inner;
    }
    throw this.fail("a type (real, unit, T * U, T^n or a parenthesised type)");
  }

  // ---- terms ----

  /**
   * A term, remembered by where it starts: its parse depends on nothing else, and the
   * backtracking in `parseBool` would otherwise parse `if (if (…) < 0 …) < 0 …`
   * exponentially often.
   */
  parseTerm(): Term {
    const start = this.index;
    const seen = this.terms.get(start);
    if (seen instanceof ParseError) throw seen;
    if (seen !== undefined) {
      this.index = seen.end;
      return seen.term;
    }
    try {
      const term = this.parseTermChain();
      this.terms.set(start, { term, end: this.index });
      return term;
    } catch (e) {
      if (e instanceof ParseError) this.terms.set(start, e);
      throw e;
    }
  }

  /**
   * term ::= (let-head | letrec-head | if-head)* sum. Each head leaves its last part
   * (the body, or the else-branch) open; the heads are closed innermost first.
   */
  private parseTermChain(): Term {
    const open: Array<(body: Term) => Term> = [];
    for (;;) {
      const t = this.peek();
      if (t.type === "let" || t.type === "letrec") open.push(this.parseLetHead());
      else if (t.type === "if") open.push(this.parseIfHead());
      else break;
    }
    let term = this.parseSum();
    for (let i = open.length - 1; i >= 0; i--) term = (open[i] as (body: Term) => Term)(term);
    return term;
  }

  /** `if B then M else` */
  private parseIfHead(): (els: Term) => Term {
    const pos = posOf(this.next());
    const cond = this.parseBool();
    this.expect("then", "after the condition of if");
    const then = this.parseTerm();
    this.expect("else", "after the then-branch of if");
    return (els) => ({ kind: "if", cond, then, else: els, pos });
  }

  /** `let x[: T] = M in`, `let <x0[: T0], …> = M in`, `let f(x: T…): U = M in`, `letrec f(…): U = M in` */
  private parseLetHead(): (body: Term) => Term {
    const keyword = this.next();
    const pos = posOf(keyword);
    const recursive = keyword.type === "letrec";
    const kw = keyword.type;
    if (!recursive && (this.is("<") || this.is("⟨"))) {
      const open = this.next();
      const close = open.type === "<" ? ">" : "⟩";
      const binders: Binder[] = [];
      if (!this.is(close)) {
        for (;;) {
          binders.push(this.parseBinder("in the tuple of let"));
          if (this.is(close)) break;
          if (!this.is(",")) throw this.fail(`"," or "${close}" in the tuple of let opened at ${at(posOf(open))}`);
          this.next();
        }
      }
      this.next();
      this.expect("=", "after the tuple of let");
      const bound = this.parseTerm();
      this.expect("in", "after the bound term of let");
      return (body) => ({ kind: "letTuple", binders, bound, body, pos });
    }
    const name = this.ident(`after ${kw}`);
    if (recursive || this.is("(")) {
      this.expect("(", `after the function name ${name.text} in ${kw}`);
      const params: Array<Binder & { type: TypeExpr }> = [];
      for (;;) {
        const p = this.ident(`for a parameter of ${name.text}`);
        if (!this.is(":")) throw this.fail(`":" and the type of parameter ${p.text} of ${name.text}`);
        this.next();
        params.push({ name: p.text, type: this.parseType(), pos: posOf(p) });
        if (this.is(")")) break;
        if (!this.is(",")) throw this.fail(`"," or ")" in the parameters of ${name.text}`);
        this.next();
      }
      this.next();
      if (!this.is(":")) throw this.fail(`":" and the result type of ${name.text}`);
      this.next();
      const result = this.parseType();
      this.expect("=", `after the result type of ${name.text}`);
      let fnBody = this.parseTerm();
      this.expect("in", `after the body of ${name.text}`);
      let param = params[0] as Binder & { type: TypeExpr };
      if (params.length > 1) {
        // f(x: T0, y: T1): U = M  is  f(#args: T0 * T1): U = let <x: T0, y: T1> = #args in M
        // (#args is no identifier: the body cannot name it)
        const ppos = param.pos;
        param = { name: ARGS, type: iteratedProduct(params.map((b) => b.type)), pos: ppos };
        fnBody = { kind: "letTuple", binders: params, bound: { kind: "var", name: ARGS, pos: ppos }, body: fnBody, pos: ppos };
      }
      const def = { name: name.text, param, result, fnBody, recursive };
      return (body) => ({ kind: "letrec", ...def, body, pos });
    }
    let type: TypeExpr | undefined;
    if (this.is(":")) {
      this.next();
      type = this.parseType();
    }
    const binder: Binder = type ? { name: name.text, type, pos: posOf(name) } : { name: name.text, pos: posOf(name) };
    if (!this.is("=")) throw this.fail(`"=" after ${type ? "the type of " : ""}${name.text} in let`);
    this.next();
    const bound = this.parseTerm();
    this.expect("in", "after the bound term of let");
    return (body) => ({ kind: "let", binder, bound, body, pos });
  }

  /** `x` or `x: T` */
  private parseBinder(context: string): Binder {
    const name = this.ident(context);
    if (!this.is(":")) return { name: name.text, pos: posOf(name) };
    this.next();
    return { name: name.text, type: this.parseType(), pos: posOf(name) };
  }

  /** sum ::= product (("+" | "-") product)* */
  private parseSum(): Term {
    let left = this.parseProduct();
    while (this.is("+") || this.is("-")) {
      const op = this.next().type;
      const right = this.parseProduct();
      const pos = left.pos;
      left = op === "+" ? { kind: "add", left, right, pos } : { kind: "op", op: "sub", arg: { kind: "pair", fst: left, snd: right, pos }, pos };
    }
    return left;
  }

  /** product ::= unary (("*" | "/") unary)* */
  private parseProduct(): Term {
    let left = this.parseUnary();
    while (this.is("*") || this.is("/")) {
      const op = this.next().type === "*" ? "mul" : "div";
      const right = this.parseUnary();
      const pos = left.pos;
      left = { kind: "op", op, arg: { kind: "pair", fst: left, snd: right, pos }, pos };
    }
    return left;
  }

  /** unary ::= "-" unary | let/letrec/if (as far right as possible) | postfix */
  private parseUnary(): Term {
    const t = this.peek();
    if (t.type === "let" || t.type === "letrec" || t.type === "if") return this.parseTerm();
    if (t.type === "-") {
      const n = this.peek(1);
      if (n.type === "num" && Parser.adjacent(t, n)) {
        this.next();
        this.next();
        return this.parsePostfix({ kind: "num", value: -(n.value ?? 0), pos: posOf(t) });
      }
      this.next();
      return { kind: "op", op: "neg", arg: this.parseUnary(), pos: posOf(t) };
    }
    return this.parsePostfix(this.parsePrimary());
  }

  /** postfix ::= primary ("." ("rd_" L | "fd_" L | "fd_{" U "," L "}") "(" x [: T] "." N ")")* */
  private parsePostfix(seed: Term): Term {
    while (this.is(".")) {
      this.next();
      const d = this.peek();
      const kind = d.type === "ident" ? d.text.slice(0, 3) : "";
      if (kind !== "rd_" && kind !== "fd_") throw this.fail(`"rd_" or "fd_" after "."`);
      this.next();
      const which = kind === "rd_" ? "rd" : "fd";
      let resultType: TypeExpr | undefined;
      let point: Term;
      if (which === "fd" && d.text === "fd_" && this.is("{")) {
        [resultType, point] = this.parseFdSubscript();
      } else {
        point = this.parseSubscript(d, which);
      }
      const [param, body] = this.parseAbstraction(which);
      const pos = seed.pos;
      if (which === "rd") seed = { kind: "rd", seed, point, param, body, pos };
      else if (resultType) seed = { kind: "fd", direction: seed, resultType, point, param, body, pos };
      else seed = { kind: "fd", direction: seed, point, param, body, pos };
    }
    return seed;
  }

  /** The L of `rd_L`, `fd_L`, `grad_L`: the rest of the name token (`rd_x`), or a number, name or `{term}` after `rd_`. */
  private parseSubscript(head: Token, which: string): Term {
    const prefix = `${which}_`;
    const rest = head.text.slice(prefix.length);
    if (rest !== "") {
      if (!/^[\p{L}_]/u.test(rest) || KEYWORD_SET.has(rest)) {
        throw this.lexer.error(
          { line: head.line, col: head.col + prefix.length },
          `expected a subscript after "${prefix}" (a number, a name or a term in braces), found "${rest}"`,
        );
      }
      return { kind: "var", name: rest, pos: { line: head.line, col: head.col + prefix.length } };
    }
    const t = this.peek();
    if (t.type === "num" || t.type === "ident") {
      this.next();
      return t.type === "num" ? { kind: "num", value: t.value ?? 0, pos: posOf(t) } : { kind: "var", name: t.text, pos: posOf(t) };
    }
    if (t.type === "{") {
      this.next();
      const term = this.parseTerm();
      if (!this.is("}")) throw this.fail(`"}" to close the subscript of ${which} opened at ${at(posOf(t))}`);
      this.next();
      return term;
    }
    const hint = t.type === "-" ? ` (a negative subscript goes in braces: ${prefix}{-1})` : "";
    throw this.fail(`a subscript after "${prefix}" (a number, a name or a term in braces)`, hint);
  }

  /** `{U, L}` or `{L}` after `fd_`: a type then a comma, else a term. */
  private parseFdSubscript(): [TypeExpr | undefined, Term] {
    const open = this.next();
    const first = this.peek().type;
    const type = first === "real" || first === "unit" ? this.parseType() : first === "(" ? this.attempt(() => this.parseType()) : undefined;
    if (type !== undefined && !(type instanceof ParseError)) {
      if (!this.is(",")) throw this.fail(`"," after the result type in fd_{U, L}`);
      this.next();
    }
    const point = this.parseTerm();
    if (!this.is("}")) throw this.fail(`"}" to close the subscript of fd opened at ${at(posOf(open))}`);
    this.next();
    return [type instanceof ParseError ? undefined : type, point];
  }

  /** `(x[: T]. N)` after a derivative's subscript. */
  private parseAbstraction(which: string): [Binder, Term] {
    const open = this.expect("(", `after the subscript of ${which}`);
    const param = this.parseBinder(`for the variable of ${which}`);
    if (!this.is(".")) throw this.fail(`"." after the binder ${param.name} of ${which}`);
    this.next();
    const body = this.parseTerm();
    if (!this.is(")")) throw this.fail(`")" to close the "(" of ${which} at ${at(posOf(open))}`);
    this.next();
    return [param, body];
  }

  private parsePrimary(): Term {
    const t = this.peek();
    const pos = posOf(t);
    switch (t.type) {
      case "num":
        this.next();
        return { kind: "num", value: t.value ?? 0, pos };
      case "*":
        this.next();
        return { kind: "unit", pos };
      case "(": {
        this.next();
        if (this.is(")")) {
          this.next();
          return { kind: "unit", pos };
        }
        const inner = this.parseTerm();
        if (!this.is(")")) {
          const hint = this.is(",") ? " (pairs are written <M, N>)" : "";
          throw this.fail(`")" to close the "(" at ${at(pos)}`, hint);
        }
        this.next();
        return inner;
      }
      case "<":
      case "⟨": {
        this.next();
        const close = t.type === "<" ? ">" : "⟩";
        const items: Term[] = [];
        if (!this.is(close)) {
          for (;;) {
            items.push(this.parseTerm());
            if (this.is(close)) break;
            if (!this.is(",")) throw this.fail(`"," or "${close}" in the pair opened at ${at(pos)}`);
            this.next();
          }
        }
        this.next();
        return items.length === 0 ? { kind: "unit", pos } : items.length === 1 ? (items[0] as Term) : iteratedPair(items, pos);
      }
      case "fst":
      case "snd": {
        this.next();
        this.expect("(", `after ${t.type}`);
        const arg = this.parseTerm();
        if (!this.is(")")) throw this.fail(`")" after the argument of ${t.type} (it takes exactly one)`);
        this.next();
        return { kind: t.type, arg, pos };
      }
      case "ident": {
        this.next();
        if (t.text.startsWith("grad_")) {
          const point = this.parseSubscript(t, "grad");
          const [param, body] = this.parseAbstraction("grad");
          return { kind: "grad", point, param, body, pos };
        }
        if (!this.is("(")) return { kind: "var", name: t.text, pos };
        const arg = this.parseArguments(t.text);
        return OP_NAMES.has(t.text) ? { kind: "op", op: t.text, arg, pos } : { kind: "call", fn: t.text, arg, pos };
      }
      case ".": {
        const n = this.peek(1);
        if (n.type === "num" && Parser.adjacent(t, n)) throw this.fail("a term", ` (write 0${t.text}${n.text}: a number cannot start with ".")`);
        break;
      }
      case "true":
      case "false":
        throw this.fail("a term", " (true and false may only be conditions of if)");
      case "grad":
        throw this.fail("a term", " (write grad_L(x: T. N))");
    }
    throw this.fail("a term");
  }

  /** `(M0, …, Mn-1)`: unit for n = 0, M0 for n = 1, else the iterated pair at M0. */
  private parseArguments(name: string): Term {
    const open = this.next();
    if (this.is(")")) {
      this.next();
      return { kind: "unit", pos: posOf(open) };
    }
    const items: Term[] = [];
    for (;;) {
      items.push(this.parseTerm());
      if (this.is(")")) break;
      if (!this.is(",")) throw this.fail(`"," or ")" in the arguments of ${name}`);
      this.next();
    }
    this.next();
    return iteratedPair(items, (items[0] as Term).pos);
  }

  // ---- boolean terms ----

  /** bool ::= true | false | pred(M, …) | "(" bool ")" | term cmp term */
  private parseBool(): BoolTerm {
    const t = this.peek();
    if (t.type === "true" || t.type === "false") {
      this.next();
      return { kind: t.type, pos: posOf(t) };
    }
    if (t.type === "ident" && PRED_NAMES.has(t.text) && this.peek(1).type === "(") {
      this.next();
      return { kind: "pred", pred: t.text, arg: this.parseArguments(t.text), pos: posOf(t) };
    }
    if (t.type === "(") {
      // `(x < 0)` or `(x) < 0`: try the condition in parentheses first; keep the error that got further.
      const inParens = this.attempt(() => {
        this.next();
        const b = this.parseBool();
        if (!this.is(")")) throw this.fail(`")" to close the "(" at ${at(posOf(t))}`);
        this.next();
        return b;
      });
      if (!(inParens instanceof ParseError)) return inParens;
      const asTerm = this.attempt(() => this.parseComparison());
      if (!(asTerm instanceof ParseError)) return asTerm;
      throw asTerm.line > inParens.line || (asTerm.line === inParens.line && asTerm.col > inParens.col) ? asTerm : inParens;
    }
    return this.parseComparison();
  }

  /** term ("<" | "<=" | ">" | ">=" | "=" | "!=") term, with `<=` and `>=` written without a space. */
  private parseComparison(): BoolTerm {
    const left = this.parseTerm();
    const t = this.peek();
    let pred: string;
    if (t.type === "<" || t.type === ">") {
      this.next();
      const eq = this.peek();
      const orEqual = eq.type === "=" && Parser.adjacent(t, eq);
      if (orEqual) this.next();
      pred = (t.type === "<" ? "l" : "g") + (orEqual ? "e" : "t");
    } else if (t.type === "=" || t.type === "!=") {
      this.next();
      pred = t.type === "=" ? "eq" : "ne";
    } else {
      throw this.fail("a comparison (<, <=, >, >=, =, !=) in the condition of if");
    }
    const right = this.parseTerm();
    return { kind: "pred", pred, arg: { kind: "pair", fst: left, snd: right, pos: left.pos }, pos: left.pos };
  }
}
