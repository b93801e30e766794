/**
 * @file The language as a library: parse, check, run.
 */
import type { TieMode } from "../trace/tracer.js";
import { check, showType } from "./check.js";
import { evaluate, type EvalOptions, type Value } from "./evaluate.js";
import { parse } from "./parser.js";

export { parse, ParseError } from "./parser.js";
export { check, showType, TypeCheckError } from "./check.js";
export { evaluate, StepLimitError } from "./evaluate.js";
export type { Value, EvalOptions } from "./evaluate.js";

/** A value in the language's syntax: `1.5`, `*`, `<1, <2, 3>>`. */
export function showValue(v: Value): string {
  if (typeof v === "number") return String(v);
  if (!Array.isArray(v)) return String(v);
  if (v.length === 0) return "*";
  return `<${showValue(v[0] as Value)}, ${showValue(v[1] as Value)}>`;
}

export interface RunResult {
  readonly value: Value;
  readonly type: string;
}

/** Parse, type-check and evaluate a program's source. */
export function runProgram(source: string, options: EvalOptions & { ties?: TieMode } = {}): RunResult {
  const file = options.file ?? "<input>";
  const program = parse(source, file);
  const checked = check(program, file);
  return { value: evaluate(program, checked, options), type: showType(checked.type) };
}
