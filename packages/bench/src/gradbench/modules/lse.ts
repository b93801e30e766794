/**
 * @file GradBench's `lse` eval: LogSumExp of a vector and its gradient.
 *
 * The primal is wengert's own `logsumexp`, as lse.hpp defines it (a = max x,
 * LSE(x) = log Σ exp(x − a) + a) in one kernel: a pass for the max and one summing the
 * exponentials, no intermediate vector (the pieces — max, sub, exp, sum, log, add — write
 * two vectors as long as x, up to ~1.3 million elements, whose fresh pages cost more than
 * the arithmetic).
 *
 * The gradient is that of the pieces, with a = max x taken as the constant it is to lse.hpp
 * (computed first, from the point), as JAX's logsumexp stops its gradient and GradBench's
 * manual tool leaves it out: LSE is invariant under shifts (log Σ exp(x − a) + a is the
 * same function of x for every a), so a's share of the derivative, (1 − Σ softmax) at the
 * maximal element, is zero up to rounding. Differentiating through the max instead records
 * a tie check, a mask of the maximal elements and four more passes over the vector, each as
 * long as the work itself at 10⁶ elements; and the pieces' reverse sweep reuses exp's
 * output, where logsumexp's rule computes the exponentials again.
 *
 * Input `{x: double[]}`; `primal` gives a number, `gradient` an array like `x`.
 */
import { add, exp, grad, log, logsumexp, max, sub, sum, type Scalar, type TensorArg } from "@wengert/core";
import { defineFunction } from "../define.js";
import { field, numbers, record } from "../json.js";
import type { EvalModule } from "../module.js";

/** log Σ exp(x − a) + a: LSE(x) for any shift a, stable for a = max x. */
export function shiftedLogSumExp(x: TensorArg, a: Scalar): Scalar {
  return add(log(sum(exp(sub(x, a)))), a);
}

const prepare = (input: unknown): Float64Array => numbers(field(record(input), "x"), "x");

export const lse: EvalModule = {
  primal: defineFunction({ prepare, run: (x: Float64Array) => logsumexp(x) }),
  gradient: defineFunction({
    prepare,
    run: (x: Float64Array) => {
      const a = max(x) as number;
      return grad((v: TensorArg) => shiftedLogSumExp(v, a), x);
    },
  }),
};
