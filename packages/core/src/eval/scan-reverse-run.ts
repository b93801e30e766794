/**
 * @file A scanGrad instruction's value: the reverse sweep of a scan run backwards over its
 * iterations, each block's derivative term evaluated from the cotangents it starts from,
 * the carries recomputed from checkpoints (or taken from the traced run). A body of reals
 * runs its middle iterations as compiled blocks (jit/scan-code.ts); any other, each
 * block's term interpreted, buffers handed back after their last use.
 */
import { alloc, pooledCopy, release, size, type Buf } from "@wengert/ops";
import type { Body } from "../trace/body.js";
import { segmentLength, writeAt, type ScanParams } from "../trace/scan-ops.js";
import { giveColumn, takeColumn } from "../trace/columns.js";
import { runForward } from "./scan-forward.js";
import { takeCarries } from "../trace/scan-stash.js";
import { termRunner } from "../jit/scan-fused.js";
import { compiledBlock, compiledStep, scanCode } from "../jit/scan-code.js";
import {
  aliasOf,
  cacheFor,
  inState,
  outState,
  PARTS,
  type BlockDerivative,
  type Outs,
  type ReverseInputs,
  type ReversePlan,
  type Sources,
} from "../diff/reverse-plan.js";

/**
 * Counters for tests: carries stored by the last reverse run (checkpoints, and at most at
 * once), its iterations swept, and the iterations swept by every run since `total` was set.
 */
export const reverseStats = { stored: 0, maxStored: 0, swept: 0, total: 0 };

/** A scan's reverse sweep as planned when it was differentiated: all but the values, which come when it runs. */
export interface ReverseSweep {
  readonly p: ScanParams;
  readonly plan: ReversePlan;
  readonly inputs: ReverseInputs;
  /** The seeded output parts (2 · offset + part), in the order their seeds follow the arguments in the values. */
  readonly seedOrder: readonly number[];
  /** Where each argument part's cotangent starts in the result (absent parts take no room), and the result's length. */
  readonly offsets: readonly number[];
  readonly length: number;
  /** Outputs seeded from the packed value's cotangent (the last value; stacked scans' sweeps gave it), by offset. */
  readonly packedSeeds?: Int32Array;
}

/** The scanGrad's value: the cotangents of the scan's arguments (present parts, packed). */
export function reverseRun(s: ReverseSweep, values: readonly Buf[]): Float64Array {
  const out = s.p.body.reals && scanCode.enabled ? reverseReals(s, values as readonly number[]) : reverseAny(s, values);
  reverseStats.total += reverseStats.swept;
  return out;
}

/** reverseRun for any body: each block's term interpreted. */
function reverseAny(s: ReverseSweep, values: readonly Buf[]): Float64Array {
  const { p, plan, inputs, seedOrder, offsets, length } = s;
  const { body, n, layout } = p;
  const nargs = body.nc + n * body.nx + body.np;
  const nin = body.nc + body.nx + body.np;
  const carry0 = values.slice(0, body.nc) as Buf[];
  const xAt = (r: number): Buf[] => values.slice(body.nc + r * body.nx, body.nc + (r + 1) * body.nx) as Buf[];
  const pv = values.slice(body.nc + n * body.nx, nargs) as Buf[];
  const seed = new Map<number, Buf>();
  seedOrder.forEach((o, j) => seed.set(o, values[nargs + j]));
  const held: (Buf | null)[] = new Array<Buf | null>(PARTS * nargs).fill(null);
  let next = nargs + seedOrder.length;
  for (let e = 0; e < PARTS * nargs; e++) if (inputs.acc[e]) held[e] = values[next++];
  if (s.packedSeeds !== undefined && s.packedSeeds.length > 0) {
    // a tensor written per iteration is seeded with its slot of the packed cotangent
    const ct = values[next] as Float64Array;
    for (const o of s.packedSeeds) {
      const r = Math.floor(o / layout.width);
      const dims = body.term.tape.dims(layout.obs[layout.obsOffset.indexOf(o - r * layout.width)]);
      seed.set(2 * o, dims.length === 0 ? ct[o] : ct.slice(o, o + size(dims)));
    }
  }
  const { outs: o } = cacheFor(body, layout.obs);
  // running cotangents, by part
  const chain: (Buf | null)[] = new Array<Buf | null>(PARTS * body.nc).fill(null);
  // (loops, not Array.from of a length: that took some 3 % of GradBench ode's gradient at n = 1000)
  const identity: (Buf | null)[] = new Array<Buf | null>(PARTS * body.nc);
  for (let e = 0; e < identity.length; e++) identity[e] = body.carryKind[e >> 1] === "identity" && !body.literal[e >> 1] ? held[e] : null;
  const pAcc: (Buf | null)[] = new Array<Buf | null>(PARTS * body.np);
  for (let e = 0; e < pAcc.length; e++) pAcc[e] = held[PARTS * (nargs - body.np) + e];
  const xResult: (Buf | null)[] = new Array<Buf | null>(PARTS * n * body.nx).fill(null);
  const src: Sources<Buf | null> = {
    chain: (k, part) => chain[2 * k + part],
    identity: (k, part) => identity[2 * k + part],
    p: (q, part) => pAcc[2 * q + part],
    seedObs: (r, s, part) => (s < 0 ? null : (seed.get(2 * (r * layout.width + layout.obsOffset[s]) + part) ?? null)),
    seedFinal: (k, part) => seed.get(2 * layout.carryOffset[k] + part) ?? null,
    acc: (a, part) => {
      const b = aliasOf(p, a);
      return b >= 0 ? xResult[PARTS * (b - body.nc) + part] : held[2 * a + part];
    },
    none: null,
  };

  // the carries: checkpoints every K iterations, then each segment's recomputed; or those the
  // traced run kept at these values (trace/scan-stash.ts): its checkpoints, or every carry
  const stash = takeCarries(p, values);
  const K = stash !== null ? stash.every : segmentLength(p.checkpoint, p.n);
  const checkpoints: Buf[][] = [];
  const copy = (c: readonly Buf[]): Buf[] => c.map((b) => (typeof b === "number" ? b : pooledCopy(b)));
  const forward = (from: number, to: number, carry: Buf[], store: (i: number, c: readonly Buf[]) => void, keeps = false): void => {
    runForward({ body, x: xAt, p: pv, from, to, checkFrom: n, reportTies: false, obs: null, write: null, store, keeps }, carry, false);
  };
  // the run's own carries (not the caller's) go back after a run: the last one no block reads
  const drop = (c: readonly Buf[]): void => c.forEach((b, k) => typeof b !== "number" && b !== carry0[k] && release(b));
  if (stash !== null) checkpoints.push(...stash.carries);
  else if (K < n) {
    // up to the last checkpoint, no further: no block reads a carry past it that its segment does not recompute
    const last = (Math.ceil(n / K) - 1) * K;
    const c = carry0.slice();
    forward(0, last, c, (i, c) => i % K === 0 && checkpoints.push(copy(c)));
    checkpoints.push(copy(c));
    drop(c);
  } else checkpoints.push(carry0);
  reverseStats.stored = checkpoints.length;
  reverseStats.maxStored = checkpoints.length;
  reverseStats.swept = 0;

  const inputsOf: Buf[] = new Array<Buf>(nin);
  for (let q = 0; q < body.np; q++) inputsOf[body.nc + body.nx + q] = pv[q];
  const got: (Buf | null)[] = new Array<Buf | null>(PARTS * nin);
  // the buffers the sweep took from its blocks: one replaced by the next block's goes back to the pool
  // (a running cotangent is read only by the block after it; the caller's and the held ones are not the sweep's)
  const made = new Set<Buf>();
  const replaced = (old: Buf | null, now: Buf | null): Buf | null => {
    if (old !== null && old !== now && typeof old !== "number" && made.delete(old)) release(old);
    return now;
  };
  // a sweep over windows: its runs from the last iteration down, and the boxes of the one at hand
  const boxes = plan.boxes;
  let runAt = 0;
  let run = boxes?.runs[0];
  let bounds = new Int32Array(0);
  for (let seg = checkpoints.length - 1; seg >= 0; seg--) {
    const lo = seg * K;
    const hi = Math.min(n, lo + K);
    const carries: Buf[][] = [];
    // every carry of the segment kept as the run made it (each goes back to the pool after its block), an identity
    // carry's one buffer copied per iteration (each copy goes back)
    const own = (c: readonly Buf[]): Buf[] => c.map((b, k) => (body.carryKind[k] === "identity" && typeof b !== "number" ? pooledCopy(b) : b));
    // a checkpoint of the first run or of the traced one is the sweep's (read by its block, then handed back), the
    // caller's carry is copied; every carry kept (K = 1), each segment is one iteration, its checkpoint its carry
    const start = K < n || stash !== null ? checkpoints[seg].slice() : copy(checkpoints[seg]);
    // the run stops before the segment's last iteration, whose block reads the carry it starts from, not the one it makes
    forward(lo, hi - 1, start, (_i, c) => carries.push(own(c)), true);
    carries.push(own(start));
    // (own copied an identity carry's buffer: the run's goes back; the others are the last block's now)
    start.forEach((b, k) => body.carryKind[k] === "identity" && typeof b !== "number" && b !== carry0[k] && release(b));
    reverseStats.maxStored = Math.max(reverseStats.maxStored, checkpoints.length + carries.length);
    for (let r = hi - 1; r >= lo; r--) {
      const d = plan.patterns[plan.at.at(r)];
      const c = carries[r - lo];
      // the block's inputs: the body's, then the states it starts from (one array for the sweep, refilled: a block
      // reads its own inputs only)
      for (let k = 0; k < body.nc; k++) inputsOf[k] = c[k];
      for (let l = 0; l < body.nx; l++) inputsOf[body.nc + l] = values[body.nc + r * body.nx + l];
      let at = nin;
      for (const e of d.outs) inputsOf[at++] = outState(o, e >> 1, e & 1, r, n, src)!;
      for (const e of d.ins) inputsOf[at++] = inState(body, o, e >> 1, e & 1, r, n, src)!;
      got.fill(null);
      if (boxes !== undefined) {
        // the run's one term over this iteration's windows (eval/box-block.ts)
        while (run!.to > r) run = boxes.runs[++runAt];
        const { base, slope, slots, inputs } = run!;
        if (bounds.length !== base.length) bounds = new Int32Array(base.length);
        for (let e = 0, k = run!.from - r; e < base.length; e++) bounds[e] = base[e] + k * slope[e];
        const [wheres, ins] = [bounds.subarray(0, 2 * slots), bounds.subarray(2 * slots, 2 * (slots + inputs))];
        const outs = run!.block.run(inputsOf, wheres, ins, bounds.subarray(2 * (slots + inputs)));
        for (let j = 0; j < d.results.length; j++) {
          const b = (got[d.results[j]] = outs[j]);
          if (typeof b !== "number") made.add(b);
        }
      } else {
        const it = (d.interpreter ??= termRunner(d.term.tape, d.term.output.atoms));
        it.run(inputsOf);
        const out = d.term.output.atoms;
        for (let j = 0; j < d.results.length; j++) {
          const b = (got[d.results[j]] = it.take(out[j]));
          if (b !== null && typeof b !== "number") made.add(b);
        }
        it.clear();
      }
      // this iteration's carries are read no more
      for (const b of c) if (typeof b !== "number") release(b);
      for (let e = 0; e < PARTS * body.nc; e++) {
        const kind = body.carryKind[e >> 1];
        if (kind === "internal") chain[e] = replaced(chain[e], got[e]);
        else if (kind === "identity" && !body.literal[e >> 1]) identity[e] = replaced(identity[e], got[e]);
      }
      for (let l = 0; l < body.nx; l++) {
        for (let part = 0; part < PARTS; part++) {
          xResult[PARTS * (r * body.nx + l) + part] = got[PARTS * (body.nc + l) + part] ?? held[PARTS * (body.nc + r * body.nx + l) + part];
        }
      }
      for (let e = 0; e < PARTS * body.np; e++) pAcc[e] = replaced(pAcc[e], got[PARTS * (body.nc + body.nx) + e]);
      reverseStats.swept++;
    }
  }
  // from the pool, as a kernel's result (the replay hands it back after its last scanOut)
  const out = alloc(length);
  const result = (e: number): Buf | null => {
    const a = e >> 1;
    if (a < body.nc) return body.carryKind[a] === "internal" ? chain[e] : body.carryKind[a] === "identity" ? identity[e] : null;
    if (a < body.nc + n * body.nx) return xResult[e - PARTS * body.nc];
    return pAcc[e - PARTS * (nargs - body.np)];
  };
  for (let e = 0; e < PARTS * nargs; e++) {
    if (!plan.present[e]) continue;
    const got = result(e);
    // a block's result over windows: the zeros outside its box
    if (boxes !== undefined && boxes.final[2 * e] >= 0 && got !== null && typeof got !== "number" && made.has(got)) {
      got.fill(0, 0, boxes.final[2 * e]);
      got.fill(0, boxes.final[2 * e + 1]);
    }
    writeAt(out, offsets[e], (got ?? held[e])!);
  }
  // the cotangents the blocks made are copied in: they go back
  for (const b of made) release(b as Float64Array);
  return out;
}

/**
 * reverseRun for a body of reals: the carries recomputed by compiled code into flat
 * arrays, the middle iterations (0 < r < n − 1) by each pattern's compiled block, the
 * first and last (whose cotangents come from elsewhere) by its term compiled as one step.
 */
function reverseReals(s: ReverseSweep, values: readonly number[]): Float64Array {
  const { p, plan, inputs, seedOrder, offsets, length } = s;
  const { body, n, layout } = p;
  const { nc, nx, np } = body;
  const nargs = nc + n * nx + np;
  const nobs = layout.obs.length;
  const nin = nc + nx + np;
  const X = Float64Array.from(values.slice(nc, nc + n * nx));
  const P = Float64Array.from(values.slice(nc + n * nx, nargs));
  // seeds and held cotangents, dense (reals have no pieces)
  const S = new Float64Array(n * nobs);
  const seedFinal = new Float64Array(nc);
  seedOrder.forEach((o, j) => {
    const offset = o >> 1;
    const v = values[nargs + j];
    if (offset < n * layout.width) S[Math.floor(offset / layout.width) * nobs + layout.obsOffset.indexOf(offset % layout.width)] = v;
    else seedFinal[layout.carryOffset.indexOf(offset)] = v;
  });
  const held = new Float64Array(nargs);
  let next = nargs + seedOrder.length;
  for (let a = 0; a < nargs; a++) if (inputs.acc[2 * a]) held[a] = values[next++];
  if (s.packedSeeds !== undefined && s.packedSeeds.length > 0) {
    const ct = values[next] as unknown as Float64Array;
    for (const o of s.packedSeeds) {
      const r = Math.floor(o / layout.width);
      S[r * nobs + layout.obsOffset.indexOf(o - r * layout.width)] = ct[o];
    }
  }
  const A = held.subarray(nc, nc + n * nx);
  // x's cotangents start as held: a block that returns one started from it
  const XR = A.slice();
  const { outs: o } = cacheFor(body, layout.obs);
  // running cotangents: st = [chain (nc)][identity (nc)][captured (np)]
  const st = new Float64Array(2 * nc + np);
  for (let k = 0; k < nc; k++) if (body.carryKind[k] === "identity") st[nc + k] = held[k];
  for (let q = 0; q < np; q++) st[2 * nc + q] = held[nargs - np + q];
  // checkpoints (those the traced run stored, at these values; else a forward run), then each segment's carries
  const forward = (from: number, to: number, carry: number[], storeOut: Float64Array, every: number): void => {
    runForward(
      {
        body,
        x: () => [],
        p: Array.from(P),
        from,
        to,
        checkFrom: n,
        reportTies: false,
        obs: null,
        write: null,
        reals: { xs: X, obsOut: null, obsBase: 0, storeOut, storeFrom: from, storeEvery: every },
      },
      carry,
      false,
    );
  };
  const stash = takeStash(p, values.slice(0, nargs));
  // every carry stored: one segment whose carries are there
  const all = stash !== null && stash.every === 1 && n > 1;
  const K = all ? n : (stash?.every ?? segmentLength(p.checkpoint, n));
  const count = Math.ceil(n / K);
  let checkpoints: Float64Array;
  if (all) checkpoints = stash.carries.subarray(0, nc);
  else if (stash !== null) checkpoints = stash.carries;
  else {
    checkpoints = takeColumn(Float64Array, count * nc);
    if (K < n) {
      // up to the last checkpoint (see reverseAny)
      const c = values.slice(0, nc);
      forward(0, (count - 1) * K, c, checkpoints, K);
      checkpoints.set(c, (count - 1) * nc);
    } else checkpoints.set(values.slice(0, nc));
  }
  reverseStats.stored = all ? n : count;
  reverseStats.maxStored = all ? n : count;
  reverseStats.swept = 0;
  const C = all ? stash.carries : takeColumn(Float64Array, Math.min(K, n) * nc);
  const edgeStep = (r: number, cBase: number): void => {
    const d = plan.patterns[plan.at.at(r)];
    const src: Sources<number | null> = {
      chain: (k) => st[k],
      identity: (k) => st[nc + k],
      p: (q) => st[2 * nc + q],
      seedObs: (rr, s) => (s < 0 ? null : S[rr * nobs + s]),
      seedFinal: (k) => seedFinal[k],
      acc: (a) => {
        const b = aliasOf(p, a);
        return b >= 0 ? XR[b - nc] : held[a];
      },
      none: null,
    };
    const states: number[] = [];
    for (const e of d.outs) states.push(outState(o, e >> 1, 0, r, n, src)!);
    for (const e of d.ins) states.push(inState(body, o, e >> 1, 0, r, n, src)!);
    const I = new Float64Array(nc + nx + np + states.length);
    for (let k = 0; k < nc; k++) I[k] = C[(r - cBase) * nc + k];
    for (let l = 0; l < nx; l++) I[nc + l] = X[r * nx + l];
    I.set(P, nc + nx);
    I.set(states, nc + nx + np);
    const O = new Float64Array(d.results.length);
    // compiled once per block derivative, as the middle iterations' block is
    (d.step ??= compiledStep(d.term))(I, O);
    d.results.forEach((e, j) => {
      const k = e >> 1;
      const v = O[j];
      if (k < nc) st[body.carryKind[k] === "internal" ? k : nc + k] = v;
      else if (k < nc + nx) XR[r * nx + (k - nc)] = v;
      else st[2 * nc + (k - nc - nx)] = v;
    });
    reverseStats.swept++;
  };
  for (let seg = count - 1; seg >= 0; seg--) {
    const lo = seg * K;
    const hi = Math.min(n, lo + K);
    if (!all) {
      // up to the segment's last iteration, whose carry is stored after the run (see reverseAny)
      const c = Array.from(checkpoints.subarray(seg * nc, (seg + 1) * nc));
      forward(lo, hi - 1, c, C, 1);
      C.set(c, (hi - 1 - lo) * nc);
    }
    reverseStats.maxStored = Math.max(reverseStats.maxStored, all ? n : count + (hi - lo));
    let r = hi - 1;
    while (r >= lo) {
      if (r === n - 1 || r === 0) {
        edgeStep(r, lo);
        r--;
        continue;
      }
      // the middle iterations of one pattern, at once
      const pattern = plan.at.at(r);
      const end = Math.max(lo, 1, plan.at.end(r));
      const d = plan.patterns[pattern];
      // compiled once per block derivative (itself made once per body structure and pattern)
      const alias = p.stacked?.alias.join(",");
      let compiled = alias === undefined ? d.compiled : aliasedBlocks.get(d)?.get(alias);
      if (compiled === undefined) {
        compiled = compiledBlock(d.term, body, wiring(p, o, nobs, d));
        if (alias === undefined) d.compiled = compiled;
        else {
          let byAlias = aliasedBlocks.get(d);
          if (byAlias === undefined) aliasedBlocks.set(d, (byAlias = new Map()));
          byAlias.set(alias, compiled);
        }
      }
      compiled(end, r + 1, C, lo, X, P, S, A, st, XR);
      reverseStats.swept += r + 1 - end;
      r = end - 1;
    }
  }
  // the carries' buffers back to the pool of columns
  if (stash !== null) giveColumn(stash.column);
  else giveColumn(checkpoints);
  if (!all) giveColumn(C);
  const out = new Float64Array(length);
  for (let a = 0; a < nargs; a++) {
    if (!plan.present[2 * a]) continue;
    let v: number;
    if (a < nc) v = body.carryKind[a] === "internal" ? st[a] : st[nc + a];
    else if (a < nc + n * nx) v = XR[a - nc];
    else v = st[2 * nc + (a - nc - n * nx)];
    out[offsets[2 * a]] = v;
  }
  void nin;
  return out;
}

/** Blocks compiled for stacked scans whose leaves start from others' cotangents (the wiring differs), by the leaves' aliases. */
const aliasedBlocks = new WeakMap<BlockDerivative, Map<string, NonNullable<BlockDerivative["compiled"]>>>();

/** Where a block's states come from in a middle iteration, and where its results go (jit/scan-code.ts's BlockWiring). */
function wiring(p: ScanParams, o: Outs, nobs: number, d: BlockDerivative): { states: string[]; results: string[]; locals: string[] } {
  const { body } = p;
  const { nc, nx, np } = body;
  const alias = p.stacked?.alias;
  const states: string[] = [];
  for (const e of d.outs) {
    const j = e >> 1;
    states.push(o.carry[j] >= 0 ? `ch${o.carry[j]}` : `S[r * ${nobs} + ${o.slot[j]}]`);
  }
  for (const e of d.ins) {
    const k = e >> 1;
    if (k < nc) states.push(body.carryKind[k] === "identity" ? `id${k}` : `S[(r - 1) * ${nobs} + ${o.carrySlot[k]}]`);
    else if (k < nc + nx) states.push(alias !== undefined && alias[k - nc] >= 0 ? `XR[(r + 1) * ${nx} + ${alias[k - nc]}]` : `A[r * ${nx} + ${k - nc}]`);
    else states.push(`pa${k - nc - nx}`);
  }
  const results = d.results.map((e) => {
    const k = e >> 1;
    if (k < nc) return body.carryKind[k] === "identity" ? `id${k}` : `ch${k}`;
    if (k < nc + nx) return `XR[r * ${nx} + ${k - nc}]`;
    return `pa${k - nc - nx}`;
  });
  const locals = [
    ...Array.from({ length: nc }, (_, k) => `ch${k}`),
    ...Array.from({ length: nc }, (_, k) => `id${k}`),
    ...Array.from({ length: np }, (_, q) => `pa${q}`),
  ];
  return { states, results, locals };
}

/** The carries the traced run stored, if the arguments are the values it ran at (taken: used once). */
function takeStash(p: ScanParams, values: readonly number[]): { readonly carries: Float64Array; readonly column: Float64Array; readonly every: number } | null {
  const stash = p.stash;
  if (stash === null) return null;
  p.stash = null;
  for (let a = 0; a < values.length; a++) {
    if (!Object.is(values[a], stash.values[a])) {
      giveColumn(stash.column);
      return null;
    }
  }
  return stash;
}
