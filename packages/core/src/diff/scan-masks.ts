/**
 * @file The scans of a term whose tensor outputs reach a `slice`, an `index` or a `where`:
 * written out, the reverse sweep gives such an output's cotangent a mask (the elements where
 * it may be nonzero: pieces that leave elements out, a side of a `where`), and the mask
 * travels through the loop's blocks, each elementwise rule then selecting its elements with
 * `where` (differentiate.ts). A block's derivative term takes its cotangents without masks,
 * so a reverse sweep emitted as scans of a body on tensors (scan-nested.ts) is kept only
 * where no such output exists: elsewhere the loop is written out, its numbers the same.
 */
import { CODE, FIRST_PRIMITIVE } from "../trace/opcodes.js";
import { scanCodes, type ScanParams } from "../trace/scan-ops.js";
import type { Tape } from "../trace/tape.js";

/** The scan instructions of `tape` with a body on tensors whose values reach a slice, an index or a where after them. */
export function maskedScans(tape: Tape): Set<number> {
  const code = scanCodes().scan;
  const out = new Set<number>();
  const origin = new Set<number>([CODE.slice, CODE.index, CODE.where]);
  // per variable: the tensor-bodied scans it depends on (few: a bit per scan, up to 31, else all of them)
  const from = new Int32Array(tape.length);
  const scans: number[] = [];
  for (let i = 0; i < tape.length; i++) {
    const op = tape.op[i];
    if (op < FIRST_PRIMITIVE) continue;
    let d = 0;
    for (const v of tape.x[i] !== 0 ? tape.args(i) : [tape.a[i], tape.b[i]]) d |= from[v];
    if (op === code && !(tape.params(i) as ScanParams).body.reals) {
      d |= scans.length < 31 ? 1 << scans.length : -1;
      scans.push(i);
    }
    from[i] = d;
    if (d !== 0 && origin.has(op)) scans.forEach((s, k) => (d === -1 || k >= 31 || d & (1 << k)) && out.add(s));
  }
  return out;
}
