/**
 * @file GradBench's `ode` eval: s steps of classical Runge–Kutta on
 *
 *     y₀' = x₀,   yᵢ' = xᵢ · yᵢ₋₁ (i > 0),   y(0) = 0,
 *
 * over t ∈ [0, 2], and the gradient of the last component of y(2) with respect to x.
 *
 * As ode.hpp, step by step, on whole vectors: the right-hand side is
 * x ⊙ [1, y₀, …, yₙ₋₂] (a slice, a product and a concatenation), and each step is the
 * usual k₁…k₄ combination, about 26 tensor operations. The steps are a `scan` (the
 * eval's point: a tape through a sequential loop): the step is traced once, and the
 * reverse sweep runs its derivative backwards over the steps, the states recomputed
 * from checkpoints.
 *
 * Both functions are `jit`ted, one function per s (the loop's length, which shapes the
 * trace): the eval times each many times at one (n, s). A replay runs the scan's step as
 * compiled loops (jit/scan-fused.ts: the stages of a step in one pass over the vectors),
 * and the gradient's reverse sweep likewise; the gradient's trace keeps the scan as one
 * instruction (diff/unroll.ts: a body on tensors is not written out), so its first call
 * costs about what an unjitted call does.
 *
 * Input `{x: double[], s: int}`; `primal` gives y(2), `gradient` ∇ₓ yₙ₋₁(2), both
 * arrays like `x`, written into one buffer per input (`jit(f).into`: no fresh array per run).
 */
import { add, concat, div, grad, index, jit, mul, scan, shapeOf, slice, type Jitted, type Operand, type Scalar, type TensorArg } from "@wengert/core";
import { defineFunction } from "../define.js";
import { odeInput } from "../inputs.js";
import { field, InputError, integer, numbers, record } from "../json.js";
import type { EvalModule } from "../module.js";

export interface OdeInput {
  readonly x: Float64Array;
  readonly s: number;
  /** The output's buffer (made untimed, as the C++ tools make theirs), refilled by every run: jit(f).into. */
  readonly out: Float64Array;
  /** y(0) = 0, an input of the jitted solvers (untimed, as `out`): see `jitted`. */
  readonly y0: Float64Array;
}

/** The step h = 2/s and h/2, as numbers or as traced reals (see `ode` below). */
export interface StepSize {
  readonly h: Operand;
  readonly half: Operand;
}

/** h = 2/s and h/2 as numbers. (h k)/2 is (h/2) k exactly: halving commutes with rounding. */
export function stepSize(s: number): { readonly h: number; readonly half: number } {
  const h = 2 / s;
  return { h, half: h / 2 };
}

/** One Runge–Kutta step of the eval's system for x (of length ≥ 1), s steps over [0, 2]. */
export function odeStep(x: TensorArg, s: number, { h, half }: StepSize = stepSize(s)): (y: Operand) => Operand {
  const n = shapeOf(x)[0];
  // the right-hand side z = (x₀, x₁y₀, …, xₙ₋₁yₙ₋₂), x sliced inside the step: a slice in a
  // step's loop is an offset into x (jit/chain-code.ts), where slices taken outside the scan
  // were copies of x made at every call
  // (values are tensors throughout; the arithmetic's declared result is the wider Operand)
  const rhs = (y: Operand): Operand => {
    const x0 = slice(x, [0], [1]);
    return n === 1 ? x0 : concat([x0, mul(slice(x, [1], [n]), slice(y as TensorArg, [0], [n - 1])) as TensorArg], 0);
  };
  return (y) => {
    const k1 = rhs(y);
    const k2 = rhs(add(y, mul(half, k1)));
    const k3 = rhs(add(y, mul(half, k2)));
    const k4 = rhs(add(y, mul(h, k3)));
    return add(y, div(mul(h, add(add(add(k1, mul(2, k2)), mul(2, k3)), k4)), 6));
  };
}

/**
 * y(2) after `s` Runge–Kutta steps from y(0) = `y0` (zeros unless given), for x of length
 * ≥ 1. The steps are a scan: traced once, and the gradient's tape holds one instruction for
 * them all (its reverse sweep recomputes the states from checkpoints); the same numbers as
 * the loop written out, which kept a tape of about 5 GB at n = 100 000, s = 100.
 */
export function solve(x: TensorArg, s: number, size: StepSize = stepSize(s), y0: TensorArg = new Float64Array(shapeOf(x)[0])): TensorArg {
  const step = odeStep(x, s, size);
  return scan((y: Operand): [Operand] => [step(y)], y0 as Operand, s)[0] as TensorArg;
}

/**
 * y(2), and ∇ₓ yₙ₋₁(2), for each s, jitted (the file's comment), taking [x, h, h/2, y(0)]:
 * the step size is an input, not a literal of the trace, so the steps of any s write the
 * same loops at a given n, and the next s's first call finds them compiled and hot (chain
 * code is kept by its source), where literals made each s's loops new code run cold at
 * first (a first call at n = 10⁵ ran them slowly for a while). The sweep needs no cotangent
 * of h (reverse-plan.ts `unneeded`). y(0) = 0 is an input too: from a literal carry the
 * first step is another term (api/scan-loop.ts traces a body at a literal apart), a scan
 * of its own with its own run, sweep, block derivatives and loops; from an input, the s
 * steps are one scan of one body. The same numbers: a product by a traced real is the
 * product by that number, and the first step's arithmetic on y(0)'s zeros is the same.
 */
type Args = [TensorArg, Scalar, Scalar, TensorArg];
type Solver = Jitted<Args, unknown>;
const primals = new Map<number, Solver>();
const gradients = new Map<number, Solver>();

function jitted(cache: Map<number, Solver>, s: number, of: (s: number) => (x: TensorArg, size: StepSize, y0: TensorArg) => unknown): Solver {
  let g = cache.get(s);
  if (g === undefined) {
    const f = of(s);
    cache.set(s, (g = jit(([x, h, half, y0]: Args) => f(x, { h, half }, y0))));
  }
  return g;
}

const primalOf = (s: number) => (x: TensorArg, size: StepSize, y0: TensorArg) => solve(x, s, size, y0);
const gradientOf = (s: number) => (x: TensorArg, size: StepSize, y0: TensorArg) => grad((w): Scalar => index(solve(w, s, size, y0), shapeOf(x)[0] - 1), x);

/** The jitted solver's arguments for an input. */
const args = ({ x, s, y0 }: OdeInput): [Float64Array, number, number, Float64Array] => {
  const { h, half } = stepSize(s);
  return [x, h, half, y0];
};

const prepare = (input: unknown): OdeInput => {
  const r = record(input);
  const x = numbers(field(r, "x"), "x");
  if (x.length === 0) throw new InputError("x is empty");
  return { x, s: integer(field(r, "s"), "s", 1), out: new Float64Array(x.length), y0: new Float64Array(x.length) };
};

/**
 * Warm-up inputs for `define` (module.ts): a synthetic x of 2048 elements, whose loops are
 * those of any other long x (jit/chain-code.ts writes bounds past 64 as arguments; at s = 10
 * the sweep's blocks carry no masks there, as at any n past a few hundred: diff/scan-cotangents.ts
 * MASK_BUDGET), at s = 1 and 10 in turn (a block both first and last; a first, middle ones and
 * a last), each run 40 times, so that V8 has optimised the steps' loops and their derivatives'
 * before GradBench's first timed run; then 20 000 elements at s = 10, where the sweep runs its
 * blocks over windows (diff/box-plan.ts: from some 15 000 elements at s = 10, 10⁵ at s = 100),
 * so that the window evaluation's loops are optimised too. Nothing in it is the eval's input:
 * the traces, block derivatives and plans at the eval's n are made at its first call.
 */
const warmUp = {
  input: (r: number) => (r < 4 ? { ...odeInput(2048, r % 2 === 0 ? 1 : 10, 1 + r), min_runs: 40 } : { ...odeInput(20_000, 10, 1 + r), min_runs: 20 }),
  rounds: 5,
};

export const ode: EvalModule = {
  primal: defineFunction({ prepare, run: (input: OdeInput) => jitted(primals, input.s, primalOf).into(args(input), input.out), warmUp }),
  gradient: defineFunction({ prepare, run: (input: OdeInput) => jitted(gradients, input.s, gradientOf).into(args(input), input.out), warmUp }),
};
