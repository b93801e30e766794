/**
 * @file Exact fixed-point numbers for the references of the elementary functions (tanh,
 * exp): a positive real as T·2^−F with T a BigInt, its double correctly rounded, and a
 * double's distance from it in ulps.
 */

/** A finite positive double as M·2^E, M an integer. */
export function decompose(a: number): { m: bigint; e: number } {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, a);
  const hi = view.getUint32(0);
  const frac = (BigInt(hi & 0xfffff) << 32n) | BigInt(view.getUint32(4));
  const biased = (hi >>> 20) & 0x7ff;
  return biased === 0 ? { m: frac, e: -1074 } : { m: frac | (1n << 52n), e: biased - 1075 };
}

export const bitLength = (n: bigint): number => n.toString(2).length;

/** n·2^s (s may be negative: truncating). */
export const shift = (n: bigint, s: number): bigint => (s >= 0 ? n << BigInt(s) : n >> BigInt(-s));

/** The double nearest T·2^−F (T > 0; F may be negative), ties to even; ±∞ where it overflows. */
export function roundToDouble(t: bigint, f: number): number {
  const log2v = bitLength(t) - 1 - f;
  if (log2v > 1023) return Infinity;
  // keep 53 bits, or fewer where the result is subnormal (its last bit weighs 2^−1074)
  const drop = log2v >= -1022 ? bitLength(t) - 53 : f - 1074;
  if (drop <= 0) return Number(t) * 2 ** -f;
  let kept = t >> BigInt(drop);
  const rest = t - (kept << BigInt(drop));
  const half = 1n << BigInt(drop - 1);
  if (rest > half || (rest === half && (kept & 1n) === 1n)) kept += 1n;
  // kept·2^(drop − f), in two halves so that no factor under- or overflows on its own
  const e = drop - f;
  const h = Math.trunc(e / 2);
  return Number(kept) * 2 ** h * 2 ** (e - h);
}

/**
 * |y − T·2^−F| for y ≥ 0, in units of the last place of T·2^−F (the gap between doubles at
 * that value, 2^−1074 among subnormals).
 */
export function ulpsFrom(y: number, t: bigint, f: number): number {
  const ulpExponent = Math.max(bitLength(t) - 1 - f, -1022) - 52;
  // both at the scale 2^s, the finer of y's last bit and the reference's
  const { m, e } = y === 0 ? { m: 0n, e: -f } : decompose(y);
  const s = Math.min(e, -f);
  let diff = shift(m, e - s) - shift(t, -f - s);
  if (diff < 0n) diff = -diff;
  // diff·2^(s − ulpExponent), with diff cut to 64 bits so that Number() stays finite
  let scale = s - ulpExponent;
  const excess = bitLength(diff) - 64;
  if (excess > 0) {
    diff >>= BigInt(excess);
    scale += excess;
  }
  return Number(diff) * 2 ** Math.max(scale, -1100);
}
