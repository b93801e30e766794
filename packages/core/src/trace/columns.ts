/**
 * @file Tape columns recycled between traces.
 *
 * An outermost `grad` of a long program builds columns of millions of entries, and
 * buffers as long for its reverse sweep, and drops them when it returns. Allocated afresh
 * on every call, those off-heap buffers count against V8's limits and set off full
 * collections of the whole heap, so the time of a call grows faster than its trace does
 * in a process with a large heap. Columns whose tape is done (outgrown, or its `grad`
 * returned) and the sweep's buffers come back here and serve the next call. Short traces
 * gain too: a typed array costs far more to make than to take from here, and a nested
 * derivative or a Jacobian makes a tape per inner call or column. The pool is bounded:
 * at most MAX_BYTES are kept.
 */
export type Column = Uint8Array | Uint16Array | Int32Array | Float64Array;

const MAX_BYTES = 64 * 2 ** 20;
type Kind = { new (n: number): Column; readonly name: string };
/** Columns kept, by kind (the typed array's constructor) and length: no string key to build per call. */
const pool = new Map<Kind, Map<number, Column[]>>();
let kept = 0;

/** A column of `length` entries (contents unspecified): recycled if one is kept, else new. */
export function takeColumn<T extends Column>(make: { new (n: number): T; readonly name: string }, length: number): T {
  const c = pool.get(make)?.get(length)?.pop();
  if (c === undefined) return new make(length);
  kept -= c.byteLength;
  return c as T;
}

/** Whether a column of this kind and length is kept. */
export function isKept(make: Kind, length: number): boolean {
  return (pool.get(make)?.get(length)?.length ?? 0) > 0;
}

/** Hand back a column nobody will read again. */
export function giveColumn(c: Column): void {
  if (kept + c.byteLength > MAX_BYTES) return;
  const kind = c.constructor as Kind;
  let byLength = pool.get(kind);
  if (byLength === undefined) pool.set(kind, (byLength = new Map()));
  let free = byLength.get(c.length);
  if (free === undefined) byLength.set(c.length, (free = []));
  free.push(c);
  kept += c.byteLength;
}

/** Bytes kept for reuse (for tests and the memory probe). */
export function keptBytes(): number {
  return kept;
}
