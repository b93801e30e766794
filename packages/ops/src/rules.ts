/**
 * @file The shape of a primitive's declaration: kernel and reverse rules as data.
 */
import type { Emitter } from "./emitter.js";

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

export interface UnaryOp {
  readonly arity: 1;
  readonly tangent?: TangentRule;
  /** The kernel on numbers: the paper's `ev(op, V)`. */
  readonly forward: (x: number) => number;
  readonly reverse: UnaryRule;
  /**
   * True where the primitive is not differentiable (a kink such as `abs` at 0).
   * Tracing reports it like a predicate decided at a tie.
   */
  readonly kink?: (x: number) => boolean;
  /** The derivative convention used at the kink, for documentation and messages. */
  readonly atKink?: string;
}

export interface BinaryOp {
  readonly arity: 2;
  readonly tangent?: TangentRule;
  readonly forward: (a: number, b: number) => number;
  readonly reverse: readonly [BinaryRule, BinaryRule];
}

export type ScalarOp = UnaryOp | BinaryOp;
