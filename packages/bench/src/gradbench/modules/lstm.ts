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
 * The objective runs the recurrence one hidden unit at a time on numbers (the gates are
 * elementwise); the gradient on wengert's tensor path, every operation on a whole [b]
 * vector. Both stack the predictions of all steps and take the loss on the [c − 1, b]
 * matrix.
 *
 * Output of `jacobian`: the gradient with respect to main_params (row-major 2l × 4b)
 * then extra_params (row-major 3 × b), concatenated.
 */
import ndarray from "ndarray";
import {
  add, concat, exp, log, mul, sigmoid, slice, sub, sum, tanh, vjp,
  type NdArray, type Scalar, type TensorArg,
} from "@wengert/core";
import { defineFunction } from "../define.js";
import { field, InputError, matrix, record } from "../json.js";
import type { EvalModule } from "../module.js";

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

/** The hidden and cell vectors of every layer, [1, b] each. */
export interface LstmState {
  readonly hidden: readonly T[];
  readonly cell: readonly T[];
}

/** The initial state, as constants. */
export const initialState = (s: LstmPrepared): LstmState => ({
  hidden: s.hidden.map((h) => ndarray(h, [1, s.b])),
  cell: s.cell.map((h) => ndarray(h, [1, s.b])),
});

/**
 * Steps t0 … t1 − 1 of lstm.hpp's objective on wengert values (`params`, `state` traced
 * or not): the state after them, and their share of the loss (already divided by
 * −(c − 1)·b, so that the shares add up to the loss).
 */
export function lstmSteps(s: LstmPrepared, params: { main: T; extra: T }, state: LstmState, t0: number, t1: number): { state: LstmState; loss: Scalar } {
  const { l, b, c } = s;
  // every vector is a [1, b] row
  const piece = (m: T, r: number, k: number): T => slice(m, [r, k * b], [r + 1, (k + 1) * b]) as T;
  const layers = Array.from({ length: l }, (_, i) => ({
    weight: [0, 1, 2, 3].map((k) => piece(params.main, 2 * i, k)),
    bias: [0, 1, 2, 3].map((k) => piece(params.main, 2 * i + 1, k)),
  }));
  const [inWeight, outWeight, outBias] = [0, 1, 2].map((k) => piece(params.extra, k, 0));
  const hidden = [...state.hidden];
  const cell = [...state.cell];
  const predictions: T[] = [];
  for (let t = t0; t < t1; t++) {
    let x = mul(ndarray(s.sequence[t], [1, b]), inWeight) as T;
    for (let i = 0; i < l; i++) {
      const { weight: [wf, wi, wo, wc], bias: [bf, bi, bo, bc] } = layers[i];
      const forget = sigmoid(add(mul(x, wf), bf));
      const ingate = sigmoid(add(mul(hidden[i], wi), bi));
      const outgate = sigmoid(add(mul(x, wo), bo));
      const change = tanh(add(mul(hidden[i], wc), bc));
      cell[i] = add(mul(cell[i], forget), mul(ingate, change)) as T;
      hidden[i] = mul(outgate, tanh(cell[i])) as T;
      x = hidden[i];
    }
    predictions.push(add(mul(x, outWeight), outBias) as T);
  }
  // the predictions as one [t1 − t0, b] matrix: the loss of these steps at once
  return { state: { hidden, cell }, loss: predictionLoss(s, concat(predictions, 0) as T, t0, t1) };
}

/**
 * The share of the loss of steps t0 … t1 − 1, from their predictions Y ([t1 − t0, b]):
 * each row normalised by ADBench's log(Σ exp y + 2), against the next characters.
 */
function predictionLoss(s: LstmPrepared, Y: T, t0: number, t1: number): Scalar {
  const { b, c } = s;
  const lse = log(add(sum(exp(Y), 1, true), 2)) as T;
  const targets = ndarray(s.targets.data.subarray(t0 * b, t1 * b), [t1 - t0, b]);
  return mul(-1 / ((c - 1) * b), sum(mul(targets, sub(Y, lse))));
}

/**
 * The predictions of every step ([c − 1, b]) as lstm.hpp computes them, one hidden unit at
 * a time: the gates are elementwise, so unit j's hidden and cell values over all steps
 * and layers depend only on its own weights, biases and inputs. On numbers, wengert's
 * operations are JavaScript's arithmetic: the recurrence costs nanoseconds per
 * operation, where a [1, b] tensor operation pays a fixed cost for 14 elements.
 */
function predictions(s: LstmPrepared): NdArray {
  const { l, b, c } = s;
  const main = s.params.main.data as Float64Array;
  const extra = s.params.extra.data as Float64Array;
  const Y = new Float64Array((c - 1) * b);
  const hidden = new Float64Array(l);
  const cell = new Float64Array(l);
  for (let j = 0; j < b; j++) {
    for (let i = 0; i < l; i++) {
      hidden[i] = s.hidden[i][j];
      cell[i] = s.cell[i][j];
    }
    for (let t = 0; t < c - 1; t++) {
      let x = mul(s.sequence[t][j], extra[j]);
      for (let i = 0; i < l; i++) {
        // row 2i holds the weights, row 2i + 1 the biases, gate k at columns k·b … (k + 1)·b
        const w = 2 * i * 4 * b + j;
        const bias = w + 4 * b;
        const forget = sigmoid(add(mul(x, main[w]), main[bias]));
        const ingate = sigmoid(add(mul(hidden[i], main[w + b]), main[bias + b]));
        const outgate = sigmoid(add(mul(x, main[w + 2 * b]), main[bias + 2 * b]));
        const change = tanh(add(mul(hidden[i], main[w + 3 * b]), main[bias + 3 * b]));
        cell[i] = add(mul(cell[i], forget), mul(ingate, change));
        hidden[i] = mul(outgate, tanh(cell[i]));
        x = hidden[i];
      }
      Y[t * b + j] = add(mul(x, extra[b + j]), extra[2 * b + j]);
    }
  }
  return ndarray(Y, [c - 1, b]);
}

/** How many steps one trace takes: about `OPS_PER_TRACE` tensor operations. */
export const OPS_PER_TRACE = 20_000;
function segments(s: LstmPrepared, opsPerTrace: number): [number, number][] {
  const n = Math.max(1, Math.floor(opsPerTrace / (17 * s.l + 3)));
  const out: [number, number][] = [];
  for (let t = 0; t < s.c - 1; t += n) out.push([t, Math.min(t + n, s.c - 1)]);
  return out;
}

export function lstmObjective(s: LstmPrepared): number {
  // untraced, on numbers: nothing recorded, as no derivative is asked for
  return predictionLoss(s, predictions(s), 0, s.c - 1) as number;
}

/**
 * The gradient, by reverse mode over the steps taken in segments of a few thousand
 * operations: one `vjp` per segment (params and the state in, the state and the loss
 * share out), the pullbacks then called last to first, each seeded with the state's
 * cotangent from the one after it. (One `grad` of the whole loss is the same
 * computation; at l = 4, c = 4096 its single trace of ~290 000 operations overflows the
 * call stack in wengert's Tape.extend.)
 */
export function lstmGradient(s: LstmPrepared, opsPerTrace = OPS_PER_TRACE): Float64Array {
  type Out = { state: LstmState; loss: number };
  const pullbacks: ((seed: unknown) => { params: LstmParams; state: LstmState })[] = [];
  let state = initialState(s);
  for (const [t0, t1] of segments(s, opsPerTrace)) {
    const step = (x: { params: { main: T; extra: T }; state: LstmState }) => lstmSteps(s, x.params, x.state, t0, t1);
    const [out, pullback] = vjp(step as (x: unknown) => unknown, { params: s.params, state });
    pullbacks.push(pullback as never);
    state = (out as Out).state;
  }
  const zero = (): T => ndarray(new Float64Array(s.b), [1, s.b]);
  let cotangent: LstmState = { hidden: state.hidden.map(zero), cell: state.cell.map(zero) };
  const main = new Float64Array(s.params.main.size);
  const extra = new Float64Array(s.params.extra.size);
  const add = (to: Float64Array, g: NdArray) => {
    const d = g.data as Float64Array;
    for (let i = 0; i < d.length; i++) to[i] += d[i];
  };
  for (let k = pullbacks.length - 1; k >= 0; k--) {
    const g = pullbacks[k]({ state: cotangent, loss: 1 });
    add(main, g.params.main);
    add(extra, g.params.extra);
    cotangent = g.state;
  }
  const out = new Float64Array(main.length + extra.length);
  out.set(main);
  out.set(extra, main.length);
  return out;
}

export const lstm: EvalModule = {
  objective: defineFunction({ prepare: prepareLstm, run: lstmObjective }),
  jacobian: defineFunction({ prepare: prepareLstm, run: (s: LstmPrepared) => lstmGradient(s) }),
};
