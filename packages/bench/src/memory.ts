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
 * 3. The same for tensors: 10^3 calls of W2's `grad`. Here the pool of tensor buffers
 *    is counted (it is bounded, and after the first call it should stay the size one
 *    call needs); so is what one call keeps of its traced tensors.
 */
import { grad, pooledBytes, traceOf } from "@wengert/core";
import type { MemoryResult, Retention } from "./results.js";
import { chainW, X0 } from "./workloads/w5-chain.js";
import { rosenbrockInput, rosenbrockW } from "./workloads/w1-rosenbrock.js";
import { wengertW2, wengertW2Loss } from "./workloads/w2-mlp.js";

export interface MemoryOptions {
  readonly steps?: number;
  readonly calls?: number;
  readonly gc: () => void;
  readonly gcKind: MemoryResult["gc"];
}

/**
 * The heap (after gc, by `measure`) every tenth of `calls` calls of `call`, after a
 * warm-up (V8's compiled code and inline caches settle in the first thousands of calls);
 * flat when the growth over all calls is below 1% of what keeping each call's trace
 * (`traceBytes`) would cost.
 */
function retention(fn: string, call: () => void, calls: number, warmup: number, traceBytes: number, measure: () => number): Retention {
  for (let i = 0; i < warmup; i++) call();
  const base = measure();
  const heap: { calls: number; bytes: number }[] = [{ calls: 0, bytes: 0 }];
  const every = Math.max(1, Math.floor(calls / 10));
  for (let i = 1; i <= calls; i++) {
    call();
    if (i % every === 0) heap.push({ calls: i, bytes: measure() - base });
  }
  const growthBytes = heap[heap.length - 1].bytes;
  return {
    calls,
    fn,
    traceBytesEstimate: traceBytes,
    heap,
    growthBytes,
    bytesPerCall: growthBytes / calls,
    flat: growthBytes < 0.01 * calls * Math.max(traceBytes, 1000),
  };
}

/** What `make()` keeps alive, per call: twenty results held at once. */
function bytesKept(make: () => unknown, measure: () => number): number {
  const kept: unknown[] = [make()];
  const before = measure();
  for (let i = 0; i < 20; i++) kept.push(make());
  const bytes = Math.max(0, measure() - before) / 20;
  kept.length = 0;
  return bytes;
}

export function memoryProbe({ steps = 1_000_000, calls = 10_000, gc, gcKind }: MemoryOptions): MemoryResult {
  const held = (): number => {
    gc();
    gc();
    const m = process.memoryUsage();
    return m.heapUsed + m.arrayBuffers;
  };
  // Bytes held, not counting the pool of reusable tape buffers.
  const measure = (): number => held() - pooledBytes();

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
  const scalar = retention(
    "grad(rosenbrockW, x) with n = 100 (W1)",
    () => grad(rosenbrockW, x),
    calls,
    2000,
    bytesKept(() => traceOf(rosenbrockW, x), measure),
    measure,
  );

  // 3. Many calls on tensors, the tensor pool counted.
  const w2 = wengertW2();
  const { loss, params } = wengertW2Loss();
  const tensors = retention("W2's grad (tensors; the pool of tensor buffers counted)", w2, calls / 10, 200, bytesKept(() => traceOf(loss, params), held), held);
  return {
    trace: { steps, instructions, primitives, bytes, bytesPerInstruction: bytes / instructions, pooledBytes: pooled, ms },
    retention: scalar,
    tensorRetention: tensors,
    gc: gcKind,
  };
}
