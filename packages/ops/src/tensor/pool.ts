/**
 * @file A pool of Float64Array buffers, by length, for the results of tensor kernels.
 *
 * A training loop computes the same shapes call after call; handing intermediate
 * buffers back when a derivative has been computed (see `release` in core's rd) saves
 * allocating and collecting them again. Only buffers nobody else can see are released:
 * the caller decides that. Bounded, so the pool never holds more than a few megabytes
 * beyond what one call needs.
 */
const free = new Map<number, Float64Array[]>();
let pooledBytes = 0;
const MAX_BYTES = 256 * 1024 * 1024;

/** Counters for tests and the bench (allocated fresh, taken from the pool). */
export const poolStats = { fresh: 0, reused: 0 };

/** A buffer of length n: zeroed, unless `dirty` (the caller writes every element). */
export function alloc(n: number, dirty = false): Float64Array {
  const list = free.get(n);
  const b = list?.pop();
  if (b === undefined) {
    poolStats.fresh++;
    return new Float64Array(n);
  }
  pooledBytes -= b.byteLength;
  poolStats.reused++;
  return dirty ? b : b.fill(0);
}

/** Give a buffer back; the caller guarantees nothing refers to it any more. */
export function release(b: Float64Array): void {
  if (b.length < 64 || pooledBytes + b.byteLength > MAX_BYTES || b.byteOffset !== 0 || b.length !== b.buffer.byteLength / 8) return;
  let list = free.get(b.length);
  if (list === undefined) free.set(b.length, (list = []));
  list.push(b);
  pooledBytes += b.byteLength;
}
