/**
 * @file `scan(body, init, xs)`: a loop whose body is traced once and applied per iteration.
 *
 * `scan(body, init, xs)` computes what the loop `c = init; for i: [c, ys[i]] = body(c,
 * xs[i])` computes, and returns `[c, ys]` (as `jax.lax.scan`, with xs and ys arrays of
 * per-iteration values). Inside a traced function it does not trace every iteration: the
 * body is traced once as a term of its own (trace/body.ts), and that term is applied
 * iteration after iteration while the iteration's decisions come out as recorded (its
 * guards, the paper's region where a trace term holds); where one comes out otherwise the
 * body is traced again there. The enclosing trace gets one `scan` instruction per run of
 * iterations (trace/scan-ops.ts): a few instructions for a loop of any length, and a
 * reverse sweep that recomputes the carries from checkpoints (diff/scan-reverse.ts).
 *
 * The call's checks and the loop outside any trace: api/scan-call.ts; the loop inside a
 * trace: api/scan-loop.ts; what a run records there: api/scan-record.ts.
 *
 * The numbers are the loop's, to the last bit: an iteration whose term would differ from
 * the loop's trace (its inputs share a variable, a literal the tape would fold, a body
 * that read a traced value) is recorded as the loop records it, the body's term placed
 * at that iteration's variables.
 */
import { ShapeError } from "../errors.js";
import { flatten, unflatten } from "../structure.js";
import { openTraces, tracing } from "../trace/tracer.js";
import { checkCall, isLeaf, plainLoop, step, type ScanCall, type ScanOptions } from "./scan-call.js";
import { leafShape } from "../trace/traced.js";
import { Loop } from "./scan-loop.js";
import type { BodyArg, Like, Loose, Mode, ScanCarry, ScanResult } from "./types.js";

export type { ScanCall, ScanOptions } from "./scan-call.js";

/** Runs shorter than this are recorded as the loop records them (a scan instruction costs more). */
const MIN_RUN = 2;

/**
 * `[c, ys]` of the loop `c = init; for i < n: [c, ys[i]] = body(c, xs[i])`, n the length
 * of `xs` (or `xsOrLength` itself, x then being undefined). The carry keeps its type and
 * shape from one iteration to the next.
 */
export function scan<const C, Y = undefined, X = undefined>(
  body: (carry: NoInfer<BodyArg<Loose<C>, Mode<[C, X]>>>, x: NoInfer<BodyArg<X, Mode<[C, X]>>>) => readonly [NoInfer<Like<C>>, Y?],
  init: C,
  xsOrLength: readonly X[] | number,
  options: ScanOptions = {},
): [ScanCarry<C, Mode<[C, X]>>, ScanResult<Y, Mode<[C, X]>>[]] {
  return scanAs({ caller: "scan", fn: body as never, init, xs: xsOrLength as readonly unknown[] | number, options, minRun: MIN_RUN }) as never;
}

/** Where a loop that may end early ended. */
export interface Ended {
  readonly carry: unknown;
  /** Iterations run before the body returned DONE (or all of them). */
  readonly iterations: number;
  readonly done: boolean;
}

/**
 * The loop `c = init; while body(c) is not DONE: [c] = body(c)`, at most `length`
 * iterations, as a scan inside a trace (the body traced once, the iteration that returns
 * DONE found where the run's decisions change): the term language's tail loops.
 */
export function loopUntilDone(c: Omit<ScanCall, "untilDone">): Ended {
  const call = { ...c, untilDone: true };
  const n = checkCall(call);
  const init = flatten(c.init, "init", isLeaf, "the carry", (m) => new ShapeError(`${c.caller}: ${m}`), leafShape);
  if (!tracing() || openTraces().some((t) => t.checksNaN())) {
    let carry = init.leaves;
    for (let i = 0; i < n; i++) {
      const next = step(call, i, init.shape, carry);
      if (next === null) return { carry: unflatten(init.shape, carry), iterations: i, done: true };
      carry = next[0];
    }
    return { carry: unflatten(init.shape, carry), iterations: n, done: false };
  }
  const loop = new Loop(call, n, init.shape, init.leaves);
  const [carry] = loop.run();
  return { carry, iterations: loop.iterations, done: loop.done };
}

/** The loop (scan's or checkpoint's). */
export function scanAs(c: ScanCall): [unknown, unknown[]] {
  const n = checkCall(c);
  const init = flatten(c.init, "init", isLeaf, "the carry", (m) => new ShapeError(`${c.caller}: ${m}`), leafShape);
  // outside any trace, or under checkNaN (which checks every primitive as it is recorded): the loop itself
  if (!tracing() || openTraces().some((t) => t.checksNaN())) return plainLoop(c, n, init.shape, init.leaves);
  return new Loop(c, n, init.shape, init.leaves).run();
}
