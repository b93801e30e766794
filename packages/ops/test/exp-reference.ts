/**
 * @file An independent exp for the tests: exact BigInt fixed-point arithmetic, enough
 * guard bits to round correctly, and the error of any double against it in ulps.
 *
 * Nothing here shares code or method with the kernel (src/exp.ts), which uses a table of
 * 2^(j/512) and a short polynomial: here x (exactly M·2^E) is reduced by k·ln 2, k the
 * integer nearest x/ln 2, with ln 2 = Σ 1/(j·2^j) to F = 300 fractional bits, and e^r
 * (|r| < 0.35) summed by its Taylor series to the last unit of 2^−F; eˣ = e^r·2^k. Each step
 * truncates by a unit or so of 2^−F against a value above 0.7, so the result is right to
 * about 2^−290 relatively: rounding it to 53 bits is correct unless eˣ lies that close to a
 * midpoint (never met at random).
 */
import { decompose, roundToDouble, shift, ulpsFrom } from "./fixed-point.js";

const F = 300;
const ONE = 1n << BigInt(F);

/** ln 2 · 2^F, truncated: Σ_{j≥1} 2^F/(j·2^j). */
const LN2 = (() => {
  let sum = 0n;
  for (let j = 1; j <= F + 10; j++) sum += (ONE << 10n) / (BigInt(j) << BigInt(j));
  return sum >> 10n;
})();

/** eˣ for a finite double x, as T·2^−f with T an integer (f may be negative). */
export function expFixed(x: number): { t: bigint; f: number } {
  if (x === 0) return { t: ONE, f: F };
  const k = Math.round(x / Math.LN2);
  const { m, e } = decompose(Math.abs(x));
  const xF = shift(m, e + F) * (x < 0 ? -1n : 1n);
  const r = xF - BigInt(k) * LN2;
  let sum = ONE;
  let term = ONE;
  for (let n = 1n; term !== 0n; n++) {
    term = (term * r) / (ONE * n);
    sum += term;
  }
  return { t: sum, f: F - k };
}

/** The correctly rounded eˣ (0, ∞ and NaN where IEEE's exp gives them). */
export function referenceExp(x: number): number {
  if (Number.isNaN(x)) return x;
  if (x > 710) return Infinity;
  if (x < -746) return 0;
  const { t, f } = expFixed(x);
  return roundToDouble(t, f);
}

/**
 * |y − eˣ| in units of the last place of eˣ (the gap between doubles at that value, 2^−1074
 * among subnormals): 0 for the right answer where eˣ is not a finite positive real (NaN
 * for NaN; 0 and ∞ beyond the range), Infinity for any other answer there.
 */
export function expUlpError(x: number, y: number): number {
  const want = referenceExp(x);
  if (Number.isNaN(x) || want === 0 || want === Infinity) return Object.is(y, want) ? 0 : Infinity;
  if (!(y >= 0) || y === Infinity) return Infinity;
  const { t, f } = expFixed(x);
  return ulpsFrom(y, t, f);
}
