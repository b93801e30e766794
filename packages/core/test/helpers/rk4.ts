/**
 * @file GradBench ode's Runge–Kutta step, for the tests of scans of tensors: the right-hand
 * side x ⊙ [1, y₀, …, yₙ₋₂] (a slice, a product, a concatenation), four stages, h = 0.08.
 */
import { add, concat, div, mul, shapeOf, slice, type Operand, type TensorArg } from "../../src/index.js";

export function rk4(x: TensorArg, y: Operand): Operand {
  const n = shapeOf(x)[0];
  const x0 = slice(x, [0], [1]);
  const rhs = (v: Operand): Operand => concat([x0, mul(slice(x, [1], [n]), slice(v as TensorArg, [0], [n - 1])) as TensorArg], 0);
  const h = 0.08;
  const k1 = rhs(y);
  const k2 = rhs(add(y, mul(h / 2, k1)));
  const k3 = rhs(add(y, mul(h / 2, k2)));
  const k4 = rhs(add(y, mul(h, k3)));
  return add(y, div(mul(h, add(add(add(k1, mul(2, k2)), mul(2, k3)), k4)), 6));
}
