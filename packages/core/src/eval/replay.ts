/**
 * @file A trace term replayed at new inputs, instruction by instruction: a jitted
 * function's trace of tensors (api/jit.ts), its inner derivatives included (compileGrad's
 * gradient program is one: the trace of `f` extended by its derivative).
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
 * tracing would have reported. Otherwise the replay gives up (null) at the first that
 * does not hold, and jit traces again.
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

/** A trace term replayed at new inputs. */
export interface TermReplay {
  /**
   * The outputs at inputs given by leaf (numbers and buffers, read only): numbers, and
   * buffers the caller now owns; null where the trace does not hold.
   */
  run(inputs: readonly (number | Float64Array)[]): (number | Float64Array)[] | null;
}

/**
 * The replay of `term` (a trace, its inner derivatives included) under its `guards`: each
 * guard is checked as soon as its later argument is computed, each kinked primitive and
 * tensor primitive with a tie rule after it runs (unless ties are ignored; of the first
 * `checkedLength` instructions only, if given), and the replay gives up at the first that
 * does not hold.
 */
export function termReplay(term: TraceTerm, guards: readonly Guard[], reportTies: boolean, checkedLength = term.tape.length): TermReplay {
  const tape = term.tape;
  const { op, a, b, x, length: n } = tape;
  const results = term.output.atoms;
  const args: (readonly number[])[] = [];
  const dims: Dims[] = [];
  const params: unknown[] = [];
  for (let i = 0; i < n; i++) {
    args.push(tape.args(i));
    dims.push(tape.dims(i));
    params.push(tape.params(i));
  }
  const tensor = Uint8Array.from({ length: n }, (_, i) => +tape.isTensor(i));

  // what tracing checked for ties: kinked primitives, tensor primitives with a tie rule (of
  // the first `checkedLength` instructions: a derivative the outermost rd emits reports none)
  const checked = new Uint8Array(n);
  if (reportTies) {
    for (let i = 0; i < checkedLength; i++) {
      if (op[i] < FIRST_PRIMITIVE) continue;
      if (IS_TENSOR_OP[op[i]] ? tensorSpec(op[i]).tie !== undefined : KINKS[op[i]] !== undefined && op[a[i]] !== CONST) checked[i] = 1;
    }
  }
  // each guard after its later argument (one decided on literals comes out the same everywhere)
  const guardsAt = new Map<number, Guard[]>();
  for (const g of guards) {
    const at = Math.max(op[g.a] === CONST ? -1 : g.a, op[g.b] === CONST ? -1 : g.b);
    if (at < 0) continue;
    if (!guardsAt.has(at)) guardsAt.set(at, []);
    guardsAt.get(at)!.push(g);
  }

  // needed: the outputs, what the guards and checks read, and what those need
  const live = new Uint8Array(n);
  for (const g of guards) live[g.a] = live[g.b] = 1;
  for (let i = 0; i < n; i++) if (checked[i]) live[i] = 1;
  liveness(term, live);

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

  const tieAt = (i: number): boolean => {
    const code = op[i];
    const as = args[i];
    if (IS_TENSOR_OP[code]) return tensorSpec(code).tie!(as.map(valueOf), as.map((v) => dims[v]), params[i], valueOf(i)) !== null;
    const kink = KINKS[code]!;
    const arg = valueOf(as[0]);
    return typeof arg === "number" ? kink(arg) : arg.some((t) => kink(t));
  };

  /** Every instruction needed, in order; false at the first guard or check that fails. */
  const runAll = (inputs: readonly (number | Float64Array)[]): boolean => {
    for (let i = 0; i < n; i++) {
      if (!live[i]) continue;
      const code = op[i];
      if (code === INPUT) {
        const v = inputs[a[i]];
        if (typeof v === "number") vals[i] = v;
        else bufs[i] = v;
      } else if (code >= FIRST_PRIMITIVE) {
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
      const gs = guardsAt.get(i);
      if (gs !== undefined && !guardsHold(vals, gs, reportTies)) return false;
    }
    return true;
  };

  /** Forget the buffers of this run: computed ones back to the pool (all of them if it gave up), inputs dropped. */
  const forget = (abandoned: boolean): void => {
    for (let i = 0; i < n; i++) {
      if (abandoned && op[i] >= FIRST_PRIMITIVE && bufs[i] !== null) release(bufs[i]!);
      if (op[i] >= FIRST_PRIMITIVE || op[i] === INPUT) bufs[i] = null;
    }
  };

  return {
    run(inputs) {
      if (!runAll(inputs)) {
        forget(true);
        return null;
      }
      const handed = new Set<number>();
      const out = results.map((v): number | Float64Array => {
        if (!tensor[v]) return vals[v];
        // a buffer this replay computed goes to the caller; a literal, an input or a repeat is copied
        const mine = op[v] >= FIRST_PRIMITIVE && !handed.has(v);
        handed.add(v);
        return mine ? bufs[v]! : bufs[v]!.slice();
      });
      forget(false);
      return out;
    },
  };
}
