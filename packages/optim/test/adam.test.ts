/**
 * Adam's updates equal optax's formula to the last bit. The literals are printed by
 * test/reference/adam_optax_formula.py, which computes optax's scale_by_adam and
 * scale_by_learning_rate operation for operation in Python floats (IEEE double, C's pow
 * and sqrt): an independent computation of the same formula, written out there:
 *
 *   mu = (1 − b1)·g + b1·mu,   nu = (1 − b2)·g² + b2·nu,   t = t + 1,
 *   u  = (mu/(1 − b1^t)) / (sqrt(nu/(1 − b2^t) + eps_root) + eps),   update = (−lr)·u.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { adam, adamw, applyUpdates, scaleByAdam, type AdamState } from "../src/index.js";

const GRADS = [
  [0.1, -2.5, 1e-3, 100.0, 0.0],
  [0.3, -2.0, -1e-3, 50.0, 1e-9],
  [-0.2, 1.5, 2e-3, 25.0, -3.0],
];
const PARAMS = [0.5, -1.25, 3.0, 1e-4, 0.0];

const EXPECTED = {
  default: [
    {
      updates: [-0.00099999990000001, 0.000999999996, -0.000999990000099999, -0.0009999999999000002, -0.0],
      params: [0.4990000001, -1.249000000004, 2.9990000099999, -0.0008999999999000001, 0.0],
    },
    {
      updates: [-0.000917781077944091, 0.000988125799758018, 5.263105263684169e-5, -0.0009321796386934723, -4.915493116144774e-5],
      params: [0.4980822190220559, -1.248011874204242, 2.999052641052537, -0.0018321796385934726, -4.915493116144774e-5],
    },
    {
      updates: [-0.0002579037931579696, 0.0004203671948309403, -0.0004982386217511988, -0.0008427016618330563, 0.0006388135955205233],
      params: [0.4978243152288979, -1.2475915070094112, 2.998554402430786, -0.0026748813004265288, 0.0005896586643590755],
    },
  ],
  epsRoot: [
    {
      updates: [-0.04999949975500495, 0.049999979999608, -0.04994755512954531, -0.04999999949999976, -0.0],
      params: [0.45000050024499505, -1.200000020000392, 2.9500524448704546, -0.04989999949999976, 0.0],
    },
    {
      updates: [-0.047111068157142534, 0.04910774883445809, 0.005549728347727256, -0.045746359824805446, -2.5252525194844753e-6],
      params: [0.4028894320878525, -1.150892271165934, 2.955602173218182, -0.0956463593248052, -2.5252525194844753e-6],
    },
    {
      updates: [-0.009854721565806725, 0.01709361204102323, -0.0265751499882353, -0.04010917507845924, 0.03531550852744016],
      params: [0.39303471052204575, -1.1337986591249107, 2.9290270232299465, -0.13575553440326443, 0.035312983274920676],
    },
  ],
};

/** Each number the same double as expected (Object.is: −0 is not 0). */
function sameBits(actual: readonly number[], expected: readonly number[]): void {
  expect(actual.length).toBe(expected.length);
  actual.forEach((v, i) => expect(Object.is(v, expected[i]), `component ${i}: ${v} (bits ${bits(v)}) vs ${expected[i]} (bits ${bits(expected[i])})`).toBe(true));
}
const bits = (v: number) => new BigUint64Array(new Float64Array([v]).buffer)[0].toString(16);

describe("Adam, bit for bit with optax's formula", () => {
  it.each([
    ["default", adam(1e-3)],
    ["epsRoot", adam(0.05, { b1: 0.8, b2: 0.99, eps: 1e-6, epsRoot: 1e-10 })],
  ] as const)("the first three steps (%s)", (name, optimizer) => {
    let params = PARAMS;
    let state = optimizer.init(params);
    GRADS.forEach((g, step) => {
      const [updates, next] = optimizer.update(g, state, params);
      sameBits(updates, EXPECTED[name][step].updates);
      params = applyUpdates(params, updates);
      sameBits(params, EXPECTED[name][step].params);
      state = next;
    });
  });

  it("the state counts from 1 and keeps both moments, shaped like the parameters; nothing is mutated", () => {
    const t = scaleByAdam();
    const p = { w: new Float64Array([1, 2]), s: 3 };
    const s0 = t.init(p);
    const g = { w: new Float64Array([0.5, -0.5]), s: 1 };
    const [, s1] = t.update(g, s0, p);
    expect(s1.count).toBe(1);
    expect(s0).toEqual({ count: 0, mu: { w: new Float64Array(2), s: 0 }, nu: { w: new Float64Array(2), s: 0 } });
    expect(Array.from((s1.mu as typeof p).w)).toEqual([(1 - 0.9) * 0.5, (1 - 0.9) * -0.5]);
    expect(Array.from(g.w)).toEqual([0.5, -0.5]);
  });

  it("property: any steps, any hyperparameters, the formula to the last bit", () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.double({ min: -1e3, max: 1e3, noNaN: true }), { minLength: 3, maxLength: 3 }), { minLength: 1, maxLength: 6 }),
        fc.double({ min: 0, max: 0.999, noNaN: true }),
        fc.double({ min: 0, max: 0.9999, noNaN: true }),
        fc.double({ min: 1e-12, max: 1e-2, noNaN: true }),
        (grads, b1, b2, eps) => {
          const t = scaleByAdam({ b1, b2, eps });
          let state: AdamState = t.init([0, 0, 0]);
          let mu = [0, 0, 0];
          let nu = [0, 0, 0];
          grads.forEach((g, k) => {
            const [u, next] = t.update(g, state);
            state = next;
            mu = g.map((gi, i) => (1 - b1) * gi + b1 * mu[i]);
            nu = g.map((gi, i) => (1 - b2) * gi ** 2 + b2 * nu[i]);
            const c1 = 1 - b1 ** (k + 1);
            const c2 = 1 - b2 ** (k + 1);
            sameBits(u, mu.map((m, i) => m / c1 / (Math.sqrt(nu[i] / c2 + 0) + eps)));
          });
        },
      ),
    );
  });

  it("AdamW adds λ·p before the learning rate (optax.adamw): u = −lr (adam's u + λ p)", () => {
    const p = [2, -4];
    const g = [0.5, 0.25];
    const [u] = adamw(0.1, { weightDecay: 0.01 }).update(g, adamw(0.1, { weightDecay: 0.01 }).init(p), p);
    const [a] = adam(1).update(g, adam(1).init(p), p); // −1 · adam's u
    sameBits(u, a.map((v, i) => -0.1 * (-v + 0.01 * p[i])));
    expect(() => adamw(0.1).update(g, adamw(0.1).init(p))).toThrow(/addDecayedWeights: update needs the parameters/);
  });

  it("NAdam (nesterov) as optax: mû = b1·mu/(1 − b1^{t+1}) + (1 − b1)·g/(1 − b1^t)", () => {
    const t = scaleByAdam({ nesterov: true });
    const [u] = t.update([2], t.init([0]));
    const mu = 0.09999999999999998 * 2;
    const muHat = 0.9 * (mu / (1 - 0.9 ** 2)) + (1 - 0.9) * (2 / (1 - 0.9));
    const nuHat = ((1 - 0.999) * 4) / (1 - 0.999);
    sameBits(u, [muHat / (Math.sqrt(nuHat) + 1e-8)]);
  });
});
