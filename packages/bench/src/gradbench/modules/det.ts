/**
 * @file GradBench's `det` eval: the determinant of an ℓ × ℓ matrix by expansion by
 * minors, and its gradient.
 *
 * det.hpp expands along the first row of each minor, recursively: the minor of rows
 * r..ℓ−1 and a set S of columns (in increasing order) is
 *
 *     det(r, S) = Σⱼ (−1)ʲ A[r, Sⱼ] · det(r + 1, S ∖ Sⱼ)
 *
 * summed left to right from 0 (a 1 × 1 minor is its element). Written as that
 * recursion, the trace has about 3.4·ℓ! instructions (137 million at ℓ = 11, the
 * eval's largest): too many to keep. But det(r, S) depends on S only (r = ℓ − |S|), so
 * each minor is computed once and shared by every expansion that needs it (memoised
 * by the bit set S): the same products and sums in the same order, hence the same
 * value bit for bit, from ℓ·2^ℓ operations (22 528 at ℓ = 11). wengert differentiates
 * that scalar program (the gradient is the cofactor matrix).
 *
 * Input `{A: double[] (row-major), ell: int}`; `primal` gives a number, `gradient` an
 * array like `A`.
 */
import { add, grad, mul, sub, type Scalar } from "@wengert/core";
import { defineFunction } from "../define.js";
import { field, InputError, integer, numbers, record } from "../json.js";
import type { EvalModule } from "../module.js";

export interface DetInput {
  readonly A: number[];
  readonly ell: number;
}

/** The determinant of the ell × ell matrix A (row-major) by expansion by minors. */
export function determinant(A: readonly Scalar[], ell: number): Scalar {
  if (ell === 0) return 1;
  const memo = new Map<number, Scalar>();
  const minor = (cols: number, m: number): Scalar => {
    const row = ell - m;
    if (m === 1) return A[row * ell + (31 - Math.clz32(cols))];
    const known = memo.get(cols);
    if (known !== undefined) return known;
    let det: Scalar = 0;
    let sign = 1;
    for (let c = 0; c < ell; c++) {
      const bit = 1 << c;
      if ((cols & bit) === 0) continue;
      const term = mul(A[row * ell + c], minor(cols & ~bit, m - 1));
      det = sign > 0 ? add(det, term) : sub(det, term);
      sign = -sign;
    }
    memo.set(cols, det);
    return det;
  };
  return minor((1 << ell) - 1, ell); // ell ≤ 30: the column sets fit in an int
}

const prepare = (input: unknown): DetInput => {
  const r = record(input);
  const A = numbers(field(r, "A"), "A");
  const ell = integer(field(r, "ell"), "ell");
  if (A.length !== ell * ell) throw new InputError(`A has ${A.length} elements; expected ell² = ${ell * ell}`);
  if (ell > 30) throw new InputError(`ell is ${ell}; expansion by minors is done here for ell ≤ 30 only`);
  return { A: Array.from(A), ell };
};

export const det: EvalModule = {
  primal: defineFunction({ prepare, run: ({ A, ell }: DetInput) => determinant(A, ell) }),
  gradient: defineFunction({ prepare, run: ({ A, ell }: DetInput) => grad((a) => determinant(a, ell), A) }),
};
