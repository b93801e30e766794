/**
 * The language end to end (parse, check, evaluate): the example programs, every
 * construct, type errors (exact message and place), deep recursion, the step limit,
 * and positions on runtime errors. Expected values are closed forms worked by hand.
 */
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import { grad, mul, type Scalar, square, sub, tanh, TieError } from "../../src/index.js";
import { runProgram, showValue, StepLimitError, TypeCheckError, type Value } from "../../src/lang/index.js";
import { tracing } from "../../src/trace/tracer.js";
import { expectClose } from "../helpers/check.js";

afterEach(() => vi.restoreAllMocks());

const EXAMPLES = fileURLToPath(new URL("../../../../examples/", import.meta.url));
const example = (name: string) => ({ source: readFileSync(`${EXAMPLES}${name}`, "utf8"), file: `examples/${name}` });
const runExample = (name: string, options: { ties?: "warn" | "error" | "ignore" } = {}) => {
  const { source, file } = example(name);
  return runProgram(source, { file, ...options });
};

/** The structure of a value with every number replaced by 0 (so [] and [[]] differ). */
const shape = (v: unknown): unknown => (Array.isArray(v) ? v.map(shape) : typeof v === "number" ? 0 : v);
function expectValue(got: Value, want: unknown, where: string, rtol = 1e-12, atol = 1e-12): void {
  expect(shape(got), `${where}: structure`).toEqual(shape(want));
  expectClose(got, want, rtol, atol, where);
}

/** Line and column (1-based) of the first occurrence of `needle` in `source`. */
function positionOf(source: string, needle: string): { line: number; col: number } {
  const lines = source.split("\n");
  const line = lines.findIndex((l) => l.includes(needle));
  expect(line, `${needle} in the source`).toBeGreaterThanOrEqual(0);
  return { line: line + 1, col: lines[line].indexOf(needle) + 1 };
}

describe("the example programs", () => {
  it("every file in examples/ is covered here", () => {
    expect(readdirSync(EXAMPLES).filter((f) => f.endsWith(".wg")).sort()).toEqual(
      ["dprod.wg", "forward.wg", "nested-1.wg", "nested-2.wg", "not-zero.wg", "relu.wg", "train.wg"],
    );
  });

  it.each(["nested-1.wg", "nested-2.wg"])("%s (end of Sec. 3) gives 1 : real", (name) => {
    expect(runExample(name)).toEqual({ value: 1, type: "real" });
  });

  it("relu.wg gives <<0, 1>, 1> and reports the tie at 0", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const { value, type } = runExample("relu.wg");
    expect(value).toEqual([[0, 1], 1]);
    expect(type).toBe("real * real * real");
    expect(warn).toHaveBeenCalledTimes(1);
    const msg = String(warn.mock.calls[0][0]);
    const at = positionOf(example("relu.wg").source, "grad_0");
    expect(msg).toContain(`rd at examples/relu.wg:${at.line}:${at.col}`);
    expect(msg).toContain("lt(0, 0)");
    expect(msg).toMatch(/tie/);
  });

  it("not-zero.wg gives <1, 0> with the tie reported, and stops with ties: error", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    expect(runExample("not-zero.wg")).toEqual({ value: [1, 0], type: "real * real" });
    expect(warn).toHaveBeenCalledTimes(1);
    expect(String(warn.mock.calls[0][0])).toMatch(/eq\(0, 0\).*tie/);
    expect(() => runExample("not-zero.wg", { ties: "error" })).toThrow(TieError);
  });

  it("dprod.wg: rd of the dot product equals its op_r, <<c a', c b'>, <c a, c b>>", () => {
    // point <<a, b>, <a', b'>> = <<1, 2>, <3, 4>>, seed c = 2
    const [a, b, a2, b2, c] = [1, 2, 3, 4, 2];
    const want = [[c * a2, c * b2], [c * a, c * b]];
    const { value, type } = runExample("dprod.wg");
    expect(value).toEqual([want, want]);
    // ((real × real) × (real × real)) × ((real × real) × (real × real)), with * left-associative
    expect(type).toBe("real * real * (real * real) * (real * real * (real * real))");
  });

  it("train.wg: the trained w fits the data pair and equals the same descent in TypeScript", () => {
    const { value, type } = runExample("train.wg");
    expect(type).toBe("real * real");
    const [w, model] = value as [number, number];
    // loss (0.6 - tanh(1.5 w))^2 < 1e-6, i.e. |tanh(1.5 w) - 0.6| < 1e-3
    expect(Math.abs(Math.tanh(1.5 * w) - 0.6)).toBeLessThan(1e-3);
    expect(Math.abs(w - Math.atanh(0.6) / 1.5)).toBeLessThan(1e-2);
    expectClose(model, Math.tanh(1.5 * w), 1e-14, 1e-15, "myTrainedModel(1.5)");
    const loss = (v: Scalar): Scalar => square(sub(0.6, tanh(mul(v, 1.5))));
    let wTs = -0.5;
    for (let k = 0; !((loss(wTs) as number) < 1e-6); k++) {
      expect(k, "TypeScript descent converges").toBeLessThan(10_000);
      wTs = wTs - 0.5 * (grad(loss, wTs) as number);
    }
    expectClose(w, wTs, 1e-12, 1e-14, "trained w");
  });

  it("forward.wg gives <3, cos 2>", () => {
    const { value, type } = runExample("forward.wg");
    expect(type).toBe("real * real");
    expectValue(value, [3, Math.cos(2)], "forward.wg");
  });
});

// ---- every construct ----

const { E, PI, cos, sin } = Math;
type Row = [src: string, value: unknown, type: string];
const cube = (x: number) => 3 * x * x; // d/dx x^3

const CONSTRUCTS: Record<string, Row[]> = {
  literals: [["2.5", 2.5, "real"], ["1e-3", 0.001, "real"], ["1.5E+2", 150, "real"], ["-1.5", -1.5, "real"], ["12 # a comment\n", 12, "real"]],
  "+ and the infix operators": [
    ["1 + 2", 3, "real"], ["7 - 2 - 1", 4, "real"], ["2 * 3 / 4", 1.5, "real"], ["1 + 2 * 3", 7, "real"],
    ["-2 * 3", -6, "real"], ["- 1.5", -1.5, "real"], ["-(2 - 5)", 3, "real"], ["8 / 2 / 2", 2, "real"], ["3 -1", 2, "real"],
    ["2 × 3", 6, "real"],
  ],
  "named operations": [
    ["exp(1)", E, "real"], ["sin(0.5)", sin(0.5), "real"], ["sqrt(2)", Math.SQRT2, "real"], ["tanh(0.3)", Math.tanh(0.3), "real"],
    ["log(2)", Math.LN2, "real"], ["square(3)", 9, "real"], ["abs(-2)", 2, "real"], ["neg(4)", -4, "real"],
    ["pow(2, 10)", 1024, "real"], ["atan2(1, 1)", PI / 4, "real"], ["add(1, 2)", 3, "real"], ["div(1, 4)", 0.25, "real"],
    ["mul(<3, 4>)", 12, "real"],
  ],
  let: [
    ["let x = 2 in x * x", 4, "real"], ["let x = 1 in let x = x + 1 in x", 2, "real"], ["1 + let x = 2 in x * 10", 21, "real"],
    ["let x: real = 2 in x", 2, "real"], ["let p: real * real = <1, 2> in snd(p)", 2, "real"],
    ["let u: unit = () in u", [], "unit"],
  ],
  "tuple let": [
    ["let <a, b, c> = <1, 2, 3> in a - b * c", -5, "real"], ["let <> = * in 5", 5, "real"], ["let <x> = 3 in x + 1", 4, "real"],
    ["let <a: real, b: real * real> = <1, <2, 3>> in fst(b) + a", 3, "real"],
    ["let <a, b> = <1, 2, 3> in a", [1, 2], "real * real"], ["let <x,y>= <1, 2> in y", 2, "real"],
  ],
  "unit and pairs": [
    ["*", [], "unit"], ["()", [], "unit"], ["<>", [], "unit"], ["<*, 1>", [[], 1], "unit * real"],
    ["<1, 2>", [1, 2], "real * real"], ["<1, 2, 3>", [[1, 2], 3], "real * real * real"], ["<1, <2, 3>>", [1, [2, 3]], "real * (real * real)"],
    ["<3>", 3, "real"], ["⟨1, 2⟩", [1, 2], "real * real"], ["<if 1 > 0 then 1 else 2, 3>", [1, 3], "real * real"],
  ],
  "fst and snd": [["fst(<1, 2>)", 1, "real"], ["snd(<<1, 2>, 3>)", 3, "real"], ["snd(fst(<<1, 2>, 3>))", 2, "real"], ["fst(<*, 1>)", [], "unit"]],
  if: [
    ["if true then 1 else 2", 1, "real"], ["if false then 1 else 2", 2, "real"], ["if (1 < 2) then 1 else 2", 1, "real"],
    ["1 + if false then 2 else 3 + 4", 8, "real"],
    // every predicate, infix and named, each way
    ...(
      [
        ["<", "lt", [1, 2], [2, 2]], ["<=", "le", [2, 2], [3, 2]], [">", "gt", [3, 2], [2, 2]],
        [">=", "ge", [2, 2], [1, 2]], ["=", "eq", [2, 2], [1, 2]], ["!=", "ne", [1, 2], [2, 2]],
      ] as const
    ).flatMap(([sym, name, yes, no]): Row[] => [
      [`if ${yes[0]} ${sym} ${yes[1]} then 1 else 0`, 1, "real"], [`if ${no[0]} ${sym} ${no[1]} then 1 else 0`, 0, "real"],
      [`if ${name}(${yes[0]}, ${yes[1]}) then 1 else 0`, 1, "real"], [`if ${name}(<${no[0]}, ${no[1]}>) then 1 else 0`, 0, "real"],
    ]),
  ],
  "functions and calls": [
    ["letrec fact(n: real): real = if n < 1 then 1 else n * fact(n - 1) in fact(5)", 120, "real"],
    ["letrec sq(x: real): real = x * x in letrec sumsq(n: real): real = if n < 1 then 0 else sq(n) + sumsq(n - 1) in sumsq(4)", 30, "real"],
    ["letrec ipow(x: real, k: real): real = if k = 0 then 1 else x * ipow(x, k - 1) in ipow(2, 10)", 1024, "real"],
    ["letrec f3(a: real, b: real, c: real): real = a * 100 + b * 10 + c in f3(1, 2, 3)", 123, "real"],
    ["let f(x: real): real = x + 1 in f(f(1))", 3, "real"], ["let c(u: unit): real = 7 in c()", 7, "real"],
    ["let sw(p: real * real): real * real = <snd(p), fst(p)> in sw(<1, 2>)", [2, 1], "real * real"],
    ["let x = 5 in let f(x: real): real = x * 2 in f(x + 1)", 12, "real"],
  ],
  rd: [
    ["3.rd_2(x. x * x)", 12, "real"], ["let a = 3 in 2.rd_a(x: real. x * x)", 12, "real"],
    ["1.rd_{<1, 2>}(p. fst(p) * snd(p))", [2, 1], "real * real"], ["1.rd_{-1}(x. x * x * x)", 3, "real"],
    ["<1, 1>.rd_2(x. <x * x, sin(x)>)", 4 + cos(2), "real"], ["1.rd_1(x: real. x * 1.rd_1(y: real. x + y))", 1, "real"],
    ["1.rd_{<1, *>}(p: real * unit. fst(p))", [1, []], "real * unit"], ["2.rd_1(x. 1.rd_3(y. x * y * y))", 12, "real"],
    ["let w' = 2 in 1.rd_w'(v. v * v)", 4, "real"], ["let a = 1 in 1.rd_{a + 1}(x. x * x)", 4, "real"], ["1.rd_2(x. 3)", 0, "real"],
    ["1.rd_{*}(u. 3)", [], "unit"], ["*.rd_2(x. *)", 0, "real"], ["<*, 1>.rd_2(x. <*, x * x>)", 4, "real"],
  ],
  grad: [
    ["grad_2(x. x * x * x)", cube(2), "real"], ["grad_{<1, 2>}(p: real * real. let <x, y> = p in x * y * y)", [4, 4], "real * real"],
    ["let w = 0.5 in grad_w(v. sin(v))", cos(0.5), "real"], ["grad_2.5(x. exp(x))", Math.exp(2.5), "real"],
    ["grad_{<1, 2, 3>}(p: real^3. let <a, b, c> = p in a * b * c)", [[6, 3], 2], "real * real * real"],
    ["grad_{<1, 2>}(p. 5)", [0, 0], "real * real"],
    // nested: d/dx (2 x y at y = x) = 4x; d(x) = d/dy (x y) = x, so d(x) x = x^2
    ["grad_2(x. grad_x(y. x * y * y))", 8, "real"], ["letrec d(x: real): real = grad_x(y. x * y) in grad_2(x. d(x) * x)", 4, "real"],
  ],
  fd: [
    ["1.fd_{real, 2}(x. x * x * x)", cube(2), "real"], ["1.fd_2(x. x * x * x)", cube(2), "real"],
    ["<1, 0>.fd_{<2, 3>}(p. let <x, y> = p in <x * y, sin(x)>)", [3, cos(2)], "real * real"],
    ["<0, 1>.fd_{real * real, <2, 3>}(p. let <x, y> = p in <x * y, sin(x)>)", [2, 0], "real * real"],
    ["*.fd_{real, *}(u. 3)", 0, "real"],
    // 2.fd_x(y. x y^2) = 2 (2 x y) at y = x = 4x^2, whose derivative at 1 is 8
    ["grad_1(x. 2.fd_{x}(y. x * y * y))", 8, "real"],
  ],
  "types real^n": [
    ["let p: real^3 = <1, 2, 3> in p", [[1, 2], 3], "real * real * real"], ["let u: real^0 = * in u", [], "unit"],
    ["let r: real^1 = 5 in r", 5, "real"], ["let p: (real * unit)^2 = <<1, *>, <2, ()>> in fst(snd(p))", 2, "real"],
    ["let f(p: real^2 * real): real = let <q, c> = p in fst(q) + snd(q) * c in f(<<1, 2>, 3>)", 7, "real"],
  ],
  // f(x) = sin x on (-inf, 1), and f(x) = f'(x - 1) beyond: f(x) = cos(x - 1) on [1, 2),
  // -sin(x - 2) on [2, 3), -cos(x - 3) on [3, 4): three nested rds of f inside f.
  "a function defined by its own derivative": [
    [
      "letrec f(x: real): real = if x < 1 then sin(x) else grad_{x - 1}(y: real. f(y)) in <f(0.5), f(1.5), f(2.5), f(3.5)>",
      [[[sin(0.5), cos(0.5)], -sin(0.5)], -cos(0.5)], "real * real * real * real",
    ],
    ["letrec g(x: real): real = if x < 1 then x * x else grad_{x - 1}(y: real. g(y)) in <g(0.5), g(1.5), g(2.5)>", [[0.25, 1], 2], "real * real * real"],
  ],
};

describe("each construct", () => {
  for (const [construct, rows] of Object.entries(CONSTRUCTS)) {
    it.each(rows)(`${construct}: %s`, (src, value, type) => {
      const r = runProgram(src, { file: "t.wg" });
      expect(r.type).toBe(type);
      expectValue(r.value, value, src, 1e-12, 1e-12);
    });
  }
});

// ---- type errors: exact message and place ----

type Bad = [src: string, line: number, col: number, what: string];
const FREE = (f: string, x: string) =>
  `the body of ${f} uses ${x}, a variable bound outside it; function definitions have no free variables (Fig. 1): pass ${x} as a parameter`;
const TYPE_ERRORS: Bad[] = [
  ["x + 1", 1, 1, "unbound variable x"],
  ["1 + <1, 2>", 1, 5, "the right operand of + has type real * real, expected real"],
  ["<1, 2> + 1", 1, 1, "the left operand of + has type real * real, expected real"],
  ["let a = 1 in\nlet b = <a, a> in\n  a + b", 3, 7, "the right operand of + has type real * real, expected real"],
  ["sin(<1, 2>)", 1, 5, "the argument of sin has type real * real, expected real"],
  ["pow(1)", 1, 5, "the argument of pow has type real, expected real * real"],
  ["if true then 1 else <1, 2>", 1, 21, "the branches of if have different types: real and real * real"],
  ["if lt(1) then 1 else 2", 1, 7, "the argument of lt has type real, expected real * real"],
  ["fst(1)", 1, 5, "fst needs a pair, got a value of type real"],
  ["snd(*)", 1, 5, "snd needs a pair, got a value of type unit"],
  ["<1, 2>.rd_1(x. x * x)", 1, 1, "the seed of rd has type real * real, expected real"],
  ["1.rd_2(x: real * real. fst(x))", 1, 8, "the point of differentiation (for x) has type real, expected real * real"],
  ["grad_1(x. <x, x>)", 1, 11, "the body of grad has type real * real, expected real"],
  ["letrec f(x: real): real = x in f(<1, 2>)", 1, 34, "the argument of f has type real * real, expected real"],
  ["letrec f(x: real): real * real = x in f(1)", 1, 34, "the body of f has type real, expected real * real"],
  ["g(1)", 1, 1, "unknown function g"],
  // a function defined with let (not letrec) is not in scope in its own body
  ["let f(x: real): real = f(x) in f(1)", 1, 24, "unknown function f"],
  ["let g = 1 in g(2)", 1, 14, "g is a variable, not a function"],
  ["letrec f(x: real): real = x in f + 1", 1, 32, "f is a function; call it as f(…)"],
  [
    "let y = 2 in letrec f(x: real): real = x + y in f(1)", 1, 44,
    "the body of f uses y, a variable bound outside it; function definitions have no free variables (Fig. 1): pass y as a parameter",
  ],
  ["grad_1(x. let g(y: real): real = x * y in g(2))", 1, 34, FREE("g", "x")],
  ["letrec f(x: real): real = let g(y: real): real = x + y in g(1) in f(2)", 1, 50, FREE("g", "x")],
  ["let x: real * real = 1 in x", 1, 22, "the bound term of x has type real, expected real * real"],
  ["let <a, b, c> = 1 in a", 1, 17, "cannot take 3 components of a value of type real"],
  ["let <> = 1 in 2", 1, 10, "cannot take 0 components of a value of type real"],
  ["let <a: real * real, b> = <1, 2> in a", 1, 6, "component a has type real, expected real * real"],
  ["1.fd_{real, <1, 2>}(p. fst(p))", 1, 1, "the direction of fd has type real, expected real * real"],
  ["1.fd_{real * real, 2}(x. x)", 1, 26, "the body of fd has type real, expected real * real"],
];

describe("names", () => {
  it("a function may be named like a tensor primitive (sum, max, concat…): only primitives on reals are operations", () => {
    expect(runProgram("letrec sum(n: real): real = n + 1 in sum(1)").value).toBe(2);
    expect(runProgram("letrec concat(a: real, b: real): real = a + b in concat(1, 2)").value).toBe(3);
    expect(runProgram("letrec max(p: real * real): real = fst(p) in max(<1, 2>)").value).toBe(1);
    expect(() => runProgram("sum(1)", { file: "t.wg" })).toThrow("t.wg:1:1: type error: unknown function sum");
  });
  it("the tuple a function of several parameters takes them in is not a variable of its body", () => {
    expect(() => runProgram("letrec f(x: real, y: real): real * real = _arg in f(1, 2)", { file: "t.wg" })).toThrow(
      /t\.wg:1:43: type error: unbound variable _arg/,
    );
    expect(runProgram("letrec f(x: real, y: real): real * real = <y, x> in f(1, 2)").value).toEqual([2, 1]);
  });
});

describe("type errors", () => {
  it("a function nested in a function, using a variable bound outside both, gets the no-free-variables message", () => {
    // y is bound outside f and g; the checker should not call it unbound
    const src = "let y = 1 in letrec f(a: real): real = letrec g(b: real): real = y in g(a) in f(1)";
    expect(() => runProgram(src, { file: "bad.wg" })).toThrow(TypeCheckError);
    expect(() => runProgram(src, { file: "bad.wg" })).toThrow(
      /^bad\.wg:1:66: type error: the body of [fg] uses y, a variable bound outside it; function definitions have no free variables/,
    );
  });

  it.each(TYPE_ERRORS)("%s", (src, line, col, what) => {
    let err: unknown;
    try {
      runProgram(src, { file: "bad.wg" });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TypeCheckError);
    const e = err as TypeCheckError;
    expect({ file: e.file, line: e.line, col: e.col, message: e.message }).toEqual({
      file: "bad.wg", line, col, message: `bad.wg:${line}:${col}: type error: ${what}`,
    });
  });
});

// ---- deep recursion and the step limit ----

const COUNT = "letrec f(n: real): real = if n < 1 then 0 else 1 + f(n - 1) in f(N)";

describe("deep recursion runs on the heap, not the JavaScript stack", () => {
  it("a non-tail-recursive count to 10^5", () => {
    expect(runProgram(COUNT.replace("N", "100000")).value).toBe(100_000);
  });

  it("a non-tail-recursive count to 10^6 (step limit raised)", () => {
    expect(runProgram(COUNT.replace("N", "1000000"), { maxSteps: 100_000_000 }).value).toBe(1_000_000);
  });

  it("a tail-recursive loop of 10^6 iterations", () => {
    const src = "letrec loop(i: real): real = if i < 1 then 7 else loop(i - 1) in loop(1000000)";
    expect(runProgram(src, { maxSteps: 100_000_000 }).value).toBe(7);
  });

  it("a tail-recursive loop with two parameters", () => {
    const src = "letrec loop(i: real, acc: real): real = if i < 1 then acc else loop(i - 1, acc + 2) in loop(100000, 0)";
    expect(runProgram(src).value).toBe(200_000);
  });

  it("grad through recursion of depth 10^4: d/dx x^n = n x^(n-1)", () => {
    const src = `letrec p(x: real, n: real): real = if n < 1 then 1 else x * p(x, n - 1) in
      <p(1.0001, 10000), grad_{1.0001}(x. p(x, 10000))>`;
    const n = 10_000;
    expectValue(runProgram(src).value, [1.0001 ** n, n * 1.0001 ** (n - 1)], "x^n and its derivative", 1e-9, 0);
  });

  it("grad through recursion of depth 10^4: d/dx sum_k sin(k x / n) / k = sum_k cos(k x / n) / n", () => {
    const src = `letrec s(x: real, k: real): real = if k < 1 then 0 else sin(k * x / 10000) / k + s(x, k - 1) in
      grad_{0.7}(x. s(x, 10000))`;
    let want = 0;
    for (let k = 1; k <= 10_000; k++) want += cos((k * 0.7) / 10_000) / 10_000;
    expectValue(runProgram(src).value, want, "sum of cosines", 1e-9, 0);
  });

  it("a divergent program stops at maxSteps with the place and the limit", () => {
    const src = "letrec f(x: real): real = f(x) in f(1)";
    let err: unknown;
    try {
      runProgram(src, { file: "loop.wg", maxSteps: 10_000 });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(StepLimitError);
    const m = /^loop\.wg:(\d+):(\d+): .*did not finish within 10000 steps/.exec((err as Error).message);
    expect(m, (err as Error).message).not.toBeNull();
    // the place is inside the body of f, f(x) at columns 27-30
    expect(Number(m![1])).toBe(1);
    expect(Number(m![2])).toBeGreaterThanOrEqual(27);
    expect(Number(m![2])).toBeLessThanOrEqual(30);
  });

  it("derivatives nested 3000 deep at run time (grad inside recursion inside grad…) take no JavaScript stack", () => {
    // each rd's body ran on a trampoline of its own, on the JavaScript stack: about 700 deep
    // overflowed it (reported as "traces closed out of order; was f asynchronous?")
    const src = "letrec f(n: real, x: real): real = if n = 0 then x else grad_x(y. f(n - 1, y) * 2 + y) in f(3000, 1)";
    expect(runProgram(src).value).toBe(1);
  });

  it("a kink is placed at its operation (abs at 1:15), a tie at its predicate", () => {
    expect(() => runProgram("grad_0(x. 1 + abs(x))", { ties: "error" })).toThrow(/^<input>:1:15: .*abs\(0\) was evaluated at its kink/);
    expect(() => runProgram("grad_0(x. if x < 0 then 1 else x)", { ties: "error" })).toThrow(/^<input>:1:14: .*lt\(0, 0\) was decided at a tie/);
  });

  it("fd evaluates its direction before its point (M.fd_L(x. N) = M.rd_0(y. y.rd_L(x. N)))", () => {
    const src = "letrec a(x: real): real = a(x) in letrec b(x: real): real = b(x) in a(1).fd_{b(1)}(x. x)";
    expect(() => runProgram(src, { maxSteps: 1000 })).toThrow(/did not finish within 1000 steps \(last in a\)/);
  });

  it("an error deep inside nested derivatives closes their traces on its way out", () => {
    const src = "letrec f(n: real, x: real): real = if n = 0 then f(0, x) else grad_x(y. f(n - 1, y) + y) in f(50, 1)";
    expect(() => runProgram(src, { maxSteps: 100_000 })).toThrow(StepLimitError);
    // the step limit was thrown inside 50 open traces: none is left open
    expect(tracing()).toBe(false);
    expect(grad((x: Scalar) => mul(x, x), 3)).toBe(6);
    expect(runProgram("grad_2(x. x * x)").value).toBe(4);
  });

  it("a divergent program that is not a tail loop stops too", () => {
    expect(() => runProgram("letrec f(x: real): real = 1 + f(x) in f(1)", { maxSteps: 10_000 })).toThrow(StepLimitError);
  });
});

describe("wide tuples (10^4 components) do not overflow the JavaScript stack", () => {
  const N = 10_000;
  const tuple = `<${Array.from({ length: N }, (_, i) => String(i)).join(", ")}>`;
  it("an iterated pair of 10^4 reals: its value, type and printed value", () => {
    const { value, type } = runProgram(tuple);
    expect(type).toBe(Array(N).fill("real").join(" * "));
    let want = "0";
    for (let i = 1; i < N; i++) want = `<${want}, ${i}>`;
    expect(showValue(value)).toBe(want);
  });
  it("a tuple let with 10^4 binders", () => {
    const binders = Array.from({ length: N }, (_, i) => `a${i}`).join(", ");
    expect(runProgram(`let <${binders}> = ${tuple} in a${N - 1} - a0 + a5000`).value).toBe(N - 1 + 5000);
  });
});

describe("runtime errors carry a position", () => {
  it("a tie with ties: error inside a program says file:line:col", () => {
    const src = "letrec relu(x: real): real =\n  if x < 0 then 0 else x\nin grad_0(x: real. relu(x))";
    let err: unknown;
    try {
      runProgram(src, { file: "tie.wg", ties: "error" });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TieError);
    const msg = (err as Error).message;
    // the predicate `x < 0` is at line 2, columns 6-10; the grad at line 3, column 4
    const m = /^tie\.wg:2:(\d+): /.exec(msg);
    expect(m, msg).not.toBeNull();
    expect(Number(m![1])).toBeGreaterThanOrEqual(6);
    expect(Number(m![1])).toBeLessThanOrEqual(10);
    expect(msg).toContain("tie.wg:3:4");
    expect(msg).toContain("lt(0, 0)");
  });

  it("errors inside nested rds leave no trace open: the API works afterwards", () => {
    const diverge = "letrec f(x: real): real = f(x) in grad_1(x. grad_x(y. f(y) * x))";
    expect(() => runProgram(diverge, { maxSteps: 10_000 })).toThrow(StepLimitError);
    expect(grad((x: Scalar) => mul(x, x), 3)).toBe(6);
    const tie = "letrec r(x: real): real = if x < 0 then 0 else x in grad_1(x. grad_{x - 1}(y. r(y)) * x)";
    expect(() => runProgram(tie, { ties: "error" })).toThrow(TieError);
    expect(grad((x: Scalar) => mul(x, x), 3)).toBe(6);
    // away from the error mode, the tie takes the else branch: d/dx (1 · x) = 1
    expect(runProgram(tie, { ties: "ignore" }).value).toBe(1);
  });

  it("the same program with ties: ignore says nothing and takes the else branch", () => {
    const warn = vi.spyOn(console, "warn");
    expect(runProgram("letrec relu(x: real): real = if x < 0 then 0 else x in grad_0(x: real. relu(x))", { ties: "ignore" }).value).toBe(1);
    expect(warn).not.toHaveBeenCalled();
  });
});
