/**
 * The harness on a fake workload (no peer library loaded): statuses for a wrong
 * answer, a library that did not load, an unsupported candidate, a peer that is too
 * slow at its reduced sizes and one that throws there; medians and ratios for the rest;
 * a row of microseconds timed again in paired rounds (paired.ts), its slow candidates not.
 */
import { describe, expect, it } from "vitest";
import { runWorkload, type Settings } from "../src/harness.js";
import { pairedRatio, pairedRounds } from "../src/paired.js";
import type { Jax, Workload } from "../src/types.js";

const settings: Settings = {
  rounds: 2,
  maxTime: 0.02,
  minSamples: 2,
  minTime: 0.002,
  warmup: 0.01,
  warmupCalls: 3,
  maxCall: 0.05,
  maxFirstCall: 0.5,
  slowCall: 0.02,
  shortRow: 0.1,
  pairedRounds: 5,
  pairedBlock: 1,
  pairedMax: 1,
};

const busy = (ms: number) => {
  const t = performance.now();
  while (performance.now() - t < ms);
};

describe("runWorkload", () => {
  it("checks before timing, reports every candidate, and computes medians and ratios", async () => {
    const x = [1, 2, 3];
    const w: Workload = {
      id: "fake",
      family: "W1",
      title: "fake",
      what: "gradient",
      size: 1000,
      sizeName: "n",
      primal: () => x[0] * x[0] + x[1] * x[2],
      hand: () => [2 * x[0], x[2], x[1]],
      wengert: () => [2 * x[0], x[2], x[1] + 1e-3],
      peers: [
        {
          label: "",
          tfjs: { unsupported: "cannot" },
          // Cost grows with the size: 0.5 ms per 10 units → 50 ms at full size, over maxCall.
          jaxEager: (_lib, n) => () => (busy(n / 20), [2, 3, 2]),
          jaxJit: { unsupported: "n/a" },
          probeSizes: [10, 100],
        },
        {
          label: "other",
          jaxEager: () => {
            throw new RangeError("Maximum call stack size exceeded");
          },
          jaxJit: () => () => Float32Array.of(2, 3, 2.0001),
          probeSizes: [10],
        },
      ],
    };
    const lines: string[] = [];
    const r = await runWorkload(w, { tfBackends: [{ name: "cpu" }], tfError: "TF.js did not load: nope", jax: {} as Jax }, settings, (l) => lines.push(l));
    const by = Object.fromEntries(r.candidates.map((c) => [c.id, c]));
    expect(by.primal.status).toBe("ok");
    expect(by.hand.status).toBe("ok");
    expect(by.hand.ratioToHand).toBe(1);
    expect(by.primal.medianMs).toBeGreaterThan(0);
    expect(by.primal.samples).toBeGreaterThanOrEqual(4);
    expect(by.wengert.status).toBe("wrong answer");
    expect(by.wengert.error).toBeCloseTo(1e-3 / 3, 8);
    expect(by.wengert.medianMs).toBeUndefined();
    expect(by["tfjs-cpu"].status).toBe("unsupported");
    expect(by["tfjs-cpu"].note).toBe("cannot");
    expect(by["jax-eager"].status).toBe("skipped");
    expect(by["jax-eager"].note).toMatch(/^too slow: > 50 ms per call/);
    expect(by["jax-jit"].status).toBe("unsupported");
    expect(by["tfjs-cpu/other"].status).toBe("unsupported");
    expect(by["tfjs-cpu/other"].note).toBe("not written for this workload");
    expect(by["jax-eager/other"].status).toBe("failed");
    expect(by["jax-eager/other"].note).toBe("RangeError: Maximum call stack size exceeded (at n=10, a reduced size tried first; not tried at n=1000)");
    expect(by["jax-jit/other"].status).toBe("ok"); // float32 tolerance
    expect(by["jax-jit/other"].ratioToHand).toBeGreaterThan(0);
    expect(r.variants.map((v) => v.label)).toEqual(["", "other"]);
  });
  it("times a row of microseconds again in paired rounds: its candidates under pairedMax, not the slower ones; in a longer row its fast ones", async () => {
    const w: Workload = {
      id: "fake3",
      family: "W4",
      title: "fake3",
      what: "gradient",
      size: 10,
      sizeName: "n",
      primal: () => 1,
      hand: () => [1, 2],
      wengert: () => (busy(1.5), [1, 2]),
      wengertCompiled: () => [1, 2],
      peers: [],
    };
    const r = await runWorkload(w, { tfBackends: [] }, { ...settings, maxCall: 1, slowCall: 1 }, () => {});
    const by = Object.fromEntries(r.candidates.map((c) => [c.id, c]));
    expect(r.paired).toEqual({ rounds: 5, blockMs: 1, maxMs: 1, rowMs: 0.1, short: true });
    for (const id of ["primal", "hand", "wengert-compiled"]) {
      expect(by[id].timing).toBe("paired");
      expect(by[id].samples).toBe(5);
    }
    expect(by.hand.ratioToHand).toBe(1);
    expect(by.primal.ratioToPrimal).toBe(1);
    // 1.5 ms a call: benchmark.js's median, over benchmark.js's hand-written one
    expect(by.wengert.timing).toBeUndefined();
    expect(by.wengert.medianMs).toBeGreaterThan(1.5);
    // a row whose hand-written call is long: its fast candidates paired among themselves, the slow one not
    const long = await runWorkload({ ...w, hand: () => (busy(0.2), [1, 2]) }, { tfBackends: [] }, { ...settings, maxCall: 1, slowCall: 1 }, () => {});
    expect(long.paired).toEqual({ rounds: 5, blockMs: 1, maxMs: 1, rowMs: 0.1, short: false });
    const longBy = Object.fromEntries(long.candidates.map((c) => [c.id, c]));
    for (const id of ["primal", "hand", "wengert-compiled"]) expect(longBy[id].timing).toBe("paired");
    expect(longBy.wengert.timing).toBeUndefined();
    // and a row with one fast candidate is not paired
    const slowW = { ...w, hand: () => (busy(1.5), [1, 2]), wengertCompiled: () => (busy(1.5), [1, 2]) };
    const slow = await runWorkload(slowW, { tfBackends: [] }, { ...settings, maxCall: 1, slowCall: 1 }, () => {});
    expect(slow.paired).toBeUndefined();
    expect(slow.candidates.every((c) => c.timing === undefined)).toBe(true);
  });

  it("pairs blocks of one round: each row's calls per block from its estimate, ratios the median of per-round ratios", async () => {
    const calls = [0, 0];
    const times = await pairedRounds(
      [
        { run: () => calls[0]++, estimateMs: 0.5 },
        { run: () => calls[1]++, estimateMs: 5 },
      ],
      3,
      2,
    );
    // 2 ms blocks: 4 calls of the first row a round, 1 (at least one) of the second
    expect(calls).toEqual([12, 3]);
    expect(times.perRound.map((r) => r.length)).toEqual([3, 3]);
    expect(pairedRatio({ perRound: [[2, 4, 6], [1, 1, 2]] }, 0, 1)).toBe(3);
  });

  it("reports a library that did not load as a failure of its columns", async () => {
    const w: Workload = {
      id: "fake2",
      family: "W5",
      title: "fake2",
      what: "derivative",
      size: 1,
      sizeName: "N",
      primal: () => 1,
      hand: () => [1],
      wengert: { unsupported: "not yet" },
      peers: [{ label: "", tfjs: () => () => [1], jaxEager: () => () => [1], jaxJit: () => () => [1] }],
    };
    const r = await runWorkload(w, { tfBackends: [], tfError: "TF.js did not load: x", jaxError: "jax-js did not load: y" }, settings, () => {});
    const by = Object.fromEntries(r.candidates.map((c) => [c.id, c]));
    expect(by.wengert.status).toBe("unsupported");
    expect(by["tfjs-wasm"].status).toBe("failed");
    expect(by["tfjs-wasm"].note).toBe("TF.js did not load: x");
    expect(by["jax-jit"].note).toBe("jax-js did not load: y");
  });
});
