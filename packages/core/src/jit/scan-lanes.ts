/**
 * @file A scan instruction's value at many lanes at once (vmap, eval/lanes.ts): the
 * body's term evaluated per iteration over the column of the lanes' carries, as
 * JavaScript, for a body of reals.
 *
 * vmap evaluates one trace at many points (the ordinary evaluator over columns). Lane by
 * lane, a scan ran its whole loop per lane, each call unpacking its arguments and finding
 * its code again. Here the iterations are the outer loop and the lanes the inner one: at
 * iteration i every lane still running applies the body's statements (the very statements
 * of the body's forward code, jit/scan-code.ts) to its carry, x and captured values, each
 * a column where it varies by lane. A lane where a check fails (a guard comes out
 * otherwise, a literal the tape would fold, a tie or kink when reported) stops there, as
 * that lane's own run would, and its value is what scanValue gives a run that stopped:
 * NaN from there on and the flag 0, so the scan's guard sends that lane back to vmap,
 * which traces it with the lanes that decide as it does. Per lane, the numbers of its own
 * run, to the bit.
 */
import { alloc } from "@wengert/ops";
import { KERNELS, KINKS } from "../trace/opcodes.js";
import type { ScanParams } from "../trace/scan-ops.js";
import { byStructure, forwardChecks, forwardNeed, scanCode, statements } from "./scan-code.js";

/** One argument of the scan over the lanes: a column (one value per lane) or one value for all. */
export interface LaneArg {
  readonly column: Float64Array | null;
  readonly value: number;
}

type Run = (
  K: typeof KERNELS,
  KINK: typeof KINKS,
  w: number,
  n: number,
  carry: Float64Array,
  XC: readonly (Float64Array | null)[],
  XV: Float64Array,
  PC: readonly (Float64Array | null)[],
  PV: Float64Array,
  reportTies: boolean,
  OUT: readonly Float64Array[],
  stop: Int32Array,
) => void;

/** Lanes the scan's value was computed for by the column code (for tests). */
export const scanLaneStats = { lanes: 0, runs: 0 };

/**
 * The scan's packed value (trace/scan-ops.ts scanValue) at w lanes, side by side in one
 * buffer (lane k's at k · layout.length, as vmap's batching rules lay lanes out): `args[j]`
 * is its argument j over the lanes, `ok[k]` whether lane k is still wanted (0: its value
 * is left as zeros). Null where this is not for the scan (a body of tensors, no code allowed).
 */
export function scanLanes(p: ScanParams, args: readonly LaneArg[], w: number, ok: Uint8Array): Float64Array | null {
  const { body, n, layout } = p;
  // a stacked scan (a nested sweep's, diff/scan-nested.ts) reads its xs packed: lane by lane
  if (!body.reals || p.stacked !== undefined || !scanCode.enabled) return null;
  const { nc, nx, np } = body;
  const run = byStructure(body, `L${layout.obs.join(",")}`, () => makeLanes(p));
  const carry = new Float64Array(w * nc);
  for (let j = 0; j < nc; j++) {
    const a = args[j];
    for (let k = 0; k < w; k++) carry[k * nc + j] = a.column === null ? a.value : a.column[k];
  }
  const XC = args.slice(nc, nc + n * nx).map((a) => a.column);
  const XV = Float64Array.from(args.slice(nc, nc + n * nx), (a) => a.value);
  const PC = args.slice(nc + n * nx, nc + n * nx + np).map((a) => a.column);
  const PV = Float64Array.from(args.slice(nc + n * nx, nc + n * nx + np), (a) => a.value);
  const L = layout.length;
  const out = alloc(w * L);
  const OUT: Float64Array[] = [];
  const stop = new Int32Array(w);
  for (let k = 0; k < w; k++) {
    OUT.push(out.subarray(k * L, (k + 1) * L));
    stop[k] = ok[k] ? n : -1;
  }
  run(KERNELS, KINKS, w, n, carry, XC, XV, PC, PV, p.reportTies, OUT, stop);
  for (let k = 0; k < w; k++) {
    if (!ok[k]) continue;
    const o = OUT[k];
    if (stop[k] < n) {
      o.fill(NaN, stop[k] * layout.width);
      o[layout.held] = 0;
      continue;
    }
    for (let j = 0; j < nc; j++) o[layout.carryOffset[j]] = carry[k * nc + j];
    o[layout.held] = 1;
  }
  scanLaneStats.runs++;
  scanLaneStats.lanes += w;
  return out;
}

function makeLanes(p: ScanParams): Run {
  const { body, layout } = p;
  const { nc, nx, np } = body;
  const obs = layout.obs;
  const out = body.carryOut;
  const need = forwardNeed(body, obs);
  const input = (k: number): string => (k < nc ? `c${k}` : k < nc + nx ? `x${k - nc}` : `p${k - nc - nx}`);
  const checks = forwardChecks(body, "{ stop[k] = i; continue; }");
  const source = [
    "const checkFolds = true;",
    ...Array.from({ length: np }, (_, q) => `const pc${q} = PC[${q}], pv${q} = PV[${q}];`),
    "for (let i = 0; i < n; i++) {",
    ...Array.from({ length: nx }, (_, l) => `  const xc${l} = XC[i * ${nx} + ${l}], xv${l} = XV[i * ${nx} + ${l}];`),
    "  for (let k = 0; k < w; k++) {",
    "    if (stop[k] <= i) continue;",
    ...Array.from({ length: nc }, (_, j) => `    const c${j} = carry[k * ${nc} + ${j}];`),
    ...Array.from({ length: nx }, (_, l) => `    const x${l} = xc${l} === null ? xv${l} : xc${l}[k];`),
    ...Array.from({ length: np }, (_, q) => `    const p${q} = pc${q} === null ? pv${q} : pc${q}[k];`),
    ...statements(body.term.tape, need, input).map((l) => `    ${l}`),
    ...checks.map((c) => `    ${c}`),
    obs.length > 0 ? `    { const o = OUT[k], at = i * ${obs.length}; ${Array.from(obs, (v, s) => `o[at + ${s}] = v${v};`).join(" ")} }` : "",
    ...Array.from({ length: nc }, (_, j) => (body.carryKind[j] === "identity" ? "" : `    carry[k * ${nc} + ${j}] = v${out[j]};`)),
    "  }",
    "}",
  ].join("\n");
  return new Function("K", "KINK", "w", "n", "carry", "XC", "XV", "PC", "PV", "reportTies", "OUT", "stop", source) as Run;
}
