/**
 * @file The reverse sweep of a stacked scan (one that reads its xs from another scan's
 * packed value: a reverse sweep emitted as scans, scan-nested.ts) where its scans are kept:
 * one `scanGrad` instruction, as for any scan (scan-reverse.ts), whose x cotangents go back
 * into the packed value's cotangent.
 *
 * Each element the stacked scan reads is one variable of the loop written out (a forward
 * value of one iteration). Its cotangent starts from what it holds already, and what the
 * sweep adds to it is added in the written-out order: an element also read by a `scanOut`
 * instruction is that instruction's variable (its cotangent so far is where the sweep
 * starts, the sum goes back to it), any other is an element of the packed value's
 * cotangent, a dense tensor whose present elements are listed beside it (Where.packed). The
 * forward scan's own sweep then starts from those as its outputs' seeds. A tensor leaf is
 * its slot of elements; its cotangent is dense there (scan-nested.ts keeps a run of rules
 * only where no rule slices an x leaf, which would give it pieces).
 */
import { size, type Buf, type Dims } from "@wengert/ops";
import { WengertError } from "../errors.js";
import { flatXs, scanCodes, stackedXs, xArgCount, type DerivedParams, type ScanOutParams, type ScanParams } from "../trace/scan-ops.js";
import { reverseRun, type ReverseSweep } from "../eval/scan-reverse-run.js";
import { aliasOf, PARTS } from "./reverse-plan.js";
import { planFor, type ScanReverseCall } from "./scan-cotangents.js";
import { tracedXElements } from "./scan-x-elements.js";
import { maskById, maskId } from "./cotangent-mask.js";

const PIECES = "internal: a stacked scan's x leaf took pieces of a cotangent, which its packed value's cotangent does not hold (scan-nested.ts slicesX).";

/** Emit the reverse sweep of stacked scan `self` into the sink (see the file's comment). */
export function emitStacked(call: ScanReverseCall): void {
  const { p, args, outputs, tape, where: { sink, at, packed, packedMasks, outputsOf }, state, active, differentiate } = call;
  const { body, n, layout } = p;
  const { nc, nx, np } = body;
  const stacked = p.stacked!;
  const codes = scanCodes();
  const source = args[nc];
  const nargs = nc + n * nx + np;
  const argOf = (a: number): number => (a < nc ? args[a] : a < nc + n * nx ? source : args[a - n * nx + 1]);
  const offsetOf = (a: number): number => stacked.at[(a - nc) % nx] + Math.floor((a - nc) / nx) * stacked.step;
  const isX = (a: number): boolean => a >= nc && a < nc + n * nx;
  // argument a's dims, as one argument per leaf and iteration
  const dimsOf = (a: number): Dims => body.inputDims[a < nc ? a : isX(a) ? nc + ((a - nc) % nx) : a - (n - 1) * nx];
  // the elements also read by scanOut: their variables; the traced xs the source writes: its arguments
  const readers = tape.op[source] === codes.scan ? tracedXElements(tape.params(source) as ScanParams, tape.args(source)) : new Map<number, number>();
  for (const j of outputsOf.get(source) ?? []) readers.set((tape.params(j) as ScanOutParams).offset, j);
  // seeds: the final carry's leaves read after the run, and the written values read (ys: a scan of rules' x
  // cotangents, scan-nested.ts; a forward sweep's tangents, scan-tangent-nested.ts)
  const nobs = layout.obs.length;
  const seedObs = new Uint8Array(PARTS * n * nobs);
  const seedFinal = new Uint8Array(PARTS * nc);
  const seedAtoms = new Map<number, number>();
  // the masks of what the sweep starts from (ids, cotangent-mask.ts), by the index of its flag
  const masks = { seedObs: new Map<number, number>(), seedFinal: new Map<number, number>(), acc: new Map<number, number>() };
  const maskOf = (into: Map<number, number>, e: number, id: number): void => void (id !== 0 && into.set(e, id));
  for (const j of outputs) {
    const q = tape.params(j) as ScanOutParams;
    if (q.held || state.ct[j] < 0) continue;
    seedAtoms.set(2 * q.offset, state.ct[j]);
    const r = Math.floor(q.offset / layout.width);
    const id = tape.dims(j).length === 0 ? 0 : maskId(state.maskOf(j));
    if (q.offset < n * layout.width) {
      const e = 2 * (r * nobs + layout.obsOffset.indexOf(q.offset - r * layout.width));
      seedObs[e] = 1;
      maskOf(masks.seedObs, e, id);
    } else {
      seedFinal[2 * layout.carryOffset.indexOf(q.offset)] = 1;
      maskOf(masks.seedFinal, 2 * layout.carryOffset.indexOf(q.offset), id);
    }
  }
  const need = new Uint8Array(nargs);
  const acc = new Uint8Array(PARTS * nargs);
  // where each held cotangent of the sweep comes from: a variable of the sink (≥ 0: the k-th passed), or element e of the packed value's cotangent (−1 − e)
  const heldFrom: number[] = [];
  const atoms: number[] = [];
  const packedCt = state.ct[source];
  const mask = packedCt >= 0 ? packed.get(source) : undefined;
  // a leaf that starts from another's cotangent (the same element, read one iteration before) holds none of its own
  for (let a = 0; a < nargs; a++) {
    need[a] = active[argOf(a)];
    if (!need[a] || aliasOf(p, a) >= 0) continue;
    const reader = isX(a) ? readers.get(offsetOf(a)) : undefined;
    const v = isX(a) ? reader : argOf(a);
    if (v !== undefined) {
      // a tensor's dense sum and its pieces, apart (scan-cotangents.ts gather)
      const tensor = tape.dims(v).length > 0;
      const ids = tensor ? [maskId(state.maskOf(v)), maskId(state.piecesMask(v))] : [0, 0];
      const parts = [state.ct[v], tensor ? state.pending(v) : -1];
      parts.forEach((c, part) => {
        if (c < 0) return;
        acc[2 * a + part] = 1;
        maskOf(masks.acc, 2 * a + part, ids[part]);
        heldFrom.push(atoms.length);
        atoms.push(c);
      });
    } else if (mask !== undefined && mask[offsetOf(a)]) {
      acc[2 * a] = 1;
      maskOf(masks.acc, 2 * a, packedMasks.get(source)?.get(offsetOf(a)) ?? 0);
      heldFrom.push(-1 - offsetOf(a));
    }
  }
  const masked = masks.seedObs.size + masks.seedFinal.size + masks.acc.size > 0;
  const inputs = { seedObs, seedFinal, acc, need, ...(masked ? { masks } : {}) };
  const plan = planFor(p, inputs, differentiate, true);
  const seedOrder = [...seedAtoms.keys()].sort((x, y) => x - y);
  const offsets: number[] = [];
  let length = 0;
  for (let e = 0; e < PARTS * nargs; e++) {
    offsets.push(length);
    if (plan.present[e]) length += size(dimsOf(e >> 1));
  }
  const sweep: ReverseSweep = { p, plan, inputs, seedOrder, offsets, length };
  const nA = nc + xArgCount(p) + np;
  const usesPacked = heldFrom.some((h) => h < 0);
  const params: DerivedParams = {
    scan: p,
    length,
    what: "reverse of a stacked scan",
    run: (values) => {
      // the values as a scan with one argument per x leaf and iteration would take them
      const base = nA + seedOrder.length;
      const ct = usesPacked ? (values[values.length - 1] as Float64Array) : null;
      const all = new Array<Buf>(nargs + seedOrder.length + heldFrom.length);
      let w = 0;
      for (let k = 0; k < nc; k++) all[w++] = values[k];
      if (body.reals) {
        const xs = flatXs(p, values);
        for (let e = 0; e < xs.length; e++) all[w++] = xs[e];
      } else for (let i = 0; i < n; i++) for (const x of stackedXs(p, values, i)) all[w++] = x;
      for (let q = 0; q < np; q++) all[w++] = values[nc + 1 + q];
      for (let j = 0; j < seedOrder.length; j++) all[w++] = values[nA + j];
      // an element of the packed cotangent: a real, or a tensor leaf's slot (heldFrom names its first element)
      const element = (e: number, a: number): Buf => (body.reals ? ct![e] : ct!.slice(e, e + size(dimsOf(a))));
      let at = 0;
      for (let a = 0; a < nargs; a++) {
        for (let part = 0; part < PARTS; part++) {
          if (!acc[2 * a + part]) continue;
          const h = heldFrom[at++];
          all[w++] = h >= 0 ? values[base + h] : element(-1 - h, a);
        }
      }
      return reverseRun(sweep, all);
    },
  };
  const grad = sink.recordOp(
    codes.scanGrad,
    [...args.map((v) => at[v]), ...seedOrder.map((o) => seedAtoms.get(o)!), ...atoms, ...(usesPacked ? [packedCt] : [])],
    params,
  );
  const read = (e: number): number => (plan.present[e] ? sink.recordOp(codes.scanOut, [grad], { offset: offsets[e], dims: dimsOf(e >> 1), held: false }) : -1);
  // the carry's and the captured values' cotangents, and the elements' read by scanOut
  const intoPacked: number[] = [];
  const passed = new Set<number>();
  for (let a = 0; a < nargs; a++) if (need[a] && aliasOf(p, a) >= 0) passed.add(aliasOf(p, a));
  for (let a = 0; a < nargs; a++) {
    // a cotangent passed on to another leaf is not the element's yet
    if (!need[a] || (!plan.present[2 * a] && !plan.present[2 * a + 1]) || passed.has(a)) continue;
    const [dense, whole] = [maskById(plan.masks[2 * a]), maskById(plan.masks[2 * a + 1])];
    if (!isX(a)) state.replace(argOf(a), read(2 * a), read(2 * a + 1), dense, whole);
    else if (readers.has(offsetOf(a))) state.replace(readers.get(offsetOf(a))!, read(2 * a), read(2 * a + 1), dense, whole);
    else if (plan.present[2 * a + 1]) throw new WengertError(PIECES);
    else intoPacked.push(a);
  }
  if (intoPacked.length === 0) return;
  // the other elements into the packed value's cotangent (a copy of what it held, those elements replaced)
  const total = size(tape.dims(source));
  // element by element (a tensor leaf's slot is size(dims) of them)
  const into: number[] = [];
  const from: number[] = [];
  for (const a of intoPacked) for (let e = 0; e < size(dimsOf(a)); e++) into.push(offsetOf(a) + e), from.push(offsets[2 * a] + e);
  const merged: DerivedParams = {
    scan: p,
    length: total,
    what: "packed cotangent",
    run: ([g, before]) => {
      const out = before === undefined ? new Float64Array(total) : (before as Float64Array).slice();
      for (let e = 0; e < into.length; e++) out[into[e]] = (g as Float64Array)[from[e]];
      return out;
    },
  };
  const c = sink.recordOp(codes.scanGrad, packedCt >= 0 ? [grad, packedCt] : [grad], merged);
  const m = mask === undefined ? new Uint8Array(total) : mask.slice();
  for (const e of into) m[e] = 1;
  state.replace(source, c, -1);
  packed.set(source, m);
  // each slot's mask, as the element's variable of the loop written out has it
  let slotMasks = packedMasks.get(source);
  if (slotMasks === undefined) packedMasks.set(source, (slotMasks = new Map()));
  for (const a of intoPacked) {
    if (plan.masks[2 * a] !== 0) slotMasks.set(offsetOf(a), plan.masks[2 * a]);
    else slotMasks.delete(offsetOf(a));
  }
}
