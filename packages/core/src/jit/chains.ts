/**
 * @file A term's instructions planned as steps: chains of elementwise operations on
 * tensors (and slices, concatenations, embeds, masks, gathers of rows at traced positions,
 * and sums of all elements and additions into rows at traced positions as sinks)
 * compiled into loops (jit/chain-code.ts), every other instruction left to the kernels
 * between them. The interpreter (eval/interpreter.ts) runs the steps: a scan's body per
 * iteration, a jitted trace of tensors at each call (eval/replay.ts).
 *
 * Chains are cut where the kernels need their values: an instruction the kernels run
 * closes the open chain when it reads one of its values (the chain runs first); one that
 * does not runs at once, before the chain (it reads nothing the chain computes). A member
 * reading a sink of its own chain starts a new one (the sum is known after the loop).
 */
import { contiguousStart, EXP_SIMD_FROM, sameDims, size } from "@wengert/ops";
import { CODE, CONST, FIRST_PRIMITIVE, FREE, IS_TENSOR_OP } from "../trace/opcodes.js";
import type { Tape } from "../trace/tape.js";
import { broadcastReal, chainCode, type Step } from "./chain-code.js";
import { mayMakeCode } from "./javascript.js";

/** The most instructions in one chain: its loop body is one function's, compiled once per plan. */
const MAX_MEMBERS = 256;

/** Whether tensor terms run chains as compiled loops (tests turn it off to compare with the kernels alone). */
export const fusedCode = { enabled: mayMakeCode() };

/**
 * An exp of this many elements or more is left to its kernel: ops' SIMD exp (simd-exp.ts,
 * the same numbers) costs about a quarter of a loop's call of the scalar one per element,
 * which repays the pass that computes its argument (GradBench lse's gradient: x − a, then
 * eˣ⁻ᵃ). Benchmarks set it to Infinity to compare.
 */
export const expKernel = { from: EXP_SIMD_FROM };

/** Runs of compiled chains (tests check that a term took this path). */
export const fusedStats = { runs: 0 };

/** How instruction v joins a chain: in its loops, as a sink (a sum of all elements, or a scatterAddAt), or not at all (null). */
export function fusable(tape: Tape, v: number): "loop" | "sink" | null {
  const code = tape.op[v];
  const args = tape.args(v);
  const tensor = (u: number): boolean => tape.isTensor(u);
  if (!tensor(v)) {
    return code === CODE.sum && tape.x[v] !== 0 && tape.dims(v).length === 0 && tensor(args[0]) && tape.dims(args[0]).length > 0 ? "sink" : null;
  }
  const d = tape.dims(v);
  if (d.length === 0) return null;
  if (code === CODE.exp && size(d) >= expKernel.from) return null;
  // reals, or tensors of v's dims (no broadcasting but a real's)
  const alike = (u: number): boolean => (tensor(u) ? sameDims(tape.dims(u), d) : tape.dims(u).length === 0);
  if (!IS_TENSOR_OP[code]) return args.every(alike) ? "loop" : null;
  if (code === CODE.where) return tensor(args[0]) && args.every(alike) ? "loop" : null;
  // a real as a tensor of one element, and broadcast (rd's seed, as the reverse of sum makes it);
  // a reshape of a tensor stays a kernel (a copy: nothing to fuse into where a kernel reads it)
  if (code === CODE.reshape) return !tensor(args[0]) ? "loop" : null;
  if (code === CODE.broadcastTo) return broadcastReal(tape, v) !== null ? "loop" : null;
  const p = tape.params(v) as Record<string, unknown>;
  if (code === CODE.slice) {
    const xd = tape.dims(args[0]);
    return tensor(args[0]) && contiguousStart(xd, p.starts as number[], xd.map((m, i) => (i === 0 ? 0 : d[i]))) >= 0 ? "loop" : null;
  }
  if (code === CODE.concat) return p.axis === 0 && args.every((u) => tensor(u) && tape.dims(u).length > 0) ? "loop" : null;
  // rows of a tensor at traced positions: element i reads row positions[i / inner] (its source
  // and positions computed before the chain: planChains closes the open chain first)
  if (code === CODE.gatherAt) return p.axis === 0 && tensor(args[0]) && tensor(args[1]) ? "loop" : null;
  // values added into rows at traced positions: a sink of the chain that computes the values
  // (accumulated into a copy of its tensor as the loop makes them, in the kernel's order)
  if (code === CODE.scatterAddAt) return p.axis === 0 && args.every(tensor) ? "sink" : null;
  if (code === CODE.embed) {
    const starts = p.starts as number[][];
    return args.every((u, k) => (tensor(u) ? contiguousStart(d, starts[k], tape.dims(u)) >= 0 : tape.dims(u).length === 0)) ? "loop" : null;
  }
  return null;
}

/** What a plan is made for: the instructions needed, those kept, those the kernels must run (their values checked after them). */
export interface PlanInput {
  readonly live: Uint8Array;
  readonly kept: Uint8Array;
  readonly interpret?: Uint8Array;
}

/**
 * The steps computing the live instructions of `tape`: instruction numbers (inputs, reals,
 * kernels) and compiled chains, in an order that computes each value before its readers.
 */
export function planChains(tape: Tape, { live, kept, interpret }: PlanInput): Step[] {
  const n = tape.length;
  const chainOf = new Int32Array(n).fill(-1);
  const sink = new Uint8Array(n);
  const chains: number[][] = [];
  // a chain's place among the steps: its index in `chains`, as -1 - index
  const order: number[] = [];
  let open: number[] | null = null;
  const close = (): void => {
    if (open === null) return;
    order.push(-1 - (chains.length - 1));
    open = null;
  };
  const inOpen = (u: number): boolean => open !== null && chainOf[u] === chains.length - 1;
  for (let v = 0; v < n; v++) {
    if (!live[v] || tape.op[v] === CONST || tape.op[v] === FREE) continue;
    if (tape.op[v] < FIRST_PRIMITIVE) {
      order.push(v);
      continue;
    }
    const args = tape.args(v);
    const kind = interpret?.[v] === 1 ? null : fusable(tape, v);
    if (kind === null) {
      if (args.some(inOpen)) close();
      order.push(v);
      continue;
    }
    // (a gather reads its source at any element, and its positions all before: neither may be the open chain's)
    const readsAnywhere = (tape.op[v] === CODE.gatherAt && args.some(inOpen)) || (tape.op[v] === CODE.scatterAddAt && args.slice(0, 2).some(inOpen));
    if (readsAnywhere || args.some((u) => inOpen(u) && sink[u] === 1) || (open !== null && open.length >= MAX_MEMBERS)) close();
    if (open === null) chains.push((open = []));
    open.push(v);
    chainOf[v] = chains.length - 1;
    if (kind === "sink") sink[v] = 1;
  }
  close();
  if (chains.length === 0) return order;
  // readers of each value, and which values are read outside their chain or after the run
  const uses = new Int32Array(n);
  const needed = new Uint8Array(n);
  for (let v = 0; v < n; v++) {
    if (kept[v]) needed[v] = 1;
    if (!live[v] || tape.op[v] < FIRST_PRIMITIVE) continue;
    for (const u of tape.args(v)) {
      uses[u]++;
      if (chainOf[u] >= 0 && chainOf[u] !== chainOf[v]) needed[u] = 1;
    }
  }
  const steps = chains.map((members): Step => {
    const { run, made, reads, source } = chainCode(tape, members, { uses, needed });
    return {
      made,
      reads,
      source,
      run: (B, V, K) => {
        run(B, V, K);
        fusedStats.runs++;
      },
    };
  });
  return order.map((s) => (s >= 0 ? s : steps[-1 - s]));
}
