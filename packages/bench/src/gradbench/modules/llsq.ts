/**
 * @file GradBench's `llsq` eval: a linear least-squares objective and its gradient.
 *
 * As llsq.hpp: with tᵢ = −1 + 2i/(n − 1) and sᵢ = sign(tᵢ) for i < n,
 *
 *     y(x) = ½ Σᵢ (sᵢ − Σⱼ xⱼ tᵢʲ)²
 *
 * for x of length m. Vectorised: the powers tᵢʲ form a constant n × m matrix T (built
 * in the timed function, by running products as llsq.hpp does), and y = ½ ‖s − T x‖²:
 * matmul, sub, square, sum, div on tensors.
 *
 * Input `{x: double[], n: int}`; `primal` gives a number, `gradient` an array like `x`.
 */
import ndarray from "ndarray";
import { div, grad, matmul, square, sub, sum, type NdArray, type Scalar, type TensorArg } from "@wengert/core";
import { defineFunction } from "../define.js";
import { field, integer, numbers, record } from "../json.js";
import type { EvalModule } from "../module.js";

export interface LlsqInput {
  readonly x: Float64Array;
  readonly n: number;
}

/**
 * The buffers of T and s for each input, written again at every call: a fresh n × m
 * buffer (16 MB at n = 16 392) cost twice the writing, in page faults and zeroing.
 */
const scratch = new WeakMap<LlsqInput, { T: Float64Array; s: Float64Array }>();

/** The powers T (n × m, Tᵢⱼ = tᵢʲ) and signs s of llsq's sample points, written into `input`'s buffers. */
export function samples(input: LlsqInput): { T: NdArray; s: Float64Array } {
  const { n } = input;
  const m = input.x.length;
  let buffers = scratch.get(input);
  if (buffers === undefined) scratch.set(input, (buffers = { T: new Float64Array(n * m), s: new Float64Array(n) }));
  const { T, s } = buffers;
  for (let i = 0; i < n; i++) {
    const t = -1 + (i * 2) / (n - 1);
    s[i] = Number(0 < t) - Number(t < 0);
    let p = 1;
    for (let j = 0; j < m; j++) {
      T[i * m + j] = p;
      p *= t;
    }
  }
  return { T: ndarray(T, [n, m]), s };
}

export function objective(x: TensorArg, T: NdArray, s: Float64Array): Scalar {
  return div(sum(square(sub(s, matmul(T, x)))), 2);
}

const prepare = (input: unknown): LlsqInput => {
  const r = record(input);
  return { x: numbers(field(r, "x"), "x"), n: integer(field(r, "n"), "n", 1) };
};

export const llsq: EvalModule = {
  primal: defineFunction({
    prepare,
    run: (input: LlsqInput) => {
      const { T, s } = samples(input);
      return objective(input.x, T, s);
    },
  }),
  gradient: defineFunction({
    prepare,
    run: (input: LlsqInput) => {
      const { T, s } = samples(input);
      return grad((v) => objective(v, T, s), input.x);
    },
  }),
};
