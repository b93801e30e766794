/**
 * Where each `let` of an outermost rd's trace and derivative terms came from
 * (lang/origins.ts, onRd's fourth argument): the trace's instructions by the operation of
 * the program that emitted them, the derivative's by the trace instruction whose reverse
 * rule emitted them. Checked on a program worked by hand, on a nested rd, and on every
 * example: each printed `let` of a trace names the primitive its operation applies.
 */
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import { runProgram, tokenize, type Term, type TermOrigins } from "../../src/index.js";
import type { TraceTerm } from "../../src/trace/term.js";

afterEach(() => vi.restoreAllMocks());

interface Rd {
  readonly trace: string;
  readonly derivative: string;
  readonly traceLength: number;
  readonly origins: TermOrigins;
}

function rds(source: string): Rd[] {
  vi.spyOn(console, "warn").mockImplementation(() => undefined); // ties in examples
  const out: Rd[] = [];
  runProgram(source, {
    onRd: (_pos, t: TraceTerm, d: TraceTerm, origins) => out.push({ trace: String(t), derivative: String(d), traceLength: t.length, origins }),
  });
  return out;
}

/** The printed `let vK:T = rhs in` lines of a term, by K, but for its parameters' (`= x`, `= W`). */
function lets(term: string): Map<number, string> {
  const m = new Map<number, string>();
  for (const line of term.split("\n")) {
    const l = /^let v(\d+):\S+ = (.*) in$/.exec(line);
    if (l !== null && l[2] !== "x" && l[2] !== "W") m.set(Number(l[1]), l[2]);
  }
  return m;
}

/** What an operation node of the program is: `sin`, `mul`, `+`, or `rd at 1:3`. */
function describeOp(M: Term): string {
  switch (M.kind) {
    case "op":
      return M.op;
    case "add":
      return "+";
    case "rd":
    case "grad":
    case "fd":
      return `${M.kind} at ${M.pos.line}:${M.pos.col}`;
    default:
      return `unexpected ${M.kind}`;
  }
}

/** The operation of a printed right-hand side: `sin` for `sin(v0)`, `+` for `v2 + v0`. */
const opOfLet = (rhs: string): string => /^([a-zA-Z0-9_]+)\(/.exec(rhs)?.[1] ?? (rhs.includes(" + ") ? "+" : rhs);

describe("origins of an rd's lets", () => {
  it("grad_2(x. sin(x) * x + x): each trace let by its operation, each derivative let by the rule that emitted it", () => {
    const [rd] = rds("grad_2(x: real. sin(x) * x + x)");
    const trace = lets(rd.trace);
    expect([...trace.entries()]).toEqual([
      [1, "sin(v0)"],
      [2, "mul(v1, v0)"],
      [3, "v2 + v0"],
    ]);
    expect([...rd.origins.trace.entries()].map(([k, M]) => [k, describeOp(M), M.pos.col])).toEqual([
      [1, "sin", 17],
      [2, "mul", 17], // a binary operator's node starts at its left operand
      [3, "+", 17],
    ]);
    // the derivative: v4 = W is the seed; mul's rule gives v5 = W·v0, v6 = W·v1 and v7 = W + v6 (x's
    // cotangent accumulated); sin's rule cos(v0) and its product (add's rule emits nothing)
    const derivative = lets(rd.derivative);
    const past = [...derivative.keys()].filter((k) => k >= rd.traceLength);
    expect(past.map((k) => [derivative.get(k), trace.get(rd.origins.rules.get(k)!)])).toEqual([
      ["mul(v4, v0)", "mul(v1, v0)"],
      ["mul(v4, v1)", "mul(v1, v0)"],
      ["v4 + v6", "mul(v1, v0)"],
      ["cos(v0)", "sin(v0)"],
      ["mul(v5, v8)", "sin(v0)"],
      ["v7 + v9", "sin(v0)"],
    ]);
  });

  it("what a nested rd emits into the outer trace is that rd's", () => {
    const source = "grad_1(x: real. x * grad_x(y: real. x * sin(y)))";
    const [rd] = rds(source);
    const byOp = [...lets(rd.trace).keys()].map((k) => describeOp(rd.origins.trace.get(k)!));
    // the inner derivative x·cos(y) at y = x, emitted as the inner grad's; then the outer product
    expect(byOp.at(-1)).toBe("mul");
    expect(byOp.slice(0, -1).every((d) => d === "grad at 1:21"), byOp.join(", ")).toBe(true);
    expect(byOp.length).toBeGreaterThan(1);
  });

  const examples = fileURLToPath(new URL("../../../../examples/", import.meta.url));
  it.each(readdirSync(examples).filter((f) => f.endsWith(".wg")))("%s: every let has its origin, and a primitive's is that primitive", (name) => {
    const all = rds(readFileSync(`${examples}${name}`, "utf8"));
    expect(all.length).toBeGreaterThan(0);
    for (const rd of all) {
      const trace = lets(rd.trace);
      for (const [k, rhs] of trace) {
        const M = rd.origins.trace.get(k);
        expect(M, `v${k} = ${rhs} in\n${rd.trace}`).toBeDefined();
        const op = describeOp(M!);
        if (!/ at /.test(op)) expect(op, `v${k} = ${rhs}`).toBe(opOfLet(rhs));
      }
      for (const [k, rhs] of lets(rd.derivative)) {
        if (k < rd.traceLength) continue;
        const rule = rd.origins.rules.get(k);
        expect(rule === undefined ? undefined : trace.has(rule), `v${k} = ${rhs}: rule of v${rule}`).toBe(true);
      }
    }
  });

  it("a loop run as a scan: its scan instruction, and what reads it, are the call's that entered the loop", () => {
    const source = "letrec loop(p: real * real): real = let <i, y> = p in if i < 100 then loop(<i + 1, 0.9 * y + 0.1 * sin(y)>) else y in grad_0.3(x: real. loop(<0, x>))";
    const [rd] = rds(source);
    const trace = lets(rd.trace);
    expect([...trace.values()].map(opOfLet)).toEqual(["scan", "scanOut"]);
    for (const k of trace.keys()) {
      const M = rd.origins.trace.get(k);
      expect(M?.kind, `v${k}`).toBe("call");
      expect(M!.pos.col).toBe(source.indexOf("loop(<0, x>)") + 1);
    }
  });

  it("no origins are recorded (or rds reported) without onRd", () => {
    expect(runProgram("grad_2(x: real. sin(x) * x)").value).toBeCloseTo(Math.sin(2) + 2 * Math.cos(2), 12);
  });
});

describe("tokenize", () => {
  it("gives the parser's tokens with their places, and stops at a lexical error", () => {
    const tokens = tokenize("1.rd_1(x: real. x # a comment\n  * sin(x)) $ 2");
    expect(tokens.map((t) => t.text)).toEqual(["1", ".", "rd_", "1", "(", "x", ":", "real", ".", "x", "*", "sin", "(", "x", ")", ")"]);
    expect(tokens.map((t) => t.type).slice(0, 4)).toEqual(["num", ".", "ident", "num"]);
    const star = tokens[10];
    expect([star.line, star.col, star.start, star.end]).toEqual([2, 3, 32, 33]);
  });
});
