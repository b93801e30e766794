/**
 * @file A scan's call: its arguments and options checked, and one iteration as the loop
 * written out (the body called, its carry checked), which is also the whole loop where
 * nothing is traced.
 */
import { ShapeError, WengertError } from "../errors.js";
import { describe, flatten, unflatten, type Shape } from "../structure.js";
import { carryChanged, DONE, sameType, type Leaf } from "../trace/trace-body.js";
import type { Body } from "../trace/body.js";
import type { Checkpoint } from "../trace/scan-ops.js";
import { isOperand, leafShape, type Operand } from "../trace/traced.js";
import { checkOptionKeys } from "./options.js";

/** scan's options (docs/scan.md). */
export interface ScanOptions {
  /**
   * Which carries the reverse sweep stores: every iteration's, every ⌈√n⌉-th (recomputing
   * the rest, one more forward run), or every k-th. Default: every iteration's when they
   * take at most 128 MiB, else "sqrt".
   */
  readonly checkpoint?: Checkpoint;
  /**
   * Where a derivative that is differentiated again (`hessian`, `grad` of `grad`, `hvp`, `jvp`
   * of `grad`, …) cannot keep the scan as scans: `"any"` (the default) writes the loop out
   * there, the same numbers with the loop's memory; `"scan"` throws a ScanWrittenOutError
   * naming why (docs/scan.md, "What stays written out").
   */
  readonly nested?: "any" | "scan";
}

const SCAN_OPTIONS = ["checkpoint", "nested"];

export interface ScanCall {
  readonly caller: string;
  readonly fn: (carry: never, x: never) => unknown;
  readonly init: unknown;
  readonly xs: readonly unknown[] | number;
  readonly options: ScanOptions;
  /** The shortest run recorded as a scan instruction (checkpoint: 1). */
  readonly minRun: number;
  /**
   * A body traced by an earlier call, tried before tracing (checkpoint's calls); kept when
   * it captures nothing (a captured value is bound to its trace).
   */
  readonly reuse?: { body: Body | null };
  /** The body may return DONE: the loop ends there (its carry as it came in). */
  readonly untilDone?: boolean;
}

export const isLeaf = (v: unknown): v is Operand => isOperand(v);

export function checkCall(c: ScanCall): number {
  if (typeof c.fn !== "function") throw new WengertError(`${c.caller}: the body is ${describe(c.fn)}; expected a function (carry, x) => [carry, y].`);
  checkOptionKeys(c.caller, c.options, SCAN_OPTIONS);
  const cp = c.options.checkpoint;
  if (cp !== undefined && cp !== "every" && cp !== "sqrt" && !(typeof cp === "number" && Number.isInteger(cp) && cp >= 1)) {
    throw new WengertError(
      `${c.caller}: options.checkpoint is ${JSON.stringify(cp)}; ` + 'expected "every", "sqrt" or a positive integer (store every k-th carry).',
    );
  }
  const nested = c.options.nested;
  if (nested !== undefined && nested !== "any" && nested !== "scan") {
    throw new WengertError(
      `${c.caller}: options.nested is ${JSON.stringify(nested)}; ` + 'expected "any" (write the loop out where it cannot nest) or "scan" (throw there).',
    );
  }
  if (typeof c.xs === "number") {
    if (!Number.isInteger(c.xs) || c.xs < 0) throw new WengertError(`${c.caller}: the length is ${c.xs}; expected a non-negative integer (or an array of xs).`);
    return c.xs;
  }
  if (!Array.isArray(c.xs)) throw new WengertError(`${c.caller}: xs is ${describe(c.xs)}; expected an array of per-iteration values or a length.`);
  return c.xs.length;
}

export const xAt = (c: ScanCall, i: number): unknown => (typeof c.xs === "number" ? undefined : c.xs[i]);

/** One iteration as the loop written out: the body called, its carry checked (null: it returned DONE). */
export function step(c: ScanCall, i: number, carryShape: Shape, carry: readonly Leaf[]): [Leaf[], unknown] | null {
  return stepped(c, i, carryShape, c.fn(unflatten(carryShape, carry) as never, xAt(c, i) as never));
}

/** What the body returned at iteration i, checked: the carry's leaves and y (null: it returned DONE). */
function stepped(c: ScanCall, i: number, carryShape: Shape, out: unknown): [Leaf[], unknown] | null {
  if (c.untilDone === true && out === DONE) return null;
  checkReturned(c.caller, out, i);
  const next = flatten(out[0], "carry", isLeaf, "the carry", (m) => new ShapeError(`${c.caller}: at iteration ${i}, ${m}`), leafShape);
  if (!sameType(next.shape, carryShape)) throw carryChanged(c.caller, i, next.shape, carryShape);
  return [next.leaves, out[1]];
}

export function plainLoop(c: ScanCall, n: number, carryShape: Shape, carry: Leaf[]): [unknown, unknown[]] {
  const ys: unknown[] = [];
  // a carry of one number returned as one number, the common case, is passed on as it is:
  // flattening and unflattening it took half of a 10⁶-step loop's time; anything else is
  // checked (and reported) as step does
  const real = carryShape.kind === "real";
  for (let i = 0; i < n; i++) {
    const out: unknown = c.fn((real ? carry[0] : unflatten(carryShape, carry)) as never, xAt(c, i) as never);
    let y: unknown;
    if (real && Array.isArray(out) && (out.length === 1 || out.length === 2) && typeof out[0] === "number") {
      carry = [out[0]];
      y = out[1];
    } else {
      [carry, y] = stepped(c, i, carryShape, out)!;
    }
    if (y !== undefined) ys[i] = y;
  }
  return [unflatten(carryShape, carry), withLength(ys, n)];
}

/** ys as the loop made them: n of them, or none when no iteration returned a y. */
export function withLength(ys: unknown[], n: number): unknown[] {
  if (ys.length > 0) ys.length = n;
  return ys;
}

/** What a body returns: [carry, y], or [carry] (no y: ys holds undefined). */
export function checkReturned(caller: string, out: unknown, i: number): asserts out is [unknown, unknown] {
  if (!Array.isArray(out) || out.length < 1 || out.length > 2) {
    throw new WengertError(
      `${caller}: the body returned ${Array.isArray(out) ? `an array of length ${out.length}` : describe(out)} at iteration ${i}; ` +
        "it must return [carry, y] (or [carry]).",
    );
  }
}
