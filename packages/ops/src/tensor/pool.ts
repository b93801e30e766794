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
 * How many buffers of each length `alloc` made. The pool keeps no more of a length than
 * that, so it never holds more than the most that were out at once: a buffer made
 * elsewhere (a copy, a kernel's own result) and handed to `release` on every call would
 * otherwise add to it every call. (Counted by length, not by identity: a WeakSet of the
 * buffers alloc made would cost a weak reference per buffer, and a Jacobian of a
 * recurrent model makes a buffer per operation of every pullback.)
 */
const made = new Map<number, number>();
const MAX_BYTES = 256 * 1024 * 1024;
/** Arrays up to this length live in V8's heap: reading their `.buffer` would move them out of it. */
const ON_HEAP = 8;

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
    made.set(n, (made.get(n) ?? 0) + 1);
    return new Float64Array(n);
  }
  poolStats.bytes -= 8 * n;
  poolStats.reused++;
  return dirty ? b : b.fill(0);
}

/**
 * Give a buffer back; the caller guarantees nothing refers to it any more, and that it
 * is a whole buffer (a kernel's result), not a view: views into a larger buffer are
 * refused where telling them apart is cheap (an offset, or an array off V8's heap).
 */
export function release(b: Float64Array): void {
  const n = b.length;
  const bytes = 8 * n;
  if (poolStats.bytes + bytes > MAX_BYTES || b.byteOffset !== 0 || (n > ON_HEAP && b.buffer.byteLength !== bytes)) return;
  // the count first: a length alloc never made gets no (empty) list in the map
  const list = free.get(n);
  if ((list?.length ?? 0) >= (made.get(n) ?? 0)) return;
  if (list === undefined) free.set(n, [b]);
  else list.push(b);
  poolStats.bytes += bytes;
}

/** A copy of `x` in a buffer from the pool, so that whoever releases it later gives back what it took. */
export function pooledCopy(x: Float64Array): Float64Array {
  const r = alloc(x.length, true);
  r.set(x);
  return r;
}
