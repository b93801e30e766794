/**
 * @file Ordinary and symbolic evaluation of the language (Figs. 2–5).
 *
 * One interpreter serves both, because wengert's tracer is the symbolic evaluator: run
 * on numbers, `eval` is ordinary evaluation (Fig. 2); run inside `rd`, where the
 * differentiation variable is a traced real, conditionals and calls are decided on
 * concrete values and every primitive is recorded, which is symbolic evaluation
 * (Fig. 4) producing the trace term C. `M.rd_L(x:T. N)` evaluates L, then M, then hands
 * `x ↦ N` to the same `rd` as the TypeScript API: trace, differentiate (Fig. 6),
 * evaluate, or, inside an enclosing `rd`, contribute the derivative term to its trace.
 *
 * Evaluation order is the paper's (its evaluation contexts: left to right, the point of
 * `rd` before its seed). The interpreter runs on a trampoline with proper tail calls,
 * an rd's body on it too (its trace opened before, closed after), so recursion depth is
 * bounded by memory, not the JavaScript stack, and a step limit turns divergence into an
 * error.
 */
import { rdOfTrace } from "../api/rd.js";
import { abandonTrace, closeTraceWith, openTraceAt } from "../api/tracing.js";
import type { Inspect } from "../api/transform.js";
import { WengertError } from "../errors.js";
import { assertNever } from "../structure.js";
import { CODE, scalarCodeOf } from "../trace/opcodes.js";
import { applyBinary, applyUnary, decide } from "../trace/record.js";
import { Real, type Scalar } from "../trace/traced.js";
import { tracing, type TieMode } from "../trace/tracer.js";
import { loopUntilDone } from "../api/scan.js";
import { DONE } from "../trace/trace-body.js";
import { Next, tailSelfCalls } from "./loops.js";
import type { Type } from "../trace/tree.js";
import type { PredicateName } from "@wengert/ops";
import type { Checked } from "./check.js";
import { OriginRecorder, type TermOrigins } from "./origins.js";
import type { BoolTerm, Pos, Term } from "./syntax.js";
import { call, tail, trampoline, type Rec } from "./trampoline.js";

/** Values: reals, `[]` for `*`, `[V, W]` for `⟨V, W⟩` (the API's own representation). */
export type Value = Scalar | readonly [] | readonly [Value, Value];

/** A program of the paper's language ran past its `maxSteps` (default 10⁷): a divergent recursion, most likely. */
export class StepLimitError extends WengertError {}

/** The options of `evaluate` and `runProgram`. */
export interface EvalOptions {
  readonly file?: string;
  /** Evaluation steps allowed before a StepLimitError (default 10^7). */
  readonly maxSteps?: number;
  readonly ties?: TieMode;
  /** Values of the program's free variables (ρ). */
  readonly env?: Readonly<Record<string, Value>>;
  /**
   * Called at each outermost `rd` with its trace term and derivative term, and where in
   * the program each of their instructions came from.
   */
  readonly onRd?: (pos: Pos, ...terms: [...Parameters<Inspect>, origins: TermOrigins]) => void;
}

/** ρ: a persistent list, so that bodies are tail calls and nothing needs unbinding. */
interface Env {
  readonly name: string;
  readonly value: Value;
  readonly next: Env | null;
}

/** `clo_φ(f(x:T):U. M)`. `fns` includes the closure itself for `letrec`. */
interface Closure {
  readonly name: string;
  readonly param: string;
  readonly body: Term;
  fns: Fns;
}
type Fns = ReadonlyMap<string, Closure>;

const lookup = (env: Env | null, name: string): Value => {
  for (let e = env; e !== null; e = e.next) if (e.name === name) return e.value;
  throw new WengertError(`internal: unbound variable ${name} (the program was not type-checked?)`);
};

/** The n components of an iterated product value. */
function split(v: Value, n: number): Value[] {
  if (n === 0) return [];
  const parts: Value[] = [];
  for (let k = n; k > 1; k--) {
    const [init, last] = v as readonly [Value, Value];
    parts.push(last);
    v = init;
  }
  parts.push(v);
  return parts.reverse();
}

/** `0_T` as a value. */
function zeroOf(T: Type): Value {
  return T.kind === "real" ? 0 : T.kind === "unit" ? [] : [zeroOf(T.fst), zeroOf(T.snd)];
}

/** A parsed and checked program's value (Figs. 2–5): `rd` by tracing, recursion on a trampoline. */
export function evaluate(program: Term, checked: Checked, options: EvalOptions = {}): Value {
  const file = options.file ?? "<input>";
  const maxSteps = options.maxSteps ?? 10_000_000;
  const rdOptions = { ties: options.ties ?? "warn" };
  let steps = 0;
  let here: { pos: Pos; fn: string } = { pos: program.pos, fn: "the program" };
  let depth = 0; // rd nesting, to tell outermost rd calls
  // the outermost rd's, while its body runs, if onRd is to be told the origins
  let recorder: OriginRecorder | null = null;
  const onStep = (): void => {
    if (++steps > maxSteps) {
      throw new StepLimitError(
        `${file}:${here.pos.line}:${here.pos.col}: evaluation did not finish within ${maxSteps} steps (last in ${here.fn}); ` +
          `the program may not terminate. Raise the limit with maxSteps (CLI: --max-steps N).`,
      );
    }
  };

  /**
   * `W.rd_V(x. N)` by the API's rd, `body` being `x ↦ N`: its trace is opened, N is
   * evaluated on this trampoline like any sub-computation (so that rd inside recursion
   * inside rd takes no JavaScript stack), then closed, differentiated and evaluated.
   */
  function* differentiate(M: Term, body: (x: Value) => Rec<Value>, V: Value, seed: () => unknown): Rec<Value> {
    const pos = M.pos;
    const outermost = depth === 0;
    const caller = `rd at ${file}:${pos.line}:${pos.col}`;
    const opened = openTraceAt(caller, V, rdOptions);
    const recorded = outermost && options.onRd ? new OriginRecorder(opened.trace.tape) : null;
    if (recorded !== null) recorder = recorded;
    depth++;
    let y: Value;
    try {
      y = yield* call(body(opened.input as Value));
    } catch (e) {
      abandonTrace(opened, e);
    } finally {
      depth--;
      if (outermost) recorder = null;
    }
    if (recorded === null) {
      const r = rdOfTrace(caller, closeTraceWith(opened, y), seed)[1] as Value;
      // inside an enclosing rd: its derivative term was emitted there, by this rd
      recorder?.mark(M);
      return r;
    }
    const inspect: Inspect = (t, d) => options.onRd!(pos, t, d, recorded.origins());
    return recorded.differentiating(() => rdOfTrace(caller, closeTraceWith(opened, y), seed, inspect)[1] as Value);
  }

  /** `x ↦ N` in ρ, φ: the body of an rd. */
  const lambda =
    (x: string, N: Term, env: Env | null, fns: Fns, fn: string) =>
    (v: Value): Rec<Value> =>
      ev(N, { name: x, value: v, next: env }, fns, fn);

  function* bool(B: BoolTerm, env: Env | null, fns: Fns, fn: string): Rec<boolean> {
    switch (B.kind) {
      case "true":
        return true;
      case "false":
        return false;
      case "pred": {
        const [a, b] = (yield* call(ev(B.arg, env, fns, fn))) as readonly [Scalar, Scalar];
        // a tie (or a bad argument) is the predicate's, not its last operand's
        here = { pos: B.pos, fn };
        return decide(B.pred as PredicateName, a, b);
      }
      default:
        return assertNever(B);
    }
  }

  function* ev(M: Term, env: Env | null, fns: Fns, fn: string): Rec<Value> {
    here = { pos: M.pos, fn };
    switch (M.kind) {
      case "var":
        return lookup(env, M.name);
      case "num":
        return M.value;
      case "add": {
        const a = (yield* call(ev(M.left, env, fns, fn))) as Scalar;
        const b = (yield* call(ev(M.right, env, fns, fn))) as Scalar;
        const r = applyBinary(CODE.add, a, b);
        recorder?.mark(M);
        return r;
      }
      case "op": {
        const v = yield* call(ev(M.arg, env, fns, fn));
        const code = scalarCodeOf(M.op)!;
        // a kink met (abs at 0) is the operation's, not its operand's
        here = { pos: M.pos, fn };
        // the checker (Fig. 1) has made sure these are reals
        const r = Array.isArray(v) ? applyBinary(code, v[0] as Scalar, v[1] as Scalar) : applyUnary(code, v as Scalar);
        recorder?.mark(M);
        return r;
      }
      case "let": {
        const v = yield* call(ev(M.bound, env, fns, fn));
        return (yield tail(ev(M.body, { name: M.binder.name, value: v, next: env }, fns, fn))) as Value;
      }
      case "letTuple": {
        const parts = split(yield* call(ev(M.bound, env, fns, fn)), M.binders.length);
        let inner = env;
        M.binders.forEach((b, i) => (inner = { name: b.name, value: parts[i], next: inner }));
        return (yield tail(ev(M.body, inner, fns, fn))) as Value;
      }
      case "unit":
        return [];
      case "pair": {
        const a = yield* call(ev(M.fst, env, fns, fn));
        const b = yield* call(ev(M.snd, env, fns, fn));
        return [a, b];
      }
      case "fst":
      case "snd": {
        const p = (yield* call(ev(M.arg, env, fns, fn))) as readonly [Value, Value];
        return M.kind === "fst" ? p[0] : p[1];
      }
      case "if": {
        const c = yield* call(bool(M.cond, env, fns, fn));
        return (yield tail(ev(c ? M.then : M.else, env, fns, fn))) as Value;
      }
      case "letrec": {
        const clo: Closure = { name: M.name, param: M.param.name, body: M.fnBody, fns };
        const inner = new Map(fns).set(M.name, clo);
        if (M.recursive) clo.fns = inner;
        return (yield tail(ev(M.body, env, inner, fn))) as Value;
      }
      case "call": {
        let v = yield* call(ev(M.arg, env, fns, fn));
        const clo = fns.get(M.fn)!;
        // one iteration of a loop run as a scan ends here, with the next argument
        if (unfolding !== null && unfolding.clo === clo && unfolding.calls.has(M)) return new Next(v) as unknown as Value;
        // a loop on traced values: its iterations as a scan, then the one that returns
        const calls = tracing() ? loopOf(clo) : null;
        if (calls !== null && isTraced(v)) {
          v = runLoop(clo, calls, v, M.pos);
          // the scan instruction the loop's iterations became is the call's
          recorder?.mark(M);
        }
        // φ'[φ(f)/f] | {x ↦ V'} ⊢ M: the body sees its parameter only
        return (yield tail(ev(clo.body, { name: clo.param, value: v, next: null }, clo.fns, clo.name))) as Value;
      }
      case "rd": {
        const V = yield* call(ev(M.point, env, fns, fn));
        const W = yield* call(ev(M.seed, env, fns, fn));
        return (yield tail(differentiate(M, lambda(M.param.name, M.body, env, fns, fn), V, () => W))) as Value;
      }
      case "grad": {
        const V = yield* call(ev(M.point, env, fns, fn));
        return (yield tail(differentiate(M, lambda(M.param.name, M.body, env, fns, fn), V, () => 1))) as Value;
      }
      case "fd": {
        // M.fd_{U,L}(x:T. N) = M.rd_{0_U}(y:U. y.rd_L(x:T. N)): the outer rd's seed M (the
        // direction) is evaluated before the inner rd's point L
        const v = yield* call(ev(M.direction, env, fns, fn));
        const V = yield* call(ev(M.point, env, fns, fn));
        const inner = lambda(M.param.name, M.body, env, fns, fn);
        const U = checked.types.get(M.body)!;
        return (yield tail(differentiate(M, (y) => differentiate(M, inner, V, () => y), zeroOf(U), () => v))) as Value;
      }
      default:
        return assertNever(M);
    }
  }

  /** The loops met (closures whose body calls them only in tail position), by closure. */
  const loops = new WeakMap<Closure, ReadonlySet<Term> | null>();
  const loopOf = (clo: Closure): ReadonlySet<Term> | null => {
    let calls = loops.get(clo);
    if (calls === undefined) loops.set(clo, (calls = clo.fns.get(clo.name) === clo ? tailSelfCalls(clo.name, clo.body) : null));
    return calls;
  };
  /** The loop whose one iteration is being evaluated (its tail calls end the iteration). */
  let unfolding: { readonly clo: Closure; readonly calls: ReadonlySet<Term> } | null = null;

  /**
   * The loop `clo` from argument v as a scan: each iteration its body evaluated (on a
   * trampoline of its own) up to a tail call of itself, whose argument is the next carry;
   * the iteration whose body returns instead ends it. Returns the argument of that
   * iteration, which the caller evaluates as usual. Its iterations count as steps.
   */
  const runLoop = (clo: Closure, calls: ReadonlySet<Term>, v: Value, pos: Pos): Value => {
    const iteration = (c: Value): unknown => {
      const outer = unfolding;
      unfolding = { clo, calls };
      try {
        const out = trampoline(ev(clo.body, { name: clo.param, value: c, next: null }, clo.fns, clo.name), onStep) as unknown;
        return out instanceof Next ? [out.value] : DONE;
      } finally {
        unfolding = outer;
      }
    };
    const ended = loopUntilDone({
      caller: `${clo.name} at ${file}:${pos.line}:${pos.col}`,
      fn: iteration as never,
      init: v,
      xs: Math.max(0, maxSteps - steps),
      options: {},
      minRun: 2,
    });
    steps += ended.iterations;
    if (!ended.done) onStep();
    return ended.carry as Value;
  };

  try {
    return trampoline(ev(program, envOf(options.env), new Map(), "the program"), onStep);
  } catch (e) {
    // errors raised by primitives and rd (ties, bad arguments) get the program position
    if (e instanceof WengertError && !(e instanceof StepLimitError) && !e.message.startsWith(`${file}:`)) {
      e.message = `${file}:${here.pos.line}:${here.pos.col}: ${e.message}`;
    }
    throw e;
  }
}

/** Whether a value holds a traced real (of an open trace). */
function isTraced(v: Value): boolean {
  const stack: Value[] = [v];
  while (stack.length > 0) {
    const u = stack.pop()!;
    if (u instanceof Real && !u.trace.closed) return true;
    if (Array.isArray(u)) stack.push(...(u as Value[]));
  }
  return false;
}

function envOf(bindings: Readonly<Record<string, Value>> | undefined): Env | null {
  let env: Env | null = null;
  for (const [name, value] of Object.entries(bindings ?? {})) env = { name, value, next: env };
  return env;
}
