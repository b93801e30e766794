/**
 * @file Every scalar primitive, declared once: kernel and reverse rule side by side.
 *
 * The tables are typed as total mapped types over the name lists in emitter.ts, so
 * adding a name makes `tsc` point here until its kernel and rule exist. Each rule's
 * formula is written above it; rules use only other primitives (see emitter.ts).
 * `y` is the primal output, reused where it makes the rule cheaper.
 */
import type { BinaryName, UnaryName } from "./emitter.js";
import type { BinaryOp, UnaryOp } from "./rules.js";
import { ARITH, UNARY_ARITH } from "./tensor/elementwise.js";

const unary = (forward: (x: number) => number, reverse: UnaryOp["reverse"]): UnaryOp => ({ arity: 1, forward, reverse });

export const unaryOps: { readonly [K in UnaryName]: UnaryOp } = {
  // d(−x) = −dx
  neg: unary(UNARY_ARITH.neg, (e, _x, _y, ct) => e.neg(ct)),
  // d(eˣ) = eˣ dx
  exp: unary(Math.exp, (e, _x, y, ct) => e.mul(ct, y)),
  // d(log x) = dx / x
  log: unary(Math.log, (e, x, _y, ct) => e.div(ct, x)),
  // d(sin x) = cos x dx
  sin: unary(Math.sin, (e, x, _y, ct) => e.mul(ct, e.cos(x))),
  // d(cos x) = −sin x dx
  cos: unary(Math.cos, (e, x, _y, ct) => e.neg(e.mul(ct, e.sin(x)))),
  // d(tan x) = (1 + tan² x) dx
  tan: unary(Math.tan, (e, _x, y, ct) => e.mul(ct, e.add(e.lit(1), e.square(y)))),
  // d(tanh x) = (1 − tanh² x) dx
  tanh: unary(Math.tanh, (e, _x, y, ct) => e.mul(ct, e.sub(e.lit(1), e.square(y)))),
  // d(sinh x) = cosh x dx
  sinh: unary(Math.sinh, (e, x, _y, ct) => e.mul(ct, e.cosh(x))),
  // d(cosh x) = sinh x dx
  cosh: unary(Math.cosh, (e, x, _y, ct) => e.mul(ct, e.sinh(x))),
  // d(asin x) = dx / √(1 − x²)
  asin: unary(Math.asin, (e, x, _y, ct) => e.div(ct, e.sqrt(e.sub(e.lit(1), e.square(x))))),
  // d(acos x) = −dx / √(1 − x²)
  acos: unary(Math.acos, (e, x, _y, ct) => e.neg(e.div(ct, e.sqrt(e.sub(e.lit(1), e.square(x)))))),
  // d(atan x) = dx / (1 + x²)
  atan: unary(Math.atan, (e, x, _y, ct) => e.div(ct, e.add(e.lit(1), e.square(x)))),
  // d(√x) = dx / (2√x)
  sqrt: unary(Math.sqrt, (e, _x, y, ct) => e.div(ct, e.mul(e.lit(2), y))),
  // d(x²) = 2x dx
  square: unary(UNARY_ARITH.square, (e, x, _y, ct) => e.mul(ct, e.mul(e.lit(2), x))),
  // d(log(1 + x)) = dx / (1 + x)
  log1p: unary(Math.log1p, (e, x, _y, ct) => e.div(ct, e.add(e.lit(1), x))),
  // d(eˣ − 1) = eˣ dx = (y + 1) dx
  expm1: unary(Math.expm1, (e, _x, y, ct) => e.mul(ct, e.add(y, e.lit(1)))),
  // d(σ(x)) = σ(x)(1 − σ(x)) dx
  sigmoid: unary(
    (x) => (x >= 0 ? 1 / (1 + Math.exp(-x)) : Math.exp(x) / (1 + Math.exp(x))),
    (e, _x, y, ct) => e.mul(ct, e.mul(y, e.sub(e.lit(1), y))),
  ),
  // d(log(1 + eˣ)) = σ(x) dx
  softplus: unary(
    (x) => (x > 0 ? x + Math.log1p(Math.exp(-x)) : Math.log1p(Math.exp(x))),
    (e, x, _y, ct) => e.mul(ct, e.sigmoid(x)),
  ),
  // d|x| = sign(x) dx; at the kink x = 0 the convention is sign(0) = 0 (the mean of
  // the one-sided derivatives −1 and 1, and the least-norm subgradient).
  abs: {
    arity: 1,
    forward: Math.abs,
    reverse: (e, x, _y, ct) => e.mul(ct, e.sign(x)),
    kink: (x) => x === 0,
    atKink: "abs'(0) = 0 (sign(0) = 0)",
  },
  // d(sign x) = 0 away from the jump at 0; at 0 the derivative is taken to be 0.
  sign: {
    arity: 1,
    forward: (x) => (x > 0 ? 1 : x < 0 ? -1 : x),
    reverse: () => null,
    kink: (x) => x === 0,
    atKink: "sign'(0) = 0",
  },
  // safeLog(x) = log x, and 0 at x = 0; safeRecip(x) = 1/x, and 0 at x = 0. They serve
  // rules where a factor that vanishes at 0 multiplies log x (d(aᵇ)/db = aᵇ log a): with
  // them every order of the product is 0·0 there, never 0·∞. Closed under
  // differentiation: d safeLog = safeRecip dx, d safeRecip = −safeRecip² dx.
  safeLog: unary((x) => (x === 0 ? 0 : Math.log(x)), (e, x, _y, ct) => e.mul(ct, e.safeRecip(x))),
  safeRecip: unary((x) => (x === 0 ? 0 : 1 / x), (e, _x, y, ct) => e.neg(e.mul(ct, e.square(y)))),
};

const binary = (forward: (a: number, b: number) => number, reverse: BinaryOp["reverse"]): BinaryOp => ({
  arity: 2,
  forward,
  reverse,
});

export const binaryOps: { readonly [K in BinaryName]: BinaryOp } = {
  // d(a + b) = da + db: the paper's `+`, the commutative monoid of cotangents
  add: binary(ARITH.add, [(_e, _a, _b, _y, ct) => ct, (_e, _a, _b, _y, ct) => ct]),
  // d(a − b) = da − db
  sub: binary(ARITH.sub, [(_e, _a, _b, _y, ct) => ct, (e, _a, _b, _y, ct) => e.neg(ct)]),
  // d(ab) = b da + a db
  mul: binary(ARITH.mul, [(e, _a, b, _y, ct) => e.mul(ct, b), (e, a, _b, _y, ct) => e.mul(ct, a)]),
  // d(a / b) = da / b − (a / b²) db = da / b − (y / b) db
  div: binary(ARITH.div, [(e, _a, b, _y, ct) => e.div(ct, b), (e, _a, b, y, ct) => e.neg(e.div(e.mul(ct, y), b))]),
  // d atan2(a, b) = (b da − a db) / (a² + b²)
  atan2: binary(Math.atan2, [
    (e, a, b, _y, ct) => e.div(e.mul(ct, b), e.add(e.square(a), e.square(b))),
    (e, a, b, _y, ct) => e.neg(e.div(e.mul(ct, a), e.add(e.square(a), e.square(b)))),
  ]),
  // d(aᵇ) = b aᵇ⁻¹ da + aᵇ log a db; the second term uses safeLog so that it is 0, not
  // NaN, at a = 0 (where aᵇ = 0 for every b > 0), and so are its derivatives.
  pow: binary(Math.pow, [
    (e, a, b, _y, ct) => e.mul(ct, e.mul(b, e.pow(a, e.sub(b, e.lit(1))))),
    (e, a, _b, y, ct) => e.mul(ct, e.mul(y, e.safeLog(a))),
  ]),
  // xlogy(a, b) = a log b, and 0 where a = 0. d = log b da + (a / b) db
  xlogy: binary((a, b) => (a === 0 ? 0 : a * Math.log(b)), [
    (e, _a, b, _y, ct) => e.mul(ct, e.log(b)),
    (e, a, b, _y, ct) => e.div(e.mul(ct, a), b),
  ]),
};
