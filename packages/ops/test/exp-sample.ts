/** @file The points exp is checked at: the whole range and its edges, tiny arguments, the reduction's boundaries, special values. */
import { fromBits, step } from "./tanh-sample.js";

/** Where the kernel changes method or a result changes kind: ±700, ±708, overflow, the subnormal range, underflow to 0. */
const EDGES = [700, -700, 708, -708, 709.782712893384, -708.3964185322641, -745.1332191019411, -744.4400719213812];

const SPECIAL = [0, -0, Infinity, -Infinity, NaN, 5e-324, -5e-324, 1, -1, 710, -746, 709.8, -745.2, Number.MAX_VALUE, -Number.MAX_VALUE];

/** n points from `next` (uniform in [0, 1)): the special values first, then a mix of ranges. */
export function* expSample(next: () => number, n: number): Generator<number> {
  for (let i = 0; i < Math.min(n, SPECIAL.length); i++) yield SPECIAL[i];
  const sign = () => (next() < 0.5 ? -1 : 1);
  for (let i = SPECIAL.length; i < n; i++) {
    const u = next();
    if (u < 0.3) yield 4 * next() - 2; // where most arguments are
    else if (u < 0.55) yield 1460 * next() - 750; // the whole range and past both ends
    else if (u < 0.7) yield sign() * 2 ** (-1074 + 1084 * next()); // log-uniform magnitudes, subnormal to 1024
    else if (u < 0.85) yield (Math.floor(2000 * next()) - 1000 + 0.5) * (Math.LN2 / 512) * (1 + (next() - 0.5) * 1e-12); // where k's rounding flips
    else if (u < 0.95) {
      const edge = EDGES[Math.floor(next() * EDGES.length)];
      yield Math.sign(edge) * step(Math.abs(edge), Math.floor(next() * 2001) - 1000); // around the edges
    }
    else yield fromBits(next() * 2 ** 32, next() * 2 ** 32); // any bit pattern
  }
}
