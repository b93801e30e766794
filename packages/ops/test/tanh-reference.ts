/**
 * @file An independent tanh for the tests: exact BigInt fixed-point arithmetic, enough
 * guard bits to round correctly, and the error of any double against it in ulps.
 *
 * Nothing here shares code or method with the kernel (src/tanh.ts): for a = |x| > 0, the
 * double a is exactly M·2^E; with F fractional bits (F chosen so that tanh a has 53 + 80
 * significant bits), expm1(t) for t = 2a/2^r ≤ 1/8 by its Taylor series, r doublings
 * expm1(2t) = expm1(t)·(expm1(t) + 2) (no cancellation), then tanh a = e/(e + 2) with
 * e = expm1(2a). Each step truncates by under one unit of 2^−F; a few dozen units against
 * 2^80 of headroom, so the value is right to about 2^−(53+70) relatively and rounding it to
 * 53 bits is correct unless tanh a lies that close to a midpoint (never met at random).
 */
import { bitLength, decompose, roundToDouble, shift, ulpsFrom } from "./fixed-point.js";

/** Significant bits kept beyond a double's 53. */
const GUARD = 80;
/** tanh a rounds to 1 and lies within 2^−110 of it from here on (1 − tanh a < 2e^−2a). */
const SATURATED = 40;

/** tanh a for a finite double a > 0, as T·2^−F with T an integer. */
export function tanhFixed(a: number): { t: bigint; f: number } {
  const { m, e } = decompose(a);
  const log2a = bitLength(m) - 1 + e; // ⌊log2 a⌋
  const f = Math.max(0, -log2a) + 53 + GUARD;
  const one = 1n << BigInt(f);
  if (a >= SATURATED) return { t: one - 1n, f }; // just below 1, as tanh a is
  // t = 2a / 2^r ≤ 1/8
  const r = Math.max(0, log2a + 5);
  const t = shift(m, e + 1 - r + f);
  let sum = t;
  let term = t;
  for (let k = 2n; term !== 0n; k++) {
    term = (term * t) >> BigInt(f);
    term /= k;
    sum += term;
  }
  for (let i = 0; i < r; i++) sum = (sum * (sum + 2n * one)) >> BigInt(f);
  return { t: (sum << BigInt(f)) / (sum + 2n * one), f };
}

/** The correctly rounded tanh x (±0, ±∞ and NaN as IEEE's tanh). */
export function referenceTanh(x: number): number {
  if (Number.isNaN(x) || x === 0) return x;
  if (!Number.isFinite(x)) return Math.sign(x);
  const { t, f } = tanhFixed(Math.abs(x));
  const y = roundToDouble(t, f);
  return x < 0 ? -y : y;
}

/**
 * |y − tanh x| in units of the last place of tanh x (the gap between doubles at that value,
 * 2^−1074 among subnormals): 0 for y = tanh x exactly (NaN for NaN, the same signed zero for
 * ±0, ±1 for ±∞), Infinity for any other answer at those points.
 */
export function ulpError(x: number, y: number): number {
  if (Number.isNaN(x)) return Number.isNaN(y) ? 0 : Infinity;
  if (x === 0) return Object.is(x, y) ? 0 : Infinity;
  if (!Number.isFinite(x)) return y === Math.sign(x) ? 0 : Infinity;
  if (!Number.isFinite(y) || (y !== 0 && Math.sign(y) !== Math.sign(x))) return Infinity;
  const { t, f } = tanhFixed(Math.abs(x));
  return ulpsFrom(Math.abs(y), t, f);
}
