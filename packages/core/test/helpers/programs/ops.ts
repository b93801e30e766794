/**
 * @file The operations random programs are made of, each as a function on reals (traced
 * or not) and as text of the paper's language (the same operation, for the interpolation
 * tests and for failure messages). Three families:
 * - `TABLE`: every scalar primitive of the table (`@wengert/ops`'s UNARY_NAMES and
 *   BINARY_NAMES), applied near each smooth point its declaration lists, `op(d + r·sin a)`:
 *   derived from the table, so a new primitive is in the random programs by being declared;
 * - `SMOOTH`: compositions smooth and finite on all of R, applied to any real;
 * - `KINKED`: compositions with kinks, poles of the derivative and special points (abs,
 *   atan2 at the origin, pow and xlogy at a = 0), for the tests that compare two
 *   derivative paths to the bit rather than against differences.
 */
import { BINARY_NAMES, scalarOps, UNARY_NAMES } from "@wengert/ops";
import * as W from "../../../src/index.js";
import { abs, add, atan, atan2, cos, div, exp, log, mul, pow, sigmoid, sin, softplus, sqrt, square, sub, tanh, xlogy, type Scalar } from "../../../src/index.js";

export interface Op {
  readonly name: string;
  readonly arity: 1 | 2;
  readonly apply: (args: readonly Scalar[]) => Scalar;
  /** The operation in the paper's language, on the texts of its arguments. */
  readonly text: (args: readonly string[]) => string;
}

const lit = (c: number): string => (Object.is(c, -0) || c < 0 ? `(${c})` : String(c));
/** A unary operation of random programs (a test may add its own, e.g. a defineOp primitive). */
export const unary = (name: string, f: (a: Scalar) => Scalar, text: (a: string) => string = (a) => `${name}(${a})`): Op => ({
  name,
  arity: 1,
  apply: ([a]) => f(a),
  text: ([a]) => text(a),
});
/** A binary operation of random programs. */
export const binary = (name: string, f: (a: Scalar, b: Scalar) => Scalar, text: (a: string, b: string) => string = (a, b) => `${name}(${a}, ${b})`): Op => ({
  name,
  arity: 2,
  apply: ([a, b]) => f(a, b),
  text: ([a, b]) => text(a, b),
});
const named = (name: string) => (...args: string[]) => `${name}(${args.join(", ")})`;

/**
 * How far from a declared smooth point the table's operations reach: every point the
 * table lists is at least this far from its primitive's kinks and the ends of its domain.
 */
export const REACH = 0.1;
const near = (d: number, a: Scalar): Scalar => add(d, mul(REACH, sin(a)));
const nearText = (d: number, a: string): string => `(${lit(d)} + ${REACH} * sin(${a}))`;
const user = W as unknown as Record<string, (...xs: Scalar[]) => Scalar>;

/** `name@k`: the primitive near the k-th point of its declared domain, for every primitive of the table. */
export const TABLE: readonly Op[] = [
  ...UNARY_NAMES.flatMap((name) =>
    scalarOps[name].domain.map((d, k) => unary(`${name}@${k}`, (a) => user[name](near(d, a)), (a) => named(name)(nearText(d, a)))),
  ),
  ...BINARY_NAMES.flatMap((name) =>
    scalarOps[name].domain.map(([d, e], k) =>
      binary(`${name}@${k}`, (a, b) => user[name](near(d, a), near(e, b)), (a, b) => named(name)(nearText(d, a), nearText(e, b))),
    ),
  ),
];

/** Smooth and finite on all of R. */
export const SMOOTH = {
  sin: unary("sin", sin),
  cos: unary("cos", cos),
  tanh: unary("tanh", tanh),
  sigmoid: unary("sigmoid", sigmoid),
  softplus: unary("softplus", softplus),
  square: unary("square", square),
  atan: unary("atan", atan),
  expTanh: unary("expTanh", (a) => exp(tanh(a)), (a) => `exp(tanh(${a}))`),
  exp02: unary("exp02", (a) => exp(mul(0.2, a)), (a) => `exp(0.2 * ${a})`),
  log1sq: unary("log1sq", (a) => log(add(1, square(a))), (a) => `log(1 + square(${a}))`),
  sqrt1sq: unary("sqrt1sq", (a) => sqrt(add(1, square(a))), (a) => `sqrt(1 + square(${a}))`),
  add: binary("add", add, (a, b) => `(${a} + ${b})`),
  sub: binary("sub", sub, (a, b) => `(${a} - ${b})`),
  mul: binary("mul", mul, (a, b) => `(${a} * ${b})`),
  div1sq: binary("div1sq", (a, b) => div(a, add(1, square(b))), (a, b) => `(${a} / (1 + square(${b})))`),
  div2sq: binary("div2sq", (a, b) => div(a, add(2, square(b))), (a, b) => `(${a} / (2 + square(${b})))`),
} satisfies Record<string, Op>;

/** Kinks, derivative poles and special points (reached with the literals 0, −0, ±1). */
export const KINKED = {
  abs: unary("abs", abs),
  atan2: binary("atan2", atan2),
  powAbs: binary("powAbs", (a, b) => pow(add(0.5, abs(a)), b), (a, b) => `pow(0.5 + abs(${a}), ${b})`),
  xlogy: binary("xlogy", (a, b) => xlogy(a, add(0.5, square(b))), (a, b) => `xlogy(${a}, 0.5 + square(${b}))`),
} satisfies Record<string, Op>;

export type SmoothName = keyof typeof SMOOTH;

/** The operations named, from SMOOTH and KINKED. */
export const pick = (...names: (SmoothName | keyof typeof KINKED)[]): Op[] => names.map((n) => ({ ...SMOOTH, ...KINKED })[n]);
/** Every operation of SMOOTH. */
export const ALL_SMOOTH: readonly Op[] = Object.values(SMOOTH);

/** Literals with the signed zeros and units at which comparisons tie and kinks are met. */
export const SPECIAL_LITERALS = [0, -0, 1, -1, 2] as const;

export { lit };
