/**
 * @file The scans of a term whose tensor outputs reach a `slice`, an `index` or a `where`:
 * written out, the reverse sweep gives such an output's cotangent a mask (the elements where
 * it may be nonzero: pieces that leave elements out, a side of a `where`), and the mask
 * travels through the loop's blocks, each elementwise rule then selecting its elements with
 * `where` (differentiate.ts). A block's derivative term takes its cotangents without masks,
 * so a reverse sweep emitted as scans of a body on tensors (scan-nested.ts) is kept only
 * where no such output exists and no input of the body has its cotangent masked within the
 * loop: elsewhere the loop is written out, its numbers the same.
 */
import { CODE, FIRST_PRIMITIVE } from "../trace/opcodes.js";
import { scanCodes, type ScanParams } from "../trace/scan-ops.js";
import type { Tape } from "../trace/tape.js";
import type { Body } from "../trace/body.js";

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

/**
 * Whether the loop written out would mask a cotangent of the body's inputs between blocks: a
 * `where` in the body, or a tensor input read only by slices and indices that leave elements
 * out (its cotangent, pieces alone, is masked to their boxes when settled).
 */
export function masksInputs(body: Body): boolean {
  const tape = body.term.tape;
  const readers = new Map<number, number[]>();
  for (let i = 0; i < tape.length; i++) {
    if (tape.op[i] === CODE.where) return true;
    if (tape.op[i] < FIRST_PRIMITIVE) continue;
    for (const v of tape.x[i] !== 0 ? tape.args(i) : [tape.a[i], tape.b[i]]) {
      let list = readers.get(v);
      if (list === undefined) readers.set(v, (list = []));
      list.push(i);
    }
  }
  // output leaves are read whole (the next iteration's carry, a y): dense
  const whole = new Set(body.term.output.atoms);
  for (const v of body.inputVar) {
    const dims = tape.dims(v);
    const list = readers.get(v) ?? [];
    if (dims.length === 0 || whole.has(v) || list.some((i) => tape.op[i] !== CODE.slice && tape.op[i] !== CODE.index)) continue;
    if (dims.length !== 1) return true;
    // the boxes along the one axis, sorted: covered from 0 to the end without a gap
    const boxes = list
      .map((i) => {
        if (tape.op[i] === CODE.index) {
          const at = (tape.params(i) as { at: readonly number[] }).at[0];
          return [at, at + 1];
        }
        const p = tape.params(i) as { starts: readonly number[]; ends: readonly number[] };
        return [p.starts[0], p.ends[0]];
      })
      .sort((p, q) => p[0] - q[0]);
    let end = 0;
    for (const [from, to] of boxes) {
      if (from > end) return true;
      end = Math.max(end, to);
    }
    if (end < dims[0]) return true;
  }
  return false;
}
