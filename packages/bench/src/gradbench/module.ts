/**
 * @file What a GradBench eval module is to the adapter: its functions by name.
 *
 * GradBench's `evaluate` message names a module (`"lse"`), a function of it
 * (`"primal"`, `"gradient"`…) and an input (JSON). A function takes the parsed input
 * and returns the JSON-able output the eval checks. Work that is not the function
 * itself (parsing, converting the input to Float64Arrays) belongs in `prepare`, which
 * runs once per evaluate message and is not timed.
 *
 * A function may name inputs to warm it up on: `define` runs the module's functions on
 * them through the same `evaluate` path, interleaved as the eval calls them, so that V8
 * has compiled the code before the first timed run (as a C++ tool is compiled before it
 * runs). GradBench's protocol lets a tool prepare a module at `define` and report the
 * time it took; the answer carries it as a "warm up" timing.
 */
export interface EvalFunction<I = unknown> {
  /** Turn the JSON input into what `run` takes (untimed). Defaults to the identity. */
  readonly prepare?: (input: unknown) => I;
  /** The timed computation: primal or derivative, with wengert. Returns JSON-able output. */
  readonly run: (prepared: I) => unknown;
  /** Inputs (JSON, as the eval sends them) that `define` runs the function on before any timed run. */
  readonly warmUp?: WarmUp;
}

export interface WarmUp {
  /** The input of round r. */
  readonly input: (r: number) => unknown;
  /** How many rounds (each function of the module once a round, in turn). */
  readonly rounds: number;
}

export type EvalModule = Readonly<Record<string, EvalFunction<never>>>;
