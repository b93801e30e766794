/**
 * @file Truncated power series: the arithmetic the primitives' Taylor rules are written with.
 *
 * A series is the Float64Array of coefficients c0 … cK−1 of t ↦ x(t) (cj = x⁽ʲ⁾(0)/j!).
 * Evaluating a trace term with series in place of numbers gives every derivative of
 * t ↦ f(x + t·v) up to order K − 1 in one pass (Huot, Staton, Vákár, papers/002),
 * with O(K²) work per primitive instead of the exponential cost of nested `rd`s. Each
 * primitive's rule is declared with it (scalar.ts); these are the recurrences they use.
 */

import { exp as expKernel } from "./exp.js";

export type Series = Float64Array;

/** `y = y0 + ∫ Σ_k g_k · a_k′`: coefficient n is (1/n) Σ_j j·a_j·g_{n−j}, summed over arguments. */
export function integrate(y0: number, terms: readonly (readonly [Series, Series])[]): Series {
  const K = terms[0][0].length;
  const y = new Float64Array(K);
  y[0] = y0;
  for (let n = 1; n < K; n++) y[n] = integrated(terms, n);
  return y;
}

/** Coefficient n ≥ 1 of `integrate`: it needs the g_k up to order n − 1 only. */
export function integrated(terms: readonly (readonly [Series, Series])[], n: number): number {
  let s = 0;
  for (const [a, g] of terms) for (let j = 1; j <= n; j++) s += j * a[j] * g[n - j];
  return s / n;
}

export const constant = (c: number, K: number): Series => {
  const s = new Float64Array(K);
  s[0] = c;
  return s;
};

export function mul(a: Series, b: Series): Series {
  const y = new Float64Array(a.length);
  for (let n = 0; n < a.length; n++) {
    let s = 0;
    for (let j = 0; j <= n; j++) s += a[j] * b[n - j];
    y[n] = s;
  }
  return y;
}

// y = a / b:  y_n = (a_n − Σ_{j≥1} b_j y_{n−j}) / b_0
export function div(a: Series, b: Series): Series {
  const y = new Float64Array(a.length);
  for (let n = 0; n < a.length; n++) {
    let s = a[n];
    for (let j = 1; j <= n; j++) s -= b[j] * y[n - j];
    y[n] = s / b[0];
  }
  return y;
}

// y = e^a:  y′ = y a′, so y_n = (1/n) Σ_j j a_j y_{n−j}
export function exp(a: Series, y0 = expKernel(a[0])): Series {
  const y = new Float64Array(a.length);
  y[0] = y0;
  const e0 = expKernel(a[0]);
  for (let n = 1; n < a.length; n++) {
    let s = 0;
    for (let j = 1; j <= n; j++) s += j * a[j] * (n - j === 0 ? e0 : y[n - j]);
    y[n] = s / n;
  }
  return y;
}

// y = √a:  y² = a, so y_n = (a_n − Σ_{1≤j<n} y_j y_{n−j}) / (2 y_0)
export function sqrt(a: Series): Series {
  const y = new Float64Array(a.length);
  y[0] = Math.sqrt(a[0]);
  for (let n = 1; n < a.length; n++) {
    let s = a[n];
    for (let j = 1; j < n; j++) s -= y[j] * y[n - j];
    y[n] = s / (2 * y[0]);
  }
  return y;
}

// s = sin a, c = cos a together:  s′ = c a′,  c′ = −s a′
export function sinCos(a: Series, hyperbolic: boolean): [Series, Series] {
  const K = a.length;
  const s = new Float64Array(K);
  const c = new Float64Array(K);
  s[0] = hyperbolic ? Math.sinh(a[0]) : Math.sin(a[0]);
  c[0] = hyperbolic ? Math.cosh(a[0]) : Math.cos(a[0]);
  for (let n = 1; n < K; n++) {
    let ss = 0;
    let cc = 0;
    for (let j = 1; j <= n; j++) {
      ss += j * a[j] * c[n - j];
      cc += j * a[j] * s[n - j];
    }
    s[n] = ss / n;
    c[n] = (hyperbolic ? cc : -cc) / n;
  }
  return [s, c];
}

/**
 * y = f(a) for a logistic-like f whose derivative is a polynomial in y, y′ = w(y) a′:
 * y_n = (1/n) Σ_j j a_j w_{n−j}, with w's coefficients from y's as they come (w_n needs
 * y_0 … y_n). tanh (w = 1 − y²) and sigmoid (w = y − y²) this way, not as quotients of
 * series of e^a or cosh a, which overflow past |a| ≈ 710 and give ∞/∞.
 */
export function logistic(a: Series, y0: number, w0: number, w: (y: Series, n: number) => number): Series {
  const K = a.length;
  const y = new Float64Array(K);
  const ws = new Float64Array(K);
  y[0] = y0;
  ws[0] = w0;
  for (let n = 1; n < K; n++) {
    let s = 0;
    for (let j = 1; j <= n; j++) s += j * a[j] * ws[n - j];
    y[n] = s / n;
    ws[n] = w(y, n);
  }
  return y;
}

/** Coefficient n ≥ 1 of y² (Cauchy product). */
export function squareAt(y: Series, n: number): number {
  let s = 0;
  for (let i = 0; i <= n; i++) s += y[i] * y[n - i];
  return s;
}

// aⁿ for an integer n, by products: repeated below 64, by squaring above
export function integerPower(a: Series, n: number): Series {
  const m = Math.abs(n);
  let y = constant(1, a.length);
  if (m <= 64) for (let i = 0; i < m; i++) y = mul(y, a);
  else {
    // p runs through a^(2^i), multiplied in where bit i of m is set
    let p = a;
    for (let k = m; ; p = mul(p, p)) {
      if (k % 2 === 1) y = mul(y, p);
      k = Math.floor(k / 2);
      if (k === 0) break;
    }
  }
  return n < 0 ? div(constant(1, a.length), y) : y;
}

/**
 * aᵖ where a₀ = 0 and p > 0 is not an integer: aᵖ = O(tᵖ), so coefficient j < p is 0;
 * past p there is no derivative (t^(p−j) at 0): the leading term's C(p, j) 0^(p−j) a₁ʲ,
 * infinite, as nested forward mode gives it (NaN where a₁ = 0).
 */
export function powerAtZero(a: Series, p: number): Series {
  const y = new Float64Array(a.length);
  let binomial = 1;
  for (let j = 1; j < a.length; j++) {
    binomial *= (p - j + 1) / j;
    if (j > p) y[j] = binomial * Math.pow(0, p - j) * Math.pow(a[1], j);
  }
  return y;
}

export const isZero = (a: Series): boolean => a.every((x) => x === 0);
/** A series of a constant: no coefficient past the first. */
export const isConstant = (a: Series): boolean => a.every((x, i) => i === 0 || x === 0);
/** `a` with its constant term replaced by `c` (the kernel's value, exact where a recurrence would round). */
export const lift = (a: Series, c: number): Series => {
  const y = a.slice();
  y[0] = c;
  return y;
};
