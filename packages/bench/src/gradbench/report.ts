/**
 * @file wengert's derivative time over its primal time, per GradBench eval, for
 * `pnpm bench`.
 *
 * Each function is timed as the adapter times it for GradBench (protocol.ts:
 * `prepare` once, untimed; then runs of `run`, each alone timed with
 * process.hrtime.bigint), after a warm-up (untimed runs: the first calls compile and
 * fill the caches), as the workloads' rows are (harness.ts): the primal and the
 * derivative in interleaved rounds, each round a share of `minRuns` and `minSeconds`
 * for each (the one first in a round alternating, a collection before each when
 * `gc` is given), so that both see the same load on a shared machine, where timing
 * one whole before the other let a change of load between them move the ratio by ×2.
 * The report is the median run of each over all rounds, and their ratio. particle and
 * saddle have no primal function (nested AD only): their row gives the derivative's
 * time alone.
 */
import type { EvalFunction, EvalModule } from "./module.js";

/**
 * The primal function of an eval and the derivative function GradBench times against it;
 * no `primal` for an eval that has none (particle, saddle), whose derivative is timed alone.
 */
export interface FunctionPair {
  readonly primal?: string;
  readonly derivative: string;
}

/**
 * GradBench's function names. `particle` and `saddle` have no primal function in
 * GradBench (`rr`, `ff`, `fr`, `rf` are all derivative computations, nested): `rr`
 * (reverse over reverse) represents them, timed alone.
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
  particle: { derivative: "rr" },
  saddle: { derivative: "rr" },
};

/** What the primal and ratio cells say for an eval without a primal function. */
export const NO_PRIMAL = "— (no primal in GradBench: nested AD only)";

export interface TimingOptions {
  /** Timed runs at least, over all rounds (default 5). */
  readonly minRuns?: number;
  /** Seconds of timed runs at least, summed over all rounds (default 0.5). */
  readonly minSeconds?: number;
  /** Untimed runs first: at most this many (default 10), at least one … */
  readonly warmup?: number;
  /** … stopping once they took this long (s, default 0.5). */
  readonly warmupSeconds?: number;
  /** Timed runs at most, whatever minSeconds says (default 100 000: hello's runs take ~40 ns). */
  readonly maxRuns?: number;
  /** Rounds the runs are split into, the functions timed by turns (default 4). */
  readonly rounds?: number;
  /** A garbage collection, run before each function's share of a round (none by default). */
  readonly gc?: () => void;
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
  return timeFunctions([f], input, options)[0];
}

/**
 * Time functions of a module on `input` by turns (see the file's comment), each warmed
 * up first; throws the first error of a function.
 */
export function timeFunctions(fs: readonly EvalFunction<unknown>[], input: unknown, options: TimingOptions = {}): Timed[] {
  const { minRuns = 5, minSeconds = 0.5, warmup = 10, warmupSeconds = 0.5, maxRuns = 100_000, rounds = 4, gc } = options;
  const runs = fs.map((f) => {
    const prepared = f.prepare === undefined ? input : f.prepare(input);
    return { run: () => f.run(prepared), ns: [] as number[] };
  });
  for (const r of runs) {
    const until = process.hrtime.bigint() + BigInt(Math.ceil(warmupSeconds * 1e9));
    for (let i = 0; i < Math.max(1, warmup) && (i === 0 || process.hrtime.bigint() < until); i++) r.run();
  }
  // each round's share: the runs still missing spread over the rounds left, a
  // round's part of the seconds, and of the most runs
  const ns = BigInt(Math.ceil((minSeconds / rounds) * 1e9));
  const most = Math.max(1, Math.ceil(Math.max(minRuns, maxRuns) / rounds));
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < runs.length; k++) {
      const r = runs[(k + round) % runs.length];
      const least = Math.ceil((minRuns - r.ns.length) / (rounds - round));
      gc?.();
      let elapsed = 0n;
      for (let i = 0; (i < least || elapsed < ns) && i < most; i++) {
        const t0 = process.hrtime.bigint();
        r.run();
        const t = process.hrtime.bigint() - t0;
        r.ns.push(Number(t));
        elapsed += t;
      }
    }
  }
  return runs.map(({ ns }) => ({ runs: ns.length, medianNs: median(ns), minNs: ns.reduce((a, b) => Math.min(a, b), Infinity) }));
}

/** The derivative alone, for an eval without a primal function. */
export interface DerivativeOnly {
  readonly derivative: Timed;
  /** Why there is no primal time nor ratio: {@link NO_PRIMAL}. */
  readonly noPrimal: string;
}

const functionOf = (module: EvalModule, name: string): EvalFunction<unknown> => {
  if (!Object.hasOwn(module, name)) throw new Error(`the module has no function "${name}"`);
  return module[name] as unknown as EvalFunction<unknown>;
};

/** The derivative's median time over the primal's, for `module` on `input` (`pair` must name a primal). */
export function derivativeOverPrimal(module: EvalModule, pair: FunctionPair, input: unknown, options: TimingOptions = {}): DerivativeOverPrimal {
  if (pair.primal === undefined) throw new Error("the function pair has no primal");
  const [primal, derivative] = timeFunctions([functionOf(module, pair.primal), functionOf(module, pair.derivative)], input, options);
  return { primal, derivative, ratio: derivative.medianNs / primal.medianNs };
}

export interface RatioRow {
  readonly eval: string;
  /** The workload ("—" without a sample input). */
  readonly description: string;
  /** undefined: the eval has no entry in {@link FUNCTION_PAIRS}. */
  readonly pair: FunctionPair | undefined;
  /**
   * The timings; the derivative's alone (no primal function); or why there are none:
   * `error` (a function failed), `skipped` (no function pair or no sample input).
   */
  readonly result: DerivativeOverPrimal | DerivativeOnly | { readonly error: string } | { readonly skipped: string };
}

/**
 * derivative / primal for every eval of `registry`, in its order: the derivative alone
 * for an eval without a primal function; an eval that fails gets its error's first line,
 * one without a function pair or a sample input (inputs.ts) a row saying so.
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
    const pair = Object.hasOwn(FUNCTION_PAIRS, name) ? FUNCTION_PAIRS[name] : undefined;
    const sample = Object.hasOwn(samples, name) ? samples[name] : undefined;
    if (pair === undefined || sample === undefined) {
      const missing = [
        pair === undefined && "no function pair (report.ts FUNCTION_PAIRS)",
        sample === undefined && "no sample input (inputs.ts SAMPLE_INPUTS)",
      ]
        .filter(Boolean)
        .join(", ");
      rows.push({ eval: name, description: "—", pair, result: { skipped: `not timed: ${missing}` } });
      continue;
    }
    progress?.(name);
    let description = "—";
    let result: RatioRow["result"];
    try {
      const s = sample(quick);
      description = s.description;
      result = pair.primal === undefined
        ? { derivative: timeFunction(functionOf(registry[name], pair.derivative), s.input, options), noPrimal: NO_PRIMAL }
        : derivativeOverPrimal(registry[name], pair, s.input, options);
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
  const cell = (text: string) => text.replaceAll("|", "\\|");
  for (const r of rows) {
    const fns = r.pair === undefined ? r.eval : `${r.eval} (${r.pair.primal === undefined ? r.pair.derivative : `${r.pair.derivative} / ${r.pair.primal}`})`;
    const res = r.result;
    if ("error" in res) lines.push(`| ${fns} | ${r.description} | failed: ${cell(res.error)} | | |`);
    else if ("skipped" in res) lines.push(`| ${fns} | ${r.description} | ${cell(res.skipped)} | | |`);
    else if ("noPrimal" in res) lines.push(`| ${fns} | ${r.description} | ${res.noPrimal} | ${ms(res.derivative.medianNs)} | ${res.noPrimal} |`);
    else lines.push(`| ${fns} | ${r.description} | ${ms(res.primal.medianNs)} | ${ms(res.derivative.medianNs)} | ${res.ratio.toFixed(2)} |`);
  }
  return lines.join("\n");
}
