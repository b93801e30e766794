/**
 * @file The primitives and predicates as user functions, on numbers, tensors and
 * traced values.
 *
 * On numbers they are the plain kernels (full speed outside differentiation); on a
 * traced real they record the primitive in its trace. On tensors they apply
 * elementwise, with NumPy broadcasting between tensors and numbers.
 */
import { binaryOps, predicates, unaryOps, type BinaryName, type PredicateName, type UnaryName } from "@wengert/ops";
import { CODE } from "../trace/opcodes.js";
import { isTensorLike, type NdArray } from "../trace/tensor.js";
import { applyBinary, applyUnary, decide, decideTensor, isScalar, type Operand, type Real, type Scalar } from "../trace/tracer.js";
import type { RealOf, TensorOf } from "./types.js";

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
  return ((x: Operand) => (typeof x === "number" ? kernel(x) : applyUnary(code, x))) as Unary;
};
const binary = (name: BinaryName): Binary => {
  const code = CODE[name];
  const kernel = binaryOps[name].forward;
  return ((a: Operand, b: Operand) => (typeof a === "number" && typeof b === "number" ? kernel(a, b) : applyBinary(code, a, b))) as Binary;
};
// reals first: a loop decides at every step, and telling a tensor apart costs more than the decision
const predicate = (name: PredicateName): Pred => {
  const test = predicates[name].test;
  return ((a: unknown, b: unknown) => (!(isScalar(a) && isScalar(b)) && (isTensorLike(a) || isTensorLike(b)) ? decideTensor(name, a, b) : decide(name, a, b, test))) as Pred;
};

export const neg = unary("neg");
export const exp = unary("exp");
export const log = unary("log");
export const sin = unary("sin");
export const cos = unary("cos");
export const tan = unary("tan");
export const tanh = unary("tanh");
export const sinh = unary("sinh");
export const cosh = unary("cosh");
export const asin = unary("asin");
export const acos = unary("acos");
export const atan = unary("atan");
export const sqrt = unary("sqrt");
export const square = unary("square");
export const log1p = unary("log1p");
export const expm1 = unary("expm1");
export const sigmoid = unary("sigmoid");
export const softplus = unary("softplus");
export const abs = unary("abs");
export const sign = unary("sign");
export const safeLog = unary("safeLog");
export const safeRecip = unary("safeRecip");

export const add = binary("add");
export const sub = binary("sub");
export const mul = binary("mul");
export const div = binary("div");
export const atan2 = binary("atan2");
export const pow = binary("pow");
export const xlogy = binary("xlogy");

export const lt = predicate("lt");
export const le = predicate("le");
export const gt = predicate("gt");
export const ge = predicate("ge");
export const eq = predicate("eq");
export const ne = predicate("ne");
