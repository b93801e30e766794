/**
 * The matrix product: the WebAssembly SIMD kernel and the JavaScript one equal each other
 * and the definition (each element summed over p in order, from zero) to the bit, on
 * random shapes (not multiples of the block sizes), offsets, batches and transposed
 * layouts.
 */
import { describe, expect, it } from "vitest";
import { fewRows, gemm, gemv, jsGemm } from "../src/tensor/gemm.js";
import { matmul, transpose } from "../src/tensor/kernels.js";
import { blockDepths, COLS, panelWidth, ROWS, simdGemm, skipsSteps } from "../src/tensor/simd-gemm.js";
import { randomArray, randomInt, rng, sameBits } from "./random.js";

/** The definition, written plainly: r[i][j] = Σ_p a[i][p]·b[p][j], p in order, from 0. */
function reference(a: Float64Array, ao: number, b: Float64Array, bo: number, n: number, k: number, m: number): Float64Array {
  const r = new Float64Array(n * m);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < m; j++) {
      let s = 0;
      for (let p = 0; p < k; p++) s += a[ao + i * k + p] * b[bo + p * m + j];
      r[i * m + j] = s;
    }
  }
  return r;
}

type Kernel = typeof jsGemm;
/** The kernel's result for operands at offsets, written into a buffer full of garbage at an offset. */
function product(kernel: Kernel, a: Float64Array, ao: number, b: Float64Array, bo: number, n: number, k: number, m: number): Float64Array {
  const r = new Float64Array(n * m + 5).fill(7.5);
  kernel(a, ao, b, bo, r, 3, n, k, m);
  expect(r[2]).toBe(7.5); // nothing written outside the block
  expect(r[3 + n * m]).toBe(7.5);
  return r.subarray(3, 3 + n * m);
}

const simd: Kernel = (...args) => {
  expect(simdGemm(...args)).toBe(true); // Node 20 has wasm SIMD: the kernel must really run
};

describe("gemm", () => {
  it("SIMD, JavaScript and the definition agree to the bit on random shapes and offsets", () => {
    const next = rng(1);
    for (let t = 0; t < 300; t++) {
      const [n, k, m] = [randomInt(next, 1, 23), randomInt(next, 0, 23), randomInt(next, 1, 23)];
      const [ao, bo] = [randomInt(next, 0, 5), randomInt(next, 0, 5)];
      const a = randomArray(next, ao + n * k);
      const b = randomArray(next, bo + k * m);
      const want = reference(a, ao, b, bo, n, k, m);
      expect(sameBits(product(jsGemm, a, ao, b, bo, n, k, m), want), `js ${n}×${k}×${m}`).toBe(true);
      expect(sameBits(product(simd, a, ao, b, bo, n, k, m), want), `simd ${n}×${k}×${m}`).toBe(true);
    }
  });

  it("agree on the workload's sizes and odd ones around them", () => {
    const next = rng(2);
    for (const [n, k, m] of [[64, 64, 128], [64, 128, 10], [128, 64, 10], [64, 10, 128], [65, 33, 10], [3, 200, 7], [1, 1, 1]]) {
      const a = randomArray(next, n * k);
      const b = randomArray(next, k * m);
      const want = reference(a, 0, b, 0, n, k, m);
      expect(sameBits(product(jsGemm, a, 0, b, 0, n, k, m), want), `js ${n}×${k}×${m}`).toBe(true);
      expect(sameBits(product(simd, a, 0, b, 0, n, k, m), want), `simd ${n}×${k}×${m}`).toBe(true);
      expect(sameBits(product(gemm, a, 0, b, 0, n, k, m), want), `gemm ${n}×${k}×${m}`).toBe(true);
    }
  });

  it("fewer rows than a SIMD block times a matrix past the cache: the definition to the bit", () => {
    const next = rng(5);
    // llsq's row times a tall b, ht's three rows times a wide one, and k < 4 (no four-row pass)
    for (const [n, k, m] of [[1, 4099, 128], [2, 4097, 129], [3, 4100, 130], [1, 7, 128], [3, 88, 3001], [3, 3, 90001]]) {
      const a = randomArray(next, 1 + n * k);
      const b = randomArray(next, 2 + k * m);
      const want = reference(a, 1, b, 2, n, k, m);
      expect(sameBits(product(gemm, a, 1, b, 2, n, k, m), want), `gemm ${n}×${k}×${m}`).toBe(true);
      expect(sameBits(product(jsGemm, a, 1, b, 2, n, k, m), want), `js ${n}×${k}×${m}`).toBe(true);
    }
  });

  it("fewRows (one to three rows, one pass over b): the definition to the bit on random shapes, offsets and special values", () => {
    const next = rng(7);
    const specials = [NaN, Infinity, -Infinity, 0, -0, 1e308, -1e-308, 1, 0.5];
    for (let t = 0; t < 400; t++) {
      const [n, k, m] = [randomInt(next, 1, 3), randomInt(next, 0, 13), randomInt(next, 1, 19)];
      const [ao, bo] = [randomInt(next, 0, 5), randomInt(next, 0, 5)];
      const special = t % 4 === 0;
      const draw = (length: number) =>
        special ? Float64Array.from({ length }, () => specials[randomInt(next, 0, specials.length - 1)]) : randomArray(next, length);
      const a = draw(ao + n * k);
      const b = draw(bo + k * m);
      const want = reference(a, ao, b, bo, n, k, m);
      expect(sameBits(product(fewRows, a, ao, b, bo, n, k, m), want), `fewRows ${n}×${k}×${m}`).toBe(true);
    }
  });

  it("a matrix times a column (m = 1, gemv): the definition to the bit, at offsets and on special values", () => {
    const next = rng(4);
    const specials = [NaN, Infinity, -Infinity, 0, -0, 1e308, -1e-308, 1];
    const asGemm: Kernel = (a, ao, b, bo, r, ro, n, k) => gemv(a, ao, b, bo, r, ro, n, k);
    for (let t = 0; t < 200; t++) {
      const [n, k] = [randomInt(next, 1, 23), randomInt(next, 0, 40)];
      const [ao, bo] = [randomInt(next, 0, 5), randomInt(next, 0, 5)];
      const special = t % 4 === 0;
      const fill = (len: number) => (special ? Float64Array.from({ length: len }, () => specials[randomInt(next, 0, specials.length - 1)]) : randomArray(next, len));
      const a = fill(ao + n * k);
      const b = fill(bo + k);
      const want = reference(a, ao, b, bo, n, k, 1);
      expect(sameBits(product(asGemm, a, ao, b, bo, n, k, 1), want), `gemv ${n}×${k}`).toBe(true);
      expect(sameBits(product(gemm, a, ao, b, bo, n, k, 1), want), `gemm ${n}×${k}×1`).toBe(true);
    }
  });

  it("agree on special values: NaN, infinities, signed zeros", () => {
    const specials = [NaN, Infinity, -Infinity, 0, -0, 1e308, -1e-308, 1];
    const next = rng(3);
    for (let t = 0; t < 50; t++) {
      const [n, k, m] = [randomInt(next, 1, 9), randomInt(next, 1, 9), randomInt(next, 1, 9)];
      const pick = () => Float64Array.from({ length: n * k }, () => specials[randomInt(next, 0, specials.length - 1)]);
      const a = pick();
      const b = Float64Array.from({ length: k * m }, () => specials[randomInt(next, 0, specials.length - 1)]);
      const want = reference(a, 0, b, 0, n, k, m);
      expect(sameBits(product(jsGemm, a, 0, b, 0, n, k, m), want)).toBe(true);
      expect(sameBits(product(simd, a, 0, b, 0, n, k, m), want)).toBe(true);
    }
  });

  it("rows of A ending in zeros (triangular, ragged, signed zeros) stop at their block's depth; the definition to the bit, B finite or not", () => {
    const next = rng(6);
    const specials = [NaN, Infinity, -Infinity, -0, 0];
    for (let t = 0; t < 200; t++) {
      const [n, k, m] = [randomInt(next, 1, 40), randomInt(next, 1, 40), randomInt(next, 1, 30)];
      const a = randomArray(next, n * k);
      // row i keeps its first `keep` entries (lower-triangular when keep = i + 1); the rest are ±0
      for (let i = 0; i < n; i++) {
        const keep = t % 2 === 0 ? Math.min(k, i + 1) : randomInt(next, 0, k);
        for (let p = keep; p < k; p++) a[i * k + p] = next() < 0.5 ? 0 : -0;
      }
      const b = randomArray(next, k * m);
      if (t % 3 === 0) b[randomInt(next, 0, k * m - 1)] = specials[randomInt(next, 0, specials.length - 1)];
      const want = reference(a, 0, b, 0, n, k, m);
      expect(sameBits(product(simd, a, 0, b, 0, n, k, m), want), `simd ${n}×${k}×${m}`).toBe(true);
      expect(sameBits(product(gemm, a, 0, b, 0, n, k, m), want), `gemm ${n}×${k}×${m}`).toBe(true);
    }
  });

  it("b wider than a panel (its columns taken in panels, every row of blocks per panel): the definition to the bit", () => {
    const next = rng(8);
    // several panels, the last one short, padded columns spilling into the next row; rows of A ending early
    for (const [n, k, m] of [[9, 2000, 70], [5, 3001, 45], [13, 1500, 131], [4, 4100, 17]]) {
      const m4 = Math.ceil(m / COLS) * COLS;
      expect(panelWidth(k, m4), `${n}×${k}×${m} in panels`).toBeLessThan(m4);
      const [ao, bo] = [randomInt(next, 0, 5), randomInt(next, 0, 5)];
      const a = randomArray(next, ao + n * k);
      for (let i = 0; i < n; i += 2) a.fill(i % 4 === 0 ? 0 : -0, ao + i * k + randomInt(next, 0, k), ao + (i + 1) * k);
      const b = randomArray(next, bo + k * m);
      expect(sameBits(product(simd, a, ao, b, bo, n, k, m), reference(a, ao, b, bo, n, k, m)), `simd ${n}×${k}×${m}`).toBe(true);
    }
  });

  it("steps of zeros and subnormals (a softmax's cotangent) skipped where they change no sum: the definition to the bit", () => {
    const next = rng(9);
    const tiny = () => (next() < 0.5 ? -1 : 1) * next() * 2 ** -1022 * (next() < 0.3 ? 2 ** -40 : 1);
    for (let t = 0; t < 200; t++) {
      // whole blocks half the time (no padding row or column whose sums stay zero, so every accumulator grows past the floor)
      const whole = t % 2 === 0;
      const k = randomInt(next, 1, 60);
      const [n, m] = whole ? [4 * randomInt(next, 1, 7), 4 * randomInt(next, 1, 5)] : [randomInt(next, 1, 30), randomInt(next, 1, 20)];
      const a = randomArray(next, n * k);
      // each row of blocks' columns: normal, all ±0, all zero or subnormal, or mixed (the first normal when whole); some rows
      // all tiny (sums subnormal)
      for (let blk = 0; blk * ROWS < n; blk++) {
        const allTiny = next() < 0.15;
        for (let p = 0; p < k; p++) {
          const kind = allTiny ? 2 : whole && p === 0 ? 0 : randomInt(next, 0, 3);
          for (let i = blk * ROWS; i < Math.min(n, (blk + 1) * ROWS); i++) {
            if (kind === 1) a[i * k + p] = next() < 0.5 ? 0 : -0;
            else if (kind === 2 || (kind === 3 && next() < 0.5)) a[i * k + p] = next() < 0.3 ? 0 : tiny();
          }
        }
      }
      const b = randomArray(next, k * m).map((x) => x * 2 ** randomInt(next, -3, 3));
      // b past the bound (subnormal terms computed), b tiny (sums stay small), b not finite (nothing skipped)
      if (t % 5 === 1) b[randomInt(next, 0, k * m - 1)] = 2 ** 70;
      if (t % 5 === 2) b.forEach((x, q) => (b[q] = x * 2 ** -1000));
      if (t % 5 === 3) b[randomInt(next, 0, k * m - 1)] = [NaN, Infinity, -Infinity][t % 3];
      const want = reference(a, 0, b, 0, n, k, m);
      expect(sameBits(product(simd, a, 0, b, 0, n, k, m), want), `simd ${n}×${k}×${m}`).toBe(true);
      expect(sameBits(product(gemm, a, 0, b, 0, n, k, m), want), `gemm ${n}×${k}×${m}`).toBe(true);
    }
  });

  it("the skipping kernel runs where a sample of a holds a zero or a subnormal and b is finite and within 2^64", () => {
    const b = new Float64Array(8).fill(1);
    const skips = (a: Float64Array, bb = b) => skipsSteps({ a, ao: 0, b: bb, bo: 0, n: 4, k: 2, m: 4 });
    expect(skips(new Float64Array(8).fill(1))).toBe(false);
    expect(skips(new Float64Array(8))).toBe(true);
    expect(skips(new Float64Array(8).fill(2 ** -1060))).toBe(true);
    expect(skips(new Float64Array(8), Float64Array.from([1, 1, 1, 2 ** 65, 1, 1, 1, 1]))).toBe(false);
    expect(skips(new Float64Array(8), Float64Array.from([1, 1, 1, NaN, 1, 1, 1, 1]))).toBe(false);
  });

  it("a block's depth: 1 + the last column where one of its rows is not zero; every column where B is not all finite", () => {
    // 6 rows of 5 (blocks of 4 rows): rows 0–3 end after columns 1, 3, 0, 2; rows 4–5 after 0 and none
    const a = Float64Array.from([1, 2, 0, 0, 0, 1, 1, 1, 1, -0, 1, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, -0, 0, 0, 0]);
    const depths = new Int32Array(2);
    blockDepths(depths, a, 0, new Float64Array(10).fill(1), 0, 6, 5, 2);
    expect([...depths]).toEqual([4, 0]);
    for (const bad of [Infinity, -Infinity, NaN]) {
      const b = new Float64Array(10).fill(1);
      b[9] = bad;
      blockDepths(depths, a, 0, b, 0, 6, 5, 2);
      expect([...depths]).toEqual([5, 5]);
    }
  });

  it("an empty inner dimension gives zeros", () => {
    const none = new Float64Array(0);
    expect(sameBits(product(jsGemm, none, 0, none, 0, 3, 0, 5), new Float64Array(15))).toBe(true);
    expect(sameBits(product(simd, none, 0, none, 0, 3, 0, 5), new Float64Array(15))).toBe(true);
  });
});

describe("matmul (the kernel of the primitive)", () => {
  /** [..batch, n, k] @ [..batch, k, m] by the definition, batch axes broadcast by index. */
  function batched(a: Float64Array, ad: number[], b: Float64Array, bd: number[], out: number[]): Float64Array {
    const [n, k, m] = [ad[ad.length - 2], ad[ad.length - 1], bd[bd.length - 1]];
    const batch = out.slice(0, -2);
    const r = new Float64Array(out.reduce((x, y) => x * y, 1));
    const count = batch.reduce((x, y) => x * y, 1);
    for (let o = 0; o < count; o++) {
      // the batch index, and each operand's block there (size-1 or missing axes repeat)
      let rest = o;
      const idx = batch.map(() => 0);
      for (let ax = batch.length - 1; ax >= 0; ax--) {
        idx[ax] = rest % batch[ax];
        rest = Math.floor(rest / batch[ax]);
      }
      const block = (d: number[]) => {
        const bd0 = d.slice(0, -2);
        let flat = 0;
        bd0.forEach((size, i) => (flat = flat * size + (size === 1 ? 0 : idx[i + batch.length - bd0.length])));
        return flat;
      };
      r.set(reference(a, block(ad) * n * k, b, block(bd) * k * m, n, k, m), o * n * m);
    }
    return r;
  }

  it("batches, broadcast batches, sizes across the SIMD threshold", () => {
    const next = rng(4);
    const cases: [number[], number[], number[]][] = [
      [[2, 5, 7], [2, 7, 3], [2, 5, 3]],
      [[3, 17, 33], [33, 18], [3, 17, 18]],
      [[2, 1, 9, 40], [3, 40, 13], [2, 3, 9, 13]],
      [[1, 21, 64], [4, 64, 6], [4, 21, 6]],
      [[64, 64], [64, 128], [64, 128]],
      // one B for every batch (one product of the stacked rows): batch axes of A alone, or against B's ones
      [[5, 8, 8], [8, 300], [5, 8, 300]],
      [[2, 3, 4, 6], [1, 6, 50], [2, 3, 4, 50]],
      [[1, 3, 4, 6], [1, 1, 6, 50], [1, 3, 4, 50]],
    ];
    for (const [ad, bd, out] of cases) {
      const a = randomArray(next, ad.reduce((x, y) => x * y, 1));
      const b = randomArray(next, bd.reduce((x, y) => x * y, 1));
      expect(sameBits(matmul(a, ad, b, bd, out), batched(a, ad, b, bd, out)), `${ad} @ ${bd}`).toBe(true);
    }
  });

  it("transposed layouts (the reverse rule's Aᵀ·C̄ and C̄·Bᵀ) by the definition read transposed", () => {
    const next = rng(5);
    for (let t = 0; t < 40; t++) {
      const [n, k, m] = [randomInt(next, 1, 70), randomInt(next, 1, 70), randomInt(next, 1, 70)];
      // Aᵀ·B with A stored k×n
      const at = randomArray(next, k * n);
      const b = randomArray(next, k * m);
      const a = new Float64Array(n * k);
      for (let i = 0; i < n; i++) for (let p = 0; p < k; p++) a[i * k + p] = at[p * n + i];
      expect(sameBits(matmul(transpose(at, [k, n], [1, 0]), [n, k], b, [k, m], [n, m]), reference(a, 0, b, 0, n, k, m))).toBe(true);
      // A·Bᵀ with B stored m×k
      const bt = randomArray(next, m * k);
      const b2 = new Float64Array(k * m);
      for (let p = 0; p < k; p++) for (let j = 0; j < m; j++) b2[p * m + j] = bt[j * k + p];
      expect(sameBits(matmul(a, [n, k], transpose(bt, [m, k], [1, 0]), [k, m], [n, m]), reference(a, 0, b2, 0, n, k, m))).toBe(true);
    }
  });
});
