/**
 * @file A trace term of reals evaluated on truncated Taylor series (taylor's one pass,
 * papers/002), its scans as scans of series: each scan instruction runs its body's term
 * on the series of the carry, x and captured values, iteration after iteration, keeping
 * only the series the loop makes visible (its ys and final carry). Written out, the loop
 * would hold a series per instruction and iteration.
 *
 * The loop written out holds literals where the body has literal inputs (data, a time
 * counter): a value computed from literals alone is a constant there, computed by the
 * primitive's kernel, whose series is that number alone, and the tape folds x · 1,
 * x + (−0) and x⁰ on such values (tape.ts identityArgument, isLiteralPower). So here: the
 * coefficients are the loop's to the last bit.
 */
import { series as S, type Series } from "@wengert/ops";
import { WengertError } from "../errors.js";
import type { CodeEmitter } from "../trace/lifted.js";
import { ARITY, CONST, FIRST_PRIMITIVE, FREE, INPUT, IS_TENSOR_OP, KERNELS } from "../trace/opcodes.js";
import { hasScans, scanCodes, type ScanOutParams, type ScanParams } from "../trace/scan-ops.js";
import { binaryKernel, identityArgument, isLiteralPower, type Tape } from "../trace/tape.js";

/**
 * Whether the tape computes with reals only, its scans' bodies too (taylor runs them as
 * scans of series): a scan's packed value aside, every instruction is a real (a scalar
 * primitive recorded on a scan's output, elementwise, is one too).
 */
export function scansOfReals(tape: Tape): boolean {
  if (!hasScans(tape)) return tape.tensorCount === 0;
  const codes = scanCodes();
  for (let i = 0; i < tape.length; i++) {
    const code = tape.op[i];
    if (tape.x[i] === 0 || code === codes.scanOut) continue;
    const real = code === codes.scan ? (tape.params(i) as ScanParams).body.reals : code >= FIRST_PRIMITIVE && !IS_TENSOR_OP[code] && tape.dims(i).length === 0;
    if (!real) return false;
  }
  return true;
}

/** Series the last run kept to its end (counted, not timed): one per instruction of the term and per output of its scans. */
export const seriesStats = { held: 0 };

export interface SeriesRun {
  readonly e: CodeEmitter<Series>;
  readonly K: number;
  /** Called on each primitive's series of the term as computed (taylor's checkNaN; under it, scan traces its loop written out). */
  readonly check: ((s: Series, v: number) => void) | null;
}

/** The series of each variable of `tape`, its inputs' given by index. */
export function seriesOf(tape: Tape, inputs: (k: number, v: number) => Series, run: SeriesRun): Series[] {
  seriesStats.held = 0;
  return evaluate(tape, inputs, null, run, true);
}

function evaluate(tape: Tape, inputs: (k: number, v: number) => Series, literalOnly: Uint8Array | null, run: SeriesRun, outermost: boolean): Series[] {
  const { e, K, check } = run;
  const { op, a, b, x, val, length: n } = tape;
  const codes = scanCodes();
  const s: Series[] = new Array(n);
  // a scan's outputs by offset in its packed value
  const packed = new Map<number, Series[]>();
  // a body's series live for one iteration; the term's and its scans' outputs to the end
  if (outermost) seriesStats.held += n;
  for (let i = 0; i < n; i++) {
    const code = op[i];
    if (code === INPUT) s[i] = inputs(a[i], i);
    else if (code === CONST || code === FREE) s[i] = S.constant(val[i], K);
    else if (code < FIRST_PRIMITIVE) continue;
    else if (code === codes.scan) packed.set(i, scanSeries(tape.params(i) as ScanParams, tape.args(i), s, packed, run, outermost));
    else if (code === codes.scanOut) {
      const q = tape.params(i) as ScanOutParams;
      // the flag that the decisions held: a number, no derivative
      s[i] = q.held ? S.constant(1, K) : packed.get(tape.args(i)[0])![q.offset];
    } else if (IS_TENSOR_OP[code]) {
      throw new WengertError("internal: a tensor instruction in a term of reals evaluated on series.");
    } else {
      const [p, q = p] = x[i] === 0 ? [a[i], b[i]] : tape.args(i);
      s[i] = (literalOnly === null ? null : asWrittenOut(code, s[p], s[q], literalOnly[p] === 1, literalOnly[q] === 1, K)) ?? e.apply(code, s[p], s[q]);
      if (check !== null && outermost) check(s[i], i);
    }
  }
  return s;
}

/**
 * A primitive of a body on series sa, sb where the loop written out has a literal (ca, cb:
 * whether each argument is of literals alone), or folds on one: its series, or null where it
 * is computed as any other.
 */
function asWrittenOut(code: number, sa: Series, sb: Series, ca: boolean, cb: boolean, K: number): Series | null {
  if (ARITY[code] === 1) return ca ? S.constant(KERNELS[code](sa[0], 0), K) : null;
  if (!ca && !cb) return null;
  const va = sa[0];
  const vb = sb[0];
  if ((ca && cb) || isLiteralPower(code, vb, cb)) return S.constant(binaryKernel(code, va, vb), K);
  const same = identityArgument(code, va, vb, ca, cb);
  return same === 0 ? sa : same === 1 ? sb : null;
}

/** A scan instruction's outputs' series by offset (its ys per iteration, its final carry), running its body on series. */
function scanSeries(p: ScanParams, args: readonly number[], s: Series[], packed: Map<number, Series[]>, run: SeriesRun, outermost: boolean): Series[] {
  const { body, n, layout } = p;
  const { nc, nx, np } = body;
  const out: Series[] = new Array(layout.length);
  if (outermost) seriesStats.held += layout.length;
  const carry = args.slice(0, nc).map((v) => s[v]);
  const stacked = p.stacked;
  const xArgs = stacked === undefined ? n * nx : 1;
  const ps = args.slice(nc + xArgs).map((v) => s[v]);
  const source = stacked === undefined ? null : packed.get(args[nc])!;
  const xAt = (r: number, l: number): Series => (source === null ? s[args[nc + r * nx + l]] : source[stacked!.at[l] + r * stacked!.step]);
  const inputs: Series[] = new Array(nc + nx + np);
  for (let q = 0; q < np; q++) inputs[nc + nx + q] = ps[q];
  const atoms = body.term.output.atoms;
  for (let r = 0; r < n; r++) {
    for (let k = 0; k < nc; k++) inputs[k] = carry[k];
    for (let l = 0; l < nx; l++) inputs[nc + l] = xAt(r, l);
    const values = evaluate(body.term.tape, (k) => inputs[k], body.literalOnly, run, false);
    layout.obs.forEach((v, o) => (out[r * layout.width + layout.obsOffset[o]] = values[v]));
    for (let k = 0; k < nc; k++) if (body.carryKind[k] !== "identity") carry[k] = values[atoms[k]];
  }
  for (let k = 0; k < nc; k++) out[layout.carryOffset[k]] = carry[k];
  out[layout.held] = S.constant(1, run.K);
  return out;
}
