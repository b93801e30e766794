/**
 * Every scalar primitive, driven by the table itself (ops/scalar.ts): each declaration
 * is checked at the points of its domain, so a primitive is tested by being declared.
 * Two user primitives (defineOp) go through the same checks, with domains given here.
 *
 * - first order, by checkGrad: the reverse rule against central differences, the
 *   tangent (forward) against the reverse, ⟨J v, w⟩ = ⟨v, Jᵀ w⟩;
 * - second order, by checkGrad of grad: nested rd against central differences of
 *   grad, and jvp of grad against it;
 * - the Taylor rule's coefficients against nested jvp (the k-th derivative along v);
 * - the paths that must give the same numbers, to the bit: the numeric sweep and the
 *   built term; hvp's dual sweep and jacfwd of grad; compiled code and grad;
 * - Fig. 6 taken literally (the reference) against rd.
 */
import { BINARY_NAMES, scalarOps, UNARY_NAMES } from "@wengert/ops";
import { describe, expect, it } from "vitest";
import * as W from "../src/index.js";
import { checkGrad, compileGrad, defineOp, derivativeOf, exp, grad, hessian, jacfwd, jvp, mul, rd, sub, taylor, traceOf, type Scalar } from "../src/index.js";
import { reverseDerivative } from "../src/diff/reference.js";
import { evaluateTree, leavesOf, toTree, valueOf } from "../src/trace/tree.js";
import { expectClose } from "./helpers/check.js";

type Point = number | number[];
type F = (x: never) => Scalar;

interface Row {
  readonly name: string;
  /** The primitive as a function of one point: x ↦ op(x), or [a, b] ↦ op(a, b). */
  readonly f: F;
  readonly domain: readonly Point[];
}

const unaryFn = (name: string) => (W as unknown as Record<string, (x: Scalar) => Scalar>)[name];
const binaryFn = (name: string) => (W as unknown as Record<string, (a: Scalar, b: Scalar) => Scalar>)[name];
const asBinary = (op: (a: Scalar, b: Scalar) => Scalar): F => (([a, b]: Scalar[]) => op(a, b)) as F;

const cube = defineOp({ name: "cubeT", forward: (x) => x * x * x, reverse: ([x], _y, ct) => [mul(ct, mul(3, mul(x, x)))] });
const logaddexp = defineOp({
  name: "logaddexpT",
  forward: (a, b) => Math.max(a, b) + Math.log1p(Math.exp(-Math.abs(a - b))),
  reverse: ([a, b], y, ct) => [mul(ct, exp(sub(a, y))), mul(ct, exp(sub(b, y)))],
});

const ROWS: readonly Row[] = [
  ...UNARY_NAMES.map((name): Row => ({ name, f: unaryFn(name) as F, domain: scalarOps[name].domain })),
  ...BINARY_NAMES.map((name): Row => ({ name, f: asBinary(binaryFn(name)), domain: scalarOps[name].domain.map((p) => [...p]) })),
  { name: "cubeT (defineOp)", f: cube as F, domain: [-1.3, 0.5, 2] },
  { name: "logaddexpT (defineOp)", f: asBinary(logaddexp), domain: [[0.3, 1.1], [-2, 0.5], [4, -1]] },
];

/** A direction as long as the point. */
const along = (x: Point, v: number, u: number): Point => (typeof x === "number" ? v : [v, u]);
const call = <R>(g: (f: F, x: never) => R, f: F, x: Point): R => g(f, x as never);

/** The k-th derivative of t ↦ f(x + t v) at 0, by k nested jvps. */
function nestedJvp(f: F, x: Point, v: Point, k: number): number {
  let d = f as (p: Point) => unknown;
  for (let j = 0; j < k; j++) {
    const inner = d;
    d = (p: Point) => jvp(inner as F, p as never, v as never)[1];
  }
  return d(x) as number;
}

describe("the table covers every primitive", () => {
  it("has a user function for every declaration, by its name", () => {
    for (const name of UNARY_NAMES) expect(typeof unaryFn(name), name).toBe("function");
    for (const name of BINARY_NAMES) expect(typeof binaryFn(name), name).toBe("function");
    expect(ROWS.length).toBe(UNARY_NAMES.length + BINARY_NAMES.length + 2);
    for (const row of ROWS) expect(row.domain.length, row.name).toBeGreaterThanOrEqual(3);
  });
});

describe.each(ROWS)("$name", ({ f, domain }) => {
  it("first order: reverse against central differences, tangent against reverse (checkGrad)", () => {
    for (const x of domain) expect(call(checkGrad, f, x).ok, `at ${x}`).toBe(true);
  });

  it("second order: nested rd against central differences of grad, and jvp of grad against it (checkGrad of grad)", () => {
    const g = ((p: never) => grad(f, p)) as F;
    for (const x of domain) expect(call(checkGrad, g, x).ok, `at ${x}`).toBe(true);
  });

  it("Taylor coefficients to order 4 against nested jvp", () => {
    for (const x of domain) {
      const v = along(x, 0.7, -0.4);
      const coefficients = taylor(f, x as never, v as never, 4) as number[];
      const nested = [0, 1, 2, 3, 4].map((k) => nestedJvp(f, x, v, k));
      expectClose(coefficients, nested, 1e-9, 1e-9, `taylor at ${x}`);
    }
  });

  it("the same numbers to the bit: numeric sweep and built term, hvp's duals and jacfwd of grad, compiled code and grad", () => {
    // the built term may differ in the sign of a zero (its folding), as in fast-path.test.ts
    const plus0 = (v: unknown): number[] => (typeof v === "number" ? [v] : (v as number[])).map((t) => t + 0);
    const compiled = compileGrad(f);
    for (let round = 0; round < 3; round++) {
      for (const x of domain) {
        expect(plus0(rd(f, x as never, 1)), `sweep at ${x}`).toEqual(plus0(derivativeOf(f, x as never, 1).evaluate(x, 1)));
        expect(call(hessian, f, x), `hessian at ${x}`).toEqual(jacfwd((p: never) => grad(f, p), x as never));
        expect(compiled(x as never), `compiled at ${x}`).toEqual(call(grad, f, x));
      }
    }
    expect(compiled.stats.compiled).toBeGreaterThan(0);
  });

  it("Fig. 6 taken literally gives rd's derivative", () => {
    for (const x of domain) {
      const term = traceOf(f, x as never);
      const { C, T } = toTree(term);
      const leaves = typeof x === "number" ? [x] : x;
      const expected = leavesOf(evaluateTree(reverseDerivative(valueOf(term.output.shape, [1]), valueOf(term.params[0].shape, leaves), "x", T, C)));
      const got = call(grad, f, x);
      expectClose(typeof got === "number" ? [got] : got, expected, 1e-14, 1e-15, `Fig. 6 at ${x}`);
    }
  });
});
