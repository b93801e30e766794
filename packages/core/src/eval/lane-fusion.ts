/**
 * @file Chains of elementwise instructions over a batch of lanes (vmap's evaluator,
 * lanes.ts) fused into one loop: each result element computed from its operands'
 * elements in registers, the chain's intermediate tensors never written.
 *
 * A forward-mode Jacobian evaluates its tangent term with the columns as lanes (columns.ts),
 * and the per-element part of such a term is a chain of gathers, products and sums over
 * lanes × elements (GradBench's ht: for each point, u0·∂V_a + u1·∂V_b + w·∂V_c, 26 lanes
 * of [3, N]). Instruction by instruction, every link writes and reads the whole batch
 * back: memory-bound passes. Fused, the batch is written once.
 *
 * A chain is a tree of instructions that are batched, elementwise (a scalar primitive on
 * tensors) or a gather, of the same dims, each read by one instruction only, the next in
 * the chain (not an output, nor a guard's, tie's or NaN check's operand), rooted at an
 * elementwise one (its sink); an instruction whose lanes are checked for ties is neither
 * (its check runs per lane on its own result, lanes.ts). Its other operands are loads: at result element (row r,
 * element q of the last axis), a tensor is read at its row's offset plus q (or its one
 * element along the row, broadcast), a gather's source at the row's offset plus
 * indices[q] (along the last axis) or q (along another: the row's offset then says which
 * entry), a real once per lane. Every element is the primitive's own kernel on the same
 * operands (`KERNELS`, the one that `compute` maps over a tensor; + − × ÷ written inline,
 * the same IEEE operations), so the numbers are those of the instructions one by one.
 */
import { alloc, broadcastStrides, release, sameDims, size, strides as stridesOf, type Dims } from "@wengert/ops";
import { ARITY, CODE, FIRST_PRIMITIVE, IS_TENSOR_OP, KERNELS } from "../trace/opcodes.js";
import type { Tape } from "../trace/tape.js";
import { codeCache } from "../jit/javascript.js";
import { lanesInner, writeElementMajor, type ElementMajor } from "./lane-layout.js";

/** An operand read from outside the chain (see the file's comment). */
interface Load {
  /** The variable read: the operand, or a gather's source. */
  readonly v: number;
  /** Per result row, where the row starts in v's value (at one lane). */
  readonly rows: Int32Array;
  /** Along the row: one element (0), consecutive ones (1), or a gather's indices. */
  readonly along: 0 | 1 | Int32Array;
}

/** A fused chain: what its sink computes. */
export interface FusedChain {
  readonly dims: Dims;
  /** How many instructions it computes (the sink and those absorbed). */
  readonly instructions: number;
  readonly loads: readonly Load[];
  /** The compiled loop (see compile). */
  readonly run: ChainRun;
  /** The loop's statements per element and its result, for the element-major loop (compileElementMajor). */
  readonly body: ChainBody;
}

interface ChainBody {
  readonly lines: readonly string[];
  readonly sink: string;
  /** The primitives called through the kernel table. */
  readonly codes: readonly number[];
}

/**
 * The chain at `w` lanes: loads' values (a batched one's lanes side by side, `laneSize`
 * apart; 0 for one value for every lane) into `out`, lane l's S = R · n results at l · S.
 */
type ChainRun = (
  w: number,
  R: number,
  n: number,
  out: Float64Array,
  B: readonly Float64Array[],
  Z: readonly number[],
  O: readonly Int32Array[],
  X: readonly Int32Array[],
) => void;

/** The fused chains of a term: by sink, and for every instruction the position where it is computed. */
export interface FusionPlan {
  /** The chains by their sink's index. */
  readonly chains: ReadonlyMap<number, FusedChain>;
  /** Per instruction, 1 where it is inside a chain (not its sink): computed by the sink. */
  readonly absorbed: Uint8Array;
  /** Per instruction, where its operands are read: its chain's sink, else itself. */
  readonly at: Int32Array;
}

export interface FusionInput {
  readonly tape: Tape;
  readonly batched: Uint8Array;
  readonly live: Uint8Array;
  /** Instructions whose value is read besides their readers (outputs, guards, ties): never inside a chain. */
  readonly pinned: Uint8Array;
  /** Instructions whose lanes are checked (a tie, a kink): evaluated one by one, never in a chain nor its sink. */
  readonly checked: Uint8Array;
}

const GATHER = CODE.gather;
const INLINE: ReadonlyMap<number, string> = new Map([
  [CODE.add, "+"],
  [CODE.sub, "-"],
  [CODE.mul, "*"],
  [CODE.div, "/"],
]);

/** The chains of the term (see the file's comment); instructions outside them are evaluated one by one as before. */
export function planFusion({ tape, batched, live, pinned, checked }: FusionInput): FusionPlan {
  const { op, length: n } = tape;
  const at = new Int32Array(n);
  for (let i = 0; i < n; i++) at[i] = i;
  const absorbed = new Uint8Array(n);
  const chains = new Map<number, FusedChain>();
  const elementwise = (i: number): boolean =>
    batched[i] === 1 && live[i] === 1 && op[i] >= FIRST_PRIMITIVE && !IS_TENSOR_OP[op[i]] && tape.isTensor(i) && tape.dims(i).length > 0;
  const gather = (i: number): boolean => batched[i] === 1 && live[i] === 1 && op[i] === GATHER && tape.dims(i).length > 0;
  // each instruction's one reader, or -1 (none, or several)
  const reader = new Int32Array(n).fill(-1);
  const readers = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    if (!live[i] || op[i] < FIRST_PRIMITIVE) continue;
    const args = tape.args(i);
    args.forEach((v, k) => {
      if (args.indexOf(v) !== k) return;
      readers[v]++;
      reader[v] = i;
    });
  }
  // joined to its reader: read there only, elementwise, at the same dims
  const into = new Int32Array(n).fill(-1);
  for (let i = 0; i < n; i++) {
    const r = reader[i];
    if (readers[i] !== 1 || pinned[i] || checked[i] || checked[r]) continue;
    if (!(elementwise(i) || gather(i)) || !elementwise(r) || !sameDims(tape.dims(i), tape.dims(r))) continue;
    into[i] = r;
  }
  // the sinks, readers coming after what they read
  for (let i = n - 1; i >= 0; i--) if (into[i] >= 0) at[i] = at[into[i]];
  const members = new Map<number, number[]>();
  for (let i = 0; i < n; i++) {
    if (into[i] < 0) continue;
    absorbed[i] = 1;
    const list = members.get(at[i]);
    if (list === undefined) members.set(at[i], [i]);
    else list.push(i);
  }
  for (const [sink, list] of members) chains.set(sink, chainOf(tape, [...list, sink], into));
  return { chains, absorbed, at };
}

/** The loads and the compiled loop of a chain (its instructions in tape order, the sink last). */
function chainOf(tape: Tape, instructions: readonly number[], into: Int32Array): FusedChain {
  const dims = tape.dims(instructions[instructions.length - 1]);
  const loads: Load[] = [];
  const loadOf = new Map<number, number>();
  const lines: string[] = [];
  const name = new Map<number, string>();
  const operand = (v: number): string => {
    const known = name.get(v);
    if (known !== undefined) return known;
    // a tensor or real read from outside, once per variable
    let k = loadOf.get(v);
    if (k === undefined) {
      k = loads.push(broadcastLoad(tape, v, dims)) - 1;
      loadOf.set(v, k);
    }
    return `l${k}`;
  };
  for (const i of instructions) {
    const code = tape.op[i];
    if (code === GATHER) {
      const k = loads.push(gatherLoad(tape, i, dims)) - 1;
      name.set(i, `l${k}`);
      continue;
    }
    const args = tape.args(i).map((v) => (into[v] === i ? name.get(v)! : operand(v)));
    const inline = INLINE.get(code);
    const value = inline !== undefined ? `${args[0]} ${inline} ${args[1]}` : ARITY[code] === 1 ? `K${code}(${args[0]}, 0)` : `K${code}(${args[0]}, ${args[1]})`;
    lines.push(`const t${i} = ${value};`);
    name.set(i, `t${i}`);
  }
  const sink = name.get(instructions[instructions.length - 1])!;
  const codes = [...new Set(instructions.map((i) => tape.op[i]).filter((c) => c !== GATHER && !INLINE.has(c)))];
  return { dims, instructions: instructions.length, loads, run: compile(loads, lines, sink, codes), body: { lines, sink, codes } };
}

/** For each row of a result of dims `out` (all axes but the last), the offset `f(index)` of its start. */
function rowOffsets(out: Dims, f: (index: readonly number[]) => number): Int32Array {
  const prefix = out.slice(0, -1);
  const R = size(prefix);
  const rows = new Int32Array(R);
  const index = new Array<number>(prefix.length).fill(0);
  for (let r = 0; r < R; r++) {
    rows[r] = f(index);
    for (let ax = prefix.length - 1; ax >= 0; ax--) {
      if (++index[ax] < prefix[ax]) break;
      index[ax] = 0;
    }
  }
  return rows;
}

/** Operand v (a real, or a tensor broadcasting to `out`) read at each result element. */
function broadcastLoad(tape: Tape, v: number, out: Dims): Load {
  const d = tape.dims(v);
  if (!tape.isTensor(v) || d.length === 0) return { v, rows: new Int32Array(size(out.slice(0, -1))), along: 0 };
  // v's axes aligned with out's last ones (NumPy broadcasting): stride 0 where it is repeated
  const st = broadcastStrides(d, out);
  const rows = rowOffsets(out, (index) => index.reduce((o, i, ax) => o + i * st[ax], 0));
  return { v, rows, along: st[out.length - 1] === 0 ? 0 : 1 };
}

/** Gather instruction g's source read at each result element (its result's dims are `out`). */
function gatherLoad(tape: Tape, g: number, out: Dims): Load {
  const x = tape.args(g)[0];
  const { indices, axis } = tape.params(g) as { indices: Int32Array; axis: number };
  const strides = stridesOf(tape.dims(x));
  const last = out.length - 1;
  const rows = rowOffsets(out, (index) => {
    let o = 0;
    for (let ax = 0; ax < index.length; ax++) o += (ax === axis ? indices[index[ax]] : index[ax]) * strides[ax];
    return o;
  });
  return { v: x, rows, along: axis === last ? indices : 1 };
}

/** Chains' loops by their source: a term traced again by a later call has the same chains. */
const compiled = codeCache<ChainRun>();

/**
 * The chain's loop: per lane and row, each load's start; per element, the loads, then
 * the instructions in order, then the sink's value stored. Cached by its source (the
 * chain's structure, not its sizes).
 *
 * The loop over a row's elements is a function of its own, called per row: V8 then
 * optimizes it as a function after a few rows (the whole chain runs once per call of
 * the term, and its code entered mid-loop, on-stack replaced, ran 6× slower).
 */
function compile(loads: readonly Load[], lines: readonly string[], sink: string, codes: readonly number[]): ChainRun {
  // per load: its one value of the row, or its buffer, the row's start and (a gather) the indices
  const buffer = sharedBuffers(loads, (k) => loads[k].along !== 0);
  const loadParams = (ld: Load, k: number): string[] =>
    ld.along === 0 ? [`l${k}`] : [...ownBuffer(buffer, k), `p${k}`, ...(ld.along === 1 ? [] : [`x${k}`])];
  const rowParams = ["out", "at", "n", ...loads.flatMap(loadParams)];
  const perElement = loads.flatMap((ld, k) => (ld.along === 0 ? [] : [`const l${k} = ${buffer[k]}[p${k} + ${ld.along === 1 ? "q" : `x${k}[q]`}];`]));
  const row = [
    ...codes.map((c) => `const K${c} = K[${c}];`),
    `return function row(${rowParams.join(", ")}) {`,
    "  for (let q = 0; q < n; q++) {",
    ...[...perElement, ...lines].map((s) => `    ${s}`),
    `    out[at + q] = ${sink};`,
    "  }",
    "};",
  ].join("\n");
  const perRow = loads.map((ld, k) => (ld.along === 0 ? `const l${k} = b${k}[l * z${k} + o${k}[r]];` : `const p${k} = l * z${k} + o${k}[r];`));
  const source = [
    ...loads.map((ld, k) => `const b${k} = B[${k}], z${k} = Z[${k}], o${k} = O[${k}]${ld.along instanceof Int32Array ? `, x${k} = X[${k}]` : ""};`),
    "const S = R * n;",
    "for (let l = 0; l < w; l++) {",
    "  for (let r = 0; r < R; r++) {",
    ...perRow.map((s) => `    ${s}`),
    `    row(${rowParams.map((p) => (p === "at" ? "l * S + r * n" : p)).join(", ")});`,
    "  }",
    "}",
  ].join("\n");
  return compiled(`${row}\n${source}`, () => {
    const rowOf = new Function("K", row) as (K: typeof KERNELS) => unknown;
    return new Function("row", `return function chain(w, R, n, out, B, Z, O, X) {\n${source}\n};`)(rowOf(KERNELS)) as ChainRun;
  });
}

/**
 * Per load, the name of the buffer it reads in a loop's body: that of the first load of the
 * same variable whose buffer is passed (`passed`), so that loads of one variable (ht's three
 * gathers of one tangent) read one array, whose base and length V8 then keeps once for all
 * of them (ht's chain 18 % faster than with a parameter per load: three arrays to it).
 */
function sharedBuffers(loads: readonly Load[], passed: (k: number) => boolean): string[] {
  return loads.map((ld, k) => {
    if (!passed(k)) return `b${k}`;
    const first = loads.findIndex((o, j) => o.v === ld.v && passed(j));
    return `b${first}`;
  });
}

/** Load k's buffer as a parameter of the loop's body: none where it reads an earlier load's (sharedBuffers). */
const ownBuffer = (buffer: readonly string[], k: number): string[] => (buffer[k] === `b${k}` ? [`b${k}`] : []);

/** What runFused reads of a variable: its value for every lane (a batched one's lanes side by side). */
export interface ChainOperand {
  readonly values: Float64Array;
  /** How far apart the lanes are (0: one value for every lane). */
  readonly laneSize: number;
}

/**
 * Counters for tests: chains run, the instructions they computed (sinks included), the
 * chains run element-major from their operands' lanes, and those written permuted (as
 * an output's transpose, lane-layout.ts).
 */
export const fusionStats = { chains: 0, instructions: 0, elementMajor: 0, permuted: 0 };

/**
 * The chain at `w` lanes into `out`, its loads read through `operand`: lane-major (lane
 * l's size(dims) values at l · size(dims)), or element-major at `place` (lane-layout.ts).
 */
export function runFused(chain: FusedChain, w: number, out: Float64Array, operand: (v: number) => ChainOperand, place?: ElementMajor): void {
  fusionStats.chains++;
  fusionStats.instructions += chain.instructions;
  const n = chain.dims[chain.dims.length - 1];
  const S = size(chain.dims);
  const R = S / Math.max(1, n);
  if (n === 0 || R === 0) return;
  const ops = chain.loads.map((ld) => operand(ld.v));
  if (place?.permuted !== undefined) fusionStats.permuted++;
  const X = chain.loads.map((ld) => (ld.along instanceof Int32Array ? ld.along : EMPTY));
  const O = chain.loads.map((ld) => ld.rows);
  if (place === undefined) {
    chain.run(w, R, n, out, ops.map((o) => o.values), ops.map((o) => o.laneSize), O, X);
    return;
  }
  // element-major: each element's lanes side by side, from the batched operands' lanes side
  // by side (their copies, made below); where those copies would outweigh the result, the
  // lanes are computed lane-major and transposed once instead
  const copies = new Map<number, Float64Array>();
  let copied = 0;
  chain.loads.forEach((ld, k) => {
    if (ops[k].laneSize > 1 && !copies.has(ld.v)) {
      copies.set(ld.v, EMPTY_VALUES);
      copied += ops[k].laneSize;
    }
  });
  if (copied > S) {
    const lanes = alloc(w * S, true);
    chain.run(w, R, n, lanes, ops.map((o) => o.values), ops.map((o) => o.laneSize), O, X);
    writeElementMajor(lanes, w, S, out, place, n);
    release(lanes);
    return;
  }
  for (const v of copies.keys()) {
    const k = chain.loads.findIndex((ld) => ld.v === v);
    copies.set(v, lanesInner(ops[k].values, w, ops[k].laneSize));
  }
  // a real's column (laneSize 1) is element-major as it is: its one element's lanes side by side
  const T = chain.loads.map((ld, k) => copies.get(ld.v) ?? ops[k].values);
  fusionStats.elementMajor++;
  // row r's first element's place, and the step along the row (in order: r·n, 1)
  const rowAt = place.permuted?.rowAt ?? Int32Array.from({ length: R }, (_, r) => r * n);
  const step = place.permuted?.step ?? 1;
  elementMajorRun(chain, ops.map((o) => o.laneSize > 0))(w, R, n, out, place.stride, place.first, rowAt, step * place.stride, T, O, X);
  for (const c of copies.values()) release(c);
}

const EMPTY = new Int32Array(0);
const EMPTY_VALUES = new Float64Array(0);

/**
 * The chain's element-major loop (runFused with a place), for operands batched or not as
 * `batched` says: `T` holds a batched operand's lanes element-major (element e of lane l
 * at e · w + l), an unbatched one's value as it is. Element (r, q) of lane l goes to
 * (A[r] · stride) + q · qs + first + l (ElementMajor's place, qs = its step · stride).
 */
type ElementRun = (
  w: number,
  R: number,
  n: number,
  out: Float64Array,
  stride: number,
  first: number,
  A: Int32Array,
  qs: number,
  T: readonly Float64Array[],
  O: readonly Int32Array[],
  X: readonly Int32Array[],
) => void;

/** Elements per call of the element-major loop's span function (see compileElementMajor). */
const SPAN = 64;

function elementMajorRun(chain: FusedChain, batched: readonly boolean[]): ElementRun {
  const key = batched.map((b) => +b).join("");
  const cached = elementRuns.get(chain);
  if (cached !== undefined && cached.key === key) return cached.run;
  const run = compileElementMajor(chain.loads, batched, chain.body);
  elementRuns.set(chain, { key, run });
  return run;
}

const elementRuns = new WeakMap<FusedChain, { readonly key: string; readonly run: ElementRun }>();
const elementCompiled = codeCache<ElementRun>();

/**
 * The element-major loop: per span of elements and row, per element the unbatched loads'
 * values and the batched loads' element offsets, then per lane the batched loads, the
 * instructions and the store, lane after lane into neighbouring places of `out`. The
 * same statements as compile's loop: the same numbers. The span function is called every
 * SPAN elements, so V8 optimizes it as a function (see compile on entering a loop midway).
 */
function compileElementMajor(loads: readonly Load[], batched: readonly boolean[], { lines, sink, codes }: ChainBody): ElementRun {
  // per load: its one value of the row (unbatched, along 0), or its buffer, its row's start and (a gather) the indices
  const passed = (k: number): boolean => loads[k].along !== 0 || batched[k];
  const buffer = sharedBuffers(loads, passed);
  const loadParams = (ld: Load, k: number): string[] =>
    !passed(k) ? [`l${k}`] : [...ownBuffer(buffer, k), `p${k}`, ...(ld.along instanceof Int32Array ? [`x${k}`] : [])];
  const spanParams = ["out", "at", "stride", "w", "q0", "q1", ...loads.flatMap(loadParams)];
  const element = (ld: Load, k: number): string => (ld.along === 0 ? `p${k}` : ld.along === 1 ? `p${k} + q` : `p${k} + x${k}[q]`);
  const perElement = loads.flatMap((ld, k) =>
    batched[k] ? [`const e${k} = (${element(ld, k)}) * w;`] : ld.along === 0 ? [] : [`const l${k} = ${buffer[k]}[${element(ld, k)}];`],
  );
  // lane `at`'s loads, statements and store, in a block
  const laneBlock = (at: string): string[] => [
    "      {",
    ...loads.flatMap((_, k) => (batched[k] ? [`        const l${k} = ${buffer[k]}[e${k} + ${at}];`] : [])),
    ...lines.map((s) => `        ${s}`),
    `        out[o + ${at}] = ${sink};`,
    "      }",
  ];
  const span = [
    ...codes.map((c) => `const K${c} = K[${c}];`),
    `return function span(${spanParams.join(", ")}) {`,
    "  for (let q = q0; q < q1; q++) {",
    ...perElement.map((s) => `    ${s}`),
    "    const o = at + q * stride;",
    "    let l = 0;",
    // two lanes a step, each in a block of its own (the same statements, their own names):
    // ht's Jacobian's chain 10 % faster than a lane a step (the loop's test and index once for two stores)
    "    for (; l + 1 < w; l += 2) {",
    ...laneBlock("l"),
    ...laneBlock("l + 1"),
    "    }",
    "    if (l < w) {",
    ...laneBlock("l"),
    "    }",
    "  }",
    "};",
  ].join("\n");
  const perRow = loads.map((ld, k) => (ld.along === 0 && !batched[k] ? `const l${k} = b${k}[o${k}[r]];` : `const p${k} = o${k}[r];`));
  // a span of every row before the next span: a permuted place (rows interleaved in `out`) is written a region at a time
  const source = [
    ...loads.map((ld, k) => `const b${k} = T[${k}], o${k} = O[${k}]${ld.along instanceof Int32Array ? `, x${k} = X[${k}]` : ""};`),
    `for (let q0 = 0; q0 < n; q0 += ${SPAN}) {`,
    `  const q1 = Math.min(n, q0 + ${SPAN});`,
    "  for (let r = 0; r < R; r++) {",
    ...perRow.map((s) => `    ${s}`),
    "    const at = A[r] * stride + first;",
    `    span(${spanParams.map((p) => (p === "stride" ? "qs" : p)).join(", ")});`,
    "  }",
    "}",
  ].join("\n");
  return elementCompiled(`${span}\n${source}`, () => {
    const spanOf = new Function("K", span) as (K: typeof KERNELS) => unknown;
    return new Function("span", `return function chain(w, R, n, out, stride, first, A, qs, T, O, X) {\n${source}\n};`)(spanOf(KERNELS)) as ElementRun;
  });
}


