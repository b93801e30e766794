/**
 * @file The command line of `pnpm bench`: its flags, parsed strictly, and its usage.
 *
 * Parsed before anything runs: `--help` prints the usage, and an unknown flag or a bad
 * value is an error naming it. Either way no workload starts (a typo such as `--quik`
 * used to start the full run, several minutes long).
 */

/** What a run was asked to do. */
export interface Flags {
  readonly quick: boolean;
  /** Workload ids or families (and GB, SCAN), or undefined for all. */
  readonly only: readonly string[] | undefined;
  readonly memory: boolean;
  readonly write: boolean;
  /** Only the cost of one tensor operation (op-cost.ts). */
  readonly ops: boolean;
  /** Internal: the child process runs this one part (main.ts). */
  readonly part: string | undefined;
}

export type Parsed = { readonly kind: "run"; readonly flags: Flags } | { readonly kind: "help" } | { readonly kind: "error"; readonly message: string };

/**
 * How long a run takes on this project's machine (2 cores), as measured: the full run
 * took 316 s for the committed results (results/latest.md), and 410 s on a machine
 * shared with other work (2026-11-26); --quick took 45–60 s. README.md and packages/bench/README.md
 * say the same (test/docs-agree.test.ts).
 */
export const RUN_TIME = { full: "about 8–12 minutes", quick: "about a minute" } as const;

/** The parts a run may be limited to: workload ids, their families, GB and SCAN; and the GradBench evals, each as GB:name. */
export interface Names {
  readonly ids: readonly string[];
  readonly families: readonly string[];
  readonly evals?: readonly string[];
}

/** The evals named by --only's GB:name entries, or undefined for all of them (GB alone, or no --only). */
export function evalsOf(only: readonly string[] | undefined): string[] | undefined {
  const named = (only ?? []).filter((s) => s.startsWith("GB:")).map((s) => s.slice(3));
  return named.length === 0 || only!.includes("GB") ? undefined : named;
}

const VALUED = ["--only", "--part"] as const;

/** `args` (after the script's name) read strictly. */
export function parseFlags(args: readonly string[], names: Names): Parsed {
  let quick = false;
  let memory = true;
  let write = true;
  let ops = false;
  let only: string[] | undefined;
  let part: string | undefined;
  const known = knownNames(names);
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const eq = arg.indexOf("=");
    const flag = eq > 0 && arg.startsWith("--") ? arg.slice(0, eq) : arg;
    const inline = eq > 0 && arg.startsWith("--") ? arg.slice(eq + 1) : undefined;
    if ((VALUED as readonly string[]).includes(flag)) {
      const value = inline ?? args[++i];
      if (value === undefined || value === "" || (inline === undefined && value.startsWith("-"))) {
        return error(`${flag} needs a value (${flag === "--only" ? "e.g. --only W1,W5" : "a part's name"})`);
      }
      if (flag === "--only") {
        const list = value.split(",").map((s) => s.trim());
        const bad = list.find((s) => !known.includes(s));
        if (bad !== undefined) return error(`--only: ${bad === "" ? "an empty name" : `no workload "${bad}"`}; expected some of ${known.join(", ")}`);
        only = [...(only ?? []), ...list];
      } else {
        const knownParts = [...names.ids, "memory", ...SECTIONS];
        if (!knownParts.includes(value)) return error(`--part: no part "${value}" (an internal flag: the parent runs each part with it)`);
        part = value;
      }
      continue;
    }
    if (inline !== undefined) return error(`${flag} takes no value (got ${arg})`);
    switch (arg) {
      case "--":
        // what `pnpm bench -- --ops` passes on before the flags
        break;
      case "-h":
      case "--help":
        return { kind: "help" };
      case "--quick":
        quick = true;
        break;
      case "--no-memory":
        memory = false;
        break;
      case "--no-write":
        write = false;
        break;
      case "--ops":
        ops = true;
        break;
      default: {
        const hint = known.includes(arg) ? ` (to run only it: --only ${arg})` : "";
        return error(arg.startsWith("-") ? `unknown flag ${arg}` : `unexpected argument "${arg}"${hint}`);
      }
    }
  }
  return { kind: "run", flags: { quick, only, memory, write, ops, part } };
}

/** The sections after the workloads: the GradBench evals, scan beside the loops written out (scan-bench.ts), the tape floor (tape-floor.ts). */
const SECTIONS = ["GB", "SCAN", "FLOOR"];

/** Every name --only takes, once each (a family of one workload is also its id). */
const knownNames = (names: Names): string[] => [...new Set([...names.families, ...names.ids, ...SECTIONS, ...(names.evals ?? []).map((e) => `GB:${e}`)])];

const error = (message: string): Parsed => ({ kind: "error", message: `bench: ${message}. Run pnpm bench --help for the flags.` });

/** What the last full run took, as results/latest.json records it. */
export interface LastRun {
  readonly seconds: number;
  readonly date: string;
}

/** The text of `--help`. */
export function usage(names: Names, last: LastRun | undefined): string {
  const recorded = last === undefined ? "" : ` (the one in\nresults/latest.json, of ${last.date.slice(0, 10)}, took ${Math.round(last.seconds)} s)`;
  const sizes = names.ids.filter((id) => !names.families.includes(id));
  return `Usage: pnpm bench [--quick] [--only LIST] [--no-memory] [--no-write] [--ops] [-h | --help]

Times the workloads W1–W6 (packages/bench/WORKLOADS.md), W4's dense Hessian and W7
(packages/bench/README.md) for the plain-JS primal, a hand-written gradient, wengert
(grad, and compileGrad or jit), TF.js (cpu, wasm) and jax-js
(eager, jit), each workload in a process of its own; then the memory probe,
wengert's GradBench evals, the scan section and the tape floor. Prints the results
table on stdout and writes packages/bench/results/latest.{md,json,svg}. Progress ([k/N],
the time elapsed) goes to stderr.

Run time on a 2-core machine: a full run takes ${RUN_TIME.full}${recorded},
--quick ${RUN_TIME.quick}.

Flags:
  --quick          for development: fewer rounds, shorter budgets (peers slower than
                   0.5 s per call are skipped)
  --only LIST      only these, comma-separated: workloads ${names.families.join(", ")},
                   one size of one: ${sizes.join(", ")},
                   GB (the GradBench evals; GB:ht only ht's), SCAN (scan
                   beside the loop written out, each row in a process of its
                   own), FLOOR (W1's and W3's uncached gradients beside a minimal tape).
                   Also --only=LIST
  --no-memory      skip the memory probe
  --no-write       print the table only; leave results/ as it is
  --ops            only the cost of one tensor operation at sizes 1, 14, 256, 10⁴
                   (untraced, traced, grad, compileGrad): results/ops.md
  -h, --help       print this and exit

Environment: BENCH_DEBUG=1 timestamps the progress lines and logs each benchmark.js run.
`;
}
