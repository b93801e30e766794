/**
 * @file The reverse sweep on numbers: `W.R_V(x. C)` evaluated without being built.
 *
 * At the outermost `rd`, when nothing will inspect the derivative term, building it
 * only to evaluate it at once is wasted work. This runs the same rules in the same
 * order as differentiate.ts, with the numeric emitter (kernels on numbers) in place of
 * a symbolic one, over the values recorded while tracing: the derivative term's value,
 * with no instruction emitted. Tests hold it equal to evaluating the built term.
 * For terms of reals only (`tape.tensorCount === 0`); tensors go through
 * differentiate.ts, whose sink evaluates as it emits.
 */
import { BINARY_NAMES, binaryOps, numeric, UNARY_NAMES, unaryOps } from "@wengert/ops";
import { NaNError } from "../errors.js";
import { ARITY, CODE, FIRST_PRIMITIVE, KERNELS, primitiveOf, scalarSpec } from "../trace/opcodes.js";
import { javascript, mayMakeCode, reverseSwitch } from "../jit/javascript.js";
import type { TraceTerm } from "../trace/term.js";
import { giveColumn, takeColumn } from "../trace/columns.js";
import { activity } from "./place.js";
import { sweepFor, type ColumnSweep, type SweepColumns } from "./sweep-specialised.js";


/**
 * The cotangents of C's inputs for output cotangents `seeds`, as numbers. With
 * `checkNaN`, the first rule whose contribution is NaN or infinite is named. `val`:
 * the variables' values (those recorded while tracing, or a replay's at a new point).
 */
export function reverseSweep(
  term: TraceTerm,
  seeds: readonly number[],
  checkNaN: { caller: string } | null,
  val: Float64Array = term.tape.val,
  scratch?: Scratch,
): number[] {
  // without a caller's scratch, the buffers come from the pool of tape columns and go back
  // to it: an outermost grad of a long trace would otherwise allocate megabytes off the
  // heap per call, which sets off full collections in a process with a large heap
  const own = scratch ?? pooledScratch(term);
  try {
    return sweep(term, seeds, checkNaN, val, own);
  } finally {
    if (scratch === undefined) for (const c of [own.active, own.ct, own.has]) if (c !== null) giveColumn(c);
  }
}

function sweep(term: TraceTerm, seeds: readonly number[], checkNaN: { caller: string } | null, val: Float64Array, scratch: Scratch): number[] {
  const { op, a, b, length: n } = term.tape;
  const { ct, has } = scratch;
  // ct[v] is read only where has[v] (a first contribution is assigned): no need to clear it
  has.fill(0, 0, n);
  // which variables depend on the inputs: only the general rules and checkNaN need to know
  // (see `inlined`), so it is computed on first use
  const isActive = (v: number): number => (scratch.active ??= activity(term, takeColumn(Uint8Array, columnLength(term))))[v];
  const accumulate = (v: number, c: number | null, i: number): void => {
    if (c === null || !isActive(v)) return;
    if (checkNaN && !Number.isFinite(c)) {
      throw new NaNError(
        `${checkNaN.caller}: checkNaN: the reverse rule of ${primitiveOf(op[i]).name} (for v${i}) gave ${c} for its argument v${v} ` +
          `(argument values ${[val[a[i]], val[b[i]]].slice(0, ARITY[op[i]]).join(", ")}; inputs: real).`,
      );
    }
    if (has[v]) ct[v] += c;
    else {
      ct[v] = c;
      has[v] = 1;
    }
  };
  /** Instruction i's reverse rule through the numeric emitter (any scalar primitive). */
  const rule = (i: number): void => {
    const spec = scalarSpec(op[i]);
    const c = ct[i];
    if (spec.arity === 1) {
      accumulate(a[i], spec.reverse(numeric, val[a[i]], val[i], c), i);
    } else {
      if (isActive(a[i])) accumulate(a[i], spec.reverse[0](numeric, val[a[i]], val[b[i]], val[i], c), i);
      if (isActive(b[i])) accumulate(b[i], spec.reverse[1](numeric, val[a[i]], val[b[i]], val[i], c), i);
    }
  };
  if (checkNaN === null) {
    // seeds as `inlined` adds contributions: a literal output's cotangent is never read
    term.output.atoms.forEach((v, j) => {
      ct[v] = has[v] ? ct[v] + seeds[j] : seeds[j];
      has[v] = 1;
    });
    // the common primitives written out, the others by their rule where they occur; by a
    // sweep made for these columns once they come back call after call (sweep-specialised.ts)
    const own = CASES === null ? null : sweepFor({ op, a, b, val, ct, has }, specialise);
    if (own !== null) for (let i = own(n - 1); i >= 0; i = own(i - 1)) rule(i);
    else for (let i = inlined(term.tape, ct, has, val, n - 1); i >= 0; i = inlined(term.tape, ct, has, val, i - 1)) rule(i);
  } else {
    term.output.atoms.forEach((v, j) => accumulate(v, seeds[j], v));
    for (let i = n - 1; i >= 0; i--) if (has[i] && op[i] >= FIRST_PRIMITIVE) rule(i);
  }
  // written into an array of the right length, not pushed: an array grown by push is
  // copied at every doubling, for the thousands of inputs of a vector x
  const atoms = term.params[0].atoms;
  const results = new Array<number>(atoms.length);
  for (let k = 0; k < atoms.length; k++) results[k] = has[atoms[k]] ? ct[atoms[k]] : 0;
  return results;
}

/** Buffers of one sweep over a term; a replay reuses them call after call (compile.ts). */
export interface Scratch {
  /** activity(term), or null until a sweep needs it. */
  active: Uint8Array | null;
  readonly ct: Float64Array;
  readonly has: Uint8Array;
}

export function newScratch(term: TraceTerm): Scratch {
  const n = term.tape.length;
  return { active: activity(term), ct: new Float64Array(n), has: new Uint8Array(n) };
}

/** As long as the tape's columns: a length the pool keeps. */
const columnLength = (term: TraceTerm): number => Math.max(term.tape.length, term.tape.op.length);

/** Scratch from the column pool. */
function pooledScratch(term: TraceTerm): Scratch {
  const length = columnLength(term);
  return { active: null, ct: takeColumn(Float64Array, length), has: takeColumn(Uint8Array, length) };
}

/** The sweep from instruction `from` down over the primitives whose rules it writes out (see `writeInlined`). */
type Inlined = (tape: TraceTerm["tape"], ct: Float64Array, has: Uint8Array, val: Float64Array, from: number) => number;

/**
 * The sweep from instruction `from` down, with every built-in scalar primitive's rule
 * written out on numbers: a switch in one loop instead of a call to a rule through the
 * numeric emitter per instruction. Returns the first instruction it does not know (a
 * user primitive's, for `rule`), or -1 at the end. Tests hold it equal to the symbolic
 * sweep.
 *
 * It does not ask which arguments are active: at the outermost level every variable a
 * contribution could reach but that is not active is a literal (operations on literals
 * alone are folded while tracing), whose cotangent nobody reads; computing it costs less
 * than the test, and spares computing activity at all.
 */
const CASES: readonly string[] | null = mayMakeCode() ? writtenCases() : null;
const inlined: Inlined = CASES === null ? firstPrimitive : writeInlined(CASES);

/** Where no code may be made (a Content-Security-Policy): every rule goes through `rule`. */
function firstPrimitive(tape: TraceTerm["tape"], _ct: Float64Array, has: Uint8Array, _val: Float64Array, from: number): number {
  for (let i = from; i >= 0; i--) if (has[i] && tape.op[i] >= FIRST_PRIMITIVE) return i;
  return -1;
}

/**
 * The cases of `inlined`, written once from the table (ops/scalar.ts): each case is the
 * primitive's reverse rule run with the JavaScript emitter (jit/javascript.ts), which
 * gives the same operations in the same order as the numeric emitter, so the results are
 * the same numbers; other kernels are called as `K[code]`.
 */
function writtenCases(): string[] {
  // a contribution d to v: the first is assigned, the others added
  const add = (v: string, d: string): string =>
    `if (has[${v}]) ct[${v}] += ${d};\n        else {\n          ct[${v}] = ${d};\n          has[${v}] = 1;\n        }`;
  const cases: string[] = [];
  for (const name of UNARY_NAMES) {
    const cx = unaryOps[name].reverse(javascript, "val[x]", "val[i]", "c");
    // a symbolic zero (sign's rule) contributes nothing
    cases.push(`case ${CODE[name]}: { // ${name}\n        ${cx === null ? "" : `const cx = ${cx};\n        ${add("x", "cx")}`}\n        continue;\n      }`);
  }
  for (const name of BINARY_NAMES) {
    const [rx, ry] = binaryOps[name].reverse;
    const cx = rx(javascript, "val[x]", "val[y]", "val[i]", "c");
    const cy = ry(javascript, "val[x]", "val[y]", "val[i]", "c");
    // both computed before either is added, as the rule gives them (x may be y)
    if (cx !== null && cy !== null) {
      cases.push(
        `case ${CODE[name]}: { // ${name}\n        const cx = ${cx};\n        const cy = ${cy};\n` +
          `        ${add("x", "cx")}\n        ${add("y", "cy")}\n        continue;\n      }`,
      );
    }
  }
  return cases;
}

/** `inlined` from its cases: the columns and buffers its parameters. */
function writeInlined(cases: readonly string[]): Inlined {
  const source = reverseSwitch({
    name: "inlined",
    params: "tape, ct, has, val, from",
    head: ["const op = tape.op, a = tape.a, b = tape.b;"],
    has: "has",
    ct: "ct[i]",
    cases,
  });
  return new Function("K", source)(KERNELS) as Inlined;
}

/**
 * `inlined` made for one set of columns, held as constants of its closure (see
 * sweep-specialised.ts); `id` in its name makes its source, and so its code, its own.
 */
function specialise(columns: SweepColumns, id: number): ColumnSweep {
  const source = reverseSwitch({
    name: `inlined${id}`,
    params: "from",
    head: [],
    has: "has",
    ct: "ct[i]",
    cases: CASES!,
  });
  const bind = "const op = columns.op, a = columns.a, b = columns.b, val = columns.val, ct = columns.ct, has = columns.has;";
  return new Function("K", "columns", `${bind}\n${source}`)(KERNELS, columns) as ColumnSweep;
}
