/**
 * @file GradBench's `hello` eval: `square` is x², `double` its derivative 2x.
 *
 * The input is a bare number (no `min_runs`/`min_seconds`: one run), so each timed run is
 * a single call: `double` is a jitted gradient (traced once, then compiled code), and both
 * functions are warmed up at `define` (module.ts), as the eval calls them.
 */
import { grad, jit, mul, type Scalar } from "@wengert/core";
import { defineFunction } from "../define.js";
import { number } from "../json.js";
import type { EvalModule } from "../module.js";

const square = (x: Scalar): Scalar => mul(x, x);
const double = jit((x: number) => grad(square, x));
const prepare = (input: unknown): number => number(input, "the input");
const warmUp = { input: (r: number) => 1 + r / 1024, rounds: 10_000 };

export const hello: EvalModule = {
  square: defineFunction({ prepare, run: (x: number) => square(x), warmUp }),
  double: defineFunction({ prepare, run: (x: number) => double(x), warmUp }),
};
