/**
 * @file A gradient program replayed at new inputs: the tape of `f`'s trace extended by
 * its derivative (what the outermost rd emits for tensors), run again instruction by
 * instruction, for compileGrad on functions of tensors (api/compile.ts).
 *
 * The plan is made once, from the tape: which instructions the results need (the rest
 * is skipped), and after which instruction each intermediate buffer is read for the last
 * time, where it goes back to the pool. So a replay holds only the buffers still to be
 * read, where a trace holds every one until the derivative has been read. Each value
 * is computed by `compute`, the function tracing computed it with: the same numbers.
 *
 * A replay holds where the trace does (the paper's trace term is valid on the region
 * its predicates select): `f`'s decisions come out as recorded (its guards), and, unless
 * ties are ignored, no decision is a tie and no kinked primitive meets its kink, which
 * tracing would have reported. Otherwise the replay gives up (null) before the
 * derivative part runs, and compileGrad traces again.
 */
import { predicates, release, type Buf, type Dims } from "@wengert/ops";
import { ARITY, CONST, FIRST_PRIMITIVE, FREE, INPUT, IS_TENSOR_OP, KERNELS, KINKS, tensorSpec } from "../trace/opcodes.js";
import { liveness } from "../diff/place.js";
import { binaryKernel, compute } from "../trace/tape.js";
import type { TraceTerm } from "../trace/term.js";
import type { Guard } from "../trace/tracer.js";

/** Whether the decisions recorded as `guards` come out the same on `vals` (a tie counts as otherwise when reported). */
export function guardsHold(vals: Float64Array, guards: readonly Guard[], reportTies: boolean): boolean {
  for (const g of guards) {
    const va = vals[g.a];
    const vb = vals[g.b];
    if (reportTies && va === vb && g.distinct) return false;
    if (predicates[g.pred].test(va, vb) !== g.outcome) return false;
  }
  return true;
}

/** `f(x)` and the cotangents of x's leaves (numbers, or buffers the caller now owns). */
export interface Replayed {
  readonly value: number;
  readonly results: (number | Float64Array)[];
}

export interface TensorReplay {
  /** The program at inputs given by leaf (numbers and buffers, read only); null where the trace does not hold. */
  run(inputs: readonly (number | Float64Array)[]): Replayed | null;
}

/**
 * The replay of `program`: a trace of `f` followed by its derivative, as the outermost rd
 * emits it (parameters x and the seed, outputs the cotangents of x's leaves). Its first
 * `primalLength` instructions are `f`'s, valid under `guards`; `value` is f's output.
 */
export function tensorReplay(program: TraceTerm, primalLength: number, value: number, guards: readonly Guard[], reportTies: boolean): TensorReplay {
  const tape = program.tape;
  const { op, a, b, x, length: n } = tape;
  const results = program.output.atoms;
  const seedInput = program.params[0].atoms.length;
  const args: (readonly number[])[] = [];
  const dims: Dims[] = [];
  const params: unknown[] = [];
  for (let i = 0; i < n; i++) {
    args.push(tape.args(i));
    dims.push(tape.dims(i));
    params.push(tape.params(i));
  }
  const tensor = Uint8Array.from({ length: n }, (_, i) => +tape.isTensor(i));

  // what tracing would have checked for ties: kinked primitives of f, tensor primitives with a tie rule
  const checked = new Uint8Array(n);
  if (reportTies) {
    for (let i = 0; i < primalLength; i++) {
      if (op[i] < FIRST_PRIMITIVE) continue;
      if (IS_TENSOR_OP[op[i]] ? tensorSpec(op[i]).tie !== undefined : KINKS[op[i]] !== undefined && op[a[i]] !== CONST) checked[i] = 1;
    }
  }

  // needed: the results (the program's outputs), f's value, what the guards and checks read, and what those need
  const live = new Uint8Array(n);
  live[value] = 1;
  for (const g of guards) live[g.a] = live[g.b] = 1;
  for (let i = 0; i < n; i++) if (checked[i]) live[i] = 1;
  liveness(program, live);

  // each intermediate buffer is released after its last reader (or at once, if none reads it)
  const kept = new Uint8Array(n);
  for (const v of results) kept[v] = 1;
  const lastUse = Int32Array.from({ length: n }, (_, i) => i);
  for (let i = 0; i < n; i++) if (live[i] && op[i] >= FIRST_PRIMITIVE) for (const v of args[i]) lastUse[v] = i;
  const dying: number[][] = Array.from({ length: n }, () => []);
  for (let v = 0; v < n; v++) if (live[v] && tensor[v] && op[v] >= FIRST_PRIMITIVE && !kept[v]) dying[lastUse[v]].push(v);

  // literals keep the values and buffers the trace gave them
  const vals = new Float64Array(n);
  const bufs: (Float64Array | null)[] = new Array<Float64Array | null>(n).fill(null);
  for (let i = 0; i < n; i++) {
    if (op[i] !== CONST && op[i] !== FREE) continue;
    if (tensor[i]) bufs[i] = tape.buf(i);
    else vals[i] = tape.val[i];
  }
  const valueOf = (v: number): Buf => (tensor[v] ? bufs[v]! : vals[v]);

  /** Instructions from … to, skipping what is not needed; false at the first tie. */
  const runRange = (from: number, to: number, inputs: readonly (number | Float64Array)[]): boolean => {
    for (let i = from; i < to; i++) {
      if (!live[i]) continue;
      const code = op[i];
      if (code === INPUT) {
        const v = a[i] === seedInput ? 1 : inputs[a[i]];
        if (typeof v === "number") vals[i] = v;
        else bufs[i] = v;
        continue;
      }
      if (code < FIRST_PRIMITIVE) continue;
      if (x[i] === 0) vals[i] = ARITY[code] === 1 ? KERNELS[code](vals[a[i]], 0) : binaryKernel(code, vals[a[i]], vals[b[i]]);
      else {
        const as = args[i];
        const y = compute(code, as.map(valueOf), as.map((v) => dims[v]), params[i], dims[i]);
        if (typeof y === "number") vals[i] = y;
        else bufs[i] = y;
      }
      if (checked[i] && tieAt(i)) return false;
      for (const v of dying[i]) {
        release(bufs[v]!);
        bufs[v] = null;
      }
    }
    return true;
  };

  const tieAt = (i: number): boolean => {
    const code = op[i];
    const as = args[i];
    if (IS_TENSOR_OP[code]) return tensorSpec(code).tie!(as.map(valueOf), as.map((v) => dims[v]), params[i], valueOf(i)) !== null;
    const kink = KINKS[code]!;
    const arg = valueOf(as[0]);
    return typeof arg === "number" ? kink(arg) : arg.some((t) => kink(t));
  };

  /** Hand back every buffer this replay computed (after a replay that gave up). */
  const abandon = (): void => {
    for (let i = 0; i < n; i++) {
      if (op[i] >= FIRST_PRIMITIVE && bufs[i] !== null) release(bufs[i]!);
      if (op[i] >= FIRST_PRIMITIVE || op[i] === INPUT) bufs[i] = null;
    }
  };

  return {
    run(inputs) {
      if (!runRange(0, primalLength, inputs) || !guardsHold(vals, guards, reportTies)) {
        abandon();
        return null;
      }
      runRange(primalLength, n, inputs);
      const handed = new Set<number>();
      const out = results.map((v): number | Float64Array => {
        if (!tensor[v]) return vals[v];
        // a buffer this replay computed goes to the caller; a literal, an input or a repeat is copied
        const mine = op[v] >= FIRST_PRIMITIVE && !handed.has(v);
        handed.add(v);
        return mine ? bufs[v]! : bufs[v]!.slice();
      });
      for (let i = 0; i < n; i++) if (op[i] >= FIRST_PRIMITIVE || op[i] === INPUT) bufs[i] = null;
      return { value: vals[value], results: out };
    },
  };
}
