/**
 * @file A scan's reverse sweep where it is kept (the outermost level, or a trace only
 * evaluated: unroll.ts `keepsScans`): one `scanGrad` instruction that
 * runs the body's derivative term backwards over the iterations, with the carries
 * recomputed from checkpoints.
 *
 * Written out, the loop is one block of instructions per iteration, and the reverse sweep
 * (differentiate.ts) runs over the blocks from the last to the first, each variable's
 * cotangent accumulated with `+` in that order. The body's derivative term (Fig. 6
 * applied to the body's term, the body's own instructions replayed in front: a term `D`,
 * made once) computes one block's part of that sweep, given where it starts: the
 * cotangents its outputs have gathered (from the next iteration, from uses after the
 * loop) and those its inputs hold already (a captured value's running sum, a carry used
 * after the loop). `D` takes them as inputs, seeded first, and returns its inputs'
 * cotangents, so the sums are the written-out sweep's, in its order, to the last bit. A
 * cotangent that is the symbolic zero stays one: `D` is made per pattern of which
 * cotangents are present (the plan, decided ahead from the structure alone).
 *
 * The carries of the forward run are stored at checkpoints and recomputed segment by
 * segment (ScanOptions.checkpoint); each iteration's other values are recomputed by `D`.
 */
import type { Dims } from "@wengert/ops";
import { size } from "@wengert/ops";
import { scanCodes, scanOutputs, isScanCode, hasScans, type DerivedParams, type ScanParams } from "../trace/scan-ops.js";
import type { TraceTerm } from "../trace/term.js";
import type { Trace } from "../trace/tracer.js";
import { WengertError } from "../errors.js";
import { activity } from "./place.js";
import { PARTS, type Differentiate } from "./reverse-plan.js";
import { maskById } from "./cotangent-mask.js";
import { gather, planFor, type CotangentState, type ScanReverseCall } from "./scan-cotangents.js";
import { emitNested } from "./scan-nested.js";
import { emitSingle } from "./scan-single.js";
import { emitStacked } from "./scan-stacked.js";
import { reverseRun, type ReverseSweep } from "../eval/scan-reverse-run.js";

export type { Differentiate } from "./reverse-plan.js";



export interface ScanSweep {
  /** Whether instruction i is a scan's (handled here: a scan's reverse emitted, an output's cotangent left for its scan). */
  at(i: number, state: CotangentState): boolean;
}

/**
 * The scans of a term being differentiated where its scans are kept (unroll.ts
 * `keepsScans`; null if it has none); `at[v]` is the sink's variable for the term's v.
 */
export function scanSweep(term: TraceTerm, sink: Trace, at: Int32Array, differentiate: Differentiate, kept: boolean): ScanSweep | null {
  if (!hasScans(term.tape)) return null;
  const tape = term.tape;
  const codes = scanCodes();
  const outputsOf = scanOutputs(tape);
  const packed = new Map<number, Uint8Array>();
  const packedMasks = new Map<number, Map<number, number>>();
  let active: Uint8Array | null = null;
  return {
    at(i, state) {
      const code = tape.op[i];
      if (!isScanCode(code)) return false;
      if (code === codes.scanOut) return true;
      if (code !== codes.scan) throw new WengertError("internal: a scan's derivative instruction in a term differentiated again.");
      active ??= activity(term);
      // where the sweep will be differentiated again, it is emitted as scans (scan-nested.ts)
      const p = tape.params(i) as ScanParams;
      const emit = !kept ? (p.n === 1 && p.body.nc === 0 ? emitSingle : emitNested) : p.stacked !== undefined ? emitStacked : emitReverse;
      const where = { sink, at, self: i, packed, packedMasks, outputsOf };
      emit({ p, args: tape.args(i), outputs: outputsOf.get(i) ?? [], tape, where, state, active, differentiate });
      return true;
    },
  };
}

/** Emit the reverse sweep of the scan instruction (its args, its outputs' instructions) into the sink. */
function emitReverse(call: ScanReverseCall): void {
  const { p, args, outputs, tape, where: { sink, at, self, packed, packedMasks }, state, active, differentiate } = call;
  const codes = scanCodes();
  const gathered = gather(p, args, outputs, tape, state, active);
  const { seedAtoms, accAtoms } = gathered;
  let inputs = gathered.inputs;
  const { need } = inputs;
  // the outputs stacked scans' sweeps seeded, in the packed value's cotangent (the others' seeds come by their scanOut)
  const mask = state.ct[self] >= 0 ? packed.get(self) : undefined;
  const packedSeeds: number[] = [];
  if (mask !== undefined) {
    const { layout } = p;
    const nobs = layout.obs.length;
    for (let r = 0; r < p.n; r++) {
      for (let s = 0; s < nobs; s++) {
        const offset = r * layout.width + layout.obsOffset[s];
        if (!mask[offset] || inputs.seedObs[2 * (r * nobs + s)]) continue;
        inputs.seedObs[2 * (r * nobs + s)] = 1;
        packedSeeds.push(offset);
      }
    }
    // the masks of the slots seeded so (a stacked scan's sweep gave them: scan-stacked.ts)
    const slotMasks = packedMasks.get(self);
    if (slotMasks !== undefined && slotMasks.size > 0) {
      const seedObsMasks = new Map(inputs.masks?.seedObs ?? []);
      for (const offset of packedSeeds) {
        const id = slotMasks.get(offset) ?? 0;
        const r = Math.floor(offset / layout.width);
        if (id !== 0) seedObsMasks.set(2 * (r * nobs + layout.obsOffset.indexOf(offset - r * layout.width)), id);
      }
      inputs = { ...inputs, masks: { seedFinal: new Map(), acc: new Map(), ...inputs.masks, seedObs: seedObsMasks } };
    }
  }
  const plan = planFor(p, inputs, differentiate, true);
  const seedOrder = [...seedAtoms.keys()].sort((x, y) => x - y);
  const dimsOf = (a: number): Dims => tape.dims(args[a]);
  const offsets: number[] = [];
  let length = 0;
  for (let e = 0; e < PARTS * args.length; e++) {
    offsets.push(length);
    if (plan.present[e]) length += size(dimsOf(e >> 1));
  }
  const sweep: ReverseSweep = { p, plan, inputs, seedOrder, offsets, length, packedSeeds: Int32Array.from(packedSeeds) };
  const params: DerivedParams = {
    scan: p,
    length,
    what: "reverse",
    run: (values) => reverseRun(sweep, values),
  };
  const packedAtoms = packedSeeds.length > 0 ? [state.ct[self]] : [];
  const grad = sink.recordOp(codes.scanGrad, [...args.map((v) => at[v]), ...seedOrder.map((o) => seedAtoms.get(o)!), ...accAtoms, ...packedAtoms], params);
  const read = (e: number): number => (plan.present[e] ? sink.recordOp(codes.scanOut, [grad], { offset: offsets[e], dims: dimsOf(e >> 1), held: false }) : -1);
  for (let a = 0; a < args.length; a++) {
    if (!need[a] || (!plan.present[2 * a] && !plan.present[2 * a + 1])) continue;
    state.replace(args[a], read(2 * a), read(2 * a + 1), maskById(plan.masks[2 * a]), maskById(plan.masks[2 * a + 1]));
  }
}
