/**
 * GradBench ht's objective, jitted once per prepared input, against the traced residuals
 * it replaces: the same numbers bit for bit, call after call on one prepared input, over
 * random θ on both sides of the global rotation's threshold (a guard of the trace).
 */
import { describe, expect, it } from "vitest";
import { ht, htObjective, htObjectiveTraced, prepareHtObjective } from "../src/gradbench/modules/ht.js";
import { warmUp } from "../src/gradbench/protocol.js";
import { htInput } from "../src/gradbench/inputs.js";
import { firstDifference } from "./helpers/bits.js";

describe("ht objective: jitted = traced, bit for bit", () => {
  const cases = [
    { name: "simple", complicated: false, mirrored: false },
    { name: "complicated", complicated: true, mirrored: false },
    { name: "simple, mirrored", complicated: false, mirrored: true },
    { name: "complicated, mirrored", complicated: true, mirrored: true },
  ];
  for (const [k, { name, complicated, mirrored }] of cases.entries()) {
    it(name, () => {
      const p = prepareHtObjective(htInput(40, 30, complicated, 101 + k, mirrored));
      let seed = 7 + k;
      const random = () => ((seed = (seed * 16807) % 2147483647) / 2147483647) * 2 - 1;
      for (let call = 0; call < 12; call++) {
        for (let i = 0; i < 26; i++) p.theta[i] = random();
        // every third θ: a global rotation below the angle-axis threshold (the other branch)
        if (call % 3 === 2) for (let i = 0; i < 3; i++) p.theta[i] = 1e-5 * random();
        const jitted = htObjective(p).slice();
        expect(firstDifference(jitted, htObjectiveTraced(p))).toBe(-1);
      }
      // both branches traced once, the other calls replayed
      expect(p.residuals.stats.traces).toBe(2);
      expect(p.residuals.stats.replays).toBe(10);
    });
  }

  it("writes the same buffer each call: the last call's residuals", () => {
    const p = prepareHtObjective(htInput(8, 12, true, 5));
    const first = htObjective(p);
    const firstValues = first.slice();
    p.theta[7] += 0.25;
    expect(htObjective(p)).toBe(first);
    expect(firstDifference(first, firstValues)).not.toBe(-1);
    expect(firstDifference(first, htObjectiveTraced(p))).toBe(-1);
  });
});

it("define's warm-up runs both functions on its synthetic hands", () => {
  const warm = warmUp(ht);
  expect(warm?.success).toBe(true);
});
