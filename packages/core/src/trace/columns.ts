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
/**
 * Columns kept, by kind and length: one map of lengths per kind, indexed by position
 * in KINDS (cheaper than a map keyed by the constructor, or reading `byteLength`): a
 * grad takes and gives seven columns, so this is on every call's path.
 */
const KINDS = [Float64Array, Int32Array, Uint16Array, Uint8Array] as const;
const pool: Map<number, Column[]>[] = KINDS.map(() => new Map());
/** Bytes per element of each kind. */
const BYTES = KINDS.map((k) => k.BYTES_PER_ELEMENT);
// the index in KINDS, by comparisons in its order
const kindOf = (make: Kind): number => (make === Float64Array ? 0 : make === Int32Array ? 1 : make === Uint16Array ? 2 : 3);
// instanceof, not `c.constructor` or `c.byteLength`: loads from typed arrays of several kinds are slow
const kindOfColumn = (c: Column): number => (c instanceof Float64Array ? 0 : c instanceof Int32Array ? 1 : c instanceof Uint16Array ? 2 : 3);
let kept = 0;

/** A column of `length` entries (contents unspecified): recycled if one is kept, else new. */
export function takeColumn<T extends Column>(make: { new (n: number): T; readonly name: string }, length: number): T {
  const kind = kindOf(make);
  const c = pool[kind].get(length)?.pop();
  if (c === undefined) return new make(length);
  kept -= length * BYTES[kind];
  return c as T;
}

/** Whether a column of this kind and length is kept. */
export function isKept(make: Kind, length: number): boolean {
  return (pool[kindOf(make)].get(length)?.length ?? 0) > 0;
}

/** Hand back a column nobody will read again. */
export function giveColumn(c: Column): void {
  const kind = kindOfColumn(c);
  const length = c.length;
  const bytes = length * BYTES[kind];
  if (kept + bytes > MAX_BYTES) return;
  const byLength = pool[kind];
  let free = byLength.get(length);
  if (free === undefined) byLength.set(length, (free = []));
  free.push(c);
  kept += bytes;
}

/** Bytes kept for reuse (for tests and the memory probe). */
export function keptBytes(): number {
  return kept;
}
