/**
 * @file Small dense linear systems (L-BFGS-B's 2m×2m middle matrices): Gaussian
 * elimination with partial pivoting, for the indefinite matrices they are.
 */

/** x with A x = b for the n×n row-major A (neither is changed); null when A is singular to rounding. */
export function solveDense(A: Float64Array, b: Float64Array, n: number): Float64Array | null {
  const a = Float64Array.from(A);
  const x = Float64Array.from(b);
  let scale = 0;
  for (let i = 0; i < n * n; i++) scale = Math.max(scale, Math.abs(a[i]));
  for (let col = 0; col < n; col++) {
    let pivot = col;
    for (let r = col + 1; r < n; r++) if (Math.abs(a[r * n + col]) > Math.abs(a[pivot * n + col])) pivot = r;
    if (!(Math.abs(a[pivot * n + col]) > Number.EPSILON * scale * n)) return null;
    if (pivot !== col) {
      for (let c = 0; c < n; c++) [a[col * n + c], a[pivot * n + c]] = [a[pivot * n + c], a[col * n + c]];
      [x[col], x[pivot]] = [x[pivot], x[col]];
    }
    for (let r = col + 1; r < n; r++) {
      const factor = a[r * n + col] / a[col * n + col];
      if (factor === 0) continue;
      for (let c = col; c < n; c++) a[r * n + c] -= factor * a[col * n + c];
      x[r] -= factor * x[col];
    }
  }
  for (let r = n - 1; r >= 0; r--) {
    let s = x[r];
    for (let c = r + 1; c < n; c++) s -= a[r * n + c] * x[c];
    x[r] = s / a[r * n + r];
  }
  return x;
}

/** The inverse of the n×n row-major A, column by column; null when A is singular to rounding. */
export function invertDense(A: Float64Array, n: number): Float64Array | null {
  const inverse = new Float64Array(n * n);
  for (let j = 0; j < n; j++) {
    const e = new Float64Array(n);
    e[j] = 1;
    const column = solveDense(A, e, n);
    if (column === null) return null;
    for (let i = 0; i < n; i++) inverse[i * n + j] = column[i];
  }
  return inverse;
}
