/**
 * @file The random-program generator of every property test: fast-check arbitraries of
 * programs (expr.ts), each test choosing the features it needs as options.
 * - `trees`: nested expressions with operations, branches on values, loops (fixed or
 *   data-dependent trip counts), lets, pairs, calls of a function h, recursion, and inner
 *   grad, rd and fd; weights say how often each construct is drawn (0: never).
 * - `lines`: straight-line programs whose steps reuse earlier values (cotangents
 *   accumulate), optionally behind a branch each, after literals such as ±0 and ±1.
 * Both run with run.ts and print in the paper's language with source.ts.
 */
import fc from "fast-check";
import { kindsOf, opsOf, type Expr, type Pred, type Program } from "./expr.js";
import { KINKED, SMOOTH, SPECIAL_LITERALS, TABLE, type Op } from "./ops.js";

export type Construct = "un" | "bin" | "let" | "proj" | "tuple" | "if" | "for" | "call" | "rep" | "grad" | "rd" | "fd";

export interface TreeOptions {
  /** The operations drawn (unary and binary). */
  readonly ops: readonly Op[];
  /** How often each construct is drawn, relative to the others; missing means 0. */
  readonly weights: Partial<Record<Construct, number>>;
  /** Comparisons of `if`, drawn written infix or named; lt alone by default. */
  readonly preds?: readonly Pred[];
  /** Loops' trip counts go up to this; with `exits`, loops may also stop early on a value. */
  readonly trips?: number;
  readonly exits?: boolean;
  /** Variable indices are drawn below this (taken modulo the scope's length). */
  readonly vars?: number;
  /** Leaves: weights of a variable and of a constant in [−2, 2], and of a subtree. */
  readonly leaves?: { readonly variable: number; readonly constant: number; readonly tree: number };
  readonly maxDepth?: number;
  /** Outputs of the program (each a tree over the same inputs). */
  readonly outputs?: number;
  /** The root may be a bare leaf. */
  readonly leafRoot?: boolean;
}

const constant = fc.double({ min: -2, max: 2, noNaN: true });
const ofArity = (ops: readonly Op[], arity: 1 | 2) => {
  const some = ops.filter((o) => o.arity === arity);
  return some.length === 0 ? null : fc.constantFrom(...some);
};

/** Expressions drawn as `o` says; `calls` allows calls of h and rep. */
function expressions(o: TreeOptions, calls: boolean): { expr: fc.Arbitrary<Expr>; node: fc.Arbitrary<Expr> } {
  const w = (c: Construct) => o.weights[c] ?? 0;
  const preds = o.preds ?? ["lt"];
  const leaves = o.leaves ?? { variable: 3, constant: 1, tree: 2 };
  const un = ofArity(o.ops, 1);
  const bin = ofArity(o.ops, 2);
  return fc.letrec<{ expr: Expr; node: Expr; leaf: Expr }>((tie) => {
    const e = () => tie("expr");
    const candidates: [number, () => fc.Arbitrary<Expr>][] = [
      [un === null ? 0 : w("un"), () => fc.record({ k: fc.constant("op" as const), op: un!, args: fc.tuple(e()) })],
      [bin === null ? 0 : w("bin"), () => fc.record({ k: fc.constant("op" as const), op: bin!, args: fc.tuple(e(), e()) })],
      [w("let"), () => fc.record({ k: fc.constant("let" as const), a: e(), body: e() })],
      [w("proj"), () => fc.record({ k: fc.constant("proj" as const), first: fc.boolean(), a: e(), b: e() })],
      [w("tuple"), () => fc.record({ k: fc.constant("tuple" as const), a: e(), b: e(), body: e() })],
      [
        w("if"),
        () => fc.record({ k: fc.constant("if" as const), pred: fc.constantFrom(...preds), infix: fc.boolean(), l: e(), r: e(), t: e(), e: e() }),
      ],
      [
        w("for"),
        () =>
          fc.record({
            k: fc.constant("for" as const),
            n: fc.integer({ min: 1, max: o.trips ?? 3 }),
            init: e(),
            body: e(),
            exit: o.exits ? fc.option(e(), { nil: null }) : fc.constant(null),
          }),
      ],
      [calls ? w("call") : 0, () => fc.record({ k: fc.constant("call" as const), a: e(), b: e() })],
      [calls ? w("rep") : 0, () => fc.record({ k: fc.constant("rep" as const), a: e(), n: fc.integer({ min: 0, max: 3 }) })],
      [w("grad"), () => fc.record({ k: fc.constant("grad" as const), at: e(), body: e() })],
      [w("rd"), () => fc.record({ k: fc.constant("rd" as const), seed: e(), at: e(), body: e() })],
      [w("fd"), () => fc.record({ k: fc.constant("fd" as const), dir: e(), at: e(), body: e() })],
    ];
    return {
      leaf: fc.oneof(
        { weight: leaves.variable, arbitrary: fc.record({ k: fc.constant("var" as const), i: fc.nat(o.vars ?? 5) }) },
        { weight: leaves.constant, arbitrary: fc.record({ k: fc.constant("const" as const), c: constant }) },
      ),
      node: fc.oneof(...candidates.filter(([weight]) => weight > 0).map(([weight, arbitrary]) => ({ weight, arbitrary: arbitrary() }))),
      // leaves first: past maxDepth only leaves are drawn
      expr: fc.oneof(
        { maxDepth: o.maxDepth ?? 4, depthSize: "medium", withCrossShrink: true },
        { weight: 1, arbitrary: tie("leaf") },
        { weight: leaves.tree, arbitrary: tie("node") },
      ),
    };
  });
}

/** Programs of nested expressions (`outputs` of them), with h when calls are drawn. */
export function trees(o: TreeOptions): fc.Arbitrary<Program> {
  const main = expressions(o, true);
  const root = o.leafRoot ? main.expr : main.node;
  const withCalls = (o.weights.call ?? 0) > 0;
  return fc.record({
    steps: fc.constant([]),
    outputs: fc.array(root, { minLength: o.outputs ?? 1, maxLength: o.outputs ?? 1 }),
    h: withCalls ? expressions(o, false).node : fc.constant(null),
  });
}

export interface LineOptions {
  readonly ops: readonly Op[];
  /** How many steps, at least and at most. */
  readonly length: readonly [number, number];
  /** Arguments are drawn among the scope's entries below this (modulo its length). */
  readonly reach: number;
  /** The first argument among the four latest values rather than anywhere. */
  readonly recent?: boolean;
  /** Each step behind a branch: if lt(a, b) then op(a, b) else op(a, b) · (b + 1.5). */
  readonly branches?: boolean;
}

const v = (i: number): Expr => ({ k: "var", i });
const c = (x: number): Expr => ({ k: "const", c: x });
const op = (o: Op, ...args: Expr[]): Expr => ({ k: "op", op: o, args });

/** One step of a straight-line program. */
function step(o: LineOptions): fc.Arbitrary<Expr> {
  return fc.tuple(fc.constantFrom(...o.ops), fc.nat(o.reach), fc.nat(o.reach)).map(([f, i, j]): Expr => {
    const a = v(o.recent ? -1 - (i % 4) : i);
    const b = v(j);
    const y = f.arity === 1 ? op(f, a) : op(f, a, b);
    return o.branches ? { k: "if", pred: "lt", infix: false, l: a, r: b, t: y, e: op(SMOOTH.mul, y, op(SMOOTH.add, b, c(1.5))) } : y;
  });
}

/** The steps of a straight-line program. */
export const stepsOf = (o: LineOptions): fc.Arbitrary<Expr[]> => fc.array(step(o), { minLength: o.length[0], maxLength: o.length[1] });

/** Steps as one expression: each a let whose body sees it, then `last` (over the whole scope). */
export const nested = (steps: readonly Expr[], last: Expr): Expr => steps.reduceRight((body, a): Expr => ({ k: "let", a, body }), last);

/**
 * Straight-line programs: `literals` bound first (values the steps compare and combine
 * like any other), then the drawn steps, then `outputs` (given or drawn) over the whole
 * scope (var −1 is the last step).
 */
export function lines(o: LineOptions & { readonly literals?: readonly number[]; readonly outputs: readonly Expr[] | fc.Arbitrary<Expr[]> }): fc.Arbitrary<Program> {
  const outputs = o.outputs instanceof fc.Arbitrary ? o.outputs : fc.constant(o.outputs);
  return fc.tuple(stepsOf(o), outputs).map(([steps, outs]) => ({ steps: [...(o.literals ?? []).map(c), ...steps], outputs: outs, h: null }));
}

/**
 * A loop whose trip count depends on the data: up to `trips` times (drawn), the steps run
 * on the scope and the value carried (var −1 at the start of a trip), the last step is
 * carried, and the loop stops once |carried| > 5; the output is carried / (2 + x0²).
 */
export function loops(o: LineOptions & { readonly trips: number }): fc.Arbitrary<Program> {
  return fc.tuple(stepsOf(o), fc.integer({ min: 1, max: o.trips })).map(([steps, n]): Program => ({
    steps: [{ k: "for", n, init: v(0), body: nested(steps, v(-1)), exit: op(SMOOTH.sub, c(5), op(KINKED.abs, v(-1))) }],
    outputs: [op(SMOOTH.div2sq, v(-1), v(0))],
    h: null,
  }));
}

/**
 * Straight-line programs for the tests that compare two paths to the bit: every primitive
 * of the table, smooth and kinked compositions, a branch at each step, and the literals
 * 0, −0, ±1, 2 among the values (ties, signed zeros, kinks); the output is the last value
 * plus half the one before.
 */
export const branchy: fc.Arbitrary<Program> = lines({
  ops: [...Object.values(SMOOTH), ...Object.values(KINKED), ...TABLE],
  length: [1, 16],
  reach: 30,
  branches: true,
  literals: SPECIAL_LITERALS,
  outputs: [op(SMOOTH.add, v(-1), op(SMOOTH.mul, c(0.5), v(-2)))],
});

/** `runs` programs drawn from `programs`, with the constructs and operations they use between them (to show a generator reaches them). */
export function reached(programs: fc.Arbitrary<Program>, runs: number, seed: number): { samples: Program[]; kinds: string[]; ops: Set<string> } {
  const samples = fc.sample(programs, { numRuns: runs, seed });
  const kinds = new Set(samples.flatMap((p) => [...kindsOf(p)]));
  return { samples, kinds: [...kinds].sort(), ops: new Set(samples.flatMap((p) => [...opsOf(p)])) };
}

export { c as constantExpr, op as opExpr, v as varExpr };
