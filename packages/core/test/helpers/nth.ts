/**
 * @file The n-th derivative of a scalar function by nesting grad n times (rd of rd …,
 * the paper's higher-order derivatives, Sec. 2).
 */
import { grad, type Scalar } from "../../src/index.js";

export type Unary = (x: Scalar) => Scalar;

/** f, f', f'', … : grad applied n times. */
export const nth = (f: Unary, n: number): Unary => (n === 0 ? f : (x) => grad(nth(f, n - 1), x));
