/**
 * W5's deep chain y ← 0.9·y + 0.1·sin y, traced, and its derivative carried forward on numbers.
 */
import { add, mul, sin, type Scalar } from "../../src/index.js";

export const chain =
  (n: number) =>
  (x: Scalar): Scalar => {
    let y = x;
    for (let i = 0; i < n; i++) y = add(mul(0.9, y), mul(0.1, sin(y)));
    return y;
  };

/** The same derivative by forward propagation on numbers (dy/dx carried along). */
export function chainDerivative(n: number, x: number): number {
  let y = x;
  let dy = 1;
  for (let i = 0; i < n; i++) {
    dy = 0.9 * dy + 0.1 * Math.cos(y) * dy;
    y = 0.9 * y + 0.1 * Math.sin(y);
  }
  return dy;
}
