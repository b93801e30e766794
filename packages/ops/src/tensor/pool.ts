/**
 * @file A pool of Float64Array buffers, by length, for the results of tensor kernels.
 *
 * A training loop computes the same shapes call after call; handing intermediate
 * buffers back when a derivative has been computed (see `release` in core's rd) saves
 * allocating and collecting them again. Only buffers nobody else can see are released:
 * the caller decides that. Bounded, so the pool never holds more than a few megabytes
 * beyond what one call needs.
 *
 * Small buffers (a few to a hundred elements: lstm's, ht's, ba's vectors) are views into
 * shared slabs rather than arrays of their own. A Float64Array of more than 64 bytes gets
 * its own ArrayBuffer outside V8's heap, which costs a malloc and a record that every
 * young-generation collection sweeps: lstm's objective (38 000 buffers of 14 elements)
 * spent 45% of its time making and collecting them. A view into a slab is an ordinary
 * heap object; a slab is freed when the last view into it is gone (see SLAB_BYTES).
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
/** Longer arrays up to this length are cut from slabs (see the file's comment). */
export const SLAB_MAX = 128;
/**
 * The bytes of one slab (16 KiB slabs took 4× as long per buffer: an ArrayBuffer costs
 * about what 200 views into one do). The price: a view kept keeps its whole slab alive,
 * so a loop that keeps one small result per step among its temporaries of that length
 * (a trajectory of states) holds the temporaries' memory too, however large the slabs.
 */
const SLAB_BYTES = 64 * 1024;
/**
 * The slabs, each of one length of view (the length its cells have): the current one per
 * length and where its next free cell starts; `cellLength` tells `release` which
 * buffers are whole cells (a view cut at a cell's start, of a cell's length) without
 * keeping anything alive.
 */
const slabOf: (ArrayBuffer | undefined)[] = Array.from({ length: SLAB_MAX + 1 }, () => undefined);
const nextCell: number[] = Array.from({ length: SLAB_MAX + 1 }, () => 0);
const cellLength = new WeakMap<ArrayBufferLike, number>();

/** A fresh zeroed buffer of length n, ON_HEAP < n ≤ SLAB_MAX: the next cell of the slab for n. */
function cut(n: number): Float64Array {
  const bytes = 8 * n;
  let slab = slabOf[n];
  let at = nextCell[n];
  if (slab === undefined || at + bytes > slab.byteLength) {
    slab = new ArrayBuffer(bytes * Math.floor(SLAB_BYTES / bytes));
    cellLength.set(slab, n);
    slabOf[n] = slab;
    at = 0;
  }
  nextCell[n] = at + bytes;
  return new Float64Array(slab, at, n);
}

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
    return n > ON_HEAP && n <= SLAB_MAX ? cut(n) : new Float64Array(n);
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
  if (poolStats.bytes + bytes > MAX_BYTES || !whole(b, n)) return;
  // the count first: a length alloc never made gets no (empty) list in the map
  const list = free.get(n);
  if ((list?.length ?? 0) >= (made.get(n) ?? 0)) return;
  if (list === undefined) free.set(n, [b]);
  else list.push(b);
  poolStats.bytes += bytes;
}

/** Whether b is a buffer of its own or a slab's cell, not a view into a larger buffer. */
function whole(b: Float64Array, n: number): boolean {
  if (n <= ON_HEAP) return b.byteOffset === 0;
  const buffer = b.buffer;
  if (b.byteOffset === 0 && buffer.byteLength === 8 * n) return true;
  return n <= SLAB_MAX && cellLength.get(buffer) === n && b.byteOffset % (8 * n) === 0;
}

/** A copy of `x` in a buffer from the pool, so that whoever releases it later gives back what it took. */
export function pooledCopy(x: Float64Array): Float64Array {
  const r = alloc(x.length, true);
  r.set(x);
  return r;
}
