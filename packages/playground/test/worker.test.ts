/**
 * What the worker computes, run in Node: each `let` linked to its operator's token (the
 * `*` of `x * y`, not the `x` where the parser places the product; the `rd_` of a nested
 * rd), the derivative's lets to the rule that emitted them, a program of x told apart from
 * a closed one, a plot's ties; and shared links read back as written.
 */
import { describe, expect, it } from "vitest";
import type { Reply, TermLine } from "../src/protocol.js";
import { runProgram } from "../src/run-program.js";
import { runTypeScript } from "../src/run-typescript.js";
import { readHash, writeHash } from "../src/share.js";

type ProgramReply = Extract<Reply, { kind: "program" }>;
const run = (source: string, x = 2): ProgramReply =>
  runProgram({ id: 1, source, file: "<test>", x, range: { from: -1, to: 1, points: 5 } }) as ProgramReply;

/** Each linked let: its text, and the source text and offset of the token it is linked to. */
const links = (lines: readonly TermLine[], source: string) =>
  lines.filter((l) => l.origin !== undefined).map((l) => [l.text, source.slice(l.origin!.start, l.origin!.end), l.origin!.start]);

describe("links from lets to the program", () => {
  it("each operation's own token: x * x * sin(x) + -x", () => {
    const source = "grad_2(x: real. x * x * sin(x) + -x)";
    const [rd] = run(source).rds;
    expect(links(rd.trace, source)).toEqual([
      ["let v1:real = mul(v0, v0) in", "*", 18],
      ["let v2:real = sin(v0) in", "sin", 24],
      ["let v3:real = mul(v1, v2) in", "*", 22],
      ["let v4:real = neg(v0) in", "-", 33],
      ["let v5:real = v3 + v4 in", "+", 31],
    ]);
    // the derivative's own lets are linked to the operation whose reverse rule emitted them
    const notes = rd.derivative.filter((l) => /= cos\(/.test(l.text)).map((l) => l.note);
    expect(notes).toEqual(["the reverse rule of v2, sin at 1:25"]);
  });

  it("parentheses between an operator and its right operand, and a named primitive", () => {
    const source = "grad_1(x: real. x - ((sub(x, 2))))";
    const [rd] = run(source).rds;
    expect(links(rd.trace, source)).toEqual([
      ["let v2:real = sub(v0, 2) in", "sub", 22],
      ["let v3:real = sub(v0, v2) in", "-", 18],
    ]);
  });

  it("what a nested rd emits is linked to its rd_ (the inner one, not the outer)", () => {
    const source = "1.rd_1(x: real. x * 1.rd_1(y: real. x + y))";
    const [rd] = run(source).rds;
    expect(links(rd.trace, source)).toEqual([["let v2:real = v0 + 1 in", "rd_", 22]]);
    expect(rd.at).toMatchObject({ start: 0 });
  });
});

describe("programs", () => {
  it("a closed program gives the CLI's value line; one whose only free variable is x is a function of x", () => {
    expect(run("1.rd_1(x: real. x * x)").result).toBe("2 : real");
    const fn = run("x * x", 3).fn!;
    expect([fn.value, fn.type, fn.derivatives]).toEqual(["9", "real", ["6", "2"]]);
    expect(fn.plot!.xs).toEqual([-1, -0.5, 0, 0.5, 1]);
    expect(fn.plot!.df).toEqual([-2, -1, 0, 1, 2]);
    // another free variable is the checker's error, at its place
    expect(run("x * y").error).toMatchObject({ line: 1, col: 5 });
  });

  it("a tie at a point of the plot is marked; elsewhere none", () => {
    const plot = run("if x < 0 then 0 else x").fn!.plot!;
    expect(plot.marks).toEqual([{ x: 0, what: "lt(0, 0) was decided at a tie" }]);
    expect(plot.df).toEqual([0, 0, 1, 1, 1]);
  });
});

describe("the TypeScript tab's runner", () => {
  const ts = (source: string) => (runTypeScript({ id: 1, source }) as Extract<Reply, { kind: "typescript" }>).output;

  it("strips types, gives @wengert/core to imports, prints values and terms; wengert's warnings are printed too", () => {
    const out = ts(`import { grad, traceOf, lt, sin } from "@wengert/core";
type F = (x: number) => number;
const relu = <T,>(x: T): T | 0 => (lt(x as never, 0) ? 0 : x);
console.log(grad(sin as F, 0), [1, [2]], { a: 1 });
console.log(traceOf(sin, 1));
console.log(grad(relu as never, 0));`);
    expect(out.map((l) => l.stream)).toEqual(["log", "log", "warn", "log"]);
    expect(out[0].text).toBe("1 [1, [2]] { a: 1 }");
    expect(out[1].text).toBe("x : real.\nlet v0:real = x in\nlet v1:real = sin(v0) in\nv1");
    expect(out[2].text).toMatch(/^wengert: grad: lt\(0, 0\) was decided at a tie/);
    expect(out[3].text).toBe("1");
  });

  it("an error names the user's line; another import is refused; a syntax error is said", () => {
    expect(ts('const a: number = 1;\n\nthrow new RangeError("no");').at(-1)).toEqual({ stream: "error", text: "RangeError: no (line 3)" });
    expect(ts('import x from "fs";\nconsole.log(x);').at(-1)!.text).toMatch(/only "@wengert\/core" can be imported here, not "fs"/);
    expect(ts("const = ;").at(-1)!.text).toMatch(/^syntax error: /);
  });
});

describe("shared links", () => {
  it("#src= then encodeURIComponent(program) reads back the program, whatever it holds", () => {
    const program = "# a & b = c #\nlet <x, y> = <1, 2> in x × y\n";
    expect(readHash(`#src=${encodeURIComponent(program)}`)).toEqual({ src: program });
    expect(readHash(writeHash({ src: program, x: -1.5, points: 11 }))).toEqual({ src: program, x: -1.5, points: 11 });
    expect(readHash("#ts=console.log(1)&x=abc&run")).toEqual({ ts: "console.log(1)" });
  });
});
