/**
 * @file Every scalar primitive, declared once with all its facets, and the emitter
 * interface their rules are written against.
 *
 * A declaration holds the kernel on numbers (the paper's `ev(op, V)`), the reverse rule
 * (its `op_r`), optionally a tangent rule, the Taylor rule, the kink if it has one, and
 * its domain: points where it is smooth, at which the table-driven test checks every
 * rule against the others. Each rule's formula is written above it. Everything else
 * derives from this table: the names, the opcodes, the user functions, the emitters of
 * every transformation, the JavaScript of compiled code and of the numeric sweep.
 *
 * Rules never touch buffers: they call primitives as methods of an emitter `e`
 * (`e.mul(ct, e.cos(x))`). Given numbers they compute a number; given a trace they
 * append instructions to it, which can be differentiated again: every primitive is
 * differentiable to any order. `y` is the primal output, reused where it makes the
 * rule cheaper.
 *
 * The table is a class, not an object literal, and each field has its declared type:
 * the rules call the table's own primitives, so the emitter's type is read off the
 * table's names, and tsc infers an object literal's type from its values (the rules),
 * a cycle it refuses; a field's declared type breaks it. So a new field is the whole
 * of a new primitive: tsc then asks for each facet its type requires, and for its user
 * function (core's api/primitives.ts).
 */
import * as S from "./series.js";
import { exp as expKernel } from "./exp.js";
import type { Series } from "./series.js";
import { ARITH, UNARY_ARITH } from "./tensor/elementwise.js";

/** The names of the table's fields of one arity. */
type NamesOf<Arity> = { [K in keyof ScalarPrimitives]: ScalarPrimitives[K] extends { readonly arity: Arity } ? K : never }[keyof ScalarPrimitives];
export type UnaryName = NamesOf<1>;
export type BinaryName = NamesOf<2>;
export type OpName = UnaryName | BinaryName;

/**
 * Primitives as methods over some value type `A` (numbers, atoms of a trace term,
 * series, JavaScript source), plus `lit` to make a constant.
 */
export type Emitter<A> = { lit(c: number): A } & { readonly [K in UnaryName]: (x: A) => A } & {
  readonly [K in BinaryName]: (a: A, b: A) => A;
};

/**
 * The reverse rule for one argument: the cotangent contribution to that argument,
 * given the primal arguments, the primal output `y`, and the output cotangent `ct`.
 * This is the paper's `op_r` (Sec. 3, `W.op_r(L)`), split per argument so that no
 * instruction is emitted for an argument that needs no cotangent. `null` is the
 * symbolic zero (the argument does not influence the output locally).
 */
export type UnaryRule = <A>(e: Emitter<A>, x: A, y: A, ct: A) => A | null;
export type BinaryRule = <A>(e: Emitter<A>, a: A, b: A, y: A, ct: A) => A | null;

/**
 * The tangent rule: the output's tangent from the arguments' tangents (null: zero).
 * Optional for scalar primitives: a scalar op's reverse rule is linear in `ct` and
 * equals ∂f/∂arg · ct, so with `ct` set to an argument's tangent it gives that
 * argument's contribution ∂f/∂arg · ẋ (the 1×1 Jacobian is its own transpose).
 */
export type TangentRule = <A>(e: Emitter<A>, args: readonly A[], y: A, tangents: readonly (A | null)[]) => A | null;

/** The Taylor rule: the output's series from the arguments' (series.ts), other primitives' rules at hand as `e`. */
export type UnaryTaylor = (e: Emitter<Series>, a: Series) => Series;
export type BinaryTaylor = (e: Emitter<Series>, a: Series, b: Series) => Series;

/**
 * A Taylor rule derived from the reverse rule: run on series with cotangent 1, it gives
 * g = ∂f(a), and y = f(a₀) + ∫ g · a′ (series.ts `integrate`); where g needs y itself,
 * y's coefficients come one at a time (coefficient n needs g up to n − 1). Declared only
 * where the rule calls no primitive whose series needs this one's (neg's rule calls neg,
 * sin's calls cos, whose calls sin): taylor reports such a cycle by name.
 */
export type Derived = "derived";

/** Where a primitive is not differentiable (abs at 0), and the derivative taken there. */
export interface Kink {
  /** Tracing reports a value where this holds, like a predicate decided at a tie. */
  readonly at: (x: number) => boolean;
  /** The convention used there, for documentation and messages. */
  readonly convention: string;
}

export interface UnaryOp {
  readonly arity: 1;
  /** The kernel on numbers: the paper's `ev(op, V)`. */
  readonly forward: (x: number) => number;
  readonly reverse: UnaryRule;
  readonly tangent?: TangentRule;
  readonly taylor: UnaryTaylor | Derived;
  readonly kink?: Kink;
}

export interface BinaryOp {
  readonly arity: 2;
  readonly forward: (a: number, b: number) => number;
  readonly reverse: readonly [BinaryRule, BinaryRule];
  readonly tangent?: TangentRule;
  readonly taylor: BinaryTaylor | Derived;
}

export type ScalarOp = UnaryOp | BinaryOp;

/** A built-in primitive with its domain: points where it is smooth (the table-driven test's). */
export interface UnaryDeclaration extends UnaryOp {
  readonly domain: readonly number[];
}
export interface BinaryDeclaration extends BinaryOp {
  readonly domain: readonly (readonly [number, number])[];
}

const unary = (d: Omit<UnaryDeclaration, "arity">): UnaryDeclaration => ({ arity: 1, ...d });
const binary = (d: Omit<BinaryDeclaration, "arity">): BinaryDeclaration => ({ arity: 2, ...d });

// kernels the Taylor rules use too
// elementwise.ts's, so that its loop over a tensor knows it (and calls it inline)
const sigmoidKernel = UNARY_ARITH.sigmoid;
const tanhKernel = UNARY_ARITH.tanh;
const signKernel = (x: number): number => (x > 0 ? 1 : x < 0 ? -1 : x);
const xlogyKernel = (a: number, b: number): number => (a === 0 ? 0 : a * Math.log(b));

/** Every scalar primitive: unary ones, then binary ones (the order of their opcodes). */
export class ScalarPrimitives {
  // d(−x) = −dx
  readonly neg: UnaryDeclaration = unary({
    forward: UNARY_ARITH.neg,
    reverse: (e, _x, _y, ct) => e.neg(ct),
    taylor: (_e, a) => a.map((x) => -x),
    domain: [-1.3, 0.2, 2.5],
  });
  // d(eˣ) = eˣ dx;  series: y′ = y a′.
  // The kernel is wengert's own (exp.ts: ≤ 1 ulp, faster than Math.exp), the one exp of every path.
  readonly exp: UnaryDeclaration = unary({
    forward: expKernel,
    reverse: (e, _x, y, ct) => e.mul(ct, y),
    taylor: (_e, a) => S.exp(a),
    domain: [-1.5, 0.3, 2],
  });
  // d(log x) = dx / x
  readonly log: UnaryDeclaration = unary({
    forward: Math.log,
    reverse: (e, x, _y, ct) => e.div(ct, x),
    taylor: "derived",
    domain: [0.3, 1.7, 4],
  });
  // d(sin x) = cos x dx;  series: with cos, s′ = c a′, c′ = −s a′
  readonly sin: UnaryDeclaration = unary({
    forward: Math.sin,
    reverse: (e, x, _y, ct) => e.mul(ct, e.cos(x)),
    taylor: (_e, a) => S.sinCos(a, false)[0],
    domain: [-2, 0.4, 1.3],
  });
  // d(cos x) = −sin x dx
  readonly cos: UnaryDeclaration = unary({
    forward: Math.cos,
    reverse: (e, x, _y, ct) => e.neg(e.mul(ct, e.sin(x))),
    taylor: (_e, a) => S.sinCos(a, false)[1],
    domain: [-1, 0.6, 2.5],
  });
  // d(tan x) = (1 + tan² x) dx;  series: sin a / cos a
  readonly tan: UnaryDeclaration = unary({
    forward: Math.tan,
    reverse: (e, _x, y, ct) => e.mul(ct, e.add(e.lit(1), e.square(y))),
    taylor: (_e, a) => S.lift(S.div(...S.sinCos(a, false)), Math.tan(a[0])),
    domain: [-1.2, 0.3, 1],
  });
  // d(tanh x) = (1 − tanh² x) dx;  series: y′ = (1 − y²) a′ (sech² a₀ at order 0, which has no cancellation).
  // The kernel is wengert's own (tanh.ts: ≤ 1 ulp, faster than Math.tanh), the one tanh of every path.
  readonly tanh: UnaryDeclaration = unary({
    forward: tanhKernel,
    reverse: (e, _x, y, ct) => e.mul(ct, e.sub(e.lit(1), e.square(y))),
    taylor: (_e, a) => S.logistic(a, tanhKernel(a[0]), 1 / Math.cosh(a[0]) ** 2, (y, n) => -S.squareAt(y, n)),
    domain: [-1.5, 0.2, 0.9],
  });
  // d(sinh x) = cosh x dx
  readonly sinh: UnaryDeclaration = unary({
    forward: Math.sinh,
    reverse: (e, x, _y, ct) => e.mul(ct, e.cosh(x)),
    taylor: (_e, a) => S.sinCos(a, true)[0],
    domain: [-1, 0.5, 2],
  });
  // d(cosh x) = sinh x dx
  readonly cosh: UnaryDeclaration = unary({
    forward: Math.cosh,
    reverse: (e, x, _y, ct) => e.mul(ct, e.sinh(x)),
    taylor: (_e, a) => S.sinCos(a, true)[1],
    domain: [-1.3, 0.4, 2],
  });
  // d(asin x) = dx / √(1 − x²)
  readonly asin: UnaryDeclaration = unary({
    forward: Math.asin,
    reverse: (e, x, _y, ct) => e.div(ct, e.sqrt(e.sub(e.lit(1), e.square(x)))),
    taylor: "derived",
    domain: [-0.6, 0.1, 0.8],
  });
  // d(acos x) = −dx / √(1 − x²)
  readonly acos: UnaryDeclaration = unary({
    forward: Math.acos,
    reverse: (e, x, _y, ct) => e.neg(e.div(ct, e.sqrt(e.sub(e.lit(1), e.square(x))))),
    taylor: "derived",
    domain: [-0.6, 0.1, 0.8],
  });
  // d(atan x) = dx / (1 + x²)
  readonly atan: UnaryDeclaration = unary({
    forward: Math.atan,
    reverse: (e, x, _y, ct) => e.div(ct, e.add(e.lit(1), e.square(x))),
    taylor: "derived",
    domain: [-2, 0.3, 1.5],
  });
  // d(√x) = dx / (2√x);  series: y² = a
  readonly sqrt: UnaryDeclaration = unary({
    forward: Math.sqrt,
    reverse: (e, _x, y, ct) => e.div(ct, e.mul(e.lit(2), y)),
    taylor: (_e, a) => S.sqrt(a),
    domain: [0.25, 2, 9],
  });
  // d(∛x) = dx / (3 ∛x²) = dx / (3y²), for negative x too (∛ is odd); infinite at x = 0,
  // where the curve is vertical. Its series is derived (the rule reads y: coefficient by coefficient).
  readonly cbrt: UnaryDeclaration = unary({
    forward: Math.cbrt,
    reverse: (e, _x, y, ct) => e.div(ct, e.mul(e.lit(3), e.square(y))),
    taylor: "derived",
    domain: [-2.5, 0.3, 8],
  });
  // d(x²) = 2x dx
  readonly square: UnaryDeclaration = unary({
    forward: UNARY_ARITH.square,
    reverse: (e, x, _y, ct) => e.mul(ct, e.mul(e.lit(2), x)),
    taylor: "derived",
    domain: [-1.5, 0.3, 2.2],
  });
  // d(log(1 + x)) = dx / (1 + x)
  readonly log1p: UnaryDeclaration = unary({
    forward: Math.log1p,
    reverse: (e, x, _y, ct) => e.div(ct, e.add(e.lit(1), x)),
    taylor: "derived",
    domain: [-0.5, 0.4, 3],
  });
  // d(eˣ − 1) = eˣ dx = (y + 1) dx;  series: exp's, with expm1 a₀ at order 0
  readonly expm1: UnaryDeclaration = unary({
    forward: Math.expm1,
    reverse: (e, _x, y, ct) => e.mul(ct, e.add(y, e.lit(1))),
    taylor: (_e, a) => S.exp(a, Math.expm1(a[0])),
    domain: [-1, 0.4, 2],
  });
  // d(σ(x)) = σ(x)(1 − σ(x)) dx;  series: y′ = (y − y²) a′ (σ(a₀)σ(−a₀) at order 0)
  readonly sigmoid: UnaryDeclaration = unary({
    forward: sigmoidKernel,
    reverse: (e, _x, y, ct) => e.mul(ct, e.mul(y, e.sub(e.lit(1), y))),
    taylor: (_e, a) => S.logistic(a, sigmoidKernel(a[0]), sigmoidKernel(a[0]) * sigmoidKernel(-a[0]), (y, n) => y[n] - S.squareAt(y, n)),
    domain: [-3, 0.5, 2],
  });
  // d(log(1 + eˣ)) = σ(x) dx
  readonly softplus: UnaryDeclaration = unary({
    forward: (x) => (x > 0 ? x + Math.log1p(expKernel(-x)) : Math.log1p(expKernel(x))),
    reverse: (e, x, _y, ct) => e.mul(ct, e.sigmoid(x)),
    taylor: "derived",
    domain: [-2, 0.7, 3],
  });
  // d|x| = sign(x) dx; at the kink x = 0 the convention is sign(0) = 0 (the mean of
  // the one-sided derivatives −1 and 1, and the least-norm subgradient).
  readonly abs: UnaryDeclaration = unary({
    forward: Math.abs,
    reverse: (e, x, _y, ct) => e.mul(ct, e.sign(x)),
    taylor: "derived",
    kink: { at: (x) => x === 0, convention: "abs'(0) = 0 (sign(0) = 0)" },
    domain: [-1.4, 0.6, 2],
  });
  // d(sign x) = 0 away from the jump at 0; at 0 the derivative is taken to be 0.
  readonly sign: UnaryDeclaration = unary({
    forward: signKernel,
    reverse: () => null,
    taylor: (_e, a) => S.constant(signKernel(a[0]), a.length),
    kink: { at: (x) => x === 0, convention: "sign'(0) = 0" },
    domain: [-2, 0.5, 1.5],
  });
  // safeLog(x) = log x, and 0 at x = 0; safeRecip(x) = 1/x, and 0 at x = 0. They serve
  // rules where a factor that vanishes at 0 multiplies log x (d(aᵇ)/db = aᵇ log a): with
  // them every order of the product is 0·0 there, never 0·∞. Closed under
  // differentiation: d safeLog = safeRecip dx, d safeRecip = −safeRecip² dx.
  readonly safeLog: UnaryDeclaration = unary({
    forward: (x) => (x === 0 ? 0 : Math.log(x)),
    reverse: (e, x, _y, ct) => e.mul(ct, e.safeRecip(x)),
    taylor: (e, a) => (a[0] === 0 ? new Float64Array(a.length) : e.log(a)),
    domain: [0.3, 1.7, 4],
  });
  readonly safeRecip: UnaryDeclaration = unary({
    forward: (x) => (x === 0 ? 0 : 1 / x),
    reverse: (e, _x, y, ct) => e.neg(e.mul(ct, e.square(y))),
    taylor: (_e, a) => (a[0] === 0 ? new Float64Array(a.length) : S.div(S.constant(1, a.length), a)),
    domain: [-2, 0.5, 3],
  });

  // d(a + b) = da + db: the paper's `+`, the commutative monoid of cotangents
  readonly add: BinaryDeclaration = binary({
    forward: ARITH.add,
    reverse: [(_e, _a, _b, _y, ct) => ct, (_e, _a, _b, _y, ct) => ct],
    taylor: (_e, a, b) => a.map((x, i) => x + b[i]),
    domain: [[-1.2, 0.7], [0.3, 2.5], [3, -4]],
  });
  // d(a − b) = da − db
  readonly sub: BinaryDeclaration = binary({
    forward: ARITH.sub,
    reverse: [(_e, _a, _b, _y, ct) => ct, (e, _a, _b, _y, ct) => e.neg(ct)],
    taylor: (_e, a, b) => a.map((x, i) => x - b[i]),
    domain: [[-1.2, 0.7], [0.3, 2.5], [3, -4]],
  });
  // d(ab) = b da + a db
  readonly mul: BinaryDeclaration = binary({
    forward: ARITH.mul,
    reverse: [(e, _a, b, _y, ct) => e.mul(ct, b), (e, a, _b, _y, ct) => e.mul(ct, a)],
    taylor: (_e, a, b) => S.mul(a, b),
    domain: [[-1.2, 0.7], [0.3, 2.5], [3, -4]],
  });
  // d(a / b) = da / b − (a / b²) db = da / b − (y / b) db
  readonly div: BinaryDeclaration = binary({
    forward: ARITH.div,
    reverse: [(e, _a, b, _y, ct) => e.div(ct, b), (e, _a, b, y, ct) => e.neg(e.div(e.mul(ct, y), b))],
    taylor: (_e, a, b) => S.div(a, b),
    domain: [[1.5, 0.7], [-2, 3], [0.3, -1.2]],
  });
  // d atan2(a, b) = (b da − a db) / (a² + b²)
  readonly atan2: BinaryDeclaration = binary({
    forward: Math.atan2,
    reverse: [
      (e, a, b, _y, ct) => e.div(e.mul(ct, b), e.add(e.square(a), e.square(b))),
      (e, a, b, _y, ct) => e.neg(e.div(e.mul(ct, a), e.add(e.square(a), e.square(b)))),
    ],
    taylor: "derived",
    domain: [[1, 2], [-0.5, 0.7], [2, -1.5]],
  });
  // d(aᵇ) = b aᵇ⁻¹ da + aᵇ log a db; the second term uses safeLog so that it is 0, not
  // NaN, at a = 0 (where aᵇ = 0 for every b > 0), and so are its derivatives.
  // Series: aᵇ = exp(b log a) for a > 0; where log a is not finite: an integer power of a
  // constant exponent by products, a power of a series through 0 by its order there,
  // 0^b = 0 (b > 0).
  readonly pow: BinaryDeclaration = binary({
    forward: Math.pow,
    reverse: [
      (e, a, b, _y, ct) => e.mul(ct, e.mul(b, e.pow(a, e.sub(b, e.lit(1))))),
      (e, a, _b, y, ct) => e.mul(ct, e.mul(y, e.safeLog(a))),
    ],
    taylor: (e, a, b) => {
      const constantB = S.isConstant(b);
      if (constantB && Number.isInteger(b[0]) && a[0] <= 0) return S.integerPower(a, b[0]);
      if (constantB && a[0] === 0 && b[0] > 0) return S.powerAtZero(a, b[0]);
      if (S.isConstant(a) && a[0] === 0 && b[0] > 0) return new Float64Array(a.length);
      return S.lift(S.exp(S.mul(b, e.log(a))), Math.pow(a[0], b[0]));
    },
    domain: [[0.7, 2.5], [1.8, -1.3], [3, 0.5]],
  });
  // xlogy(a, b) = a log b, and 0 where a = 0. d = log b da + (a / b) db
  readonly xlogy: BinaryDeclaration = binary({
    forward: xlogyKernel,
    reverse: [(e, _a, b, _y, ct) => e.mul(ct, e.log(b)), (e, a, b, _y, ct) => e.div(e.mul(ct, a), b)],
    taylor: (e, a, b) => (S.isZero(a) ? new Float64Array(a.length) : S.lift(S.mul(a, e.log(b)), xlogyKernel(a[0], b[0]))),
    domain: [[0.5, 2], [-1.5, 0.4], [2.2, 3]],
  });
}

/** The table. */
export const scalarOps: ScalarPrimitives = new ScalarPrimitives();

const names = Object.keys(scalarOps) as OpName[];
/** The unary primitives' names, in the table's order. */
export const UNARY_NAMES: readonly UnaryName[] = names.filter((n): n is UnaryName => scalarOps[n].arity === 1);
/** The binary primitives' names, in the table's order. */
export const BINARY_NAMES: readonly BinaryName[] = names.filter((n): n is BinaryName => scalarOps[n].arity === 2);

/** The same table, by arity. */
export const unaryOps: { readonly [K in UnaryName]: UnaryDeclaration } = scalarOps;
export const binaryOps: { readonly [K in BinaryName]: BinaryDeclaration } = scalarOps;
