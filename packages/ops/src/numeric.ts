/**
 * @file The numeric emitter: primitives as plain functions on numbers.
 *
 * Running a reverse rule with it computes a derivative value directly; it is also
 * what the public primitives do when no argument is traced.
 */
import { BINARY_NAMES, binaryOps, UNARY_NAMES, unaryOps, type Emitter } from "./scalar.js";

function build(): Emitter<number> {
  const e: Record<string, unknown> = { lit: (c: number) => c };
  for (const name of UNARY_NAMES) e[name] = unaryOps[name].forward;
  for (const name of BINARY_NAMES) e[name] = binaryOps[name].forward;
  return e as Emitter<number>;
}

export const numeric: Emitter<number> = build();
