/**
 * The parser: every construct, precedence, positions, every kind of syntax error
 * (exact message and place), and inputs long enough to overflow a naive parser.
 */
import { describe, expect, it } from "vitest";
import { parse, ParseError, parseType } from "../../src/lang/parser.js";
import type { Binder, BoolTerm, Term, TypeExpr } from "../../src/lang/syntax.js";

// ---- expected ASTs, written without positions ----

type NoPos<T> = T extends readonly (infer E)[] ? NoPos<E>[] : T extends object ? { [K in keyof T as Exclude<K, "pos">]: NoPos<T[K]> } : T;
type E = NoPos<Term>;
type B = NoPos<BoolTerm>;
type Ty = NoPos<TypeExpr>;
type Bi = NoPos<Binder>;

/** `value` with every `pos` field removed. */
function strip(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(strip);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(Object.entries(value).filter(([k]) => k !== "pos").map(([k, v]) => [k, strip(v)]));
}
const p = (src: string): unknown => strip(parse(src));
const pt = (src: string): unknown => strip(parseType(src));

const R: Ty = { kind: "real" };
const U: Ty = { kind: "unit" };
const P = (fst: Ty, snd: Ty): Ty => ({ kind: "prod", fst, snd });
const b = (name: string, type?: Ty): Bi => (type ? { name, type } : { name });
const v = (name: string): E => ({ kind: "var", name });
const n = (value: number): E => ({ kind: "num", value });
const unit: E = { kind: "unit" };
const add = (left: E, right: E): E => ({ kind: "add", left, right });
const pair = (fst: E, snd: E): E => ({ kind: "pair", fst, snd });
const op = (name: string, arg: E): E => ({ kind: "op", op: name, arg });
const sub = (l: E, r: E): E => op("sub", pair(l, r));
const mul = (l: E, r: E): E => op("mul", pair(l, r));
const div = (l: E, r: E): E => op("div", pair(l, r));
const neg = (a: E): E => op("neg", a);
const fst = (arg: E): E => ({ kind: "fst", arg });
const snd = (arg: E): E => ({ kind: "snd", arg });
const call = (fn: string, arg: E): E => ({ kind: "call", fn, arg });
const let_ = (binder: Bi, bound: E, body: E): E => ({ kind: "let", binder, bound, body });
const tuple = (binders: Bi[], bound: E, body: E): E => ({ kind: "letTuple", binders, bound, body });
const fn = (name: string, param: Bi, result: Ty, fnBody: E, body: E, recursive: boolean): E =>
  ({ kind: "letrec", name, param, result, fnBody, body, recursive }) as E;
const if_ = (cond: B, then: E, els: E): E => ({ kind: "if", cond, then, else: els });
const pred = (name: string, arg: E): B => ({ kind: "pred", pred: name, arg });
const rd = (seed: E, point: E, param: Bi, body: E): E => ({ kind: "rd", seed, point, param, body });
const fd = (direction: E, point: E, param: Bi, body: E, resultType?: Ty): E =>
  resultType ? { kind: "fd", direction, resultType, point, param, body } : { kind: "fd", direction, point, param, body };
const grad = (point: E, param: Bi, body: E): E => ({ kind: "grad", point, param, body });

/** The ParseError `src` raises. */
function error(src: string, file?: string): ParseError {
  try {
    parse(src, file);
  } catch (e) {
    if (e instanceof ParseError) return e;
    throw e;
  }
  throw new Error(`no error for ${JSON.stringify(src)}`);
}

describe("types", () => {
  it("real, unit, products (left-associative), parentheses", () => {
    expect(pt("real")).toEqual(R);
    expect(pt("unit")).toEqual(U);
    expect(pt("real * unit")).toEqual(P(R, U));
    expect(pt("real * real * real")).toEqual(P(P(R, R), R));
    expect(pt("real * (real * real)")).toEqual(P(R, P(R, R)));
    expect(pt("real × ((unit))")).toEqual(P(R, U));
  });
  it("real^n is the n-fold iterated product", () => {
    expect(pt("real^0")).toEqual(U);
    expect(pt("real^1")).toEqual(R);
    expect(pt("real^3")).toEqual(P(P(R, R), R));
    expect(pt("(real * unit)^2")).toEqual(P(P(R, U), P(R, U)));
    expect(pt("real^2 * real")).toEqual(P(P(R, R), R));
    expect(pt("real * real^2")).toEqual(P(R, P(R, R)));
  });
  it("positions: a product is where its left operand starts", () => {
    expect(parseType(" real *\n  unit")).toEqual({
      kind: "prod",
      fst: { kind: "real", pos: { line: 1, col: 2 } },
      snd: { kind: "unit", pos: { line: 2, col: 3 } },
      pos: { line: 1, col: 2 },
    });
  });
});

describe("terms", () => {
  it("variables, numbers, unit", () => {
    expect(p("x")).toEqual(v("x"));
    expect(p("w_0'")).toEqual(v("w_0'"));
    expect(p("_tmp")).toEqual(v("_tmp"));
    expect(p("42")).toEqual(n(42));
    expect(p("2.5")).toEqual(n(2.5));
    expect(p("1e-3")).toEqual(n(0.001));
    expect(p("1.5E+2")).toEqual(n(150));
    expect(p("-1.5")).toEqual(n(-1.5));
    expect(p("*")).toEqual(unit);
    expect(p("()")).toEqual(unit);
    expect(p("<>")).toEqual(unit);
  });
  it("pairs: <M, N>, iterated tuples, <M> = M, ⟨ ⟩", () => {
    expect(p("<1, x>")).toEqual(pair(n(1), v("x")));
    expect(p("<a, b, c>")).toEqual(pair(pair(v("a"), v("b")), v("c")));
    expect(p("<a, <b, c>>")).toEqual(pair(v("a"), pair(v("b"), v("c"))));
    expect(p("<a>")).toEqual(v("a"));
    expect(p("⟨a, ⟨*, b⟩⟩")).toEqual(pair(v("a"), pair(unit, v("b"))));
  });
  it("fst, snd, + and the arithmetic sugar", () => {
    expect(p("fst(p)")).toEqual(fst(v("p")));
    expect(p("snd(<1, 2>)")).toEqual(snd(pair(n(1), n(2))));
    expect(p("a + b")).toEqual(add(v("a"), v("b")));
    expect(p("a - b")).toEqual(sub(v("a"), v("b")));
    expect(p("a * b")).toEqual(mul(v("a"), v("b")));
    expect(p("a × b")).toEqual(mul(v("a"), v("b")));
    expect(p("a / b")).toEqual(div(v("a"), v("b")));
    expect(p("-a")).toEqual(neg(v("a")));
  });
  it("op(M), op(M, N), calls", () => {
    expect(p("exp(x)")).toEqual(op("exp", v("x")));
    expect(p("pow(x, 2)")).toEqual(op("pow", pair(v("x"), n(2))));
    expect(p("add(x, 2)")).toEqual(op("add", pair(v("x"), n(2))));
    expect(p("f(x)")).toEqual(call("f", v("x")));
    expect(p("f(x, y, z)")).toEqual(call("f", pair(pair(v("x"), v("y")), v("z"))));
    expect(p("f()")).toEqual(call("f", unit));
    expect(p("lt(1, 2)")).toEqual(call("lt", pair(n(1), n(2))));
  });
  it("let, typed let, let of a tuple", () => {
    expect(p("let x = 1 in x")).toEqual(let_(b("x"), n(1), v("x")));
    expect(p("let x: real * real = <1, 2> in x")).toEqual(let_(b("x", P(R, R)), pair(n(1), n(2)), v("x")));
    expect(p("let <x, y: real> = p in y")).toEqual(tuple([b("x"), b("y", R)], v("p"), v("y")));
    expect(p("let <x,y>= p in y")).toEqual(tuple([b("x"), b("y")], v("p"), v("y")));
    expect(p("let ⟨x⟩ = p in x")).toEqual(tuple([b("x")], v("p"), v("x")));
    expect(p("let <> = * in 1")).toEqual(tuple([], unit, n(1)));
  });
  it("function definitions: let (not recursive), letrec, several parameters", () => {
    expect(p("let f(x: real): real = x in f(1)")).toEqual(fn("f", b("x", R), R, v("x"), call("f", n(1)), false));
    expect(p("letrec f(x: real^2): real = f(x) in 0")).toEqual(fn("f", b("x", P(R, R)), R, call("f", v("x")), n(0), true));
    expect(p("letrec g(x: real, y: unit, z: real): real = x in g(1, *, 2)")).toEqual(
      fn("g", b("#args", P(P(R, U), R)), R, tuple([b("x", R), b("y", U), b("z", R)], v("#args"), v("x")), call("g", pair(pair(n(1), unit), n(2))), true),
    );
  });
  it("several parameters: the synthesised nodes are at the first parameter", () => {
    const t = parse("let f(x: real, y: real): real = y in 0");
    expect(t.kind === "letrec" && t.param).toEqual({ name: "#args", type: expect.anything(), pos: { line: 1, col: 7 } });
    expect(t.kind === "letrec" && t.fnBody.pos).toEqual({ line: 1, col: 7 });
  });
  it("if, with every kind of condition", () => {
    const c = (s: string): unknown => (p(`if ${s} then 1 else 2`) as { cond: unknown }).cond;
    expect(p("if true then 1 else 2")).toEqual(if_({ kind: "true" }, n(1), n(2)));
    expect(c("false")).toEqual({ kind: "false" });
    expect(c("lt(x, 0)")).toEqual(pred("lt", pair(v("x"), n(0))));
    expect(c("ne(x)")).toEqual(pred("ne", v("x")));
    const cmp = (name: string) => pred(name, pair(v("x"), add(v("y"), n(1))));
    expect(c("x < y + 1")).toEqual(cmp("lt"));
    expect(c("x <= y + 1")).toEqual(cmp("le"));
    expect(c("x > y + 1")).toEqual(cmp("gt"));
    expect(c("x >= y + 1")).toEqual(cmp("ge"));
    expect(c("x = y + 1")).toEqual(cmp("eq"));
    expect(c("x != y + 1")).toEqual(cmp("ne"));
    expect(c("(x < y + 1)")).toEqual(cmp("lt"));
    expect(c("((x) < (y + 1))")).toEqual(cmp("lt"));
    expect(c("(x) < y + 1")).toEqual(cmp("lt"));
    expect(c("(true)")).toEqual({ kind: "true" });
  });
  it("the term parser never takes >: it closes pairs", () => {
    expect(p("<if x > 0 then 1 else 2, 3>")).toEqual(pair(if_(pred("gt", pair(v("x"), n(0))), n(1), n(2)), n(3)));
    expect(p("<1, if x >= 0 then <2> else 3>")).toEqual(pair(n(1), if_(pred("ge", pair(v("x"), n(0))), n(2), n(3))));
  });
  it("rd, with every kind of subscript, and chained", () => {
    const body = add(v("x"), v("y"));
    expect(p("1.rd_1(x: real. x)")).toEqual(rd(n(1), n(1), b("x", R), v("x")));
    expect(p("m.rd_a(x. x)")).toEqual(rd(v("m"), v("a"), b("x"), v("x")));
    expect(p("m.rd_2.5(x. x)")).toEqual(rd(v("m"), n(2.5), b("x"), v("x")));
    expect(p("m.rd_{<1, -2>}(x: real^2. x)")).toEqual(rd(v("m"), pair(n(1), n(-2)), b("x", P(R, R)), v("x")));
    expect(p("m.rd_{-1}(x. x)")).toEqual(rd(v("m"), n(-1), b("x"), v("x")));
    expect(p("m.rd_1(x.5)")).toEqual(rd(v("m"), n(1), b("x"), n(5)));
    expect(p("m.rd_1(x. x + y).rd_2(y. y)")).toEqual(rd(rd(v("m"), n(1), b("x"), body), n(2), b("y"), v("y")));
  });
  it("fd with and without the result type, grad", () => {
    expect(p("m.fd_1(x. x)")).toEqual(fd(v("m"), n(1), b("x"), v("x")));
    expect(p("m.fd_{real, 1}(x. x)")).toEqual(fd(v("m"), n(1), b("x"), v("x"), R));
    expect(p("m.fd_{(real * real)^1, <1, 2>}(x. x)")).toEqual(fd(v("m"), pair(n(1), n(2)), b("x"), v("x"), P(R, R)));
    expect(p("m.fd_{(a + b)}(x. x)")).toEqual(fd(v("m"), add(v("a"), v("b")), b("x"), v("x")));
    expect(p("m.fd_{f(a)}(x. x)")).toEqual(fd(v("m"), call("f", v("a")), b("x"), v("x")));
    expect(p("grad_1(x: real. x * x)")).toEqual(grad(n(1), b("x", R), mul(v("x"), v("x"))));
    expect(p("grad_w(w'. f(w'))")).toEqual(grad(v("w"), b("w'"), call("f", v("w'"))));
    expect(p("grad_{<1, 2>}(x: real^2. fst(x))")).toEqual(grad(pair(n(1), n(2)), b("x", P(R, R)), fst(v("x"))));
  });
  it("comments and whitespace", () => {
    expect(p("# a comment\n  1 + # another\n\t2 # end")).toEqual(add(n(1), n(2)));
    expect(p("1\r\n+\r\n2")).toEqual(add(n(1), n(2)));
  });
});

describe("precedence and associativity", () => {
  it("* and / bind tighter than + and -, all left-associative", () => {
    expect(p("a + b * c")).toEqual(add(v("a"), mul(v("b"), v("c"))));
    expect(p("a * b + c")).toEqual(add(mul(v("a"), v("b")), v("c")));
    expect(p("a - b - c")).toEqual(sub(sub(v("a"), v("b")), v("c")));
    expect(p("a + b - c + d")).toEqual(add(sub(add(v("a"), v("b")), v("c")), v("d")));
    expect(p("a / b / c")).toEqual(div(div(v("a"), v("b")), v("c")));
    expect(p("a / b * c")).toEqual(mul(div(v("a"), v("b")), v("c")));
    expect(p("(a + b) * c")).toEqual(mul(add(v("a"), v("b")), v("c")));
  });
  it("unary minus: above * and below postfix; -number is a literal", () => {
    expect(p("-a * b")).toEqual(mul(neg(v("a")), v("b")));
    expect(p("a * -b")).toEqual(mul(v("a"), neg(v("b"))));
    expect(p("--a")).toEqual(neg(neg(v("a"))));
    expect(p("- 1")).toEqual(neg(n(1)));
    expect(p("a -1")).toEqual(sub(v("a"), n(1)));
    expect(p("a - -1")).toEqual(sub(v("a"), n(-1)));
    expect(p("-m.rd_1(x. x)")).toEqual(neg(rd(v("m"), n(1), b("x"), v("x"))));
    expect(p("-1.rd_1(x. x)")).toEqual(rd(n(-1), n(1), b("x"), v("x")));
  });
  it("postfix binds tightest", () => {
    expect(p("a * 1.rd_1(x. x)")).toEqual(mul(v("a"), rd(n(1), n(1), b("x"), v("x"))));
    expect(p("f(a).rd_1(x. x) + 1")).toEqual(add(rd(call("f", v("a")), n(1), b("x"), v("x")), n(1)));
  });
  it("let, letrec and if extend as far right as possible", () => {
    expect(p("let x = 1 in x + 2")).toEqual(let_(b("x"), n(1), add(v("x"), n(2))));
    expect(p("let x = let y = 1 in y in x")).toEqual(let_(b("x"), let_(b("y"), n(1), v("y")), v("x")));
    expect(p("if true then 1 else 2 + 3")).toEqual(if_({ kind: "true" }, n(1), add(n(2), n(3))));
    expect(p("1 + if true then 2 else 3 + 4")).toEqual(add(n(1), if_({ kind: "true" }, n(2), add(n(3), n(4)))));
    expect(p("a * let x = 1 in x * 2")).toEqual(mul(v("a"), let_(b("x"), n(1), mul(v("x"), n(2)))));
    expect(p("if true then if false then 1 else 2 else 3")).toEqual(if_({ kind: "true" }, if_({ kind: "false" }, n(1), n(2)), n(3)));
    expect(p("if true then 1 else let x = 2 in if false then x else 3")).toEqual(
      if_({ kind: "true" }, n(1), let_(b("x"), n(2), if_({ kind: "false" }, v("x"), n(3)))),
    );
  });
});

describe("positions", () => {
  it("infix nodes are at their left operand; prefix nodes at their first token", () => {
    const t = parse("  a +\n  b * c");
    expect(t).toMatchObject({ kind: "add", pos: { line: 1, col: 3 }, right: { kind: "op", pos: { line: 2, col: 3 }, arg: { pos: { line: 2, col: 3 } } } });
    expect(parse("x - -1")).toMatchObject({ arg: { snd: { kind: "num", value: -1, pos: { line: 1, col: 5 } } } });
    expect(parse("\n\n   let y = 1 in y")).toMatchObject({
      pos: { line: 3, col: 4 },
      binder: { pos: { line: 3, col: 8 } },
      body: { pos: { line: 3, col: 17 } },
    });
  });
  it("rd is at its seed; a subscript written in the name is after the underscore", () => {
    const t = parse("(m).rd_a(x. x)");
    expect(t).toMatchObject({ kind: "rd", pos: { line: 1, col: 2 }, point: { pos: { line: 1, col: 8 } }, param: { pos: { line: 1, col: 10 } } });
    expect(parse("grad_w(w. w)")).toMatchObject({ pos: { line: 1, col: 1 }, point: { name: "w", pos: { line: 1, col: 6 } } });
  });
  it("pairs are at <, call arguments at their first argument", () => {
    expect(parse("<a, b, c>")).toMatchObject({ pos: { line: 1, col: 1 }, fst: { pos: { line: 1, col: 1 } } });
    expect(parse("f( a, b)")).toMatchObject({ pos: { line: 1, col: 1 }, arg: { pos: { line: 1, col: 4 } } });
  });
  it("columns count code points", () => {
    expect(parse("⟨𝑥, y⟩")).toMatchObject({ snd: { pos: { line: 1, col: 5 } } });
  });
});

describe("syntax errors", () => {
  const cases: Array<[string, string]> = [
    // unterminated pair, missing in / then / else
    ["<1, 2", `1:6: unexpected end of input: expected "," or ">" in the pair opened at 1:1`],
    ["<1, 2 in", `1:7: expected "," or ">" in the pair opened at 1:1, found "in"`],
    ["⟨1, 2>", `1:6: expected "," or "⟩" in the pair opened at 1:1, found ">"`],
    ["let x = 1 then x", `1:11: expected "in" after the bound term of let, found "then"`],
    ["if x < 0 else 1", `1:10: expected "then" after the condition of if, found "else"`],
    ["if x < 0 then 1", `1:16: unexpected end of input: expected "else" after the then-branch of if`],
    // derivatives
    ["m.rd_(x. x)", `1:6: expected a subscript after "rd_" (a number, a name or a term in braces), found "("`],
    ["m.rd_-1(x. x)", `1:6: expected a subscript after "rd_" (a number, a name or a term in braces), found "-" (a negative subscript goes in braces: rd_{-1})`],
    ["m.rd_in(x. x)", `1:6: expected a subscript after "rd_" (a number, a name or a term in braces), found "in"`],
    ["m.rd_1(x: real x)", `1:16: expected "." after the binder x of rd, found "x"`],
    ["m.rd_1(x x)", `1:10: expected "." after the binder x of rd, found "x"`],
    ["m.rd_{1(x. x)", `1:8: expected "}" to close the subscript of rd opened at 1:6, found "("`],
    ["m.rd_1(x. x", `1:12: unexpected end of input: expected ")" to close the "(" of rd at 1:7`],
    ["m.fd_{real}(x. x)", `1:11: expected "," after the result type in fd_{U, L}, found "}"`],
    ["m.grad_1(x. x)", `1:3: expected "rd_" or "fd_" after ".", found "grad_"`],
    ["m.rd", `1:3: expected "rd_" or "fd_" after ".", found "rd"`],
    ["grad(x. x)", `1:1: expected a term, found "grad" (write grad_L(x: T. N))`],
    // types
    ["let x: int = 1 in x", `1:8: expected a type (real, unit, T * U, T^n or a parenthesised type), found "int"`],
    ["let x: real * = 1 in x", `1:15: expected a type (real, unit, T * U, T^n or a parenthesised type), found "="`],
    ["let x: real^x = 1 in x", `1:13: expected a non-negative integer after "^", found "x"`],
    ["let x: real^2.5 = 1 in x", `1:13: expected a non-negative integer after "^", found "2.5"`],
    ["let x: (real = 1 in x", `1:14: expected ")" to close the "(" at 1:8, found "="`],
    // characters and numbers
    ["x $ y", `1:3: unexpected character "$" (U+0024)`],
    ["1 +\n  @", `2:3: unexpected character "@" (U+0040)`],
    [".5", `1:1: expected a term, found "." (write 0.5: a number cannot start with ".")`],
    ["1e+", `1:1: malformed number "1e+": expected digits after the exponent`],
    ["2e", `1:1: malformed number "2e": expected digits after the exponent`],
    ["2x", `1:1: malformed number "2x": a number cannot run into a name`],
    ["1e999", `1:1: number "1e999" is too large`],
    // end of input, parentheses, arity, leftovers
    ["1 +", `1:4: unexpected end of input: expected a term`],
    ["", `1:1: unexpected end of input: expected a term`],
    ["let x = 1 in\n", `2:1: unexpected end of input: expected a term`],
    ["(1 + 2", `1:7: unexpected end of input: expected ")" to close the "(" at 1:1`],
    ["(a, b)", `1:3: expected ")" to close the "(" at 1:1, found "," (pairs are written <M, N>)`],
    ["f(a b)", `1:5: expected "," or ")" in the arguments of f, found "b"`],
    ["fst(a, b)", `1:6: expected ")" after the argument of fst (it takes exactly one), found ","`],
    ["snd x", `1:5: expected "(" after snd, found "x"`],
    ["1 2", `1:3: expected an operator or the end of input, found "2"`],
    ["a > b", `1:3: expected an operator or the end of input, found ">"`],
    // let and function definitions
    ["let in = 1 in 2", `1:5: expected a name after let, found "in"`],
    ["let x 1 in x", `1:7: expected "=" after x in let, found "1"`],
    ["let <x y> = p in x", `1:8: expected "," or ">" in the tuple of let opened at 1:5, found "y"`],
    ["letrec f = 1 in f", `1:10: expected "(" after the function name f in letrec, found "="`],
    ["let f(x): real = x in 0", `1:8: expected ":" and the type of parameter x of f, found ")"`],
    ["let f(x: real) = x in 0", `1:16: expected ":" and the result type of f, found "="`],
    ["letrec f(): real = 1 in 0", `1:10: expected a name for a parameter of f, found ")"`],
    ["let f(x: real): real = x", `1:25: unexpected end of input: expected "in" after the body of f`],
    // conditions
    ["if x then 1 else 2", `1:6: expected a comparison (<, <=, >, >=, =, !=) in the condition of if, found "then"`],
    ["if x < = 1 then 1 else 2", `1:8: expected a term, found "="`],
    ["if (x < ) then 1 else 2", `1:9: expected a term, found ")"`],
    ["true", `1:1: expected a term, found "true" (true and false may only be conditions of if)`],
  ];
  it.each(cases)("%j", (src, message) => {
    const e = error(src);
    expect(e).toBeInstanceOf(ParseError);
    expect(e.message).toBe(`<input>:${message}`);
    const [line, col] = message.split(":").map(Number);
    expect([e.line, e.col]).toEqual([line, col]);
  });
  it("names the file, and is one line", () => {
    const e = error("let x = 1 then x", "prog.ad");
    expect(e.message).toBe(`prog.ad:1:11: expected "in" after the bound term of let, found "then"`);
    expect(e.message).not.toContain("\n");
    expect(e.name).toBe("ParseError");
  });
  it("parseType rejects leftovers", () => {
    expect(() => parseType("real real")).toThrow(`<input>:1:6: expected the end of the type, found "real"`);
  });
});

describe("the paper's examples", () => {
  it("nested differentiation (end of Sec. 3)", () => {
    expect(p("1.rd_1(x: real. x × 1.rd_1(y: real. x + y))")).toEqual(
      rd(n(1), n(1), b("x", R), mul(v("x"), rd(n(1), n(1), b("y", R), add(v("x"), v("y"))))),
    );
    expect(p("letrec f(x: real): real = 1.rd_1(y: real. x + y) in 1.rd_1(x: real. x + f(x))")).toEqual(
      fn("f", b("x", R), R, rd(n(1), n(1), b("y", R), add(v("x"), v("y"))), rd(n(1), n(1), b("x", R), add(v("x"), call("f", v("x")))), true),
    );
  });
  it("ReLU", () => {
    expect(p("let relu(x: real): real = if (x < 0) then 0 else x in relu(-2)")).toEqual(
      fn("relu", b("x", R), R, if_(pred("lt", pair(v("x"), n(0))), n(0), v("x")), call("relu", n(-2)), false),
    );
  });
});

describe("long inputs do not overflow the stack", () => {
  it("20,000 chained lets", () => {
    const N = 20_000;
    let src = "";
    for (let i = 0; i < N; i++) src += `let x${i} = ${i === 0 ? "1" : `x${i - 1} + 1`} in\n`;
    let t = parse(src + `x${N - 1}`);
    for (let i = 0; i < N; i++) {
      expect(t.kind).toBe("let");
      if (t.kind !== "let") break;
      if (i === N - 1) expect(t.binder).toEqual({ name: `x${i}`, pos: { line: N, col: 5 } });
      t = t.body;
    }
    expect(t).toEqual({ kind: "var", name: `x${N - 1}`, pos: { line: N + 1, col: 1 } });
  });
  it("20,000 chained else-ifs and letrecs", () => {
    const N = 20_000;
    let src = "";
    for (let i = 0; i < N; i++) src += i % 2 ? `if x < ${i} then ${i} else ` : `letrec f${i}(x: real): real = x in `;
    let t = parse(src + "0");
    let depth = 0;
    while (t.kind === "if" || t.kind === "letrec") {
      t = t.kind === "if" ? t.else : t.body;
      depth++;
    }
    expect([depth, t.kind]).toEqual([N, "num"]);
  });
  it("parenthesised conditions are not re-parsed exponentially often", () => {
    let src = "x";
    for (let i = 0; i < 200; i++) src = `if (${src}) < ${i} then 1 else 2`;
    let t = parse(src);
    let depth = 0;
    for (; t.kind === "if" && t.cond.kind === "pred" && t.cond.arg.kind === "pair"; depth++) t = t.cond.arg.fst;
    expect([depth, t.kind]).toEqual([200, "var"]);
    expect(error(src.replace("x", "x <")).message).toBe(`<input>:1:${200 * 4 + 4}: expected a term, found ")"`);
  });
  it("100,000-term sums, products and tuples", () => {
    const N = 100_000;
    const terms = Array.from({ length: N }, (_, i) => `x${i}`);
    for (const [sep, kind] of [[" + ", "add"], [" - ", "op"], [" * ", "op"]] as const) {
      let t = parse(terms.join(sep));
      let depth = 0;
      while (t.kind === kind) {
        t = t.kind === "add" ? t.left : t.kind === "op" && t.arg.kind === "pair" ? t.arg.fst : t;
        depth++;
      }
      expect([depth, t]).toEqual([N - 1, { kind: "var", name: "x0", pos: { line: 1, col: 1 } }]);
    }
    let t = parse(`<${terms.join(", ")}>`);
    let depth = 0;
    for (; t.kind === "pair"; depth++) t = t.fst;
    expect(depth).toBe(N - 1);
  });
});
