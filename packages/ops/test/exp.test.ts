/**
 * wengert's exp kernel (src/exp.ts) is within 1 ulp of the correctly rounded eˣ, held against
 * an independent BigInt evaluation (exp-reference.ts), itself checked first against
 * 45-digit values.
 *
 * The sample is 10⁵ points; the full check of 10⁷ is this file with
 * WENGERT_EXP_POINTS=10000000 (its result is in packages/ops/results/exp-ulp.md).
 */
import { describe, expect, it } from "vitest";
import { exp } from "../src/exp.js";
import { expFixed, expUlpError, referenceExp } from "./exp-reference.js";
import { expSample } from "./exp-sample.js";
import { rng } from "./random.js";

/** eˣ at doubles, to 45 significant digits (mpmath, 300-bit), and the double nearest each. */
const KNOWN: readonly [number, string, number][] = [
  [1, "2.71828182845904523536028747135266249775724709", 2.718281828459045],
  [-1, "0.367879441171442321595523770161460867445811131", 0.36787944117144233],
  [0.5, "1.6487212707001281468486507878141635716537761", 1.6487212707001282],
  [10, "22026.4657948067165169579006452842443663535126", 22026.465794806718],
  [1e-10, "1.00000000010000000000500000364338639858076696", 1.0000000001],
  [0.34657359027997264, "1.41421356237309503240355144461194225397181271", 1.414213562373095],
];
const NEAREST_ONLY: readonly [number, number][] = [
  [-20.5, 1.2501528663867426e-9],
  [300.25, 2.4941248615349213e130],
  [-700, 9.85967654375977e-305],
  [709, 8.218407461554972e307],
];

describe("the reference exp (BigInt fixed point)", () => {
  it("agrees with 45-digit values to 40 digits, and rounds them to the nearest double", () => {
    for (const [x, digits, nearest] of KNOWN) {
      const { t, f } = expFixed(x);
      const [whole, fraction] = digits.split(".");
      const scale = 40 - whole.length;
      // ⌊eˣ · 10^scale⌋ both ways, within a unit
      const fromReference = (t * 10n ** BigInt(scale)) >> BigInt(f);
      const fromDigits = BigInt(whole + fraction.slice(0, scale));
      expect(fromReference - fromDigits, `exp ${x}`).toBeGreaterThanOrEqual(-1n);
      expect(fromReference - fromDigits, `exp ${x}`).toBeLessThanOrEqual(1n);
      expect(referenceExp(x)).toBe(nearest);
    }
    for (const [x, nearest] of NEAREST_ONLY) expect(referenceExp(x), `exp ${x}`).toBe(nearest);
  });
  it("measures errors in units of the exact value's last place", () => {
    const y = 2.718281828459045; // e rounded; e lies 0.43 ulp above it
    expect(expUlpError(1, y)).toBeLessThan(0.5);
    expect(expUlpError(1, y + 2 ** -51)).toBeGreaterThan(0.5);
    expect(expUlpError(1, y + 2 ** -51)).toBeLessThan(1);
    expect(expUlpError(1, y - 2 ** -51)).toBeGreaterThan(1);
    expect(expUlpError(800, Infinity)).toBe(0);
    expect(expUlpError(800, Number.MAX_VALUE)).toBe(Infinity);
    expect(expUlpError(NaN, NaN)).toBe(0);
  });
});

describe("exp, the kernel", () => {
  it("is exact at the special points: ±0 → 1, −∞ → 0, ∞, NaN, past overflow and underflow", () => {
    for (const [x, y] of [[0, 1], [-0, 1], [Infinity, Infinity], [-Infinity, 0], [NaN, NaN], [710, Infinity], [-746, 0], [1e308, Infinity], [-1e308, 0], [5e-324, 1]]) {
      expect(Object.is(exp(x), y), `exp(${x})`).toBe(true);
    }
    // the smallest subnormal, and the last x whose eˣ is finite
    expect(exp(-745.1332191019411)).toBe(5e-324);
    expect(exp(709.782712893384)).toBe(1.7976931348622732e308);
  });
  const n = Number(process.env.WENGERT_EXP_POINTS ?? 1e5);
  it("is within 1 ulp of the correctly rounded exp on the sample (10⁵ points unless WENGERT_EXP_POINTS says)", { timeout: Math.max(60_000, n / 4) }, () => {
    // the largest error in each range of the kernel (|x| ≤ 700, beyond), and where
    const ranges = [700, Infinity].map((below) => ({ below, points: 0, worst: 0, at: 0 }));
    let rounded = 0;
    for (const x of expSample(rng(21), n)) {
      const y = exp(x);
      const e = expUlpError(x, y);
      const range = Math.abs(x) <= 700 ? ranges[0] : ranges[1];
      range.points++;
      if (e > range.worst) [range.worst, range.at] = [e, x];
      if (Object.is(y, referenceExp(x))) rounded++;
    }
    if (process.env.WENGERT_EXP_POINTS !== undefined) {
      console.log(`exp: ${n} points, ${rounded} (${((100 * rounded) / n).toFixed(3)} %) correctly rounded; largest error by range of |x|:`);
      for (const r of ranges) console.log(`  up to ${r.below}: ${r.points} points, ${r.worst.toFixed(4)} ulp at x = ${r.at}`);
    }
    for (const r of ranges) expect(r.worst, `largest error up to ${r.below}, at x = ${r.at}`).toBeLessThanOrEqual(1);
    // and it is no stand-in: nearly every result is the correctly rounded one
    expect(rounded / n).toBeGreaterThan(0.9);
  });
});
