/**
 * @file The language as a library: parse, check, run.
 */
import type { TraceTerm } from "../trace/term.js";
import type { TieMode } from "../trace/tracer.js";
import { check, showType } from "./check.js";
import { evaluate, type EvalOptions, type Value } from "./evaluate.js";
import { parse } from "./parser.js";
import type { Pos } from "./syntax.js";

export { parse, ParseError } from "./parser.js";
export { check, showType, TypeCheckError } from "./check.js";
export { evaluate, StepLimitError } from "./evaluate.js";
export type { Value, EvalOptions } from "./evaluate.js";
export { tokenize } from "./lexer.js";
export type { Token, TokenType } from "./lexer.js";
export type { TermOrigins } from "./origins.js";
export type { Term, BoolTerm, Pos } from "./syntax.js";

/** A value in the language's syntax: `1.5`, `*`, `<1, <2, 3>>`. */
export function showValue(v: Value): string {
  // iterative: tuples as wide as memory allows are deeply nested pairs
  const out: string[] = [];
  const todo: (Value | { text: string })[] = [v];
  while (todo.length > 0) {
    const x = todo.pop()!;
    if (typeof x === "object" && x !== null && "text" in x) out.push(x.text);
    else if (typeof x === "number" || !Array.isArray(x)) out.push(String(x));
    else if (x.length === 0) out.push("*");
    else todo.push({ text: ">" }, x[1] as Value, { text: ", " }, x[0] as Value, { text: "<" });
  }
  return out.join("");
}

/**
 * An outermost rd's trace or derivative term as `wengert run --trace --derivative`
 * prints it: a heading naming the rd's place, then the term in the paper's notation.
 */
export function showRdTerm(kind: "trace" | "derivative", file: string, pos: Pos, term: TraceTerm): string {
  return `# ${kind} term of the rd at ${file}:${pos.line}:${pos.col}\n${String(term)}`;
}

/** What `runProgram` gives: the program's value and its type, printed. */
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
