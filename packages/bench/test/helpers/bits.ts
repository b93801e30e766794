/**
 * @file Two arrays of numbers compared to the last bit (Object.is: −0 is not +0), for the
 * tests that hold a fast path to the path it replaces.
 */

/** Where two arrays first differ as numbers, or −1 (0 when their lengths differ). */
export function firstDifference(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) return 0;
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return i;
  return -1;
}
