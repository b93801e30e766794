/**
 * @file GradBench `saddle`: Pearlmutter and Siskind's saddle point — gradient descent
 * on a function that is itself the result of gradient ascent (nested AD).
 *
 * With f(p1, p2) = (p1x² + p1y²) − (p2x² + p2y²), from the input's `start` s:
 *
 *   r1 = argmin_{p1} max_{p2} f(p1, p2)   (both by gradient descent from s, gd.ts),
 *   r2 = argmax_{p2} f(r1, p2).
 *
 * The inner max's gradient (in p2) is taken by wengert inside the function whose
 * gradient (in p1) the outer descent takes by wengert around it. The variant names the
 * modes, outer then inner: `rr`, `rf`, `fr`, `ff` (r: `grad`; f: one `jvp` per
 * coordinate). r2's ascent uses the outer mode, as evals/saddle/README.md says.
 *
 * Output: [r1x, r1y, r2x, r2y].
 */
import { add, mul, primal, sub, type Scalar } from "@wengert/core";
import { defineFunction } from "../define.js";
import { field, InputError, numbers, record } from "../json.js";
import type { EvalModule } from "../module.js";
import { argmax, argmin, maximum, objectiveBy, type Mode, type Vec } from "./gd.js";

export const saddleFunction = (p1: Vec, p2: Vec): Scalar =>
  sub(add(mul(p1[0], p1[0]), mul(p1[1], p1[1])), add(mul(p2[0], p2[0]), mul(p2[1], p2[1])));

export function saddlePoint(start: readonly [number, number], outer: Mode, inner: Mode): number[] {
  const s: Vec = [...start];
  const maxOver = (p1: Vec): Scalar => maximum(objectiveBy(inner, (p2) => saddleFunction(p1, p2)), s);
  const r1 = argmin(objectiveBy(outer, maxOver), s);
  const r2 = argmax(objectiveBy(outer, (p2) => saddleFunction(r1, p2)), s);
  return [...r1, ...r2].map(primal);
}

const prepare = (input: unknown): [number, number] => {
  const start = numbers(field(record(input), "start"), "start");
  if (start.length !== 2) throw new InputError(`start has ${start.length} entries; expected 2`);
  return [start[0], start[1]];
};
const variant = (outer: Mode, inner: Mode) => defineFunction({ prepare, run: (start: [number, number]) => saddlePoint(start, outer, inner) });

export const saddle: EvalModule = {
  rr: variant("r", "r"),
  rf: variant("r", "f"),
  fr: variant("f", "r"),
  ff: variant("f", "f"),
};
