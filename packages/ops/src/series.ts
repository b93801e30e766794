/**
 * @file Univariate Taylor arithmetic: every primitive on truncated power series.
 *
 * A series is the Float64Array of coefficients c0 … cK−1 of t ↦ x(t) (cj = x⁽ʲ⁾(0)/j!).
 * Evaluating a trace term with series in place of numbers gives every derivative of
 * t ↦ f(x + t·v) up to order K − 1 in one pass (Huot, Staton, Vákár, papers/002),
 * with O(K²) work per primitive instead of the exponential cost of nested `rd`s.
 *
 * Most primitives need nothing here: their series come from their reverse rules,
 * which give the derivative factor g = ∂f(x) (run on series with cotangent 1), and
 * y = f(x0) + ∫ g · x′ (`integrate`). The primitives whose rules use their own output y
 * (exp: y′ = y x′), sin/cos whose rules use each other, and the linear ones whose
 * rules would call themselves (neg, add, sub) get the classic recurrences below.
 */
import { BINARY_NAMES, UNARY_NAMES, type BinaryName, type Emitter, type UnaryName } from "./emitter.js";
import { binaryOps, unaryOps } from "./scalar.js";

export type Series = Float64Array;

/** `y = y0 + ∫ Σ_k g_k · a_k′`: coefficient n is (1/n) Σ_j j·a_j·g_{n−j}, summed over arguments. */
function integrate(y0: number, terms: readonly (readonly [Series, Series])[]): Series {
  const K = terms[0][0].length;
  const y = new Float64Array(K);
  y[0] = y0;
  for (let n = 1; n < K; n++) {
    let s = 0;
    for (const [a, g] of terms) for (let j = 1; j <= n; j++) s += j * a[j] * g[n - j];
    y[n] = s / n;
  }
  return y;
}

const constant = (c: number, K: number): Series => {
  const s = new Float64Array(K);
  s[0] = c;
  return s;
};

function mul(a: Series, b: Series): Series {
  const y = new Float64Array(a.length);
  for (let n = 0; n < a.length; n++) {
    let s = 0;
    for (let j = 0; j <= n; j++) s += a[j] * b[n - j];
    y[n] = s;
  }
  return y;
}

// y = a / b:  y_n = (a_n − Σ_{j≥1} b_j y_{n−j}) / b_0
function div(a: Series, b: Series): Series {
  const y = new Float64Array(a.length);
  for (let n = 0; n < a.length; n++) {
    let s = a[n];
    for (let j = 1; j <= n; j++) s -= b[j] * y[n - j];
    y[n] = s / b[0];
  }
  return y;
}

// y = e^a:  y′ = y a′, so y_n = (1/n) Σ_j j a_j y_{n−j}
function exp(a: Series, y0 = Math.exp(a[0])): Series {
  const y = new Float64Array(a.length);
  y[0] = y0;
  const e0 = Math.exp(a[0]);
  for (let n = 1; n < a.length; n++) {
    let s = 0;
    for (let j = 1; j <= n; j++) s += j * a[j] * (n - j === 0 ? e0 : y[n - j]);
    y[n] = s / n;
  }
  return y;
}

// y = √a:  y² = a, so y_n = (a_n − Σ_{1≤j<n} y_j y_{n−j}) / (2 y_0)
function sqrt(a: Series): Series {
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
function sinCos(a: Series, hyperbolic: boolean): [Series, Series] {
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
function logistic(a: Series, y0: number, w0: number, w: (y: Series, n: number) => number): Series {
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
function squareAt(y: Series, n: number): number {
  let s = 0;
  for (let i = 0; i <= n; i++) s += y[i] * y[n - i];
  return s;
}

// aⁿ for an integer n, by products: repeated below 64, by squaring above
function integerPower(a: Series, n: number): Series {
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
function powerAtZero(a: Series, p: number): Series {
  const y = new Float64Array(a.length);
  let binomial = 1;
  for (let j = 1; j < a.length; j++) {
    binomial *= (p - j + 1) / j;
    if (j > p) y[j] = binomial * Math.pow(0, p - j) * Math.pow(a[1], j);
  }
  return y;
}

const map = (a: Series, f: (x: number) => number): Series => a.map(f);
const isZero = (a: Series): boolean => a.every((x) => x === 0);
/** A series of a constant: no coefficient past the first. */
const isConstant = (a: Series): boolean => a.every((x, i) => i === 0 || x === 0);
const lift = (a: Series, c: number): Series => {
  const y = a.slice();
  y[0] = c;
  return y;
};

/** Series rules for the primitives whose reverse rules cannot give them (see above). */
const explicit: Partial<Record<UnaryName | BinaryName, (e: Emitter<Series>, a: Series, b: Series) => Series>> = {
  neg: (_e, a) => map(a, (x) => -x),
  add: (_e, a, b) => a.map((x, i) => x + b[i]),
  sub: (_e, a, b) => a.map((x, i) => x - b[i]),
  exp: (_e, a) => exp(a),
  expm1: (_e, a) => exp(a, Math.expm1(a[0])),
  sqrt: (_e, a) => sqrt(a),
  sin: (_e, a) => sinCos(a, false)[0],
  cos: (_e, a) => sinCos(a, false)[1],
  sinh: (_e, a) => sinCos(a, true)[0],
  cosh: (_e, a) => sinCos(a, true)[1],
  tan: (_e, a) => lift(div(...sinCos(a, false)), Math.tan(a[0])),
  // tanh′ = 1 − tanh² (sech² a₀ at order 0, which has no cancellation), σ′ = σ(1 − σ) (σ(a₀)σ(−a₀))
  tanh: (_e, a) => logistic(a, Math.tanh(a[0]), 1 / Math.cosh(a[0]) ** 2, (y, n) => -squareAt(y, n)),
  sigmoid: (_e, a) => {
    const s = unaryOps.sigmoid.forward;
    return logistic(a, s(a[0]), s(a[0]) * s(-a[0]), (y, n) => y[n] - squareAt(y, n));
  },
  safeRecip: (_e, a) => (a[0] === 0 ? new Float64Array(a.length) : div(constant(1, a.length), a)),
  safeLog: (e, a) => (a[0] === 0 ? new Float64Array(a.length) : e.log(a)),
  sign: (_e, a) => constant(unaryOps.sign.forward(a[0]), a.length),
  div: (_e, a, b) => div(a, b),
  mul: (_e, a, b) => mul(a, b),
  // aᵇ = exp(b log a) for a > 0; where log a is not finite: an integer power of a constant
  // exponent by products, a power of a series through 0 by its order there, 0^b = 0 (b > 0)
  pow: (e, a, b) => {
    const constantB = isConstant(b);
    if (constantB && Number.isInteger(b[0]) && a[0] <= 0) return integerPower(a, b[0]);
    if (constantB && a[0] === 0 && b[0] > 0) return powerAtZero(a, b[0]);
    if (isConstant(a) && a[0] === 0 && b[0] > 0) return new Float64Array(a.length);
    return lift(exp(mul(b, e.log(a))), Math.pow(a[0], b[0]));
  },
  xlogy: (e, a, b) => (isZero(a) ? new Float64Array(a.length) : lift(mul(a, e.log(b)), binaryOps.xlogy.forward(a[0], b[0]))),
};

/** Primitives as methods on series of K coefficients. */
export function seriesEmitter(K: number): Emitter<Series> {
  const ONE = constant(1, K);
  const e: Record<string, unknown> = { lit: (c: number) => constant(c, K) };
  const self = e as Emitter<Series>;
  for (const name of UNARY_NAMES) {
    const rule = explicit[name];
    const op = unaryOps[name];
    e[name] = rule
      ? (a: Series) => rule(self, a, a)
      : (a: Series) => {
          const g = op.reverse(self, a, constant(NaN, K), ONE);
          return g === null ? constant(op.forward(a[0]), K) : integrate(op.forward(a[0]), [[a, g]]);
        };
  }
  for (const name of BINARY_NAMES) {
    const rule = explicit[name];
    const op = binaryOps[name];
    e[name] = rule
      ? (a: Series, b: Series) => rule(self, a, b)
      : (a: Series, b: Series) => {
          const terms: [Series, Series][] = [];
          op.reverse.forEach((r, k) => {
            const g = r(self, a, b, constant(NaN, K), ONE);
            if (g !== null) terms.push([k === 0 ? a : b, g]);
          });
          return terms.length === 0 ? constant(op.forward(a[0], b[0]), K) : integrate(op.forward(a[0], b[0]), terms);
        };
  }
  return self;
}
