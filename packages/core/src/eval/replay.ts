/**
 * @file A trace term replayed at new inputs by the interpreter: a jitted function's
 * trace of tensors (api/jit.ts), its inner derivatives included (compileGrad's gradient
 * program is one: the trace of `f` extended by its derivative).
 *
 * The plan is made once, from the tape: which instructions the results need (the rest
 * is skipped), which chains of elementwise operations run as compiled loops
 * (jit/chains.ts), and after which step each intermediate buffer is read for the last
 * time, where it goes back to the pool. So a replay holds only the buffers still to be
 * read, where a trace holds every one until the derivative has been read. Each value
 * is the number tracing computed: by `compute`, or by a chain's loop, which computes the same.
 *
 * A replay holds where the trace does (the paper's trace term is valid on the region
 * its predicates select): `f`'s decisions come out as recorded (its guards), and, unless
 * ties are ignored, no decision is a tie and no kinked primitive meets its kink, which
 * tracing would have reported. Otherwise the replay gives up (null) at the first that
 * does not hold, and jit traces again.
 */
import { predicates, type Buf } from "@wengert/ops";
import { CONST, FIRST_PRIMITIVE, IS_TENSOR_OP, KINKS, tensorSpec } from "../trace/opcodes.js";
import { liveness } from "../diff/place.js";
import { fusedCode, planChains } from "../jit/chains.js";
import { Interpreter } from "./interpreter.js";
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

/** `y`'s numbers (a real, or a buffer's elements) written into `out` from `k`; returns where the next go. */
export function writeNumbers(out: Float64Array, k: number, y: number | Float64Array): number {
  if (typeof y === "number") {
    out[k] = y;
    return k + 1;
  }
  out.set(y, k);
  return k + y.length;
}

/** A trace term replayed at new inputs. */
export interface TermReplay {
  /**
   * The outputs at inputs given by leaf (numbers and buffers, read only): numbers, and
   * buffers the caller now owns; null where the trace does not hold.
   */
  run(inputs: readonly (number | Float64Array)[]): (number | Float64Array)[] | null;
  /**
   * The outputs' numbers at the same inputs written into `out`, depth-first (reals, and
   * tensors' elements in order), and the buffers the replay computed for them handed back to
   * the pool (no fresh buffer for the caller); false where the trace does not hold. `out`
   * holds as many numbers as the outputs (the caller checks).
   */
  into(inputs: readonly (number | Float64Array)[], out: Float64Array): boolean;
  /** Whether it runs compiled code: chains of elementwise operations (jit/chains.ts). */
  readonly compiled: boolean;
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
  const { op, a, length: n } = tape;
  const results = term.output.atoms;

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

  // the instructions checked run by the kernels, each check right after
  const at = new Uint8Array(n);
  for (let i = 0; i < n; i++) if (checked[i] || guardsAt.has(i)) at[i] = 1;
  const runner: Interpreter = new Interpreter(tape, results, {
    live,
    plan: fusedCode.enabled ? planChains : undefined,
    check: {
      at,
      test: (i) => {
        if (checked[i] && tieAt(i)) return false;
        const gs = guardsAt.get(i);
        return gs === undefined || guardsHold(runner.vals, gs, reportTies);
      },
    },
  });
  const valueOf = (v: number): Buf => runner.value(v);

  const tieAt = (i: number): boolean => {
    const code = op[i];
    const as = tape.args(i);
    if (IS_TENSOR_OP[code]) return tensorSpec(code).tie!(as.map(valueOf), as.map((v) => tape.dims(v)), tape.params(i), valueOf(i)) !== null;
    const kink = KINKS[code]!;
    const arg = valueOf(as[0]);
    return typeof arg === "number" ? kink(arg) : arg.some((t) => kink(t));
  };

  return {
    compiled: runner.chains > 0,
    run(inputs) {
      if (!runner.run(inputs)) {
        runner.clear();
        return null;
      }
      // a buffer this replay computed goes to the caller; a literal, an input or a repeat is copied
      const handed = new Map<number, Float64Array>();
      const out = results.map((v): number | Float64Array => {
        if (!tape.isTensor(v)) return runner.vals[v];
        const first = handed.get(v);
        if (first !== undefined) return first.slice();
        const buf = runner.take(v) as Float64Array;
        handed.set(v, buf);
        return buf;
      });
      runner.clear();
      return out;
    },
    into(inputs, out) {
      if (!runner.run(inputs)) {
        runner.clear();
        return false;
      }
      let k = 0;
      for (let j = 0; j < results.length; j++) k = writeNumbers(out, k, runner.value(results[j]));
      runner.clear();
      return true;
    },
  };
}
