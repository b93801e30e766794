/**
 * @file The primitives and predicates as user functions, on numbers, tensors and
 * traced values.
 *
 * On numbers they are the plain kernels (full speed outside differentiation); on a
 * traced real they record the primitive in its trace. On tensors they apply
 * elementwise, with NumPy broadcasting between tensors and numbers.
 */
import { BINARY_NAMES, binaryOps, predicates, UNARY_NAMES, unaryOps, type BinaryName, type OpName, type PredicateName, type UnaryName } from "@wengert/ops";
import { CODE } from "../trace/opcodes.js";
import type { NdArray } from "../trace/host-tensor.js";
import { isScalar, isTensorLike, type Operand, type Real, type Scalar } from "../trace/traced.js";
import { applyBinary, applyUnary, decide, decideTensor, specialised, specialisedPredicate } from "../trace/record.js";
import type { RealOf, TensorOf } from "./types.js";
import type * as self from "./primitives.js";

/**
 * A unary primitive's type (`Binary` the same of two arguments). What the runtime returns:
 * a number for numbers, a traced real as soon as a traced real is an argument, a traced
 * tensor as soon as a tensor meets a traced value, an ndarray for tensors the user holds. (Inside a trace a result of dims [] is a traced real,
 * typed as a Tensor: wengert's functions and shapeOf take either; docs/tensors.md.)
 */
export type Unary = <T extends Operand>(x: T) => Elementwise<T, number>;
/** A binary primitive's type: the result of `Elementwise` of its two arguments. */
export type Binary = <A extends Operand, B extends Operand>(a: A, b: B) => Elementwise<A, B>;
/** The result of an elementwise primitive, argument types taken one alternative at a time. */
export type Elementwise<A, B> = 0 extends 1 & (A | B)
  ? any // eslint-disable-line @typescript-eslint/no-explicit-any -- an argument typed any: so is the result, as for TypeScript's own operators
  : A extends unknown
    ? B extends unknown
      ? A | B extends number | Real
        ? RealOf<[A, B]>
        : TensorOf<[A, B]>
      : never
    : never;
/** On reals, a decision (boolean); on tensors, a 0/1 mask (an ndarray) for `where`. */
export type Pred = {
  (a: Scalar, b: Scalar): boolean;
  (a: Operand, b: Operand): NdArray;
};

const unary = (name: UnaryName): Unary => {
  const code = CODE[name];
  const kernel = unaryOps[name].forward;
  return specialised(code, kernel as (a: number, b: number) => number, (x) => (typeof x === "number" ? kernel(x) : applyUnary(code, x))) as Unary;
};
const binary = (name: BinaryName): Binary => {
  const code = CODE[name];
  const kernel = binaryOps[name].forward;
  return specialised(code, kernel, (a, b) => (typeof a === "number" && typeof b === "number" ? kernel(a, b) : applyBinary(code, a, b))) as Binary;
};
// reals first: a loop decides at every step, and telling a tensor apart costs more than the decision
const predicate = (name: PredicateName): Pred => {
  const test = predicates[name].test;
  return specialisedPredicate(name, (a, b) => {
    const onTensors = !(isScalar(a) && isScalar(b)) && (isTensorLike(a) || isTensorLike(b));
    return onTensors ? decideTensor(name, a, b) : decide(name, a, b, test);
  }) as Pred;
};

/** Every scalar primitive of @wengert/ops as a user function, by name. */
const unaries = Object.fromEntries(UNARY_NAMES.map((name) => [name, unary(name)])) as { readonly [K in UnaryName]: Unary };
const binaries = Object.fromEntries(BINARY_NAMES.map((name) => [name, binary(name)])) as { readonly [K in BinaryName]: Binary };

// Each is `Unary` or `Binary`: on numbers the kernel, on traced reals recorded, on tensors elementwise (NumPy broadcasting).
/** −x. */
export const neg = unaries.neg;
/** eˣ (wengert's own kernel, ops/exp.ts: within 1 ulp, the same bits on every path). */
export const exp = unaries.exp;
/** The natural logarithm. */
export const log = unaries.log;
/** sin x. */
export const sin = unaries.sin;
/** cos x. */
export const cos = unaries.cos;
/** tan x. */
export const tan = unaries.tan;
/** tanh x (wengert's own kernel, ops/tanh.ts: within 1 ulp, the same bits on every path). */
export const tanh = unaries.tanh;
/** sinh x. */
export const sinh = unaries.sinh;
/** cosh x. */
export const cosh = unaries.cosh;
/** arcsin x. */
export const asin = unaries.asin;
/** arccos x. */
export const acos = unaries.acos;
/** arctan x. */
export const atan = unaries.atan;
/** √x. */
export const sqrt = unaries.sqrt;
/** The real cube root ∛x. */
export const cbrt = unaries.cbrt;
/** x². */
export const square = unaries.square;
/** log(1 + x), accurate near x = 0. */
export const log1p = unaries.log1p;
/** eˣ − 1, accurate near x = 0. */
export const expm1 = unaries.expm1;
/** 1 / (1 + e⁻ˣ). */
export const sigmoid = unaries.sigmoid;
/** log(1 + eˣ). */
export const softplus = unaries.softplus;
/** |x|; abs'(0) = sign(0) = 0 at its kink (a tie, reported as `ties` says). */
export const abs = unaries.abs;
/** −1, 0 or 1 (±0 at ±0); its derivative is 0, and sign'(0) = 0 at its kink (a tie). */
export const sign = unaries.sign;
/** log x, and 0 at x = 0 (for rules at singular points: `pow`'s). */
export const safeLog = unaries.safeLog;
/** 1/x, and 0 at x = 0 (safeLog's derivative). */
export const safeRecip = unaries.safeRecip;
/** a + b. */
export const add = binaries.add;
/** a − b. */
export const sub = binaries.sub;
/** a · b. */
export const mul = binaries.mul;
/** a / b. */
export const div = binaries.div;
/** atan2(a, b): the angle of the point (b, a). */
export const atan2 = binaries.atan2;
/** aᵇ, the exponent real (the derivative in b uses safeLog: 0, not NaN, at a = 0). */
export const pow = binaries.pow;
/** a · log b, and 0 where a = 0. */
export const xlogy = binaries.xlogy;

/** tsc names here a primitive of the table (ops/scalar.ts) that has no export above. */
type Unexported = Exclude<OpName, keyof typeof self>;
const everyPrimitiveExported: [Unexported] extends [never] ? true : { readonly missing: Unexported } = true;

/** a < b, decided on the values (a tie reported); on tensors a 0/1 mask for `where`. */
export const lt = predicate("lt");
/** a ≤ b, decided on the values (a tie reported); on tensors a 0/1 mask for `where`. */
export const le = predicate("le");
/** a > b, decided on the values (a tie reported); on tensors a 0/1 mask for `where`. */
export const gt = predicate("gt");
/** a ≥ b, decided on the values (a tie reported); on tensors a 0/1 mask for `where`. */
export const ge = predicate("ge");
/** a = b, decided on the values (a tie reported); on tensors a 0/1 mask for `where`. */
export const eq = predicate("eq");
/** a ≠ b, decided on the values (a tie reported); on tensors a 0/1 mask for `where`. */
export const ne = predicate("ne");
