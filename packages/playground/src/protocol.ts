/**
 * @file The messages between the page and the worker that runs wengert: a program of
 * the paper's language, or TypeScript using the API. Plain data (structured clone).
 */

/** A place in the program's source: UTF-16 offsets (end exclusive), 1-based line and column. */
export interface Span {
  readonly start: number;
  readonly end: number;
  readonly line: number;
  readonly col: number;
}

/** One printed line of a term; a `let` knows the operation of the program it came from. */
export interface TermLine {
  readonly text: string;
  /** The source of the operation that emitted it (for a derivative's own lets: of the instruction whose rule did). */
  readonly origin?: Span;
  /** Says what the link is: `mul at 4:3`, `reverse rule of v5 (mul at 4:3)`. */
  readonly note?: string;
}

/** An outermost rd's trace and derivative terms, each as the CLI prints it (heading first). */
export interface RdTerms {
  readonly at: Span | null;
  readonly trace: readonly TermLine[];
  readonly derivative: readonly TermLine[];
}

/** A one-line error as the CLI prints it, and where in the source it points. */
export interface Problem {
  readonly message: string;
  readonly line?: number;
  readonly col?: number;
}

/** A tie or kink met at a point of the plot (the derivative is not defined there). */
export interface Mark {
  readonly x: number;
  readonly what: string;
}

export interface Plot {
  readonly xs: readonly number[];
  /** f, f′ and f″ at xs; null where the computation failed. */
  readonly f: readonly (number | null)[];
  readonly df: readonly (number | null)[];
  readonly d2f: readonly (number | null)[];
  readonly marks: readonly Mark[];
  /** The first failure at a point, if any. */
  readonly problem?: Problem;
}

/** A program whose one free variable is `x : real`, evaluated at x and plotted. */
export interface FunctionOfX {
  readonly x: number;
  /** f(x), f′(x), f″(x) as the language prints values. */
  readonly value: string;
  readonly type: string;
  readonly derivatives: readonly [string, string] | null;
  /** The trace and derivative terms of f at x: those of `grad_x(x: real. f)`. */
  readonly terms: RdTerms | null;
  readonly plot: Plot | null;
}

export interface PlotRange {
  readonly from: number;
  readonly to: number;
  readonly points: number;
}

export type Request =
  | { readonly kind: "program"; readonly id: number; readonly source: string; readonly file: string; readonly x: number; readonly range: PlotRange }
  | { readonly kind: "typescript"; readonly id: number; readonly source: string };

export type Reply =
  | {
      readonly kind: "program";
      readonly id: number;
      /** `value : type`, as the CLI's last line, when it ran to the end. */
      readonly result: string | null;
      /** What the CLI prints to stderr: tie warnings, then the error. */
      readonly warnings: readonly Problem[];
      readonly error: Problem | null;
      readonly rds: readonly RdTerms[];
      /** Set when the program is a function of x. */
      readonly fn: FunctionOfX | null;
    }
  | { readonly kind: "typescript"; readonly id: number; readonly output: readonly { readonly stream: "log" | "warn" | "error"; readonly text: string }[] };
