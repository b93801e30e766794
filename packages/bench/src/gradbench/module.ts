/**
 * @file What a GradBench eval module is to the adapter: its functions by name.
 *
 * GradBench's `evaluate` message names a module (`"lse"`), a function of it
 * (`"primal"`, `"gradient"`…) and an input (JSON). A function takes the parsed input
 * and returns the JSON-able output the eval checks. Work that is not the function
 * itself (parsing, converting the input to Float64Arrays) belongs in `prepare`, which
 * runs once per evaluate message and is not timed.
 */
export interface EvalFunction<I = unknown> {
  /** Turn the JSON input into what `run` takes (untimed). Defaults to the identity. */
  readonly prepare?: (input: unknown) => I;
  /** The timed computation: primal or derivative, with wengert. Returns JSON-able output. */
  readonly run: (prepared: I) => unknown;
}

export type EvalModule = Readonly<Record<string, EvalFunction<never>>>;
