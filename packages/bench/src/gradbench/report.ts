/**
 * @file wengert's derivative time over its primal time, per GradBench eval, for
 * `pnpm bench`.
 *
 * Each function is timed as the adapter times it for GradBench (protocol.ts:
 * `prepare` once, untimed; then `run` until both `minRuns` and `minSeconds` are met,
 * each run alone timed with process.hrtime.bigint), after `warmup` untimed runs (the
 * first calls compile), and at most `maxRuns` runs. The report is the median run of
 * each and their ratio.
 */
import type { EvalFunction, EvalModule } from "./module.js";

/** The primal function of an eval and the derivative function GradBench times against it. */
export interface FunctionPair {
  readonly primal: string;
  readonly derivative: string;
}

/**
 * GradBench's function names. `particle` and `saddle` have no primal function in
 * GradBench (`rr`, `ff`, `fr`, `rf` are all derivative computations, nested): their
 * modules would need to export an extra function (say `primal`, which the eval never
 * calls) to be reported here, with `derivative` one of the four.
 */
export const FUNCTION_PAIRS: Readonly<Record<string, FunctionPair>> = {
  hello: { primal: "square", derivative: "double" },
  lse: { primal: "primal", derivative: "gradient" },
  llsq: { primal: "primal", derivative: "gradient" },
  det: { primal: "primal", derivative: "gradient" },
  ode: { primal: "primal", derivative: "gradient" },
  kmeans: { primal: "cost", derivative: "dir" },
  gmm: { primal: "objective", derivative: "jacobian" },
  ba: { primal: "objective", derivative: "jacobian" },
  ht: { primal: "objective", derivative: "jacobian" },
  lstm: { primal: "objective", derivative: "jacobian" },
};

export interface TimingOptions {
  /** Timed runs at least (default 5). */
  readonly minRuns?: number;
  /** Seconds of timed runs at least, summed (default 0.5). */
  readonly minSeconds?: number;
  /** Untimed runs first (default 1). */
  readonly warmup?: number;
  /** Timed runs at most, whatever minSeconds says (default 100 000: hello's runs take ~40 ns). */
  readonly maxRuns?: number;
}

export interface Timed {
  readonly runs: number;
  /** Median of the runs, in nanoseconds. */
  readonly medianNs: number;
  readonly minNs: number;
}

export interface DerivativeOverPrimal {
  readonly primal: Timed;
  readonly derivative: Timed;
  /** derivative median / primal median */
  readonly ratio: number;
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** Time one function of a module on `input`; throws the function's error if it fails. */
export function timeFunction(f: EvalFunction<unknown>, input: unknown, options: TimingOptions = {}): Timed {
  const { minRuns = 5, minSeconds = 0.5, warmup = 1, maxRuns = 100_000 } = options;
  const prepared = f.prepare === undefined ? input : f.prepare(input);
  for (let i = 0; i < warmup; i++) f.run(prepared);
  const minNs = BigInt(Math.ceil(minSeconds * 1e9));
  const ns: number[] = [];
  let elapsed = 0n;
  while ((ns.length < minRuns || elapsed < minNs) && ns.length < Math.max(minRuns, maxRuns)) {
    const t0 = process.hrtime.bigint();
    f.run(prepared);
    const t = process.hrtime.bigint() - t0;
    ns.push(Number(t));
    elapsed += t;
  }
  return { runs: ns.length, medianNs: median(ns), minNs: ns.reduce((a, b) => Math.min(a, b), Infinity) };
}

/** The derivative's median time over the primal's, for `module` on `input`. */
export function derivativeOverPrimal(module: EvalModule, pair: FunctionPair, input: unknown, options: TimingOptions = {}): DerivativeOverPrimal {
  const get = (name: string): EvalFunction<unknown> => {
    if (!Object.hasOwn(module, name)) throw new Error(`the module has no function "${name}"`);
    return module[name] as unknown as EvalFunction<unknown>;
  };
  const primal = timeFunction(get(pair.primal), input, options);
  const derivative = timeFunction(get(pair.derivative), input, options);
  return { primal, derivative, ratio: derivative.medianNs / primal.medianNs };
}

export interface RatioRow {
  readonly eval: string;
  readonly description: string;
  readonly pair: FunctionPair;
  /** The timings, or why there are none (no sample input, no function pair, an error). */
  readonly result: DerivativeOverPrimal | { readonly error: string };
}

/**
 * derivative / primal for every eval of `registry` that has a function pair and a
 * sample input (inputs.ts); an eval that fails gets its error's first line instead.
 */
export function ratiosForAll(
  registry: Readonly<Record<string, EvalModule>>,
  samples: Readonly<Record<string, (quick: boolean) => { readonly description: string; readonly input: unknown }>>,
  quick: boolean,
  options: TimingOptions = {},
  progress?: (evalName: string) => void,
): RatioRow[] {
  const rows: RatioRow[] = [];
  for (const name of Object.keys(registry)) {
    const pair = FUNCTION_PAIRS[name];
    const sample = samples[name];
    if (pair === undefined || sample === undefined) continue;
    progress?.(name);
    const { description, input } = sample(quick);
    let result: RatioRow["result"];
    try {
      result = derivativeOverPrimal(registry[name], pair, input, options);
    } catch (e) {
      result = { error: (e instanceof Error ? `${e.name}: ${e.message}` : String(e)).split("\n")[0] };
    }
    rows.push({ eval: name, description, pair, result });
  }
  return rows;
}

const ms = (ns: number): string => {
  const v = ns / 1e6;
  return v >= 100 ? v.toFixed(0) : v >= 1 ? v.toFixed(2) : v.toPrecision(2);
};

/** The rows as a Markdown table: eval, workload, primal and derivative medians (ms), ratio. */
export function ratioTable(rows: readonly RatioRow[]): string {
  const lines = ["| eval | workload | primal (ms) | derivative (ms) | derivative / primal |", "|---|---|--:|--:|--:|"];
  for (const r of rows) {
    const fns = `${r.eval} (${r.pair.derivative} / ${r.pair.primal})`;
    if ("error" in r.result) lines.push(`| ${fns} | ${r.description} | failed: ${r.result.error.replaceAll("|", "\\|")} | | |`);
    else lines.push(`| ${fns} | ${r.description} | ${ms(r.result.primal.medianNs)} | ${ms(r.result.derivative.medianNs)} | ${r.result.ratio.toFixed(2)} |`);
  }
  return lines.join("\n");
}
