/**
 * @file Memory probe: what a recorded instruction costs, and that nothing outlives `rd`.
 *
 * 1. Bytes per recorded scalar instruction: the growth of the V8 heap plus array
 *    buffers (the tape's typed columns) while the trace term of a W5 chain of 10^6
 *    steps is alive, divided by its number of instructions; after a full gc either side.
 *    Tape columns move between the trace and the pool of buffers kept for the next call
 *    (trace/columns.ts): a column taken from the pool is the trace's, an outgrown one
 *    given back is not, so the pool's change is subtracted and reported apart.
 * 2. Retention: the same measure after every tenth of 10^4 calls of `grad` on W1
 *    (n = 100). If each call kept its trace, the heap would grow by one trace per call;
 *    it should stay flat.
 */
import { grad, pooledBytes, traceOf } from "@wengert/core";
import type { MemoryResult } from "./results.js";
import { chainW, X0 } from "./workloads/w5-chain.js";
import { rosenbrockInput, rosenbrockW } from "./workloads/w1-rosenbrock.js";

export interface MemoryOptions {
  readonly steps?: number;
  readonly calls?: number;
  readonly gc: () => void;
  readonly gcKind: MemoryResult["gc"];
}

export function memoryProbe({ steps = 1_000_000, calls = 10_000, gc, gcKind }: MemoryOptions): MemoryResult {
  // Bytes held, not counting the pool of reusable tape buffers.
  const measure = (): number => {
    gc();
    gc();
    const m = process.memoryUsage();
    return m.heapUsed + m.arrayBuffers - pooledBytes();
  };

  // 1. One long trace.
  const f = chainW(steps);
  const before = measure();
  const poolBefore = pooledBytes();
  const t0 = performance.now();
  const term = traceOf(f, X0);
  const ms = performance.now() - t0;
  const after = measure();
  const instructions = term.length;
  const primitives = term.primitives;
  const bytes = after - before;
  const pooled = pooledBytes() - poolBefore;

  // 2. Many calls.
  const x = Array.from(rosenbrockInput(100));
  const kept: unknown[] = [traceOf(rosenbrockW, x)];
  const keptBefore = measure();
  for (let i = 0; i < 20; i++) kept.push(traceOf(rosenbrockW, x));
  const traceBytesEstimate = Math.max(0, measure() - keptBefore) / 20;
  kept.length = 0;
  // Warm up: V8's compiled code and inline caches settle in the first thousands of calls.
  for (let i = 0; i < 2000; i++) grad(rosenbrockW, x);
  const base = measure();
  const heap: { calls: number; bytes: number }[] = [{ calls: 0, bytes: 0 }];
  const every = Math.max(1, Math.floor(calls / 10));
  for (let i = 1; i <= calls; i++) {
    grad(rosenbrockW, x);
    if (i % every === 0) heap.push({ calls: i, bytes: measure() - base });
  }
  const growthBytes = heap[heap.length - 1].bytes;
  const bytesPerCall = growthBytes / calls;
  return {
    trace: { steps, instructions, primitives, bytes, bytesPerInstruction: bytes / instructions, pooledBytes: pooled, ms },
    retention: {
      calls,
      fn: "grad(rosenbrockW, x) with n = 100 (W1)",
      traceBytesEstimate,
      heap,
      growthBytes,
      bytesPerCall,
      // Flat: the growth over all calls is below 1% of what keeping each trace would cost.
      flat: growthBytes < 0.01 * calls * Math.max(traceBytesEstimate, 1000),
    },
    gc: gcKind,
  };
}
