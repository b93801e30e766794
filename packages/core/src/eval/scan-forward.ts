/**
 * @file A body's term run over a range of iterations, on numbers and buffers: the value
 * of a scan instruction, and the carries its derivative recomputes.
 *
 * Each iteration evaluates the body's term at the carry, that iteration's x and the
 * captured values, and checks what makes the term the trace of that iteration (the
 * paper's trace term holds on the region its predicates select): its guards come out as
 * recorded, no value marked literal is one the tape would have folded, and, when ties
 * are reported, no decision is a tie and no kinked primitive is at its kink. The run
 * stops at the first iteration where one of those fails, with the carry as it came in.
 */
import { predicates, release, type Buf } from "@wengert/ops";
import type { Body } from "../trace/body.js";
import { folds } from "../trace/body.js";
import { KINKS, tensorSpec } from "../trace/opcodes.js";
import { compiledForward, scanCode } from "../jit/scan-code.js";
import { termRunner } from "../jit/scan-fused.js";
import type { TermRunner } from "./interpreter.js";

const NONE = new Int32Array(0);

/** Iterations run forward by every run since `iterations` was set (tests count the passes over a loop). */
export const forwardStats = { iterations: 0 };

export interface ForwardRun {
  readonly body: Body;
  /** x's leaves at iteration i of the run (the body's input order). */
  readonly x: (i: number) => readonly Buf[];
  readonly p: readonly Buf[];
  readonly from: number;
  readonly to: number;
  /** Decisions are checked from this iteration on (the traced one holds by construction). */
  readonly checkFrom: number;
  readonly reportTies: boolean;
  /** Whether literal values the tape would fold stop the run (not where nothing is traced: no tape). */
  readonly checkFolds?: boolean;
  /** Body variables whose values are written at each iteration (`write(i, slot, value)`). */
  readonly obs: Int32Array | null;
  readonly write: ((i: number, slot: number, v: Buf) => void) | null;
  /** Called before iteration i with the carry (checkpoints), when set. */
  readonly store?: (i: number, carry: readonly Buf[]) => void;
  /** `store` keeps the carry buffers the run made (a sweep's every carry): the run hands them over, not back to the pool. */
  readonly keeps?: boolean;
  /** For a body of reals, the same in flat arrays: the run is then compiled code (jit/scan-code.ts). */
  readonly reals?: RealsIO;
}

/** A run of a body of reals: its inputs and outputs as flat arrays. */
export interface RealsIO {
  /** x's values: iteration i's leaf l at xs[i·nx + l]. */
  readonly xs: Float64Array;
  /** Written values: iteration i's slot s at obsOut[(i − obsBase)·|obs| + s]. */
  readonly obsOut: Float64Array | null;
  readonly obsBase: number;
  /** Carries stored before iterations from, from + every… (the k-th at storeOut[k·nc]). */
  readonly storeOut: Float64Array | null;
  readonly storeFrom: number;
  readonly storeEvery: number;
}

/**
 * Run the body from `from` while it holds, up to `to`. `carry` is updated in place (its
 * buffers are the caller's: replaced ones are handed back to the pool when `owned`);
 * returns the iteration where the run stopped.
 */
export function runForward(r: ForwardRun, carry: Buf[], owned: boolean): number {
  const stop = runFrom(r, carry, owned);
  forwardStats.iterations += stop - r.from;
  return stop;
}

function runFrom(r: ForwardRun, carry: Buf[], owned: boolean): number {
  const io = r.reals;
  if (io !== undefined && scanCode.enabled) {
    const run = compiledForward(r.body, r.obs ?? NONE);
    const c = Float64Array.from(carry as number[]);
    const stop = run(
      c,
      io.xs,
      Float64Array.from(r.p as number[]),
      r.from,
      r.to,
      r.checkFrom,
      r.reportTies,
      r.checkFolds ?? true,
      io.obsOut,
      io.obsBase,
      io.storeOut,
      io.storeFrom,
      io.storeEvery,
    );
    for (let k = 0; k < c.length; k++) carry[k] = c[k];
    return stop;
  }
  return interpretForward(r, carry, owned);
}

/** The variables a forward run reads after each iteration. */
export function forwardKeep(body: Body, obs: Int32Array | null): Set<number> {
  const tape = body.term.tape;
  const keep = new Set<number>(body.carryOut);
  if (obs !== null) for (const v of obs) keep.add(v);
  for (const g of body.guards) keep.add(g.a).add(g.b);
  for (const f of body.folds) keep.add(f.v);
  for (const i of body.kinked) keep.add(tape.a[i]);
  for (const i of body.tensorTies) {
    keep.add(i);
    for (const v of tape.args(i)) keep.add(v);
  }
  return keep;
}

const interpreters = new WeakMap<Body, Map<Int32Array | null, TermRunner>>();

function interpreterFor(body: Body, obs: Int32Array | null): TermRunner {
  let byObs = interpreters.get(body);
  if (byObs === undefined) interpreters.set(body, (byObs = new Map()));
  let it = byObs.get(obs);
  if (it === undefined) byObs.set(obs, (it = termRunner(body.term.tape, forwardKeep(body, obs))));
  return it;
}

/** Whether the term holds at the values just computed (see the file's comment). */
export function holds(body: Body, value: (v: number) => Buf, reportTies: boolean, checkFolds = true): boolean {
  const lit = body.literalOnly;
  for (const g of body.guards) {
    const va = value(g.a) as number;
    const vb = value(g.b) as number;
    if (predicates[g.pred].test(va, vb) !== g.outcome) return false;
    if (reportTies && va === vb && g.distinct && !(lit[g.a] && lit[g.b])) return false;
  }
  if (checkFolds) for (const f of body.folds) if (folds(f.code, value(f.v) as number)) return false;
  if (!reportTies) return true;
  const tape = body.term.tape;
  for (const i of body.kinked) {
    const kink = KINKS[tape.op[i]]!;
    const arg = value(tape.a[i]);
    if (typeof arg === "number" ? kink(arg) : arg.some((t) => kink(t))) return false;
  }
  for (const i of body.tensorTies) {
    const args = tape.args(i);
    if (tensorSpec(tape.op[i]).tie!(args.map(value), args.map((v) => tape.dims(v)), tape.params(i), value(i)) !== null) return false;
  }
  return true;
}

function interpretForward(r: ForwardRun, carry: Buf[], owned: boolean): number {
  const { body, p, obs } = r;
  const io = r.reals;
  const write =
    r.write ??
    (io !== undefined && io.obsOut !== null && obs !== null
      ? (i: number, s: number, v: Buf) => (io.obsOut![(i - io.obsBase) * obs.length + s] = v as number)
      : null);
  const store = r.store ?? (io !== undefined && io.storeOut !== null ? (i: number, c: readonly Buf[]) => {
    if ((i - io.storeFrom) % io.storeEvery === 0) io.storeOut!.set(c as number[], ((i - io.storeFrom) / io.storeEvery) * body.nc);
  } : undefined);
  const xAt = io !== undefined ? (i: number): number[] => Array.from(io.xs.subarray(i * body.nx, (i + 1) * body.nx)) : r.x;
  const it = interpreterFor(body, obs);
  const out = body.carryOut;
  const inputs: Buf[] = new Array<Buf>(body.nc + body.nx + body.np);
  for (let q = 0; q < p.length; q++) inputs[body.nc + body.nx + q] = p[q];
  const value = (v: number): Buf => it.value(v);
  // which carry buffers are this run's to hand back (the caller's are not, until replaced)
  const mine = new Uint8Array(body.nc).fill(owned ? 1 : 0);
  let i = r.from;
  for (; i < r.to; i++) {
    store?.(i, carry);
    for (let k = 0; k < body.nc; k++) inputs[k] = carry[k];
    const x = xAt(i);
    for (let l = 0; l < body.nx; l++) inputs[body.nc + l] = x[l];
    it.run(inputs);
    if (i >= r.checkFrom && !holds(body, value, r.reportTies, r.checkFolds ?? true)) {
      it.clear();
      break;
    }
    if (obs !== null && write !== null) for (let s = 0; s < obs.length; s++) write(i, s, it.value(obs[s]));
    for (let k = 0; k < body.nc; k++) {
      if (body.carryKind[k] === "identity") continue;
      const before = carry[k];
      carry[k] = it.take(out[k]);
      if (mine[k] && typeof before !== "number" && r.keeps !== true) release(before);
      mine[k] = 1;
    }
    it.clear();
  }
  return i;
}
