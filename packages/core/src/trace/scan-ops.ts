/**
 * @file The instructions of a scan: a run of iterations of one body's term, its outputs,
 * and the derivative instructions the reverse and forward sweeps emit for it.
 *
 * `scan` is one instruction of the enclosing tape that refers to the body's term
 * (params) and applies it `n` times; its arguments are the carry as it comes in, every
 * iteration's x and the values the body captured. Its value packs what the loop makes
 * visible: per iteration the body variables in `layout.obs` (the ys, and carries a y
 * names), then the final carry, then a flag that the body's decisions held at every
 * iteration (a guard on it keeps a replayed trace honest, api/compile.ts). `scanOut`
 * reads one of them: a real, or a tensor. The sweeps know these instructions
 * (diff/scan-reverse.ts, diff/scan-tangent.ts); any other pass sees them written out
 * (diff/unroll.ts). They are registered when the first scan is traced.
 */
import { alloc, pooledCopy, release, size, type Buf, type Dims, type TensorOp } from "@wengert/ops";
import { WengertError } from "../errors.js";
import type { Body } from "./body.js";
import { registerPrimitive } from "./opcodes.js";
import { runForward } from "../eval/scan-forward.js";

/** Where carries are stored for the reverse sweep: every iteration's, every ⌈√n⌉-th, or every k-th. */
export type Checkpoint = "every" | "sqrt" | number;

/** Where a run's outputs are in its packed value. */
export interface ScanLayout {
  /** Body variables written at every iteration. */
  readonly obs: Int32Array;
  /** Their offsets within one iteration's block, and the block's width. */
  readonly obsOffset: Int32Array;
  readonly width: number;
  /** The final carry's leaves, after the n blocks. */
  readonly carryOffset: Int32Array;
  readonly held: number;
  readonly length: number;
}

/** The carries a traced run of a body of tensors kept, with the arguments it ran at; taken once, by the sweep (trace/scan-stash.ts). */
export interface CarryStash {
  readonly values: readonly Buf[];
  /** The carry coming into iterations 0, every, 2·every… (each the body's carry leaves), the sweep's to hand back. */
  readonly carries: Buf[][];
  readonly every: number;
}

export interface ScanParams {
  readonly body: Body;
  readonly n: number;
  /** The first iteration's index in the loop (messages). */
  readonly start: number;
  readonly layout: ScanLayout;
  /** Whether a tie or a kink stops the run (as tracing would report it). */
  readonly reportTies: boolean;
  readonly checkpoint: Checkpoint;
  readonly caller: string;
  /** Written out in a derivative differentiated again, the scan throws (its options.nested: "scan"; diff/unroll.ts). */
  readonly nestsOnly?: boolean;
  /**
   * The carries the traced run stored as the checkpoint policy asks (a body of reals), for
   * the reverse sweep that follows at the same values (it takes them once; a replay at
   * other values recomputes its own): every `every`-th carry, with the argument values.
   */
  stash: { readonly values: Float64Array; readonly carries: Float64Array; readonly column: Float64Array; readonly every: number } | null;
  /** The same for a body of tensors, its carries as buffers, kept only where a reverse sweep follows (trace/scan-stash.ts). */
  carries: CarryStash | null;
  /** Where x comes from when it is not one argument per leaf and iteration (a nested reverse sweep's residuals). */
  readonly stacked?: Stacked;
}

/**
 * The xs of a scan that reads them from another scan's packed value (one argument after
 * the carry): leaf l of iteration i at `at[l] + i · step`. A scan's reverse sweep emitted
 * where it will be differentiated again reads the forward run's values so
 * (diff/scan-nested.ts): iteration i of the sweep is iteration n − 1 − i of the loop.
 * A tensor leaf is the `size(dims)` elements from there (its slot in the packed value).
 */
export interface Stacked {
  readonly at: Int32Array;
  readonly step: number;
  /**
   * Per leaf: the leaf that read the same element at the iteration before (-1: none). The
   * sweep reads a carry at iteration r as the value carry′ had at r + 1 of the sweep's
   * iterations before; its cotangent is one sum, so the reverse sweep starts that leaf's from
   * the other's (diff/reverse-plan.ts `aliasOf`).
   */
  readonly alias: Int32Array;
}

/** How many of a scan's arguments hold its xs: one per leaf and iteration, or the one packed value a stacked scan reads. */
export function xArgCount(p: ScanParams): number {
  return p.stacked === undefined ? p.n * p.body.nx : 1;
}

/** Iteration i's x leaves of a stacked scan, read from the packed value (args[nc]): a real, or a tensor's slot copied. */
export function stackedXs(p: ScanParams, args: readonly Buf[], i: number): Buf[] {
  const packed = args[p.body.nc] as Float64Array;
  return Array.from(p.stacked!.at, (_at, l) => stackedLeaf(p, packed, i, l));
}

/** Leaf l of iteration i of a stacked scan's xs, read from `packed` (the packed value, or its tangent): a real, or a tensor's slot copied. */
export function stackedLeaf(p: ScanParams, packed: Float64Array, i: number, l: number): Buf {
  const s = p.stacked!;
  const dims = p.body.inputDims[p.body.nc + l];
  const o = s.at[l] + i * s.step;
  return dims.length === 0 ? packed[o] : packed.slice(o, o + size(dims));
}

/** Every iteration's x leaves of a scan, flat (iteration i's leaf l at i·nx + l), from its arguments' values (reals). */
export function flatXs(p: ScanParams, args: readonly Buf[]): Float64Array {
  const { body, n } = p;
  const s = p.stacked;
  if (s === undefined) return Float64Array.from(args.slice(body.nc, body.nc + n * body.nx) as number[]);
  const packed = args[body.nc] as Float64Array;
  const xs = new Float64Array(n * body.nx);
  for (let i = 0; i < n; i++) for (let l = 0; l < body.nx; l++) xs[i * body.nx + l] = packed[s.at[l] + i * s.step];
  return xs;
}

export interface ScanOutParams {
  readonly offset: number;
  readonly dims: Dims;
  /** The flag that the decisions held (a guard reads it). */
  readonly held: boolean;
}

/** A derivative instruction's kernel and how to print it. */
export interface DerivedParams {
  readonly scan: ScanParams;
  readonly length: number;
  readonly run: (args: readonly Buf[]) => Float64Array;
  readonly what: string;
}

/** The run's layout for a body: what each iteration writes, where the final carry goes. */
export function layoutOf(body: Body, obs: Int32Array, n: number): ScanLayout {
  const tape = body.term.tape;
  const obsOffset = new Int32Array(obs.length);
  let width = 0;
  obs.forEach((v, s) => {
    obsOffset[s] = width;
    width += size(tape.dims(v));
  });
  let at = n * width;
  const carryOffset = new Int32Array(body.nc);
  for (let k = 0; k < body.nc; k++) {
    carryOffset[k] = at;
    at += size(body.inputDims[k]);
  }
  return { obs, obsOffset, width, carryOffset, held: at, length: at + 1 };
}

const internal = (what: string) => (): never => {
  throw new WengertError(`internal: ${what} reached a pass that does not know it; such a term is written out first (diff/unroll.ts).`);
};

export interface ScanCodes {
  readonly scan: number;
  readonly scanOut: number;
  readonly scanGrad: number;
  readonly scanTangent: number;
}

let codes: ScanCodes | null = null;

/**
 * The value of a scan instruction: the run from its carry, every decision checked; where
 * one fails (a replay at a point where the trace does not hold) the flag is 0 and the
 * values after it NaN.
 */
export function scanValue(args: readonly Buf[], p: ScanParams): Float64Array {
  const { body, n, layout } = p;
  // from the pool (a replay hands it back after its last scanOut): at a thousand elements a fresh
  // array costs about what a Runge–Kutta step does (GradBench's ode)
  const out = alloc(layout.length);
  const carry = args.slice(0, body.nc) as Buf[];
  const xBase = body.nc;
  const pArgs = args.slice(xBase + xArgCount(p));
  const xs = body.reals ? flatXs(p, args) : null;
  const stop = runForward(
    {
      body,
      x: (i) =>
        xs !== null
          ? Array.from(xs.subarray(i * body.nx, (i + 1) * body.nx))
          : p.stacked !== undefined
            ? stackedXs(p, args, i)
            : args.slice(xBase + i * body.nx, xBase + (i + 1) * body.nx),
      p: pArgs,
      from: 0,
      to: n,
      checkFrom: 0,
      reportTies: p.reportTies,
      obs: layout.obs,
      write: (i, s, v) => writeAt(out, i * layout.width + layout.obsOffset[s], v),
      reals: body.reals
        ? {
            xs: xs!,
            obsOut: out,
            obsBase: 0,
            storeOut: null,
            storeFrom: 0,
            storeEvery: 1,
          }
        : undefined,
    },
    carry,
    false,
  );
  if (stop < n) {
    out.fill(NaN, stop * layout.width);
    out[layout.held] = 0;
  } else {
    for (let k = 0; k < body.nc; k++) writeAt(out, layout.carryOffset[k], carry[k]);
    out[layout.held] = 1;
  }
  // the run's own carries (taken from its runner, not arguments) are copied in or dropped: they go back
  for (let k = 0; k < body.nc; k++) if (typeof carry[k] !== "number" && carry[k] !== args[k]) release(carry[k] as Float64Array);
  return out;
}

/** Write a real or a tensor's elements at `at`. */
export function writeAt(out: Float64Array, at: number, v: Buf): void {
  if (typeof v === "number") out[at] = v;
  else out.set(v, at);
}

/** The codes of the scan instructions, registered on first use. */
export function scanCodes(): ScanCodes {
  if (codes !== null) return codes;
  const scan: TensorOp<ScanParams> = {
    kind: "tensor",
    arity: -1,
    shape: (_dims, p) => [p.layout.length],
    forward: (args, _dims, p) => scanValue(args, p),
    reverse: internal("a scan instruction"),
    tangent: internal("a scan instruction"),
    show: (p) => `n = ${p.n}, body of ${p.body.length} instructions`,
  };
  const scanOut: TensorOp<ScanOutParams> = {
    kind: "tensor",
    arity: 1,
    shape: (_dims, p) => p.dims,
    forward: ([packed], _dims, p) => {
      const buf = packed as Float64Array;
      if (p.dims.length === 0) return buf[p.offset];
      // a pool buffer, as a kernel's result is (the replay hands it back after its last reader)
      return pooledCopy(buf.subarray(p.offset, p.offset + size(p.dims)));
    },
    reverse: internal("scanOut"),
    tangent: internal("scanOut"),
    show: (p) => (p.held ? "held" : `at ${p.offset}`),
  };
  const derived = (name: string): TensorOp<DerivedParams> => ({
    kind: "tensor",
    arity: -1,
    shape: (_dims, p) => [p.length],
    forward: (args, _dims, p) => p.run(args),
    reverse: internal(name),
    tangent: internal(name),
    show: (p) => `${p.what}, n = ${p.scan.n}`,
  });
  codes = {
    scan: registerPrimitive("scan", scan),
    scanOut: registerPrimitive("scanOut", scanOut),
    scanGrad: registerPrimitive("scanGrad", derived("scanGrad")),
    scanTangent: registerPrimitive("scanTangent", derived("scanTangent")),
  };
  return codes;
}

/** Whether `code` is one of the scan instructions (false before any is registered). */
export function isScanCode(code: number): boolean {
  return codes !== null && (code === codes.scan || code === codes.scanOut || code === codes.scanGrad || code === codes.scanTangent);
}

/** Whether the tape holds a scan instruction (of any kind). */
export function hasScans(tape: { readonly op: Uint16Array; readonly length: number; readonly tensorCount: number }): boolean {
  if (codes === null || tape.tensorCount === 0) return false;
  for (let i = 0; i < tape.length; i++) if (isScanCode(tape.op[i])) return true;
  return false;
}

/** The iterations between stored carries for a checkpoint policy (n: the first carry only). */
export function segmentLength(checkpoint: Checkpoint, n: number): number {
  return checkpoint === "every" ? n : checkpoint === "sqrt" ? Math.max(1, Math.ceil(Math.sqrt(n))) : Math.min(checkpoint, n);
}

/** The scanOut instructions of each scan instruction of a tape, by the scan's variable. */
export function scanOutputs(tape: { readonly op: Uint16Array; readonly length: number; args(v: number): readonly number[] }): Map<number, number[]> {
  const code = scanCodes().scanOut;
  const outputsOf = new Map<number, number[]>();
  for (let i = 0; i < tape.length; i++) {
    if (tape.op[i] !== code) continue;
    const s = tape.args(i)[0];
    let list = outputsOf.get(s);
    if (list === undefined) outputsOf.set(s, (list = []));
    list.push(i);
  }
  return outputsOf;
}
