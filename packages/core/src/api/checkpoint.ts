/**
 * @file `checkpoint(f)`: a function whose trace is not kept for the reverse sweep.
 *
 * Inside a traced function, a call of `checkpoint(f)` records one instruction (a scan of
 * one iteration, api/scan.ts) holding f's trace term once: the enclosing tape keeps only
 * the call's arguments and results, and the reverse sweep evaluates f's derivative term
 * (f's instructions replayed in front) when the call's cotangent is needed. A later call
 * whose decisions come out as recorded applies the same term without tracing f again,
 * when f depends on its arguments alone (a value f captures from a trace is bound to
 * the trace it was captured in). A derivative to be differentiated again (grad of grad,
 * hessian) keeps it so too: its reverse is one scan of f's rules (diff/scan-single.ts), for
 * a body of reals; other transformations see f's instructions written out.
 */
import { WengertError } from "../errors.js";
import { describe } from "../structure.js";
import type { Body } from "../trace/body.js";
import { scanAs } from "./scan.js";

/** `f` itself, recorded as one instruction whose derivative recomputes f's values (docs/scan.md). */
export function checkpoint<A extends unknown[], R>(f: (...args: A) => R): (...args: A) => R {
  if (typeof f !== "function") throw new WengertError(`checkpoint: f is ${describe(f)}; expected the function to checkpoint.`);
  const reuse: { body: Body | null } = { body: null };
  return (...args: A): R => {
    const [, ys] = scanAs({
      caller: "checkpoint",
      fn: ((_carry: [], x: A) => [[], f(...x)]) as never,
      init: [],
      xs: [args],
      options: {},
      minRun: 1,
      reuse,
    });
    return ys[0] as R;
  };
}
