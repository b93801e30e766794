/**
 * @file The elements of a scan's packed value that are its traced xs: where the forward scan
 * writes an x leaf that its derivative's rules read (scan-nested.ts `withResiduals`), the
 * element is the x argument's value at that iteration, one variable of the loop written out.
 * A reader of the element (a scan of rules written out, unroll.ts; its sweep, scan-stacked.ts)
 * reads, and gives its cotangent to, that argument: the cotangent's sum is then the written-out
 * sweep's, in its order, not split between the argument and the element.
 */
import { INPUT } from "../trace/opcodes.js";
import type { ScanParams } from "../trace/scan-ops.js";

/** For scan params p with arguments `args`: the argument whose value is written at each offset, for the traced x leaves written. */
export function tracedXElements(p: ScanParams, args: readonly number[]): Map<number, number> {
  const { body, n, layout } = p;
  const { nc, nx } = body;
  const tape = body.term.tape;
  const at = new Map<number, number>();
  if (p.stacked !== undefined) return at;
  layout.obs.forEach((v, s) => {
    const k = tape.op[v] === INPUT ? tape.a[v] : -1;
    if (k < nc || k >= nc + nx || body.literal[k]) return;
    for (let r = 0; r < n; r++) at.set(r * layout.width + layout.obsOffset[s], args[nc + r * nx + (k - nc)]);
  });
  return at;
}
