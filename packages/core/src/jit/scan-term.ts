/**
 * @file A jitted trace of reals around scan instructions compiled to one JavaScript
 * function: the instructions around each scan as statements, each scan as a call to its
 * body's compiled loop (jit/scan-code.ts), each of its derivatives (scanGrad, scanTangent)
 * as a call to its kernel, which runs the body's derivative blocks compiled.
 *
 * A scan instruction is a tensor primitive (its value packs what the loop makes visible),
 * so such a trace is not one of reals, and jit replayed it instruction by instruction
 * (eval/replay.ts). Here the whole term becomes code: the same kernels and rules as
 * JavaScript source (javascript.ts), the scan's run as scanValue computes it (every
 * decision of the body checked, a failed one leaving NaN and the flag 0), every guard
 * and kink checked where the replay checks it. The only tensors are scan instructions'
 * packed values handed to others (a nested sweep reads its forward scan's; hvp's forward
 * sweeps read those values' tangents). The same numbers as the replay, to the bit.
 */
import type { Buf } from "@wengert/ops";
import { ARITY, CONST, FIRST_PRIMITIVE, INPUT, IS_TENSOR_OP, KERNELS, KINKS } from "../trace/opcodes.js";
import { flatXs, isScanCode, scanCodes, xArgCount, type DerivedParams, type ScanOutParams, type ScanParams } from "../trace/scan-ops.js";
import type { TraceTerm } from "../trace/term.js";
import type { Guard } from "../trace/tracer.js";
import { liveness } from "../diff/place.js";
import { compiledForward, scanCode } from "./scan-code.js";
import { COMPARISON, javascript, literal } from "./javascript.js";

/** The outputs at new inputs (numbers, by input), or null where the trace does not hold there. */
export type ScanTermRun = (inputs: readonly number[]) => number[] | null;

/** Traces with more instructions around their scans than this are replayed (the code is written out, not re-rolled). */
const MAX_INSTRUCTIONS = 20_000;

/** Compiled code made (for tests: a jitted scan runs no interpreter). */
export const scanTermStats = { compiled: 0 };

/**
 * The term as one function, or null where it is not a trace of reals around scans of
 * reals (a tensor anywhere else, a body of tensors), or where code may not be made.
 */
export function compileScanTerm(term: TraceTerm, guards: readonly Guard[], reportTies: boolean, checkedLength = term.tape.length): ScanTermRun | null {
  if (!scanCode.enabled) return null;
  const tape = term.tape;
  const { op, a, b, length: n } = tape;
  const codes = scanCodes();
  const results = term.output.atoms;
  const live = new Uint8Array(n);
  for (const g of guards) live[g.a] = live[g.b] = 1;
  // kinked primitives are checked as the replay checks them (a scalar one on a variable)
  // (of the first checkedLength instructions, as the replay: a derivative the outermost rd emits reports none)
  const kinked = (i: number): boolean =>
    i < checkedLength && op[i] >= FIRST_PRIMITIVE && !IS_TENSOR_OP[op[i]] && KINKS[op[i]] !== undefined && op[a[i]] !== CONST;
  if (reportTies) for (let i = 0; i < n; i++) if (kinked(i)) live[i] = 1;
  liveness(term, live);
  const guardsAt = new Map<number, Guard[]>();
  for (const g of guards) {
    const at = Math.max(op[g.a] === CONST ? -1 : g.a, op[g.b] === CONST ? -1 : g.b);
    if (at < 0) continue; // decided on literals: it comes out the same everywhere
    if (!guardsAt.has(at)) guardsAt.set(at, []);
    guardsAt.get(at)!.push(g);
  }
  if (results.some((v) => tape.isTensor(v))) return null;
  // per scan or derivative instruction: its kernel and its arguments with the literals in place
  const calls: ((args: readonly Buf[]) => Float64Array)[] = [];
  const templates: Buf[][] = [];
  const lines: string[] = [];
  const name = (v: number): string => (op[v] === CONST ? literal(tape.val[v]) : `v${v}`);
  let count = 0;
  for (let i = 0; i < n; i++) {
    if (!live[i]) continue;
    const code = op[i];
    if (code === INPUT) {
      if (tape.isTensor(i)) return null;
      lines.push(`const v${i} = I[${a[i]}];`);
    } else if (code === CONST) {
      if (tape.isTensor(i)) return null;
    } else if (code >= FIRST_PRIMITIVE) {
      if (++count > MAX_INSTRUCTIONS) return null;
      if (!IS_TENSOR_OP[code]) {
        // a scalar primitive on reals (appended elementwise or not, its arguments are a and b)
        if (tape.isTensor(i) || tape.isTensor(a[i]) || (ARITY[code] === 2 && tape.isTensor(b[i]))) return null;
        lines.push(`const v${i} = ${javascript.apply(code, name(a[i]), ARITY[code] === 1 ? name(a[i]) : name(b[i]))};`);
        if (reportTies && kinked(i)) lines.push(`if (KINK[${code}](v${a[i]})) return null;`);
      } else if (code === codes.scanOut) {
        const p = tape.params(i) as ScanOutParams;
        if (p.dims.length !== 0) return null;
        lines.push(`const v${i} = o${tape.args(i)[0]}[${p.offset}];`);
      } else if (isScanCode(code)) {
        const p = tape.params(i) as ScanParams | DerivedParams;
        const run = code === codes.scan ? scanRun(p as ScanParams) : derivedRun(p as DerivedParams);
        if (run === null) return null;
        const args = tape.args(i);
        // a tensor argument only as the packed value of another scan instruction (a nested sweep reads its forward scan's, hvp's tangents)
        const packed = (v: number): boolean => tape.isTensor(v) && isScanCode(op[v]) && op[v] !== codes.scanOut;
        if (args.some((v) => tape.isTensor(v) && !packed(v))) return null;
        const j = calls.length;
        calls.push(run);
        templates.push(args.map((v) => (op[v] === CONST ? tape.val[v] : 0)));
        const set = args.flatMap((v, k) => (op[v] === CONST ? [] : [`A[${k}] = ${packed(v) ? "o" : "v"}${v};`]));
        lines.push(`let o${i}; { const A = T[${j}].slice(); ${set.join(" ")} o${i} = H[${j}](A); }`);
      } else return null;
    } else return null;
    for (const g of guardsAt.get(i) ?? []) {
      const [va, vb] = [name(g.a), name(g.b)];
      const test = `${va} ${COMPARISON[g.pred]} ${vb}`;
      const tie = reportTies && g.distinct ? `${va} === ${vb} || ` : "";
      lines.push(`if (${tie}${g.outcome ? `!(${test})` : `(${test})`}) return null;`);
    }
  }
  lines.push(`return [${results.map(name).join(", ")}];`);
  const f = new Function("K", "KINK", "H", "T", "I", lines.join("\n")) as (
    k: typeof KERNELS,
    kink: typeof KINKS,
    h: typeof calls,
    t: typeof templates,
    i: readonly number[],
  ) => number[] | null;
  scanTermStats.compiled++;
  return (inputs) => f(KERNELS, KINKS, calls, templates, inputs);
}

/**
 * A scan instruction's value (trace/scan-ops.ts scanValue) for a body of reals: its
 * compiled loop from the carry, x's values and the captured values, every decision
 * checked; where one fails the values from there on are NaN and the flag 0.
 */
function scanRun(p: ScanParams): ((args: readonly Buf[]) => Float64Array) | null {
  const { body, n, layout } = p;
  if (!body.reals) return null;
  const nc = body.nc;
  const loop = compiledForward(body, layout.obs);
  return (args) => {
    const out = new Float64Array(layout.length);
    const carry = Float64Array.from(args.slice(0, nc) as number[]);
    // x and the captured values read as the interpreter reads them (scan-ops.ts scanValue)
    const xs = flatXs(p, args);
    const captured = Float64Array.from(args.slice(nc + xArgCount(p)) as number[]);
    const stop = loop(carry, xs, captured, 0, n, 0, p.reportTies, true, out, 0, null, 0, 1);
    if (stop < n) {
      out.fill(NaN, stop * layout.width);
      out[layout.held] = 0;
      return out;
    }
    for (let k = 0; k < nc; k++) out[layout.carryOffset[k]] = carry[k];
    out[layout.held] = 1;
    return out;
  };
}

/** A scan's derivative instruction (its reverse or forward sweep): its kernel, on a body of reals. */
function derivedRun(p: DerivedParams): ((args: readonly Buf[]) => Float64Array) | null {
  if (!p.scan.body.reals) return null;
  return (args) => p.run(args);
}
