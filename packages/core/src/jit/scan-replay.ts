/**
 * @file A kept trace of reals around scans, replayed instruction by instruction at first
 * and as one compiled function (jit/scan-term.ts) once it has been replayed a few times:
 * compileGrad's trace extended by its derivative, whose scanGrad instructions run their
 * kernels either way. The same numbers from both, to the bit.
 */
import { writeNumbers, type TermReplay } from "../eval/replay.js";
import type { TraceTerm } from "../trace/term.js";
import type { Guard } from "../trace/tracer.js";
import { hasScans } from "../trace/scan-ops.js";
import { compileScanTerm, type ScanTermRun } from "./scan-term.js";

/** Replays by the interpreter before the term is compiled (compiling costs a few replays' time). */
const COMPILE_AFTER = 2;

/**
 * `replay` (the term's, under its guards; `compiled` after a run: whether it ran the
 * compiled term, or chains in the replay), switching to the compiled term after
 * COMPILE_AFTER replays that held, where the term has scans and can be compiled (reals
 * around scans of reals: compileScanTerm); kinks are checked in the first
 * `checkedLength` instructions only, as the replay checks them.
 */
export function scanReplay(term: TraceTerm, guards: readonly Guard[], reportTies: boolean, replay: TermReplay, checkedLength: number): TermReplay {
  if (!hasScans(term.tape)) return replay;
  let replays = 0;
  let code: ScanTermRun | null | undefined;
  let last = false;
  return {
    get compiled() {
      return last;
    },
    run(inputs) {
      const r = whole(inputs) ? code!(inputs as readonly number[]) : replay.run(inputs);
      if (r !== null) replays++;
      return r;
    },
    into(inputs, out) {
      if (!whole(inputs)) {
        const held = replay.into(inputs, out);
        if (held) replays++;
        return held;
      }
      const r = code!(inputs as readonly number[]);
      if (r === null) return false;
      replays++;
      let k = 0;
      for (const y of r) k = writeNumbers(out, k, y);
      return true;
    },
  };
  /** Whether this call runs the compiled term (made once replays have held COMPILE_AFTER times). */
  function whole(inputs: readonly (number | Float64Array)[]): boolean {
    if (code === undefined && replays >= COMPILE_AFTER) code = compileScanTerm(term, guards, reportTies, checkedLength);
    const compiled = !!code && inputs.every((v) => typeof v === "number");
    last = compiled || replay.compiled;
    return compiled;
  }
}
