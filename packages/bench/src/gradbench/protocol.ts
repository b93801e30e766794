/**
 * @file The GradBench protocol, as a tool speaks it.
 *
 * The eval writes one JSON message per line; the tool answers each with one JSON line,
 * in order, and nothing else on stdout. Message kinds (GradBench's protocol.rs):
 *
 * - `{id, kind: "start", eval?, config?}` → `{id, tool}`
 * - `{id, kind: "define", module}` → `{id, success, error?, timings?}`: success when the
 *   module is in the registry; the functions that name warm-up inputs are run on them
 *   (module.ts), timed as one "warm up" timing
 * - `{id, kind: "evaluate", module, function, input, description?}` →
 *   `{id, success, output?, timings, error?}`: the function is run until both
 *   `input.min_runs` (default 1; older evals say `runs`) and `input.min_seconds`
 *   (default 0, summed over the runs) are met, with one `{name: "evaluate",
 *   nanoseconds}` timing per run (the function only: not parsing, not `prepare`, not
 *   serialising the output), after one `{name: "prepare", …}` timing. The output is the
 *   last run's.
 * - `{id, kind: "analysis", of, valid, error?}` → `{id}`
 * - any other kind → `{id}`
 *
 * A function that throws answers `success: false` with the error (its stack, which
 * starts with its name and message).
 */
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { jsonable } from "./json.js";
import type { EvalFunction, EvalModule } from "./module.js";

export type Registry = Readonly<Record<string, EvalModule>>;

export interface ServeOptions {
  /** The name in the answer to `start` (default "wengert"). */
  readonly tool?: string;
  /** A nanosecond clock (default `process.hrtime.bigint`); tests pass a fake one. */
  readonly clock?: () => bigint;
}

export interface Timing {
  readonly name: string;
  readonly nanoseconds: number;
}

type Message = Record<string, unknown>;
type Response = Record<string, unknown>;

const own = <T>(table: Readonly<Record<string, T>>, key: unknown): T | undefined =>
  typeof key === "string" && Object.hasOwn(table, key) ? table[key] : undefined;

function errorText(e: unknown): string {
  if (e instanceof Error) return e.stack ?? `${e.name}: ${e.message}`;
  return String(e);
}

/** `min_runs` and `min_seconds` of an input (any JSON value; `hello`'s are numbers). */
export function runsOf(input: unknown): { minRuns: number; minSeconds: number } {
  let minRuns = 1;
  let minSeconds = 0;
  if (typeof input === "object" && input !== null && !Array.isArray(input)) {
    const r = input as Record<string, unknown>;
    const runs = typeof r.min_runs === "number" ? r.min_runs : r.runs;
    if (typeof runs === "number" && Number.isFinite(runs)) minRuns = Math.max(1, Math.floor(runs));
    if (typeof r.min_seconds === "number" && Number.isFinite(r.min_seconds)) minSeconds = Math.max(0, r.min_seconds);
  }
  return { minRuns, minSeconds };
}

/**
 * Run `f` on `input` as an `evaluate` message asks: `prepare` once (timed as
 * "prepare"), then `run` until both `minRuns` and `minSeconds` are met.
 */
export function evaluate(
  f: EvalFunction<unknown>,
  input: unknown,
  clock: () => bigint = () => process.hrtime.bigint(),
): { success: true; output: unknown; timings: Timing[] } | { success: false; error: string; timings: Timing[] } {
  const timings: Timing[] = [];
  const { minRuns, minSeconds } = runsOf(input);
  let prepared: unknown;
  try {
    const t0 = clock();
    prepared = f.prepare === undefined ? input : f.prepare(input);
    timings.push({ name: "prepare", nanoseconds: Number(clock() - t0) });
  } catch (e) {
    return { success: false, error: errorText(e), timings };
  }
  const minNanoseconds = BigInt(Math.ceil(minSeconds * 1e9));
  let elapsed = 0n;
  let output: unknown;
  try {
    for (let i = 0; i < minRuns || elapsed < minNanoseconds; i++) {
      const t0 = clock();
      output = f.run(prepared);
      const t1 = clock();
      timings.push({ name: "evaluate", nanoseconds: Number(t1 - t0) });
      elapsed += t1 - t0;
    }
  } catch (e) {
    return { success: false, error: errorText(e), timings };
  }
  return { success: true, output, timings };
}

/**
 * Run the module's functions on their warm-up inputs, a round at a time (each function
 * once a round, in the module's order), through `evaluate`: null where none names any.
 * A failure there is the module's and fails `define`, naming the function and round.
 */
export function warmUp(
  module: EvalModule,
  clock: () => bigint = () => process.hrtime.bigint(),
): { success: true; timings: Timing[] } | { success: false; error: string; timings: Timing[] } | null {
  const functions = Object.entries(module)
    .filter(([, f]) => f.warmUp !== undefined)
    .map(([name, f]) => [name, f as unknown as EvalFunction<unknown>] as const);
  if (functions.length === 0) return null;
  const t0 = clock();
  const rounds = Math.max(...functions.map(([, f]) => f.warmUp!.rounds));
  for (let r = 0; r < rounds; r++) {
    for (const [name, f] of functions) {
      if (r >= f.warmUp!.rounds) continue;
      const result = evaluate(f, f.warmUp!.input(r), clock);
      if (!result.success) {
        return { success: false, error: `warming up ${name} (round ${r}): ${result.error}`, timings: [{ name: "warm up", nanoseconds: Number(clock() - t0) }] };
      }
    }
  }
  return { success: true, timings: [{ name: "warm up", nanoseconds: Number(clock() - t0) }] };
}

/** The answer to one message (a line of JSON). */
export function respond(line: string, modules: Registry, options: ServeOptions = {}): Response {
  let message: Message;
  try {
    const parsed: unknown = JSON.parse(line);
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error(`the message is not a JSON object`);
    message = parsed as Message;
  } catch (e) {
    return { id: null, success: false, error: `wengert-gradbench: cannot read the message: ${e instanceof Error ? e.message : String(e)}` };
  }
  const id = message.id ?? null;
  switch (message.kind) {
    case "start":
      return { id, tool: options.tool ?? "wengert" };
    case "define": {
      const module = own(modules, message.module);
      if (module !== undefined) {
        const warm = warmUp(module, options.clock);
        if (warm === null) return { id, success: true };
        return warm.success ? { id, success: true, timings: warm.timings } : { id, success: false, error: warm.error, timings: warm.timings };
      }
      return { id, success: false, error: `wengert has no module ${JSON.stringify(message.module)} (it has ${Object.keys(modules).join(", ")})` };
    }
    case "evaluate": {
      const module = own(modules, message.module);
      if (module === undefined) return { id, success: false, error: `wengert has no module ${JSON.stringify(message.module)}` };
      const f = own(module, message.function) as EvalFunction<unknown> | undefined;
      if (f === undefined) {
        return {
          id,
          success: false,
          error: `module ${JSON.stringify(message.module)} has no function ${JSON.stringify(message.function)} (it has ${Object.keys(module).join(", ")})`,
        };
      }
      const r = evaluate(f, message.input, options.clock);
      if (!r.success) return { id, success: false, timings: r.timings, error: r.error };
      let output: unknown;
      try {
        output = jsonable(r.output) ?? null;
      } catch (e) {
        return { id, success: false, timings: r.timings, error: errorText(e) };
      }
      return { id, success: true, output, timings: r.timings };
    }
    default:
      // "analysis" (the eval's verdict on an output) and kinds this adapter does not know
      return { id };
  }
}

/** Answer every message of `lines` (blank lines are skipped) through `write`, one line each. */
export async function serve(lines: AsyncIterable<string>, write: (line: string) => void, modules: Registry, options: ServeOptions = {}): Promise<void> {
  for await (const line of lines) {
    if (line.trim() === "") continue;
    write(JSON.stringify(respond(line, modules, options)));
  }
}

/** The lines of a stream, however long (readline has no line-length limit). */
export function linesOf(input: Readable): AsyncIterable<string> {
  return createInterface({ input, crlfDelay: Infinity, terminal: false });
}
