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
/**
 * The buffers `alloc` made. Only they are taken back, so the pool never holds more than
 * the most that were out at once: a buffer made elsewhere (a copy, a kernel's own
 * result) and handed to `release` on every call would otherwise add to it every call.
 */
// the arrays, not their ArrayBuffers: reading `.buffer` of a small typed array moves its
// data off the heap, a cost per kernel result; a view of an issued array is not issued
const issued = new WeakSet<Float64Array>();
const MAX_BYTES = 256 * 1024 * 1024;

/**
 * Counters for tests and the bench: buffers allocated fresh, buffers taken from the
 * pool, and the bytes the pool holds now. A caller that releases only what it took from
 * the pool keeps `bytes` flat from one call to the next.
 */
export const poolStats = { fresh: 0, reused: 0, bytes: 0 };

/** A buffer of length n: zeroed, unless `dirty` (the caller writes every element). */
export function alloc(n: number, dirty = false): Float64Array {
  const list = free.get(n);
  const b = list?.pop();
  if (b === undefined) {
    poolStats.fresh++;
    const made = new Float64Array(n);
    issued.add(made);
    return made;
  }
  poolStats.bytes -= 8 * n;
  poolStats.reused++;
  return dirty ? b : b.fill(0);
}

/** Give a buffer back; the caller guarantees nothing refers to it any more. One `alloc` did not make is left to the collector. */
export function release(b: Float64Array): void {
  const bytes = 8 * b.length;
  if (poolStats.bytes + bytes > MAX_BYTES || !issued.has(b)) return;
  let list = free.get(b.length);
  if (list === undefined) free.set(b.length, (list = []));
  list.push(b);
  poolStats.bytes += bytes;
}

/** A copy of `x` in a buffer from the pool, so that whoever releases it later gives back what it took. */
export function pooledCopy(x: Float64Array): Float64Array {
  const r = alloc(x.length, true);
  r.set(x);
  return r;
}
