/**
 * @file The forward sweep on numbers: `J·v` evaluated without building its term.
 *
 * What sweep.ts is to differentiate.ts, this is to pushforward.ts: at the outermost
 * `jvp`, when nothing will inspect the tangent term, the same tangent rules run on the
 * values recorded while tracing: the built-ins' written out as code from the primitive
 * table where code may be made (as sweep.ts writes its reverse rules), else the table's
 * rules through the numeric emitter. For terms of reals only; tests hold it equal to the
 * symbolic sweep, and the written-out rules to the table's, to the bit. hvp-sweep.ts starts from every variable's tangent (`tangentsOf`), and its dual
 * numbers take their tangents from the same rules (`scalarTangent`).
 */
import { BINARY_NAMES, binaryOps, numeric, UNARY_NAMES, unaryOps, type OpName } from "@wengert/ops";
import { ARITY, CODE, FIRST_PRIMITIVE, INPUT, KERNELS, scalarSpec } from "../trace/opcodes.js";
import { javascript, mayMakeCode } from "../jit/javascript.js";
import type { TraceTerm } from "../trace/term.js";

/**
 * The tangent of `out = op(x, y)` (primitive `code`; `y` ignored for a unary op) from its arguments'
 * tangents, null being the symbolic zero (at least one is not null): the spec's
 * tangent rule, or else its reverse rules with the cotangent set to each argument's
 * tangent, summed (see TangentRule in @wengert/ops). Null when the result is zero.
 */
export function scalarTangent(code: number, x: number, y: number, out: number, tx: number | null, ty: number | null): number | null {
  return tangentOnNumbers(code, x, y, out, tx ?? 0, ty ?? 0, tx !== null, ty !== null);
}

/**
 * `scalarTangent` with each tangent as a number and whether it is there (`hx`, `hy`; one
 * that is not there contributes nothing, not a zero): the form the sweep's loop has at
 * hand, with no null to make per instruction.
 */
export type TangentOnNumbers = (code: number, x: number, y: number, out: number, tx: number, ty: number, hx: boolean, hy: boolean) => number | null;

/** `scalarTangent` by the table's rules through the numeric emitter, for any primitive (a user's too). */
export const tangentFromTable: TangentOnNumbers = (code, x, y, out, tx, ty, hx, hy) => {
  const spec = scalarSpec(code);
  if (spec.arity === 1) return spec.tangent ? spec.tangent(numeric, [x], out, [tx]) : spec.reverse(numeric, x, out, tx);
  if (spec.tangent) return spec.tangent(numeric, [x, y], out, [hx ? tx : null, hy ? ty : null]);
  const dx = hx ? spec.reverse[0](numeric, x, y, out, tx) : null;
  const dy = hy ? spec.reverse[1](numeric, x, y, out, ty) : null;
  return dx === null ? dy : dy === null ? dx : dx + dy;
};

/**
 * The same, with every built-in primitive's rule written out on numbers: one switch where
 * the table's rules make a call through the numeric emitter per operation of the rule
 * (hvp's dual numbers take their tangents from it). Where no code may be made
 * (mayMakeCode), the table's rules run as they are.
 */
export const tangentOnNumbers: TangentOnNumbers = mayMakeCode() ? writeTangentOnNumbers() : tangentFromTable;

interface TangentSource {
  readonly name: OpName;
  readonly arity: 1 | 2;
  readonly onlyX: string | null;
  readonly onlyY: string | null;
  readonly both: string | null;
}

/**
 * Each built-in primitive's tangent as JavaScript: `tangentFromTable`'s computation run
 * with the JavaScript emitter (jit/javascript.ts), which gives the same operations in the
 * same order as the numeric emitter, so the same numbers (tests hold the two equal to the
 * bit). Over the names x, y (the arguments' values), out, tx, ty; null for the symbolic
 * zero. A unary primitive's `onlyX` is its tangent; a binary one's is that with x's
 * tangent alone, `onlyY` with y's alone, `both` with both.
 */
function tangentSources(): TangentSource[] {
  const sources: TangentSource[] = [];
  for (const name of UNARY_NAMES) {
    const { tangent, reverse } = unaryOps[name];
    const t = tangent ? tangent(javascript, ["x"], "out", ["tx"]) : reverse(javascript, "x", "out", "tx");
    sources.push({ name, arity: 1 as const, onlyX: t, onlyY: null, both: t });
  }
  for (const name of BINARY_NAMES) {
    const { tangent, reverse } = binaryOps[name];
    if (tangent) {
      const [onlyX, onlyY, both] = ([["tx", null], [null, "ty"], ["tx", "ty"]] as const).map((ts) => tangent(javascript, ["x", "y"], "out", ts));
      sources.push({ name, arity: 2 as const, onlyX, onlyY, both });
    } else {
      const onlyX = reverse[0](javascript, "x", "y", "out", "tx");
      const onlyY = reverse[1](javascript, "x", "y", "out", "ty");
      sources.push({ name, arity: 2 as const, onlyX, onlyY, both: onlyX === null ? onlyY : onlyY === null ? onlyX : `${onlyX} + ${onlyY}` });
    }
  }
  return sources;
}

/** `tangentOnNumbers`' source: a switch over the built-ins; a user primitive's code goes to `tangentFromTable`. */
function writeTangentOnNumbers(): TangentOnNumbers {
  const orNull = (t: string | null): string => t ?? "null";
  const cases = tangentSources().map(({ name, arity, onlyX, onlyY, both }) =>
    arity === 1
      ? `case ${CODE[name]}: // ${name}\n      return ${orNull(onlyX)};`
      : `case ${CODE[name]}: // ${name}\n      return !hx ? ${orNull(onlyY)} : !hy ? ${orNull(onlyX)} : ${orNull(both)};`,
  );
  const source = `
return function tangentOnNumbers(code, x, y, out, tx, ty, hx, hy) {
  switch (code) {
    ${cases.join("\n    ")}
    default:
      return fromTable(code, x, y, out, tx, ty, hx, hy);
  }
};`;
  return new Function("K", "fromTable", source)(KERNELS, tangentFromTable) as TangentOnNumbers;
}

/**
 * The forward sweep from instruction `from` up, over every instruction whose tangent it
 * writes out: returns the first it does not (a user primitive's), or C's length at the
 * end. The tangent is written into `dt` where it is not the symbolic zero, with no
 * number|null result per instruction to box.
 */
type SweepFrom = (
  op: ArrayLike<number>,
  as: ArrayLike<number>,
  bs: ArrayLike<number>,
  val: Float64Array,
  dt: Float64Array,
  has: Uint8Array,
  tangents: readonly number[],
  from: number,
  n: number,
) => number;

/** Where no code may be made: nothing written out, every instruction through `tangentFromTable`. */
const sweepNone: SweepFrom = (_op, _as, _bs, _val, _dt, _has, _tangents, from) => from;

const sweepFrom: SweepFrom = mayMakeCode() ? writeSweepFrom() : sweepNone;

/** `sweepFrom`'s source: the loop of `tangentsOf` with `tangentSources` in a switch. */
function writeSweepFrom(): SweepFrom {
  const set = (t: string | null): string => (t === null ? "" : `dt[i] = ${t};\n          has[i] = 1;`);
  const cases = tangentSources().map(({ name, arity, onlyX, onlyY, both }) => {
    const body = arity === 1 ? [`if (hx) {`, set(onlyX)] : [`if (hx && hy) {`, set(both), `} else if (hx) {`, set(onlyX), `} else if (hy) {`, set(onlyY)];
    return [`case ${CODE[name]}: // ${name}`, ...body, "}", "continue;"].join("\n        ");
  });
  const source = `
return function sweepFrom(op, as, bs, val, dt, has, tangents, from, n) {
  for (let i = from; i < n; i++) {
    const code = op[i];
    dt[i] = 0;
    has[i] = 0;
    if (code === ${INPUT}) {
      dt[i] = tangents[as[i]];
      has[i] = 1;
      continue;
    }
    if (code < ${FIRST_PRIMITIVE}) continue;
    const ix = as[i];
    const iy = bs[i];
    // y's, for a binary primitive only (a unary one's b is no argument)
    const hx = has[ix] === 1;
    const hy = has[iy] === 1;
    const x = val[ix];
    const y = val[iy];
    const out = val[i];
    const tx = dt[ix];
    const ty = dt[iy];
    switch (code) {
      ${cases.join("\n      ")}
      default:
        return i;
    }
  }
  return n;
};`;
  return new Function("K", source)(KERNELS) as SweepFrom;
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
  // the built-ins written out; a user primitive's tangent (every one, where no code may be made) here
  for (let i = sweepFrom(op, a, b, val, dt, has, tangents, 0, n); i < n; i = sweepFrom(op, a, b, val, dt, has, tangents, i + 1, n)) {
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
    const t = tangentFromTable(code, val[x], val[y], val[i], dt[x], dt[y], ha === 1, hb === 1);
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
