/**
 * @file GradBench's `lse` eval: LogSumExp of a vector and its gradient.
 *
 * The primal is wengert's own `logsumexp`, as lse.hpp defines it (a = max x,
 * LSE(x) = log Σ exp(x − a) + a) in one kernel: a pass for the max and one summing the
 * exponentials, no intermediate vector (the pieces — max, sub, exp, sum, log, add — write
 * two vectors as long as x, whose fresh pages cost more than the arithmetic).
 *
 * The gradient is `grad` of that same function: logsumexp's reverse rule, ȳ · exp(x − y), the
 * softmax, one scaledExp pass (ops' tensor/scaled-exp.ts) after the primal's kernel. The
 * pieces with a constant shift (max, x − a, exp, sum, log, + a, and their reverse: a
 * broadcast and a product) compute the exponentials once, but their passes and buffers
 * cost more. It is jitted: traced and differentiated once per length of x, then replayed
 * (a trace and its sweep cost more than the passes on short vectors).
 *
 * `prepare` places x in the exp kernels' memory (ops' residentOperand), as the C++ tools
 * convert the JSON into their vectors there: logsumexp's passes then read it where it lies,
 * where a Float64Array of the JavaScript heap is copied into that memory at every call (on
 * long vectors, a copy that no longer fits the caches, a large share of the primal).
 *
 * Input `{x: double[]}`; `primal` gives a number, `gradient` an array like `x`.
 */
import { grad, jit, logsumexp, type TensorArg } from "@wengert/core";
import { residentOperand } from "@wengert/ops";
import { defineFunction } from "../define.js";
import { field, numbers, record } from "../json.js";
import type { EvalModule } from "../module.js";

const prepare = (input: unknown): Float64Array => residentOperand(numbers(field(record(input), "x"), "x"));

const gradient = jit((x: TensorArg) => grad((v: TensorArg) => logsumexp(v), x));

export const lse: EvalModule = {
  primal: defineFunction({ prepare, run: (x: Float64Array) => logsumexp(x) }),
  gradient: defineFunction({ prepare, run: (x: Float64Array) => gradient(x) }),
};
