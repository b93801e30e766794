/**
 * @file The flags of `pnpm gradbench`, read into {@link RunOptions}. Reading only: whether
 * the paths exist is checkout.ts's business.
 *
 *     pnpm gradbench -- --gradbench PATH [--evals lse,gmm] [--tools manual,pytorch]
 *       [--relay DIR] [--python EXE] [--args 'gmm=-d 2 10 -k 5'] [--min-runs N]
 *       [--min-seconds S] [--out FILE | --no-write]
 *     pnpm gradbench -- --render results/gradbench.json   (the table again from a run's JSON)
 */
import { isAbsolute, resolve } from "node:path";
import { FUNCTION_PAIRS } from "../report.js";
import { GradbenchUsageError } from "./errors.js";

/** GradBench's twelve evals, in the order the table lists them. */
export const ALL_EVALS: readonly string[] = Object.keys(FUNCTION_PAIRS);

/** The tools besides wengert that the runner knows how to start from a checkout. */
export const OTHER_TOOLS = ["manual", "pytorch"] as const;
export type OtherTool = (typeof OTHER_TOOLS)[number];

export interface RunOptions {
  /** The evals to run, in ALL_EVALS's order. */
  readonly evals: readonly string[];
  /** The GradBench checkout's root (absolute). */
  readonly gradbench: string;
  /** Tools run beside wengert on each eval. */
  readonly tools: readonly OtherTool[];
  /** The relay's directory (driver.py, run_eval.py), absolute; undefined: look beside the repository. */
  readonly relay?: string;
  /** The Python that runs the evals (undefined: Debian's /usr/bin/python3 if present, else python3). */
  readonly python?: string;
  /** Flags passed to an eval's run.py (its sizes), by eval. */
  readonly evalArgs: Readonly<Record<string, readonly string[]>>;
  /** --min-runs and --min-seconds for every eval (undefined: the eval's defaults, 1 run and 1 s). */
  readonly minRuns?: number;
  readonly minSeconds?: number;
  /** Where the table goes (absolute), the run's JSON beside it (.json); undefined with --no-write. */
  readonly out?: string;
}

/** What the command line asks for: a run, or the table again from a run's JSON (absolute path). */
export type RunCommand =
  | ({ readonly kind: "run" } & RunOptions)
  | { readonly kind: "render"; readonly json: string; readonly out?: string };

export const USAGE = `usage: pnpm gradbench -- --gradbench PATH [--evals ${ALL_EVALS.slice(0, 3).join(",")},…] [--tools ${OTHER_TOOLS.join(",")}]
    [--relay DIR] [--python EXE] [--args 'EVAL=FLAGS']… [--min-runs N] [--min-seconds S] [--out FILE | --no-write]
       pnpm gradbench -- --render FILE.json [--out FILE]

  --gradbench PATH  a checkout of github.com/gradbench/gradbench (required), with GradBench's
                    C++ manual tool built in it (tools/manual/README.md): it gives the expected answers
  --evals a,b       evals to run (default: all twelve: ${ALL_EVALS.join(", ")})
  --tools a,b       GradBench's tools to run beside wengert, when the checkout can run them
  --relay DIR       the directory of driver.py and run_eval.py (default: shared/gradbench beside the repository)
  --python EXE      the Python with numpy, scipy, pydantic, dataclasses-json (default: /usr/bin/python3)
  --args EVAL=FLAGS size flags for one eval's run.py, e.g. --args 'gmm=-d 2 10 -k 5 10' (repeatable)
  --min-runs N, --min-seconds S   passed to every eval (GradBench's defaults: 1 run, 1 s)
  --out FILE        the table (default: packages/bench/results/gradbench.md; the run's JSON beside it,
                    gradbench.json); --no-write: stdout only
  --render FILE     write the table from a run's JSON (nothing runs; --gradbench not needed)`;

function positiveNumber(flag: string, text: string, integer: boolean): number {
  const v = Number(text);
  if (text.trim() === "" || !Number.isFinite(v) || v < 0 || (integer && !Number.isInteger(v))) {
    throw new GradbenchUsageError(
      `pnpm gradbench: ${flag} ${JSON.stringify(text)} is not ${integer ? "an integer" : "a number"} ≥ 0. ` +
        `Example: ${flag} ${integer ? 3 : 0.5}`,
    );
  }
  return v;
}

/** The flags that take a value (`--flag VALUE` or `--flag=VALUE`). */
const VALUE_FLAGS: readonly string[] = [
  "--evals",
  "--gradbench",
  "--tools",
  "--relay",
  "--python",
  "--args",
  "--min-runs",
  "--min-seconds",
  "--out",
  "--render",
];

/** A comma-separated list, each entry one of `known`. */
function listOf<T extends string>(flag: string, text: string, known: readonly T[]): T[] {
  const items = text.split(",").map((s) => s.trim()).filter((s) => s !== "");
  const unknown = items.filter((s) => !(known as readonly string[]).includes(s));
  if (unknown.length > 0) {
    const named = unknown.map((s) => JSON.stringify(s)).join(", ");
    throw new GradbenchUsageError(`pnpm gradbench: ${flag} names ${named}; known: ${known.join(", ")}`);
  }
  if (items.length === 0) throw new GradbenchUsageError(`pnpm gradbench: ${flag} is empty; give a comma-separated list of ${known.join(", ")}`);
  return items as T[];
}

/**
 * The options of `argv` (the arguments after the script: a lone `--`, which pnpm passes
 * on, is skipped). Relative paths are resolved against `cwd`; `defaultOut` is the table's
 * path when neither --out nor --no-write is given.
 */
export function parseRunArgs(
  argv: readonly string[],
  context: { readonly cwd: string; readonly defaultOut: string },
): RunCommand {
  let evals: readonly string[] = ALL_EVALS;
  let gradbench: string | undefined;
  let tools: readonly OtherTool[] = [];
  let relay: string | undefined;
  let python: string | undefined;
  const evalArgs: Record<string, string[]> = {};
  let minRuns: number | undefined;
  let minSeconds: number | undefined;
  let out: string | undefined = context.defaultOut;
  let render: string | undefined;
  let noWrite = false;
  let outGiven = false;
  const path = (p: string) => (isAbsolute(p) ? p : resolve(context.cwd, p));
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--") continue;
    if (arg === "--no-write") {
      noWrite = true;
      continue;
    }
    if (arg === "--help" || arg === "-h") throw new GradbenchUsageError(USAGE);
    const eq = arg.indexOf("=");
    const flag = arg.startsWith("--") && eq > 0 ? arg.slice(0, eq) : arg;
    const takesValue = VALUE_FLAGS.includes(flag);
    if (!takesValue) throw new GradbenchUsageError(`pnpm gradbench: unknown argument ${JSON.stringify(arg)}.\n${USAGE}`);
    let value: string;
    if (flag !== arg) value = arg.slice(eq + 1);
    else {
      if (i + 1 >= argv.length) throw new GradbenchUsageError(`pnpm gradbench: ${flag} needs a value.\n${USAGE}`);
      value = argv[++i];
    }
    switch (flag) {
      case "--evals": {
        const chosen = listOf(flag, value, ALL_EVALS);
        evals = ALL_EVALS.filter((e) => chosen.includes(e));
        break;
      }
      case "--gradbench":
        gradbench = path(value);
        break;
      case "--tools":
        tools = OTHER_TOOLS.filter((t) => listOf(flag, value, OTHER_TOOLS).includes(t));
        break;
      case "--relay":
        relay = path(value);
        break;
      case "--python":
        python = value;
        break;
      case "--args": {
        const at = value.indexOf("=");
        const name = value.slice(0, Math.max(at, 0)).trim();
        if (at < 0 || !ALL_EVALS.includes(name)) {
          throw new GradbenchUsageError(
            `pnpm gradbench: --args ${JSON.stringify(value)} should be EVAL=FLAGS with EVAL one of ${ALL_EVALS.join(", ")}, ` +
              `e.g. --args 'gmm=-d 2 10 -k 5'`,
          );
        }
        evalArgs[name] = [...(evalArgs[name] ?? []), ...value.slice(at + 1).trim().split(/\s+/).filter((s) => s !== "")];
        break;
      }
      case "--min-runs":
        minRuns = positiveNumber(flag, value, true);
        break;
      case "--min-seconds":
        minSeconds = positiveNumber(flag, value, false);
        break;
      case "--out":
        out = path(value);
        outGiven = true;
        break;
      case "--render":
        render = path(value);
        break;
    }
  }
  // either one of them loses what the other asked for: the run's JSON, or a quiet run
  if (noWrite && outGiven) throw new GradbenchUsageError(`pnpm gradbench: --out and --no-write exclude each other: give one.\n${USAGE}`);
  if (noWrite) out = undefined;
  if (render !== undefined) return { kind: "render", json: render, out };
  if (gradbench === undefined) {
    throw new GradbenchUsageError(
      `pnpm gradbench: --gradbench PATH is required: the root of a checkout of github.com/gradbench/gradbench ` +
        `(its Python evals and its C++ manual tool, built there).\n${USAGE}`,
    );
  }
  return { kind: "run", evals, gradbench, tools, relay, python, evalArgs, minRuns, minSeconds, out };
}

/** The command-line flags of one eval's run.py: the sizes given for it, then --min-runs/--min-seconds. */
export function evalFlags(options: RunOptions, name: string): string[] {
  const flags = [...(options.evalArgs[name] ?? [])];
  if (options.minRuns !== undefined) flags.push("--min-runs", String(options.minRuns));
  if (options.minSeconds !== undefined) flags.push("--min-seconds", String(options.minSeconds));
  return flags;
}
