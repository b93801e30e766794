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
 * What the runtime returns: a number for numbers, a traced real as soon as a traced real
 * is an argument, a traced tensor as soon as a tensor meets a traced value, an ndarray
 * for tensors the user holds. (Inside a trace a result of dims [] is a traced real,
 * typed as a Tensor: wengert's functions and shapeOf take either; docs/tensors.md.)
 */
export type Unary = <T extends Operand>(x: T) => Elementwise<T, number>;
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

export const {
  neg,
  exp,
  log,
  sin,
  cos,
  tan,
  tanh,
  sinh,
  cosh,
  asin,
  acos,
  atan,
  sqrt,
  cbrt,
  square,
  log1p,
  expm1,
  sigmoid,
  softplus,
  abs,
  sign,
  safeLog,
  safeRecip,
} = unaries;
export const { add, sub, mul, div, atan2, pow, xlogy } = binaries;

/** tsc names here a primitive of the table (ops/scalar.ts) that has no export above. */
type Unexported = Exclude<OpName, keyof typeof self>;
const everyPrimitiveExported: [Unexported] extends [never] ? true : { readonly missing: Unexported } = true;

export const lt = predicate("lt");
export const le = predicate("le");
export const gt = predicate("gt");
export const ge = predicate("ge");
export const eq = predicate("eq");
export const ne = predicate("ne");
