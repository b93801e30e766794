/**
 * @file Where an index vector (gather's, scatterAdd's) leaves an axis: its least and
 * greatest entry, found once per vector.
 *
 * Every gather recorded by a derivative reuses its primal's indices (the pullback of
 * gather is a scatterAdd at the same indices, its tangent a gather at them), and each op
 * checks its indices against its axis. A scan of the vector per check cost as much as
 * the gather itself on short rows (kmeans' n points of d coordinates). The vectors are
 * the library's own copies (core's api copies what the user passes), never written
 * after, so their range is kept beside them.
 */

/** The least and greatest entry of a vector (+∞ and −∞ when it is empty). */
export interface IndexRange {
  readonly least: number;
  readonly greatest: number;
}

const ranges = new WeakMap<Int32Array, IndexRange>();

/** How many vectors were scanned for their range (tests: once per vector, however many checks). */
export const indexRangeStats = { scans: 0 };

export function indexRange(indices: Int32Array): IndexRange {
  let r = ranges.get(indices);
  if (r === undefined) {
    indexRangeStats.scans++;
    let least = Infinity;
    let greatest = -Infinity;
    for (let k = 0; k < indices.length; k++) {
      const i = indices[k];
      if (i < least) least = i;
      if (i > greatest) greatest = i;
    }
    ranges.set(indices, (r = { least, greatest }));
  }
  return r;
}

/** The position of the first entry of `indices` outside 0 … length − 1, or −1 if there is none. */
export function firstOutOfRange(indices: Int32Array, length: number): number {
  const { least, greatest } = indexRange(indices);
  if (least >= 0 && greatest < length) return -1;
  for (let k = 0; k < indices.length; k++) if (indices[k] < 0 || indices[k] >= length) return k;
  return -1;
}
