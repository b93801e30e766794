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

const [ADD_CODE, SUB_CODE, MUL_CODE, SQUARE_CODE] = [CODE.add, CODE.sub, CODE.mul, CODE.square];

/**
 * The tangents of all of C's variables for input tangents `tangents` (by input index),
 * written into `dt` and `has` (C's length at least; new ones by default). add, sub, mul
 * and square compute what `scalarTangent` computes for them, inline: the call and the
 * lookup of the spec per instruction were a fifth of an hvp.
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
    switch (code) {
      case ADD_CODE:
      case SUB_CODE:
      case MUL_CODE: {
        const hb = has[y];
        if (!ha && !hb) continue;
        has[i] = 1;
        if (code === ADD_CODE) dt[i] = !ha ? dt[y] : !hb ? dt[x] : dt[x] + dt[y];
        else if (code === SUB_CODE) dt[i] = !ha ? -dt[y] : !hb ? dt[x] : dt[x] + -dt[y];
        else dt[i] = !ha ? dt[y] * val[x] : !hb ? dt[x] * val[y] : dt[x] * val[y] + dt[y] * val[x];
        continue;
      }
      case SQUARE_CODE:
        if (!ha) continue;
        has[i] = 1;
        dt[i] = dt[x] * (2 * val[x]);
        continue;
    }
    const spec = scalarSpec(code);
    const hb = spec.arity === 2 ? has[y] : 0;
    if (!ha && !hb) continue;
    const t = scalarTangent(spec, val[x], val[y], val[i], ha ? dt[x] : null, hb ? dt[y] : null);
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
