/**
 * @file GradBench's `lse` eval: LogSumExp of a vector and its gradient.
 *
 * As lse.hpp: a = max x, LSE(x) = log Σ exp(x − a) + a, written with its primitive
 * pieces (max, sub, exp, sum, log, add; not wengert's own `logsumexp`) on the whole
 * vector: six tensor operations whatever its length (up to ~1.3 million).
 *
 * Input `{x: double[]}`; `primal` gives a number, `gradient` an array like `x`.
 */
import { add, exp, grad, log, max, sub, sum, type Scalar, type TensorArg } from "@wengert/core";
import { defineFunction } from "../define.js";
import { field, numbers, record } from "../json.js";
import type { EvalModule } from "../module.js";

export function logSumExp(x: TensorArg): Scalar {
  const a = max(x);
  return add(log(sum(exp(sub(x, a)))), a);
}

const prepare = (input: unknown): Float64Array => numbers(field(record(input), "x"), "x");

export const lse: EvalModule = {
  primal: defineFunction({ prepare, run: (x: Float64Array) => logSumExp(x) }),
  // ties: the maximum's share of the gradient is (1 − Σ softmax) ≈ 0 wherever it goes
  gradient: defineFunction({ prepare, run: (x: Float64Array) => grad(logSumExp, x, { ties: "ignore" }) }),
};
