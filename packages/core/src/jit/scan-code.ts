/**
 * @file A loop body of reals as JavaScript: its forward run over iterations.
 */
import type { Body } from "../trace/body.js";
import type { ForwardRun } from "../eval/scan-forward.js";

/** The compiled forward run of a body of reals, or null (interpreted). */
export function compiledForward(_body: Body): ((r: ForwardRun, carry: number[]) => number) | null {
  return null;
}

/** The compiled reverse run of a body of reals, or null (interpreted). */
export function compiledReverse(_body: Body): null {
  return null;
}
