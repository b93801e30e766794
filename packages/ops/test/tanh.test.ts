/**
 * wengert's tanh kernel (src/tanh.ts) is within 1 ulp of the correctly rounded tanh, held
 * against an independent BigInt evaluation (tanh-reference.ts), itself checked first
 * against 45-digit values.
 *
 * The sample is 10⁵ points; the full check of 10⁷ is this file with
 * WENGERT_TANH_POINTS=10000000 (about 6 minutes; its result is in
 * packages/ops/results/tanh-ulp.md).
 */
import { describe, expect, it } from "vitest";
import { tanh } from "../src/tanh.js";
import { rng } from "./random.js";
import { referenceTanh, tanhFixed, ulpError } from "./tanh-reference.js";
import { tanhSample } from "./tanh-sample.js";

/** tanh at doubles, to 45 significant digits (mpmath, 200-bit), and the double nearest each. */
const KNOWN: readonly [number, string, number][] = [
  [1, "0.761594155955764888119458282604793590412768597", 0.7615941559557649],
  [0.5, "0.46211715726000975850231848364367254873028928", 0.46211715726000974],
  [0.25, "0.244918662403709129277801131491016957506558731", 0.24491866240370913],
  [2, "0.964027580075816883946413724100923150255029976", 0.9640275800758169],
  [2.5, "0.986614298151430288881276039237349639212511982", 0.9866142981514303],
  [3, "0.995054753686730451331880185255488475097813855", 0.9950547536867305],
  [1e-5, "0.00000999999999966666748471053905850950186750569828", 9.999999999666668e-6],
  [0.1, "0.099667994624955822614277043698624833255378754", 0.09966799462495582],
  [1.2345678901234567, "0.843899199111610491489466156644927872974908517", 0.8438991991116105],
  [0.0625, "0.0624187467475125144901428911942113341069403215", 0.062418746747512514],
  [19, "0.999999999999999937217344159039409396651644178", 0.9999999999999999],
  [20, "0.999999999999999991503291489416822045438558191", 1],
];

describe("the reference tanh (BigInt fixed point)", () => {
  it("agrees with 45-digit values to 36 decimals, and rounds them to the nearest double", () => {
    for (const [x, digits, nearest] of KNOWN) {
      const { t, f } = tanhFixed(x);
      // ⌊tanh x · 10^36⌋ both ways, within a unit (2^−133 per unit of T, a few dozen units off)
      const fromReference = (t * 10n ** 36n) >> BigInt(f);
      const [whole, fraction] = digits.split(".");
      const fromDigits = BigInt(whole + fraction.slice(0, 36));
      expect(fromReference - fromDigits, `tanh ${x}`).toBeGreaterThanOrEqual(-1n);
      expect(fromReference - fromDigits, `tanh ${x}`).toBeLessThanOrEqual(1n);
      expect(referenceTanh(x)).toBe(nearest);
      expect(referenceTanh(-x)).toBe(-nearest);
    }
  });
  it("measures errors in units of the exact value's last place", () => {
    const y = 0.7615941559557649; // tanh 1 rounded; tanh 1 lies 0.2 ulp above it
    expect(ulpError(1, y)).toBeLessThan(0.5);
    const up = y + 2 ** -53;
    expect(ulpError(1, up)).toBeGreaterThan(0.5);
    expect(ulpError(1, up)).toBeLessThan(1);
    expect(ulpError(1, y - 2 ** -53)).toBeGreaterThan(1);
    expect(ulpError(1, -y)).toBe(Infinity);
    expect(ulpError(-0, 0)).toBe(Infinity);
    expect(ulpError(NaN, NaN)).toBe(0);
  });
  it("gives tiny and subnormal arguments themselves (tanh x = x − x³/3 + …)", () => {
    for (const x of [5e-324, -5e-324, 2 ** -1022, 1e-200, -3e-20]) expect(referenceTanh(x)).toBe(x);
  });
});

describe("tanh, the kernel", () => {
  it("is exact at the special points: ±0 with its sign, ±∞ → ±1, NaN, subnormals", () => {
    for (const [x, y] of [[0, 0], [-0, -0], [Infinity, 1], [-Infinity, -1], [NaN, NaN], [5e-324, 5e-324], [-5e-324, -5e-324], [1e308, 1], [-1e308, -1]]) {
      expect(Object.is(tanh(x), y), `tanh(${x})`).toBe(true);
    }
  });
  const n = Number(process.env.WENGERT_TANH_POINTS ?? 1e5);
  it("is within 1 ulp of the correctly rounded tanh on the sample (10⁵ points unless WENGERT_TANH_POINTS says)", { timeout: Math.max(60_000, n / 4) }, () => {
    // the largest error in each of the kernel's ranges of |x|, and where
    const ranges = [2 ** -27, 0.25, 2, Infinity].map((below) => ({ below, points: 0, worst: 0, at: 0 }));
    let rounded = 0;
    for (const x of tanhSample(rng(20), n)) {
      const y = tanh(x);
      const e = ulpError(x, y);
      const range = ranges.find((r) => !(Math.abs(x) >= r.below)) ?? ranges[ranges.length - 1];
      range.points++;
      if (e > range.worst) [range.worst, range.at] = [e, x];
      if (Object.is(y, referenceTanh(x))) rounded++;
    }
    if (process.env.WENGERT_TANH_POINTS !== undefined) {
      console.log(`tanh: ${n} points, ${rounded} (${((100 * rounded) / n).toFixed(3)} %) correctly rounded; largest error by range of |x|:`);
      for (const r of ranges) console.log(`  below ${r.below}: ${r.points} points, ${r.worst.toFixed(4)} ulp at x = ${r.at}`);
    }
    for (const r of ranges) expect(r.worst, `largest error below ${r.below}, at x = ${r.at}`).toBeLessThanOrEqual(1);
    // and it is no stand-in: nearly every result is the correctly rounded one
    expect(rounded / n).toBeGreaterThan(0.9);
  });
  it("is odd, bit for bit", () => {
    for (const x of tanhSample(rng(7), 10_000)) expect(Object.is(tanh(-x), -tanh(x))).toBe(true);
  });
});
