/**
 * @file Instruction codes of the tape: three structural ones, then one per primitive.
 */
import { BINARY_NAMES, TENSOR_OP_NAMES, UNARY_NAMES, binaryOps, tensorOps, unaryOps } from "@wengert/ops";
import type { OpName, ScalarOp, TensorOp, TensorOpName } from "@wengert/ops";

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

/** A tensor primitive's declaration, its parameters' type erased (they travel with the instruction). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyTensorOp = TensorOp<any>;

export interface PrimitiveInfo {
  readonly name: string;
  readonly spec: ScalarOp | AnyTensorOp;
}

const registry: PrimitiveInfo[] = [];
const codes = new Map<string, number>();

/** Every primitive, indexed by `code - FIRST_PRIMITIVE`: the built-in ones, then the user's. */
export const PRIMITIVES: readonly PrimitiveInfo[] = registry;

/** Kernels, arities and kink tests by code, for the hot loops (no object per lookup). */
export const KERNELS: ((a: number, b: number) => number)[] = [];
export const ARITY: number[] = [];
export const KINKS: (((x: number) => boolean) | undefined)[] = [];
/** True for tensor primitives (declared with a shape rule; see ops/tensor/op.ts). */
export const IS_TENSOR_OP: boolean[] = [];

/**
 * Add a primitive; its code follows the others'. The one registration there is: the
 * built-ins of @wengert/ops are registered by it below, a user's by defineOp, and every
 * transformation reads a primitive by its code from here, whichever it is.
 */
export function registerPrimitive(name: string, spec: ScalarOp | AnyTensorOp): number {
  const code = FIRST_PRIMITIVE + registry.length;
  registry.push({ name, spec });
  codes.set(name, code);
  IS_TENSOR_OP[code] = "kind" in spec;
  ARITY[code] = spec.arity;
  if (!("kind" in spec)) {
    KERNELS[code] = spec.forward as (a: number, b: number) => number;
    KINKS[code] = spec.arity === 1 ? spec.kink?.at : undefined;
  }
  return code;
}

for (const name of UNARY_NAMES) registerPrimitive(name, unaryOps[name]);
for (const name of BINARY_NAMES) registerPrimitive(name, binaryOps[name]);
for (const name of TENSOR_OP_NAMES) registerPrimitive(name, tensorOps[name] as AnyTensorOp);

/** The built-in primitives' codes, by name. */
export const CODE = Object.fromEntries(codes) as { readonly [K in OpName | TensorOpName]: number };

/** The code of a primitive by name (built-in or user-defined), or undefined. */
export function codeOf(name: string): number | undefined {
  return codes.get(name);
}

/** The code of a primitive on reals (built-in or user), the term language's operations; undefined for tensor primitives. */
export function scalarCodeOf(name: string): number | undefined {
  const code = codes.get(name);
  return code === undefined || IS_TENSOR_OP[code] ? undefined : code;
}

export function primitiveOf(code: number): PrimitiveInfo {
  return registry[code - FIRST_PRIMITIVE];
}

/** The declaration of a scalar primitive (elementwise on tensors). */
export function scalarSpec(code: number): ScalarOp {
  return registry[code - FIRST_PRIMITIVE].spec as ScalarOp;
}

export function tensorSpec(code: number): AnyTensorOp {
  return registry[code - FIRST_PRIMITIVE].spec as AnyTensorOp;
}
