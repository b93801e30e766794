/**
 * @file The measurements of the scan section (scan-bench.ts): what each memory row runs,
 * and what a probe reports. The loop written out for GradBench's ode is here too, beside
 * the module's scan (gradbench/modules/ode.ts), to compare them.
 */
import { grad, hvp, index, shapeOf, type Operand, type Scalar, type TensorArg } from "@wengert/core";
import { chain, chainDerivative, chainW, X0 } from "./workloads/w5-chain.js";
import { chainScan } from "./workloads/w5-scan.js";
import { odeGrad, odeLoss, odeW, THETA } from "./workloads/w6-ode.js";
import { odeScan } from "./workloads/w6-scan.js";
import { odeStep, solve } from "./gradbench/modules/ode.js";
import { odeInput } from "./gradbench/inputs.js";

/** GradBench's ode as the module wrote it before scan: the loop written out, every step traced. */
export function solveWrittenOut(x: TensorArg, s: number): TensorArg {
  const step = odeStep(x, s);
  let y: Operand = new Float64Array(shapeOf(x)[0]);
  for (let i = 0; i < s; i++) y = step(y);
  return y as TensorArg;
}

export interface MemoryProbe {
  readonly row: string;
  /** Median time of the calls (ms). */
  readonly ms: number;
  readonly calls: number;
  /** Peak RSS of the process (the kernel's count) above its RSS before the first call (bytes). */
  readonly peakRss: number;
  /** Growth of V8's committed heap over the calls (it shrinks lazily: near the heap's peak). */
  readonly heapCommitted: number;
  /** Array buffers held after the last call (the pool of tape columns included). */
  readonly arrayBuffers: number;
}

export interface LinearityProbe {
  readonly heap: "fresh" | "loaded";
  /** Live heap held while measuring (bytes, after gc). */
  readonly liveHeap: number;
  /** Rounds measured (each times every size, written out and as a scan, once). */
  readonly rounds: number;
  /** Per N, for the chain written out and as a scan: the median wall time and the median CPU time of the process (ms). */
  readonly rows: readonly { readonly n: number; readonly loopMs: number; readonly scanMs: number; readonly loopCpuMs: number; readonly scanCpuMs: number }[];
  /**
   * Per N whose half was measured too: the median over rounds of time(N)/time(N/2) within the
   * round (paired: both in the same round, so a load that drifts between rounds cancels), by CPU time.
   */
  readonly doublings: readonly { readonly n: number; readonly loop: number; readonly scan: number }[];
  /** Full collections (mark-compacts) that began inside the timed calls of the counted rounds. */
  readonly fullGcs: number;
}

const ODE_N = 100_000;
const ODE_S = 100;

/** What each memory row runs: a call, and how many. */
export const MEMORY_ROWS: Readonly<Record<string, { readonly what: string; readonly call: () => () => unknown; readonly calls: number }>> = {
  "w5-primal": { what: "W5 N=10⁶ primal (JS)", call: () => () => chain(X0, 1e6), calls: 5 },
  "w5-hand": { what: "W5 N=10⁶ hand-written", call: () => () => chainDerivative(X0, 1e6), calls: 5 },
  "w5-scan": { what: "W5 N=10⁶ grad, scan", call: () => () => grad(chainScan(1e6), X0), calls: 5 },
  "w5-loop": { what: "W5 N=10⁶ grad, loop written out", call: () => () => grad(chainW(1e6), X0), calls: 3 },
  // a nested derivative: the sweep emitted as a scan of its rules (docs/scan.md), against the loop's hvp sweep
  "w5-hvp-scan": { what: "W5 N=10⁶ hvp, scan", call: () => () => hvp(chainScan(1e6), X0, 1), calls: 3 },
  "w5-hvp-loop": { what: "W5 N=10⁶ hvp, loop written out", call: () => () => hvp(chainW(1e6), X0, 1), calls: 3 },
  "w6-primal": { what: "W6 primal (JS)", call: () => () => odeLoss(Array.from(THETA)), calls: 200 },
  "w6-hand": { what: "W6 hand-written", call: () => () => odeGrad(Array.from(THETA)), calls: 200 },
  "w6-scan": { what: "W6 grad, scan", call: () => () => grad(odeScan(), Array.from(THETA)), calls: 100 },
  "w6-loop": { what: "W6 grad, loop written out", call: () => () => grad(odeW(), Array.from(THETA)), calls: 30 },
  "ode-primal": {
    what: `GradBench ode n=${ODE_N}, s=${ODE_S} primal`,
    call: () => {
      const x = Float64Array.from(odeInput(ODE_N, ODE_S).x);
      return () => solve(x, ODE_S);
    },
    calls: 3,
  },
  "ode-scan": {
    what: `GradBench ode n=${ODE_N}, s=${ODE_S} gradient, scan`,
    call: () => {
      const x = Float64Array.from(odeInput(ODE_N, ODE_S).x);
      return () => grad((v): Scalar => index(solve(v, ODE_S), [ODE_N - 1]) as Scalar, x);
    },
    calls: 3,
  },
  "ode10k-primal": {
    what: `GradBench ode n=10⁴, s=${ODE_S} primal`,
    call: () => {
      const x = Float64Array.from(odeInput(10_000, ODE_S).x);
      return () => solve(x, ODE_S);
    },
    calls: 3,
  },
  "ode10k-scan": {
    what: `GradBench ode n=10⁴, s=${ODE_S} gradient, scan`,
    call: () => {
      const x = Float64Array.from(odeInput(10_000, ODE_S).x);
      return () => grad((v): Scalar => index(solve(v, ODE_S), [9_999]) as Scalar, x);
    },
    calls: 3,
  },
  "ode10k-loop": {
    what: `GradBench ode n=10⁴, s=${ODE_S} gradient, loop written out`,
    call: () => {
      const x = Float64Array.from(odeInput(10_000, ODE_S).x);
      return () => grad((v): Scalar => index(solveWrittenOut(v, ODE_S), [9_999]) as Scalar, x);
    },
    calls: 2,
  },
};

