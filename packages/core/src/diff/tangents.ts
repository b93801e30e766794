/**
 * @file The forward sweep on numbers: `J·v` evaluated without building its term.
 *
 * What sweep.ts is to differentiate.ts, this is to pushforward.ts: at the outermost
 * `jvp`, when nothing will inspect the tangent term, the same tangent rules run with
 * the numeric emitter over the values recorded while tracing. For terms of reals only;
 * tests hold it equal to the symbolic sweep. hvp-sweep.ts starts from every variable's
 * tangent (`tangentsOf`), and its dual numbers take their tangents from the same rule
 * (`scalarTangent`).
 */
import { numeric } from "@wengert/ops";
import { ARITY, CODE, FIRST_PRIMITIVE, INPUT, scalarSpec } from "../trace/opcodes.js";
import type { TraceTerm } from "../trace/term.js";

/**
 * The tangent of `out = op(x, y)` (primitive `code`; `y` ignored for a unary op) from its arguments'
 * tangents, null being the symbolic zero (at least one is not null): the spec's
 * tangent rule, or else its reverse rules with the cotangent set to each argument's
 * tangent, summed (see TangentRule in @wengert/ops). Null when the result is zero.
 */
export function scalarTangent(code: number, x: number, y: number, out: number, tx: number | null, ty: number | null): number | null {
  if (isArithmetic(code)) return arithmeticTangent(code, x, y, tx ?? 0, ty ?? 0, tx !== null, ty !== null);
  const spec = scalarSpec(code);
  if (spec.arity === 1) return spec.tangent ? spec.tangent(numeric, [x], out, [tx]) : spec.reverse(numeric, x, out, tx as number);
  if (spec.tangent) return spec.tangent(numeric, [x, y], out, [tx, ty]);
  const dx = tx === null ? null : spec.reverse[0](numeric, x, y, out, tx);
  const dy = ty === null ? null : spec.reverse[1](numeric, x, y, out, ty);
  return dx === null ? dy : dy === null ? dx : dx + dy;
}

const { add: ADD, sub: SUB, mul: MUL, square: SQUARE } = CODE;
const isArithmetic = (code: number): boolean => code === ADD || code === SUB || code === MUL || code === SQUARE;

/**
 * The tangent of add, sub, mul or square, written out: their reverse rules on numbers
 * (scalar.ts), summed as `scalarTangent` sums them. `hx`, `hy`: whether each argument has
 * a tangent (one that has none contributes nothing, not a zero).
 */
function arithmeticTangent(code: number, x: number, y: number, tx: number, ty: number, hx: boolean, hy: boolean): number {
  switch (code) {
    case ADD:
      return !hx ? ty : !hy ? tx : tx + ty;
    case SUB:
      return !hx ? -ty : !hy ? tx : tx + -ty;
    case MUL:
      return !hx ? ty * x : !hy ? tx * y : tx * y + ty * x;
    default:
      return tx * (2 * x);
  }
}

/** Every variable's tangent: `dt[i]`, meaningful where `has[i]` (0: the symbolic zero). */
export interface Tangents {
  readonly dt: Float64Array;
  readonly has: Uint8Array;
}

/**
 * The tangents of all of C's variables for input tangents `tangents` (by input index),
 * written into `dt` and `has` (C's length at least; new ones by default).
 */
export function tangentsOf(
  term: TraceTerm,
  tangents: readonly number[],
  dt: Float64Array = new Float64Array(term.tape.length),
  has: Uint8Array = new Uint8Array(term.tape.length),
): Tangents {
  const { op, a, b, val, length: n } = term.tape;
  for (let i = 0; i < n; i++) {
    const code = op[i];
    dt[i] = 0;
    has[i] = 0;
    if (code === INPUT) {
      dt[i] = tangents[a[i]];
      has[i] = 1;
      continue;
    }
    if (code < FIRST_PRIMITIVE) continue;
    const x = a[i];
    const y = b[i];
    const ha = has[x];
    const hb = ARITY[code] === 2 ? has[y] : 0;
    if (!ha && !hb) continue;
    // the commonest ones without a call through scalarTangent's nulls: a fifth of an hvp
    if (isArithmetic(code)) {
      dt[i] = arithmeticTangent(code, val[x], val[y], dt[x], dt[y], ha === 1, hb === 1);
      has[i] = 1;
      continue;
    }
    const t = scalarTangent(code, val[x], val[y], val[i], ha ? dt[x] : null, hb ? dt[y] : null);
    if (t !== null) {
      dt[i] = t;
      has[i] = 1;
    }
  }
  return { dt, has };
}

/** The tangents of C's outputs for input tangents `tangents` (by input index). */
export function tangentSweep(term: TraceTerm, tangents: readonly number[]): number[] {
  const { dt, has } = tangentsOf(term, tangents);
  return term.output.atoms.map((v) => (has[v] ? dt[v] : 0));
}
