/** @file The points tanh is checked at: every range of its kernel and its edges, tiny to huge, both signs, special values. */

const view = new DataView(new ArrayBuffer(8));

/** The double whose bits are hi:lo (any pattern: NaN, ∞, subnormal, huge). */
export function fromBits(hi: number, lo: number): number {
  view.setUint32(0, hi >>> 0);
  view.setUint32(4, lo >>> 0);
  return view.getFloat64(0);
}

/** x moved by k doubles (k small), toward +∞ for k > 0; x finite and positive. */
export function step(x: number, k: number): number {
  view.setFloat64(0, x);
  view.setBigUint64(0, view.getBigUint64(0) + BigInt(k));
  return view.getFloat64(0);
}

/** Where the kernel changes method or interval: 2⁻²⁷, 1/4, k/16 up to 2, 2, and 20. */
const EDGES = [2 ** -27, ...Array.from({ length: 29 }, (_, k) => (k + 4) / 16), 20];

const SPECIAL = [0, -0, Infinity, -Infinity, NaN, 5e-324, -5e-324, Number.MAX_VALUE, -Number.MAX_VALUE, 2 ** -1022, -(2 ** -1022)];

/** n points from `next` (uniform in [0, 1)): the special values first, then a mix of ranges. */
export function* tanhSample(next: () => number, n: number): Generator<number> {
  for (let i = 0; i < Math.min(n, SPECIAL.length); i++) yield SPECIAL[i];
  const sign = () => (next() < 0.5 ? -1 : 1);
  for (let i = SPECIAL.length; i < n; i++) {
    const u = next();
    if (u < 0.35) yield 5 * next() - 2.5; // where the table and the small range work
    else if (u < 0.5) yield 50 * next() - 25; // through exp's range to saturation
    else if (u < 0.8) yield sign() * 2 ** (-1074 + 1080 * next()); // log-uniform magnitudes, subnormal to 64
    else if (u < 0.9) yield sign() * step(EDGES[Math.floor(next() * EDGES.length)], Math.floor(next() * 2001) - 1000); // around the edges
    else yield fromBits(next() * 2 ** 32, next() * 2 ** 32); // any bit pattern
  }
}
