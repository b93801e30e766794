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
 * derivative or a Jacobian makes a tape per inner call or column.
 *
 * The pool is bounded: at most 64 MiB, or what the largest recent trace needed (`expect`)
 * and 64 MiB beside it, so that a call as long as the last allocates nothing off the heap,
 * and shorter work in between (a scan's stores, short traces) does not push its columns out. V8 starts a full
 * collection once about 64 MB of new off-heap memory has accumulated; a trace of 10⁶
 * steps takes about twice that per call, and in a process holding a large heap each full
 * collection is long (the cost of a grad would grow with the heap, not with its work).
 * Past the bound, the columns returned longest ago are dropped first: the pool holds the
 * sizes the current work uses, not those of work done before.
 */
export type Column = Uint8Array | Uint16Array | Int32Array | Float64Array;

const FLOOR = 64 * 2 ** 20;
/** What one trace may ask the pool to hold, at most. */
const CEILING = 1024 * 2 ** 20;
let bound = FLOOR;
type Kind = { new (n: number): Column; readonly name: string };
/**
 * Columns kept, by kind and length: one map of lengths per kind, indexed by position
 * in KINDS (cheaper than a map keyed by the constructor, or reading `byteLength`): a
 * grad takes and gives seven columns, so this is on every call's path.
 */
const KINDS = [Float64Array, Int32Array, Uint16Array, Uint8Array] as const;
const pool: Map<number, Column[]>[] = KINDS.map(() => new Map());
/** The kept columns in the order they were returned (a Set keeps insertion order): the first is dropped first. */
const order = new Set<Column>();
/** Bytes per element of each kind. */
const BYTES = KINDS.map((k) => k.BYTES_PER_ELEMENT);
// the index in KINDS, by comparisons in its order
const kindOf = (make: Kind): number => (make === Float64Array ? 0 : make === Int32Array ? 1 : make === Uint16Array ? 2 : 3);
// instanceof, not `c.constructor` or `c.byteLength`: loads from typed arrays of several kinds are slow
const kindOfColumn = (c: Column): number => (c instanceof Float64Array ? 0 : c instanceof Int32Array ? 1 : c instanceof Uint16Array ? 2 : 3);
let kept = 0;

/** Columns made afresh (not taken from the pool), for tests and the memory probe. */
export const columnStats = { made: 0, madeBytes: 0 };

/** A column of `length` entries (contents unspecified): recycled if one is kept, else new. */
export function takeColumn<T extends Column>(make: { new (n: number): T; readonly name: string }, length: number): T {
  const kind = kindOf(make);
  const c = pool[kind].get(length)?.pop();
  if (c === undefined) {
    columnStats.made++;
    columnStats.madeBytes += length * BYTES[kind];
    return new make(length);
  }
  order.delete(c);
  kept -= length * BYTES[kind];
  return c as T;
}

/** How many columns of this kind and length are kept. */
export function keptCount(make: Kind, length: number): number {
  return pool[kindOf(make)].get(length)?.length ?? 0;
}

/** The lengths of the columns of this kind kept, in no particular order. */
export function keptLengths(make: Kind): IterableIterator<number> {
  return pool[kindOf(make)].keys();
}

/** Hand back a column nobody will read again. */
export function giveColumn(c: Column): void {
  const kind = kindOfColumn(c);
  const length = c.length;
  const bytes = length * BYTES[kind];
  if (bytes > bound) return;
  // the columns returned longest ago make room
  while (kept + bytes > bound) drop(order.values().next().value!);
  const byLength = pool[kind];
  let free = byLength.get(length);
  if (free === undefined) byLength.set(length, (free = []));
  free.push(c);
  order.add(c);
  kept += bytes;
}

function drop(c: Column): void {
  const kind = kindOfColumn(c);
  const free = pool[kind].get(c.length)!;
  free.splice(free.indexOf(c), 1);
  if (free.length === 0) pool[kind].delete(c.length);
  order.delete(c);
  kept -= c.length * BYTES[kind];
}

/**
 * A trace's columns and its sweep's buffers take `bytes`: let the pool hold that much
 * (up to 1 GiB) and the floor beside it, so that the next call as long allocates none of
 * them again. Bounded by `bytes` alone, the pool was full with one long trace's columns:
 * whatever came back after them (a scan's carries, a short trace's columns) pushed some of
 * them out, and the next long call made them again.
 */
export function expect(bytes: number): void {
  bound = Math.max(bound, Math.min(bytes + FLOOR, CEILING));
}

/** The pool's bound now (bytes). */
export function columnBound(): number {
  return bound;
}

/** Bytes kept for reuse (for tests and the memory probe). */
export function keptBytes(): number {
  return kept;
}
