/**
 * @file The emitter interface reverse rules are written against.
 *
 * A reverse rule never touches buffers: it calls primitives as methods of an
 * emitter `e` (`e.mul(ct, e.cos(x))`). Given a numeric emitter the rule computes a
 * number; given a symbolic one it appends instructions to a trace term. Because the
 * rule is itself a program over primitives, its result can be traced and
 * differentiated again: every primitive is differentiable to any order.
 */

/** Scalar primitives of one argument. The list is the single source of their names. */
export const UNARY_NAMES = [
  "neg", "exp", "log", "sin", "cos", "tan", "tanh", "sinh", "cosh",
  "asin", "acos", "atan", "sqrt", "square", "log1p", "expm1",
  "sigmoid", "softplus", "abs", "sign", "safeLog", "safeRecip",
] as const;

/** Scalar primitives of two arguments. */
export const BINARY_NAMES = ["add", "sub", "mul", "div", "atan2", "pow", "xlogy"] as const;

export type UnaryName = (typeof UNARY_NAMES)[number];
export type BinaryName = (typeof BINARY_NAMES)[number];
export type OpName = UnaryName | BinaryName;

/**
 * Primitives as methods over some value type `A` (numbers, atoms of a trace term,
 * traced values), plus `lit` to make a constant.
 */
export type Emitter<A> = { lit(c: number): A } & { readonly [K in UnaryName]: (x: A) => A } & {
  readonly [K in BinaryName]: (a: A, b: A) => A;
};
