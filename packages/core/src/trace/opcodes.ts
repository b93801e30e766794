/**
 * @file Instruction codes of the tape: three structural ones, then one per primitive.
 */
import { BINARY_NAMES, UNARY_NAMES, binaryOps, unaryOps, type OpName, type ScalarOp } from "@wengert/ops";

/** `vK = input #a`: a leaf of the differentiation variable `x` (or of a seed). */
export const INPUT = 0;
/** `vK = c`: a real literal, stored in the value column. */
export const CONST = 1;
/**
 * `vK = free #a`: a traced value of an enclosing trace, used here as a constant. These
 * are the free variables of an inner trace term other than `x` (the paper's Sec. 3:
 * an inner `rd`'s trace may mention the outer differentiation variable).
 */
export const FREE = 2;
/** The first primitive's code. */
export const FIRST_PRIMITIVE = 3;

export interface PrimitiveInfo {
  readonly name: OpName;
  readonly spec: ScalarOp;
}

/** Every primitive, indexed by `code - FIRST_PRIMITIVE`. */
export const PRIMITIVES: readonly PrimitiveInfo[] = [
  ...UNARY_NAMES.map((name) => ({ name, spec: unaryOps[name] as ScalarOp })),
  ...BINARY_NAMES.map((name) => ({ name, spec: binaryOps[name] as ScalarOp })),
];

export const CODE: { readonly [K in OpName]: number } = Object.fromEntries(
  PRIMITIVES.map((p, i) => [p.name, FIRST_PRIMITIVE + i]),
) as { [K in OpName]: number };

export function primitiveOf(code: number): PrimitiveInfo {
  return PRIMITIVES[code - FIRST_PRIMITIVE];
}
