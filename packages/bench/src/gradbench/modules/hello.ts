/**
 * @file GradBench's `hello` eval: `square` is x², `double` its derivative 2x.
 *
 * The input is a bare number (no `min_runs`/`min_seconds`: one run).
 */
import { grad, mul, type Scalar } from "@wengert/core";
import { defineFunction } from "../define.js";
import { number } from "../json.js";
import type { EvalModule } from "../module.js";

const square = (x: Scalar): Scalar => mul(x, x);
const prepare = (input: unknown): number => number(input, "the input");

export const hello: EvalModule = {
  square: defineFunction({ prepare, run: (x: number) => square(x) }),
  double: defineFunction({ prepare, run: (x: number) => grad(square, x) }),
};
