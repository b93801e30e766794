/**
 * The harness on a fake workload (no peer library loaded): statuses for a wrong
 * answer, a library that did not load, an unsupported candidate, a peer that is too
 * slow at its reduced sizes and one that throws there; medians and ratios for the rest.
 */
import { describe, expect, it } from "vitest";
import { runWorkload, type Settings } from "../src/harness.js";
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
