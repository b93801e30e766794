/**
 * @file GradBench `lstm`: ADBench's LSTM ("diagonal" weights) — the loss of predicting
 * each character of a sequence from the previous ones, and its gradient.
 *
 * As cpp/gradbench/evals/lstm.hpp, with l layers, hidden size b (the character width)
 * and c characters: layer i has weights (forget, ingate, outgate, change) in row 2i of
 * `main_params` and biases in row 2i+1; `extra_params` rows are the input weight, output
 * weight and output bias; `state` rows 2i, 2i+1 the initial hidden and cell of layer i.
 * Each gate is elementwise (the weights multiply, not a matrix):
 *
 *   forget = σ(in·W_f + B_f), ingate = σ(h·W_i + B_i), outgate = σ(in·W_o + B_o),
 *   change = tanh(h·W_c + B_c), cell ← cell·forget + ingate·change, h ← outgate·tanh(cell)
 *
 * The prediction for step t is y_t = h_last·W_out + B_out, normalised by ADBench's
 * log(Σ exp y + 2), and the loss is −Σ_t Σ_j seq[t+1]_j (y_t − lse_t)_j / ((c − 1) b).
 *
 * The gates are elementwise, so the recurrence runs one hidden unit at a time, on reals
 * (a [1, b] tensor operation would pay its fixed cost for 14 elements): for the
 * predictions, a `jit`ted `scan` over 128 characters at a time, the unit's hidden and cell
 * values carried (the eval times many calls: from the third chunk on, the steps run as
 * compiled JavaScript); for the gradient, the steps written out under `rd`. Both stack the
 * predictions of all steps and take the loss on the [c − 1, b] matrix.
 *
 * Output of `jacobian`: the gradient with respect to main_params (row-major 2l × 4b)
 * then extra_params (row-major 3 × b), concatenated.
 */
import ndarray from "ndarray";
import { add, exp, grad, jit, log, mul, rd, scan, sigmoid, sub, sum, tanh, type NdArray, type Scalar, type TensorArg } from "@wengert/core";
import { defineFunction } from "../define.js";
import { lstmInput } from "../inputs.js";
import { field, InputError, matrix, record } from "../json.js";
import type { EvalModule, WarmUp } from "../module.js";

type T = TensorArg;

export interface LstmParams {
  /** 2l × 4b */
  readonly main: NdArray;
  /** 3 × b */
  readonly extra: NdArray;
}

export interface LstmPrepared {
  readonly l: number;
  readonly b: number;
  readonly c: number;
  readonly params: LstmParams;
  /** The initial state: hidden and cell of each layer, [b] each. */
  readonly hidden: readonly Float64Array[];
  readonly cell: readonly Float64Array[];
  /** The characters, [b] each. */
  readonly sequence: readonly Float64Array[];
  /** Characters 1 … c − 1 as a [c − 1, b] matrix (the targets). */
  readonly targets: NdArray;
}

export function prepareLstm(json: unknown): LstmPrepared {
  const input = record(json);
  const main = matrix(field(input, "main_params"), "main_params");
  const extra = matrix(field(input, "extra_params"), "extra_params");
  const state = matrix(field(input, "state"), "state");
  const seq = matrix(field(input, "sequence"), "sequence");
  const l = main.rows / 2;
  const b = main.cols / 4;
  const c = seq.rows;
  if (!Number.isInteger(l) || l < 1 || !Number.isInteger(b) || b < 1) throw new InputError(`main_params is ${main.rows} × ${main.cols}; expected 2l × 4b`);
  if (extra.rows !== 3 || extra.cols !== b) throw new InputError(`extra_params is ${extra.rows} × ${extra.cols}; expected 3 × ${b}`);
  if (state.rows !== 2 * l || state.cols !== b) throw new InputError(`state is ${state.rows} × ${state.cols}; expected ${2 * l} × ${b}`);
  if (c < 2 || seq.cols !== b) throw new InputError(`sequence is ${seq.rows} × ${seq.cols}; expected at least 2 rows of ${b}`);
  const row = (d: Float64Array, i: number) => d.slice(i * b, (i + 1) * b);
  return {
    l, b, c,
    params: { main: ndarray(main.data, [2 * l, 4 * b]), extra: ndarray(extra.data, [3, b]) },
    hidden: Array.from({ length: l }, (_, i) => row(state.data, 2 * i)),
    cell: Array.from({ length: l }, (_, i) => row(state.data, 2 * i + 1)),
    sequence: Array.from({ length: c }, (_, t) => row(seq.data, t)),
    targets: ndarray(seq.data.slice(b), [c - 1, b]),
  };
}

/**
 * Σ_t Σ_j targets[t]_j (y_t − lse_t)_j over the predictions Y ([c − 1, b]), each row
 * normalised by ADBench's log(Σ exp y + 2).
 */
function targetsDotLogSoftmax(Y: T, targets: T): Scalar {
  const lse = log(add(sum(exp(Y), 1, true), 2)) as T;
  return sum(mul(targets, sub(Y, lse)));
}

/** The loss's factor of targetsDotLogSoftmax: −1 over the (c − 1)·b predicted values. */
const lossScale = (s: LstmPrepared): number => -1 / ((s.c - 1) * s.b);

/** The loss of all steps from their predictions Y ([c − 1, b]), against the next characters. */
export function predictionLoss(s: LstmPrepared, Y: T): Scalar {
  return mul(lossScale(s), targetsDotLogSoftmax(Y, s.targets));
}

/**
 * targetsDotLogSoftmax `jit`ted, for the objective: its replay runs the chains of
 * elementwise operations and reductions as compiled loops (jit/chains.ts), the numbers of
 * the operations one by one. One trace per shape of Y (per c), made at its first call.
 */
const jittedTargetsDot = jit(([Y, targets]: [T, T]) => targetsDotLogSoftmax(Y, targets));

/** predictionLoss by jittedTargetsDot: the same number. */
export function predictionLossJitted(s: LstmPrepared, Y: NdArray): number {
  return lossScale(s) * (jittedTargetsDot([Y, s.targets]) as number);
}

/** How many parameters a hidden unit has: 4 weights and 4 biases per layer, then input weight, output weight and output bias. */
const unitSize = (l: number): number => 8 * l + 3;

/** Hidden unit j's parameters, in unitPredictions' order, read from main_params and extra_params. */
function unitParams(s: LstmPrepared, j: number): Float64Array {
  const { l, b } = s;
  const main = s.params.main.data as Float64Array;
  const extra = s.params.extra.data as Float64Array;
  const p = new Float64Array(unitSize(l));
  for (let i = 0; i < l; i++) for (let r = 0; r < 2; r++) for (let k = 0; k < 4; k++) p[8 * i + 4 * r + k] = main[(2 * i + r) * 4 * b + k * b + j];
  for (let r = 0; r < 3; r++) p[8 * l + r] = extra[r * b + j];
  return p;
}

/**
 * One character's step of hidden unit j with parameters p (numbers, or wengert values
 * under rd or jit): the layers' hidden and cell values updated in place from the
 * character's value `ch`, and the unit's prediction y_t[j] returned. lstm.hpp's gates are
 * elementwise, so unit j's hidden and cell values over all steps and layers depend on its
 * own weights and biases alone (the units meet only in the loss's normalisation).
 */
function unitStep(l: number, p: ArrayLike<Scalar>, hidden: Scalar[], cell: Scalar[], ch: Scalar): Scalar {
  let x = mul(ch, p[8 * l]);
  for (let i = 0; i < l; i++) {
    const o = 8 * i;
    const forget = sigmoid(add(mul(x, p[o]), p[o + 4]));
    const ingate = sigmoid(add(mul(hidden[i], p[o + 1]), p[o + 5]));
    const outgate = sigmoid(add(mul(x, p[o + 2]), p[o + 6]));
    const change = tanh(add(mul(hidden[i], p[o + 3]), p[o + 7]));
    cell[i] = add(mul(cell[i], forget), mul(ingate, change));
    hidden[i] = mul(outgate, tanh(cell[i]));
    x = hidden[i];
  }
  return add(mul(x, p[8 * l + 1]), p[8 * l + 2]);
}

/** Hidden unit j's predictions y_t[j] for t = 0 … c − 2, the steps written out (the gradient's rd traces them). */
function unitPredictions(s: LstmPrepared, p: ArrayLike<Scalar>, j: number): Scalar[] {
  const { l, c } = s;
  const hidden: Scalar[] = s.hidden.map((h) => h[j]);
  const cell: Scalar[] = s.cell.map((h) => h[j]);
  const out: Scalar[] = new Array<Scalar>(c - 1);
  for (let t = 0; t < c - 1; t++) out[t] = unitStep(l, p, hidden, cell, s.sequence[t][j]);
  return out;
}

/** A unit's parameters, its layers' hidden and cell values, and CHUNK of its characters. */
type ChunkInput = readonly [p: number[], state: number[], chars: number[]];

/**
 * How many characters one call of the jitted scan takes. A fixed length makes one trace
 * serve every c (the eval's workloads differ in c) and keeps the first call, which traces,
 * short; the last chunk of a unit is padded with zeros, whose predictions and state are
 * dropped. 128 was the fastest of 64, 128, 256 and the whole sequence (l = 2, c = 1024 and
 * l = 4, c = 4096).
 */
const CHUNK = 128;

/**
 * CHUNK steps of a unit as a `scan` over its characters, the hidden and cell values of its
 * layers carried as reals (hidden first), `jit`ted: the body is traced once and runs as
 * compiled JavaScript from the third call on (docs/jit-vmap.md), without the dispatch of
 * each operation on numbers. Returns the state after the chunk and its predictions. One
 * function per l, the shape of its trace.
 */
const unitScans = new Map<number, (x: ChunkInput) => [number[], number[]]>();

function unitScan(l: number): (x: ChunkInput) => [number[], number[]] {
  let f = unitScans.get(l);
  if (f === undefined) {
    const chunk = ([p, state, chars]: ChunkInput) =>
      scan(
        (carry: Scalar[], ch: Scalar): [Scalar[], Scalar] => {
          const hidden = carry.slice(0, l);
          const cell = carry.slice(l);
          const y = unitStep(l, p, hidden, cell, ch);
          return [[...hidden, ...cell], y];
        },
        state,
        chars,
      );
    unitScans.set(l, (f = jit(chunk) as (x: ChunkInput) => [number[], number[]]));
  }
  return f;
}

/** The predictions of every step, [c − 1, b], unit by unit and CHUNK characters at a time through the jitted scan. */
function predictions(s: LstmPrepared): NdArray {
  const { l, b, c } = s;
  const f = unitScan(l);
  const Y = new Float64Array((c - 1) * b);
  const chars = new Array<number>(CHUNK);
  for (let j = 0; j < b; j++) {
    const p = Array.from(unitParams(s, j));
    let state = [...s.hidden.map((h) => h[j]), ...s.cell.map((h) => h[j])];
    for (let t0 = 0; t0 < c - 1; t0 += CHUNK) {
      const n = Math.min(CHUNK, c - 1 - t0);
      for (let t = 0; t < CHUNK; t++) chars[t] = t < n ? s.sequence[t0 + t][j] : 0;
      const [next, y] = f([p, state, chars]);
      state = next;
      for (let t = 0; t < n; t++) Y[(t0 + t) * b + j] = y[t];
    }
  }
  return ndarray(Y, [c - 1, b]);
}

export function lstmObjective(s: LstmPrepared): number {
  return predictionLossJitted(s, predictions(s));
}

/**
 * The gradient by the chain rule through the units: Ȳ = ∂loss/∂Y by `grad` of the loss
 * on the [c − 1, b] predictions, then each unit's parameters by reverse mode over its own
 * recurrence (`rd` of unitPredictions at its parameters, seeded with Ȳ's column j): b
 * traces of c·l·~20 operations on reals, no tensor operations of 14 elements.
 */
export function lstmGradient(s: LstmPrepared): Float64Array {
  const { l, b, c } = s;
  const Ybar = (grad((Y: T) => predictionLoss(s, Y), predictions(s)) as NdArray).data as Float64Array;
  const out = new Float64Array(s.params.main.size + s.params.extra.size);
  const extraAt = s.params.main.size;
  for (let j = 0; j < b; j++) {
    const seed = Array.from({ length: c - 1 }, (_, t) => Ybar[t * b + j]);
    const g = rd((p: Scalar[]) => unitPredictions(s, p, j), Array.from(unitParams(s, j)), seed) as number[];
    for (let i = 0; i < l; i++) for (let r = 0; r < 2; r++) for (let k = 0; k < 4; k++) out[(2 * i + r) * 4 * b + k * b + j] = g[8 * i + 4 * r + k];
    for (let r = 0; r < 3; r++) out[extraAt + r * b + j] = g[8 * l + r];
  }
  return out;
}

/**
 * Warm-up inputs for `define` (module.ts): a synthetic sequence of 3 chunks at one layer
 * (l = 1, which GradBench's evals do not send), twice, the objective 30 runs a round: V8
 * optimises the module's functions, the kernels and jit's machinery before the first timed
 * call, as a C++ tool is compiled before it runs. The jitted scan is traced and compiled per
 * l at the eval's first call of that l, as a user's first call would: warming up the eval's
 * own layer counts (2, 4, 6) made that call's trace ahead too and took its means ×0.8–0.9
 * lower at c = 1024, but it guesses the eval's input, which nothing of a warm-up may.
 */
const warmUp = (runs: number): WarmUp => ({
  input: (r: number) => ({ ...lstmInput(1, 2 * CHUNK + 4, 14, 1 + r), min_runs: runs }),
  rounds: 2,
});

export const lstm: EvalModule = {
  objective: defineFunction({ prepare: prepareLstm, run: lstmObjective, warmUp: warmUp(30) }),
  jacobian: defineFunction({ prepare: prepareLstm, run: lstmGradient, warmUp: warmUp(1) }),
};
