/**
 * @file A loop body of reals as JavaScript: its forward run over iterations, and a block
 * of its reverse sweep run over a range of iterations, the carries and the running
 * cotangents in locals.
 *
 * Each instruction of a term becomes one statement written with the javascript emitter
 * (javascript.ts): the kernels' own operations, so the numbers are the interpreter's to
 * the last bit. Code is cached by the term's structure (Body.key), so a body traced
 * again by a later call with the same structure runs the code compiled before.
 */
import { ARITY, CONST, FIRST_PRIMITIVE, INPUT, KERNELS, KINKS } from "../trace/opcodes.js";
import type { Tape } from "../trace/tape.js";
import { CODE } from "../trace/opcodes.js";
import type { Body } from "../trace/body.js";
import { COMPARISON, javascript, literal, mayMakeCode } from "./javascript.js";

/**
 * Compiled code is used: not where a Content-Security-Policy forbids making code (the
 * interpreter gives the same numbers), and tests turn it off to compare the two.
 */
export const scanCode = { enabled: mayMakeCode() };

/** How many body structures are kept with their code; the cache starts over past it. */
const CACHE_SIZE = 256;

/** The statements computing the needed instructions of a tape of reals; inputs are named by `input`. */
export function statements(tape: Tape, need: Uint8Array, input: (k: number) => string): string[] {
  const { op, a, b, val } = tape;
  const lines: string[] = [];
  for (let i = 0; i < tape.length; i++) {
    if (!need[i]) continue;
    const code = op[i];
    if (code === INPUT) lines.push(`const v${i} = ${input(a[i])};`);
    else if (code === CONST) lines.push(`const v${i} = ${literal(val[i])};`);
    // by opcode, not by name: a user primitive (defineOp) is called as its kernel, K[code]
    else if (code >= FIRST_PRIMITIVE) lines.push(`const v${i} = ${javascript.apply(code, `v${a[i]}`, ARITY[code] === 1 ? `v${a[i]}` : `v${b[i]}`)};`);
  }
  return lines;
}

/** The instructions the roots need. */
function needed(tape: Tape, roots: Iterable<number>): Uint8Array {
  const { op, a, b } = tape;
  const need = new Uint8Array(tape.length);
  for (const v of roots) need[v] = 1;
  for (let i = tape.length - 1; i >= 0; i--) {
    if (!need[i] || op[i] < FIRST_PRIMITIVE) continue;
    need[a[i]] = 1;
    if (ARITY[op[i]] === 2) need[b[i]] = 1;
  }
  return need;
}

/**
 * The forward run of a body of reals: `run(carry, xs, p, from, to, checkFrom, reportTies,
 * checkFolds, obsOut, obsBase, storeOut, storeFrom, storeEvery)` → where it stopped.
 * carry is updated in place; see eval/scan-forward.ts for what stops a run. Arrays are
 * typed arrays only: plain arrays of numbers come with elements of several kinds
 * (integers, doubles), and a read of one kind in code optimized for the other deoptimized
 * it on every call.
 */
export type CompiledForward = (
  carry: Float64Array,
  xs: Float64Array,
  p: Float64Array,
  from: number,
  to: number,
  checkFrom: number,
  reportTies: boolean,
  checkFolds: boolean,
  obsOut: Float64Array | null,
  obsBase: number,
  storeOut: Float64Array | null,
  storeFrom: number,
  storeEvery: number,
) => number;

export function compiledForward(body: Body, obs: Int32Array): CompiledForward {
  return byStructure(body, `F${obs.join(",")}`, () => makeForward(body, obs));
}

/** Per structure hash: the bodies seen, with what was made for them by tag. */
const structures = new Map<number, { readonly body: Body; readonly made: Map<string, unknown> }[]>();
let structureCount = 0;
const ownMade = new WeakMap<Body, Map<string, unknown>>();

/**
 * What `make` gives for bodies of this structure (Body.sameAs), made once: a body traced
 * again by a later call reuses the code and terms made for an earlier one. At most
 * CACHE_SIZE structures are kept (the cache starts over past it).
 */
export function byStructure<F>(body: Body, tag: string, make: () => F): F {
  // a body of tensors is interpreted (nothing to compile), and its terms hold buffers: what is
  // made for it goes with it, not into a cache that would keep its buffers alive
  if (!body.reals) {
    let mine = ownMade.get(body);
    if (mine === undefined) ownMade.set(body, (mine = new Map()));
    let f = mine.get(tag) as F | undefined;
    if (f === undefined) mine.set(tag, (f = make()));
    return f;
  }
  const h = body.hash;
  let bucket = structures.get(h);
  if (bucket === undefined) structures.set(h, (bucket = []));
  let entry = bucket.find((e) => e.body === body || e.body.sameAs(body));
  if (entry === undefined) {
    if (++structureCount > CACHE_SIZE) {
      structures.clear();
      structureCount = 1;
      structures.set(h, (bucket = []));
    }
    bucket.push((entry = { body, made: new Map() }));
  }
  let f = entry.made.get(tag) as F | undefined;
  if (f === undefined) entry.made.set(tag, (f = make()));
  return f;
}

/** What a forward run of the body computes per iteration: the carries, the written values, what its checks read. */
export function forwardNeed(body: Body, obs: Int32Array): Uint8Array {
  const tape = body.term.tape;
  const roots = new Set<number>([...body.carryOut, ...obs]);
  for (const g of body.guards) roots.add(g.a).add(g.b);
  for (const f of body.folds) roots.add(f.v);
  for (const i of body.kinked) roots.add(tape.a[i]);
  return needed(tape, roots);
}

/**
 * The checks that the iteration is the trace's (eval/scan-forward.ts): its guards, the
 * folds of values marked literal (with `checkFolds`), its kinks (with `reportTies`); each
 * statement runs `fail` where one does not hold.
 */
export function forwardChecks(body: Body, fail: string): string[] {
  const tape = body.term.tape;
  const lit = body.literalOnly;
  const checks: string[] = [];
  for (const g of body.guards) {
    const test = `(v${g.a} ${COMPARISON[g.pred]} v${g.b})`;
    checks.push(`if (${g.outcome ? `!${test}` : test}) ${fail}`);
    if (g.distinct && !(lit[g.a] && lit[g.b])) checks.push(`if (reportTies && v${g.a} === v${g.b}) ${fail}`);
  }
  for (const f of body.folds) {
    const folded = f.code === CODE.add ? `Object.is(v${f.v}, -0)` : f.code === CODE.mul ? `v${f.v} === 1` : `v${f.v} === 0`;
    checks.push(`if (checkFolds && ${folded}) ${fail}`);
  }
  for (const i of body.kinked) checks.push(`if (reportTies && KINK[${tape.op[i]}](v${tape.a[i]})) ${fail}`);
  return checks;
}

function makeForward(body: Body, obs: Int32Array): CompiledForward {
  const tape = body.term.tape;
  const { nc, nx, np } = body;
  const out = body.carryOut;
  const need = forwardNeed(body, obs);
  const input = (k: number): string => (k < nc ? `c${k}` : k < nc + nx ? `xs[i * ${nx} + ${k - nc}]` : `p${k - nc - nx}`);
  const checks = forwardChecks(body, "break;");
  const update: string[] = [];
  for (let k = 0; k < nc; k++) if (body.carryKind[k] !== "identity") update.push(`c${k} = v${out[k]};`);
  const source = [
    ...Array.from({ length: nc }, (_, k) => `let c${k} = carry[${k}];`),
    ...Array.from({ length: np }, (_, q) => `const p${q} = p[${q}];`),
    "let i = from;",
    // the next store: at iteration `due`, into storeOut at `s`
    "let due = storeOut === null ? -1 : storeFrom + Math.ceil((from - storeFrom) / storeEvery) * storeEvery;",
    "let s = storeOut === null ? 0 : ((due - storeFrom) / storeEvery) * " + nc + ";",
    "for (; i < to; i++) {",
    `  if (i === due) { ${Array.from({ length: nc }, (_, k) => `storeOut[s + ${k}] = c${k};`).join(" ")} s += ${nc}; due += storeEvery; }`,
    ...statements(tape, need, input).map((l) => `  ${l}`),
    `  if (i >= checkFrom) { ${checks.join(" ")} }`,
    obs.length > 0
      ? `  if (obsOut !== null) { const o = (i - obsBase) * ${obs.length}; ${Array.from(obs, (v, s) => `obsOut[o + ${s}] = v${v};`).join(" ")} }`
      : "",
    ...update.map((l) => `  ${l}`),
    "}",
    ...Array.from({ length: nc }, (_, k) => `carry[${k}] = c${k};`),
    "return i;",
  ].join("\n");
  const f = new Function(
    "K",
    "KINK",
    "carry",
    "xs",
    "p",
    "from",
    "to",
    "checkFrom",
    "reportTies",
    "checkFolds",
    "obsOut",
    "obsBase",
    "storeOut",
    "storeFrom",
    "storeEvery",
    source,
  );
  return (carry, xs, p, from, to, checkFrom, reportTies, checkFolds, obsOut, obsBase, storeOut, storeFrom, storeEvery) =>
    f(KERNELS, KINKS, carry, xs, p, from, to, checkFrom, reportTies, checkFolds, obsOut, obsBase, storeOut, storeFrom, storeEvery) as number;
}

/** Where a block's state inputs come from, and where its results go, in a middle iteration r (0 < r < n − 1). */
export interface BlockWiring {
  /** Per state input j (the term's input nin + j): its expression (`ch0`, `S[r * 3 + 1]`…). */
  readonly states: readonly string[];
  /** Per result j: the statement target (`ch0`, `XR[r * 2 + 1]`…). */
  readonly results: readonly string[];
  /** Locals kept across iterations (loaded from and stored to `st`, in order). */
  readonly locals: readonly string[];
}

/**
 * A block's derivative term over iterations hi − 1 down to lo: `run(lo, hi, C, cBase, X,
 * P, S, A, st, XR)`, carries at C[(r − cBase)·nc + k], x at X[r·nx + l], captured values
 * P, seeds S, x's held cotangents A, running cotangents in `st`, x's results XR.
 */
export type CompiledBlock = (
  lo: number,
  hi: number,
  C: Float64Array,
  cBase: number,
  X: Float64Array,
  P: Float64Array,
  S: Float64Array,
  A: Float64Array,
  st: Float64Array,
  XR: Float64Array,
) => void;

export function compiledBlock(
  term: { readonly tape: Tape; readonly output: { readonly atoms: readonly number[] } },
  body: Body,
  w: BlockWiring,
): CompiledBlock {
  const { nc, nx, np } = body;
  const nin = nc + nx + np;
  const tape = term.tape;
  const need = needed(tape, term.output.atoms);
  const input = (k: number): string =>
    k < nc ? `C[(r - cBase) * ${nc} + ${k}]` : k < nc + nx ? `X[r * ${nx} + ${k - nc}]` : k < nin ? `P[${k - nc - nx}]` : w.states[k - nin];
  const source = [
    ...w.locals.map((name, j) => `let ${name} = st[${j}];`),
    "for (let r = hi - 1; r >= lo; r--) {",
    ...statements(tape, need, input).map((l) => `  ${l}`),
    ...term.output.atoms.map((v, j) => `  ${w.results[j]} = v${v};`),
    "}",
    ...w.locals.map((name, j) => `st[${j}] = ${name};`),
  ].join("\n");
  const f = new Function("K", "lo", "hi", "C", "cBase", "X", "P", "S", "A", "st", "XR", source);
  return (lo, hi, C, cBase, X, P, S, A, st, XR) => f(KERNELS, lo, hi, C, cBase, X, P, S, A, st, XR);
}

/**
 * One application of a term of reals: `run(I, O)` with input k at I[k] and output j
 * written to O[j]. The first and last iterations of a reverse sweep, whose cotangents come
 * from outside the loop, run their block's term this way instead of interpreted.
 */
export type CompiledStep = (I: Float64Array, O: Float64Array) => void;

export function compiledStep(term: { readonly tape: Tape; readonly output: { readonly atoms: readonly number[] } }): CompiledStep {
  const need = needed(term.tape, term.output.atoms);
  const source = [...statements(term.tape, need, (k) => `I[${k}]`), ...term.output.atoms.map((v, j) => `O[${j}] = v${v};`)].join("\n");
  const f = new Function("K", "I", "O", source);
  return (I, O) => f(KERNELS, I, O);
}

/** One pattern of a forward sweep's block (diff/scan-tangent.ts): its tangent term and what it reads and writes. */
export interface TangentBlock {
  readonly term: { readonly tape: Tape; readonly output: { readonly atoms: readonly number[] } };
  /** The inputs whose tangents it takes, in the order the term's inputs after the body's follow. */
  readonly ins: readonly number[];
  readonly carryPresent: Uint8Array;
  readonly obsPresent: Uint8Array;
}

/**
 * A block's tangent term over iterations lo … hi − 1, forward: `run(lo, hi, st, X, P, XT,
 * XA, XS, PT, out, O)`. st holds the carries then their tangents (updated in place); x at
 * X[XA[l] + r·XS], its tangent at XT[XA[l] + r·XS] (one per leaf and iteration, or a
 * stacked scan's packed value and its tangent); captured values P, their tangents PT; the
 * written slots' tangents go to out[O[r·|obs| + s]].
 */
export type CompiledTangent = (
  lo: number,
  hi: number,
  st: Float64Array,
  X: Float64Array,
  P: Float64Array,
  XT: Float64Array,
  XA: Int32Array,
  XS: number,
  PT: Float64Array,
  out: Float64Array,
  O: Int32Array,
) => void;

export function compiledTangent(t: TangentBlock, body: Body, nobs: number): CompiledTangent {
  const { nc, nx, np } = body;
  const nin = nc + nx + np;
  const tape = t.term.tape;
  const atoms = t.term.output.atoms;
  const need = needed(tape, atoms);
  const tangent = (k: number): string => (k < nc ? `t${k}` : k < nc + nx ? `XT[xa${k - nc} + r * XS]` : `pt${k - nc - nx}`);
  const input = (k: number): string =>
    k < nc ? `c${k}` : k < nc + nx ? `X[xa${k - nc} + r * XS]` : k < nin ? `p${k - nc - nx}` : tangent(t.ins[k - nin]);
  // the outputs: carry′ (the leaves that change), carry′'s present tangents, the written slots' present tangents
  const results: string[] = [];
  let j = 0;
  for (let k = 0; k < nc; k++) if (body.carryKind[k] !== "identity") results.push(`c${k} = v${atoms[j++]};`);
  for (let k = 0; k < nc; k++) if (body.carryKind[k] === "internal" && t.carryPresent[k]) results.push(`t${k} = v${atoms[j++]};`);
  for (let s = 0; s < nobs; s++) if (t.obsPresent[s]) results.push(`out[O[r * ${nobs} + ${s}]] = v${atoms[j++]};`);
  const source = [
    ...Array.from({ length: nc }, (_, k) => `let c${k} = st[${k}]; let t${k} = st[${nc + k}];`),
    ...Array.from({ length: np }, (_, q) => `const p${q} = P[${q}]; const pt${q} = PT[${q}];`),
    ...Array.from({ length: nx }, (_, l) => `const xa${l} = XA[${l}];`),
    "for (let r = lo; r < hi; r++) {",
    ...statements(tape, need, input).map((l) => `  ${l}`),
    ...results.map((l) => `  ${l}`),
    "}",
    ...Array.from({ length: nc }, (_, k) => `st[${k}] = c${k}; st[${nc + k}] = t${k};`),
  ].join("\n");
  const f = new Function("K", "lo", "hi", "st", "X", "P", "XT", "XA", "XS", "PT", "out", "O", source);
  return (lo, hi, st, X, P, XT, XA, XS, PT, out, O) => f(KERNELS, lo, hi, st, X, P, XT, XA, XS, PT, out, O);
}
