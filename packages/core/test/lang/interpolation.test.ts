/**
 * Property tests on random well-typed programs of the language with free real variables
 * x0, x1, x2 (+, -, *, sin, cos, tanh, exp∘tanh, square, let, tuple let, pairs with
 * fst/snd, if with every comparison written infix or named, a function h of two
 * parameters, a recursive function rep, and inner grad, rd and fd).
 *
 *  (a) Proposition 3.5, operational interpolation: evaluating the program at V equals
 *      evaluating its trace term C (symbolic evaluation at V) at V, and at nearby points
 *      where every branch goes the same way, C evaluated there equals the program
 *      evaluated there.
 *  (b) The program's gradient computed in the language equals grad of the same program
 *      written with the TypeScript API, and both equal finite differences away from
 *      branch boundaries.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  add, cos, exp, fd, ge, grad, gt, le, lt, mul, primal, rd, type Scalar, sin, square, sub, tanh, traceOf,
} from "../../src/index.js";
import { check, evaluate, parse, runProgram, type Value } from "../../src/lang/index.js";
import type { Term } from "../../src/lang/syntax.js";
import { bump, expectClose } from "../helpers/check.js";
import { decided, MAX, recorded, reliableDiff, smoothAround } from "../helpers/branches.js";
import { IGNORE } from "../helpers/ties.js";

const UNARY = { sin, cos, tanh, square, expTanh: (a: Scalar) => exp(tanh(a)) } satisfies Record<string, (a: Scalar) => Scalar>;
const BINARY = { "+": add, "-": sub, "*": mul } satisfies Record<string, (a: Scalar, b: Scalar) => Scalar>;
const PREDS = { lt, le, gt, ge } satisfies Record<string, (a: Scalar, b: Scalar) => boolean>;
const SYMBOL = { lt: "<", le: "<=", gt: ">", ge: ">=" } as const;
type UnOp = keyof typeof UNARY;
type BinOp = keyof typeof BINARY;
type Pred = keyof typeof PREDS;

/** Variables are indices into the scope (taken modulo its length). */
type Expr =
  | { readonly k: "var"; readonly i: number }
  | { readonly k: "const"; readonly c: number }
  | { readonly k: "un"; readonly op: UnOp; readonly a: Expr }
  | { readonly k: "bin"; readonly op: BinOp; readonly a: Expr; readonly b: Expr }
  /** let v = a in body */
  | { readonly k: "let"; readonly a: Expr; readonly body: Expr }
  /** fst(<a, b>) or snd(<a, b>) */
  | { readonly k: "proj"; readonly first: boolean; readonly a: Expr; readonly b: Expr }
  /** let <v, w> = <a, b> in body */
  | { readonly k: "tuple"; readonly a: Expr; readonly b: Expr; readonly body: Expr }
  | { readonly k: "if"; readonly pred: Pred; readonly infix: boolean; readonly l: Expr; readonly r: Expr; readonly t: Expr; readonly e: Expr }
  /** h(a, b), h being the program's function of two parameters */
  | { readonly k: "call"; readonly a: Expr; readonly b: Expr }
  /** rep(a, n): n-fold recursion v ↦ sin(v) + v / 2 (roughly) */
  | { readonly k: "rep"; readonly a: Expr; readonly n: number }
  /** grad_{at}(y. body), seed.rd_{at}(y. body), dir.fd_{at}(y. body) */
  | { readonly k: "grad"; readonly at: Expr; readonly body: Expr }
  | { readonly k: "rd"; readonly seed: Expr; readonly at: Expr; readonly body: Expr }
  | { readonly k: "fd"; readonly dir: Expr; readonly at: Expr; readonly body: Expr };

interface Program {
  /** The body of h(u, w); it has no calls. */
  readonly h: Expr;
  readonly main: Expr;
}

const MAIN_SCOPE = ["x0", "x1", "x2"];
const REP = "letrec rep(v: real, n: real): real = if n < 0.5 then v else sin(rep(v, n - 1)) + 0.5 * v in\n";

/** Source text; every compound term is parenthesized. */
function show(e: Expr, names: readonly string[]): string {
  const n = names.length;
  const s = (x: Expr, more: readonly string[] = []) => show(x, [...names, ...more]);
  switch (e.k) {
    case "var":
      return names[e.i % n];
    case "const":
      return `(${e.c})`;
    case "un":
      return e.op === "expTanh" ? `exp(tanh(${s(e.a)}))` : `${e.op}(${s(e.a)})`;
    case "bin":
      return `(${s(e.a)} ${e.op} ${s(e.b)})`;
    case "let":
      return `(let v${n} = ${s(e.a)} in ${s(e.body, [`v${n}`])})`;
    case "proj":
      return `${e.first ? "fst" : "snd"}(<${s(e.a)}, ${s(e.b)}>)`;
    case "tuple":
      return `(let <v${n}, v${n + 1}> = <${s(e.a)}, ${s(e.b)}> in ${s(e.body, [`v${n}`, `v${n + 1}`])})`;
    case "if": {
      const cond = e.infix ? `${s(e.l)} ${SYMBOL[e.pred]} ${s(e.r)}` : `${e.pred}(${s(e.l)}, ${s(e.r)})`;
      return `(if ${cond} then ${s(e.t)} else ${s(e.e)})`;
    }
    case "call":
      return `h(${s(e.a)}, ${s(e.b)})`;
    case "rep":
      return `rep(${s(e.a)}, ${e.n})`;
    case "grad":
      return `grad_{${s(e.at)}}(y${n}: real. ${s(e.body, [`y${n}`])})`;
    case "rd":
      return `(${s(e.seed)}).rd_{${s(e.at)}}(y${n}. ${s(e.body, [`y${n}`])})`;
    case "fd":
      return `(${s(e.dir)}).fd_{${s(e.at)}}(y${n}: real. ${s(e.body, [`y${n}`])})`;
  }
}

/** The definitions in front of the main term. */
const prelude = (p: Program) => `letrec h(u: real, w: real): real = ${show(p.h, ["u", "w"])} in\n${REP}`;
const lit = (x: number) => `(${x})`;

// ---- the same programs with the TypeScript API ----



function repTs(v: Scalar, n: number): Scalar {
  return n < 0.5 ? v : add(sin(repTs(v, n - 1)), mul(0.5, v));
}

function interp(p: Program, e: Expr, env: readonly Scalar[]): Scalar {
  const go = (x: Expr, more: readonly Scalar[] = []) => interp(p, x, [...env, ...more]);
  switch (e.k) {
    case "var":
      return env[e.i % env.length];
    case "const":
      return e.c;
    case "un":
      return UNARY[e.op](go(e.a));
    case "bin":
      return BINARY[e.op](go(e.a), go(e.b));
    case "let":
      return go(e.body, [go(e.a)]);
    case "proj": {
      const pair = [go(e.a), go(e.b)];
      return pair[e.first ? 0 : 1];
    }
    case "tuple":
      return go(e.body, [go(e.a), go(e.b)]);
    case "if": {
      const l = go(e.l);
      const r = go(e.r);
      const taken = PREDS[e.pred](l, r);
      decided(primal(l), primal(r), taken);
      return go(taken ? e.t : e.e);
    }
    case "call":
      return interp(p, p.h, [go(e.a), go(e.b)]);
    case "rep":
      return repTs(go(e.a), e.n);
    case "grad":
      return grad((y: Scalar) => go(e.body, [y]), go(e.at), IGNORE);
    case "rd": {
      const at = go(e.at);
      return rd((y: Scalar) => go(e.body, [y]), at, go(e.seed), IGNORE) as Scalar;
    }
    case "fd": {
      const at = go(e.at);
      return fd((y: Scalar) => go(e.body, [y]), at, go(e.dir), IGNORE) as Scalar;
    }
  }
}

const onNumbers = (p: Program) => (x: readonly number[]): number => interp(p, p.main, x) as number;

// ---- the language ----

/** Ordinary evaluation: the program with its free variables bound by lets to V. */
function runAt(p: Program, x: readonly number[]): Value {
  const binds = x.map((xi, i) => `let x${i} = ${lit(xi)} in `).join("");
  return runProgram(`${prelude(p)}${binds}${show(p.main, MAIN_SCOPE)}`, { file: "<p>", ties: "ignore" }).value;
}

/**
 * The program as a term with free variables x0, x1, x2: checked inside three lets that
 * bind them, then the inner term (prelude and main term) handed to `evaluate` with ρ.
 */
function openProgram(p: Program): (x: readonly Scalar[]) => Value {
  const wrapped = parse(`let x0 = 0 in let x1 = 0 in let x2 = 0 in\n${prelude(p)}${show(p.main, MAIN_SCOPE)}`, "<p>");
  const checked = check(wrapped, "<p>");
  let inner: Term = wrapped;
  for (let i = 0; i < 3; i++) {
    if (inner.kind !== "let") throw new Error("expected the let of x" + i);
    inner = inner.body;
  }
  const body = inner;
  return (x) => evaluate(body, checked, { file: "<p>", ties: "ignore", env: { x0: x[0], x1: x[1], x2: x[2] } });
}

// ---- generators ----

const constant = fc.double({ min: -2, max: 2, noNaN: true });
function expressions(withCalls: boolean): fc.Arbitrary<Expr> {
  const { node } = fc.letrec<{ expr: Expr; node: Expr; leaf: Expr }>((tie) => {
    const nodes: fc.WeightedArbitrary<Expr>[] = [
      { weight: 4, arbitrary: fc.record({ k: fc.constant("un" as const), op: fc.constantFrom(...(Object.keys(UNARY) as UnOp[])), a: tie("expr") }) },
      {
        weight: 5,
        arbitrary: fc.record({ k: fc.constant("bin" as const), op: fc.constantFrom(...(Object.keys(BINARY) as BinOp[])), a: tie("expr"), b: tie("expr") }),
      },
      { weight: 2, arbitrary: fc.record({ k: fc.constant("let" as const), a: tie("expr"), body: tie("expr") }) },
      { weight: 1, arbitrary: fc.record({ k: fc.constant("proj" as const), first: fc.boolean(), a: tie("expr"), b: tie("expr") }) },
      { weight: 1, arbitrary: fc.record({ k: fc.constant("tuple" as const), a: tie("expr"), b: tie("expr"), body: tie("expr") }) },
      {
        weight: 2,
        arbitrary: fc.record({
          k: fc.constant("if" as const),
          pred: fc.constantFrom(...(Object.keys(PREDS) as Pred[])),
          infix: fc.boolean(),
          l: tie("expr"),
          r: tie("expr"),
          t: tie("expr"),
          e: tie("expr"),
        }),
      },
      { weight: 1, arbitrary: fc.record({ k: fc.constant("grad" as const), at: tie("expr"), body: tie("expr") }) },
      { weight: 1, arbitrary: fc.record({ k: fc.constant("rd" as const), seed: tie("expr"), at: tie("expr"), body: tie("expr") }) },
      { weight: 1, arbitrary: fc.record({ k: fc.constant("fd" as const), dir: tie("expr"), at: tie("expr"), body: tie("expr") }) },
    ];
    if (withCalls) {
      nodes.push(
        { weight: 2, arbitrary: fc.record({ k: fc.constant("call" as const), a: tie("expr"), b: tie("expr") }) },
        { weight: 1, arbitrary: fc.record({ k: fc.constant("rep" as const), a: tie("expr"), n: fc.integer({ min: 0, max: 3 }) }) },
      );
    }
    return {
      leaf: fc.oneof(
        { weight: 3, arbitrary: fc.record({ k: fc.constant("var" as const), i: fc.nat(7) }) },
        { weight: 1, arbitrary: fc.record({ k: fc.constant("const" as const), c: constant }) },
      ),
      node: fc.oneof(...nodes),
      // Leaves first: past maxDepth only leaves are drawn.
      expr: fc.oneof({ maxDepth: 4, depthSize: "medium", withCrossShrink: true }, { weight: 1, arbitrary: tie("leaf") }, { weight: 2, arbitrary: tie("node") }),
    };
  });
  return node;
}
const programs: fc.Arbitrary<Program> = fc.record({ h: expressions(false), main: expressions(true) });
const points = fc.array(fc.double({ min: -2, max: 2, noNaN: true }), { minLength: 3, maxLength: 3 });
const directions = fc.array(fc.double({ min: -1, max: 1, noNaN: true }), { minLength: 3, maxLength: 3 });

const PARAMS = { numRuns: 200, seed: 20250714, endOnFailure: true };
const describeAt = (p: Program, x: readonly number[]) => `${prelude(p)}${show(p.main, MAIN_SCOPE)}\n  at [${x.join(", ")}]`;

describe("random programs of the language", () => {
  it("the generator's programs are well typed and some use every construct", () => {
    const seen = new Set<string>();
    const visit = (e: Expr): void => {
      seen.add(e.k === "if" ? `if-${e.infix ? "infix" : "named"}` : e.k);
      for (const v of Object.values(e)) if (v !== null && typeof v === "object" && "k" in v) visit(v as Expr);
    };
    for (const p of fc.sample(programs, { numRuns: 200, seed: 7 })) {
      visit(p.main);
      expect(() => check(parse(`let x0 = 0 in let x1 = 0 in let x2 = 0 in\n${prelude(p)}${show(p.main, MAIN_SCOPE)}`)).type).not.toThrow();
    }
    expect([...seen].sort()).toEqual(
      ["bin", "call", "const", "fd", "grad", "if-infix", "if-named", "let", "proj", "rd", "rep", "tuple", "un", "var"],
    );
  });

  it("(a) Proposition 3.5: the trace term at V gives the program's value at V, and nearby where the branches agree", () => {
    fc.assert(
      fc.property(programs, points, directions, (p, x, dir) => {
        const value = runAt(p, x);
        fc.pre(typeof value === "number" && Number.isFinite(value) && Math.abs(value) <= MAX);
        const where = describeAt(p, x);
        const [tsValue, atX] = recorded(() => onNumbers(p)(x));
        expectClose(value, tsValue, 1e-12, 1e-12, `the language and the TypeScript interpreter on numbers, ${where}`);
        const open = openProgram(p);
        expectClose(open(x), value, 0, 0, `evaluate with ρ, ${where}`);
        const term = traceOf((xs: Scalar[]) => open(xs), x, IGNORE);
        expectClose(term.evaluate(x), value, 1e-12, 1e-12, `C evaluated at V, ${where}`);
        for (const scale of [1e-3, 1e-5]) {
          const y = x.map((xi, i) => xi + scale * dir[i]);
          const [tsY, atY] = recorded(() => onNumbers(p)(y));
          if (atY.branches !== atX.branches || !Number.isFinite(tsY)) continue;
          expectClose(term.evaluate(y), runAt(p, y), 1e-10, 1e-10, `C evaluated at y = [${y.join(", ")}], ${where}`);
        }
      }),
      PARAMS,
    );
  });

  it("(b) grad in the language equals grad with the TypeScript API and finite differences", () => {
    fc.assert(
      fc.property(programs, points, (p, x) => {
        const [value, atX] = recorded(() => onNumbers(p)(x));
        fc.pre(Number.isFinite(value) && Math.abs(value) <= MAX);
        const where = describeAt(p, x);
        const src = `${prelude(p)}grad_{<${x.map(lit).join(", ")}>}(p: real^3. let <x0, x1, x2> = p in ${show(p.main, MAIN_SCOPE)})`;
        const result = runProgram(src, { file: "<grad>", ties: "ignore" });
        expect(result.type).toBe("real * real * real");
        const [[g0, g1], g2] = result.value as [[number, number], number];
        const inLanguage = [g0, g1, g2];
        const withApi = grad((xs: Scalar[]) => interp(p, p.main, xs), x, IGNORE) as number[];
        expectClose(inLanguage, withApi, 1e-10, 1e-10, `grad in the language vs the API, ${where}`);
        if (!smoothAround(onNumbers(p), x, atX, value)) return;
        for (let i = 0; i < 3; i++) {
          const fdi = reliableDiff((t) => onNumbers(p)(bump(x, i, t - x[i])), x[i]);
          if (fdi === null) continue;
          expectClose(inLanguage[i], fdi, 1e-6, 1e-7, `∂/∂x${i} against finite differences, ${where}`);
        }
      }),
      PARAMS,
    );
  });
});
