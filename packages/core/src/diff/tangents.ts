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
import { numeric, type ScalarOp } from "@wengert/ops";
import { CODE, FIRST_PRIMITIVE, INPUT, scalarSpec } from "../trace/opcodes.js";
import type { TraceTerm } from "../trace/term.js";

/**
 * The tangent of `out = op(x, y)` (`y` ignored for a unary op) from its arguments'
 * tangents, null being the symbolic zero (at least one is not null): the spec's
 * tangent rule, or else its reverse rules with the cotangent set to each argument's
 * tangent, summed (see TangentRule in @wengert/ops). Null when the result is zero.
 */
export function scalarTangent(spec: ScalarOp, x: number, y: number, out: number, tx: number | null, ty: number | null): number | null {
  // the commonest ones written out: their reverse rules on numbers (scalar.ts), summed as below
  if (spec === ADD) return tx === null ? ty : ty === null ? tx : tx + ty;
  if (spec === SUB) return tx === null ? -(ty as number) : ty === null ? tx : tx + -ty;
  if (spec === MUL) return tx === null ? (ty as number) * x : ty === null ? tx * y : tx * y + ty * x;
  if (spec === SQUARE) return (tx as number) * (2 * x);
  if (spec.arity === 1) return spec.tangent ? spec.tangent(numeric, [x], out, [tx]) : spec.reverse(numeric, x, out, tx as number);
  if (spec.tangent) return spec.tangent(numeric, [x, y], out, [tx, ty]);
  const dx = tx === null ? null : spec.reverse[0](numeric, x, y, out, tx);
  const dy = ty === null ? null : spec.reverse[1](numeric, x, y, out, ty);
  return dx === null ? dy : dy === null ? dx : dx + dy;
}

const [ADD, SUB, MUL, SQUARE] = [CODE.add, CODE.sub, CODE.mul, CODE.square].map(scalarSpec);

/** Every variable's tangent: `dt[i]`, meaningful where `has[i]` (0: the symbolic zero). */
export interface Tangents {
  readonly dt: Float64Array;
  readonly has: Uint8Array;
}

/** The tangents of all of C's variables for input tangents `tangents` (by input index). */
export function tangentsOf(term: TraceTerm, tangents: readonly number[]): Tangents {
  const { op, a, b, val, length: n } = term.tape;
  const dt = new Float64Array(n);
  const has = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const code = op[i];
    if (code === INPUT) {
      dt[i] = tangents[a[i]];
      has[i] = 1;
      continue;
    }
    if (code < FIRST_PRIMITIVE) continue;
    const spec = scalarSpec(code);
    const ha = has[a[i]];
    const hb = spec.arity === 2 ? has[b[i]] : 0;
    if (!ha && !hb) continue;
    const t = scalarTangent(spec, val[a[i]], val[b[i]], val[i], ha ? dt[a[i]] : null, hb ? dt[b[i]] : null);
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
