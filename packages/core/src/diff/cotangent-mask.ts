/**
 * @file A cotangent's mask, as the reverse sweep keeps it (differentiate.ts): the elements of
 * a tensor cotangent that may be nonzero (1) where a `where`, an `index` or a `slice` left the
 * others exactly zero; null where that is every element. Elementwise rules on a masked
 * cotangent are masked in turn, so that a NaN or ∞ of the forward values outside the mask
 * (sqrt of a negative) times that zero stays 0, as the paper's semantics has it.
 *
 * A scan's reverse sweep passes a mask from block to block with the cotangent (reverse-plan.ts):
 * a block's derivative term is made per pattern of incoming masks, which a small id names.
 */

/** 1 where the cotangent may be nonzero, by the variable's dims; null: everywhere. */
export type Mask = Float64Array;

// masks by id (0: none), and ids by content: a few per scan (one per step until a mask settles)
const byId: (Mask | null)[] = [null];
const ids = new Map<string, number>();

/**
 * A mask's key: its length, whether its first element is set, and where it changes from set
 * to not or back (a mask is read as "element ≠ 0" everywhere). A few characters for the
 * masks slices leave (all but an end); joining the elements made a string of the vector's
 * length per mask (GradBench ode at n = 10⁵: a fifth of the gradient's first call).
 */
function keyOf(m: Mask): string {
  let key = `${m.length}:${m.length > 0 && m[0] !== 0 ? 1 : 0}`;
  for (let k = 1; k < m.length; k++) if ((m[k] !== 0) !== (m[k - 1] !== 0)) key += `,${k}`;
  return key;
}

/** The mask's id (0 for null): masks that set the same elements take the same id. */
export function maskId(m: Mask | null): number {
  if (m === null) return 0;
  const key = keyOf(m);
  let id = ids.get(key);
  if (id === undefined) {
    ids.set(key, (id = byId.length));
    byId.push(m.slice());
  }
  return id;
}

/** The mask of an id (null for 0). */
export function maskById(id: number): Mask | null {
  return byId[id];
}

/** A box of a flat mask: its elements [lo, hi) set, the others not. */
export type Box = readonly [lo: number, hi: number];

/** The mask's one range of set elements ([0, 0) for none), or null where it sets more than one. */
export function boxOf(m: Mask): Box | null {
  let lo = m.indexOf(1);
  if (lo < 0) {
    for (lo = 0; lo < m.length && m[lo] === 0; lo++);
    if (lo === m.length) return [0, 0];
  }
  let hi = lo;
  while (hi < m.length && m[hi] !== 0) hi++;
  for (let k = hi; k < m.length; k++) if (m[k] !== 0) return null;
  return [lo, hi];
}

/** The mask of `length` elements that sets the box's. */
export function boxMask([lo, hi]: Box, length: number): Mask {
  const m = new Float64Array(length);
  m.fill(1, lo, hi);
  return m;
}
