/**
 * @file What `pnpm gradbench` needs before it runs anything, checked with messages that
 * say what to do: a GradBench checkout, the relay (driver.py and run_eval.py: they stand
 * in for GradBench's Rust CLI and adapt its evals to Debian's pydantic 1), a Python with
 * the evals' packages; and, per eval, what its run.py needs from the checkout (GradBench's
 * C++ manual tool, built, for the expected answers; its data files).
 *
 * Nothing of GradBench is built or fetched here: the checkout is the user's.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { evalFlags, type RunOptions } from "./args.js";
import { GradbenchSetupError } from "./errors.js";

export interface Setup {
  /** The checkout's root. */
  readonly gradbench: string;
  /** The relay's directory (driver.py, run_eval.py). */
  readonly relay: string;
  readonly python: string;
  /** The checkout's commit (`git rev-parse HEAD`), or "unknown". */
  readonly commit: string;
  /** Tracked files of the checkout that differ from its commit (`git status`), as "XY path". */
  readonly changed: readonly string[];
}

/** How one eval will run: its run.py's flags and what the table should say about them; or why it cannot. */
export type EvalPlan =
  | { readonly kind: "run"; readonly flags: readonly string[]; readonly notes: readonly string[] }
  | { readonly kind: "not run"; readonly reason: string };

const evalDir = (gradbench: string, name: string) => join(gradbench, "python/gradbench/gradbench/evals", name);

/** The relay's directory: `relay` if given, else shared/gradbench in the repository's parent directories. */
export function findRelay(relay: string | undefined, repoRoot: string): string {
  const has = (dir: string) => existsSync(join(dir, "driver.py")) && existsSync(join(dir, "run_eval.py"));
  if (relay !== undefined) {
    if (!has(relay)) {
      throw new GradbenchSetupError(
        `pnpm gradbench: --relay ${relay} has no driver.py and run_eval.py. ` +
          `Pass the directory that holds both ` +
          `(the relay between GradBench's evals and a tool; shared/gradbench in this project's workspace).`,
      );
    }
    return relay;
  }
  const tried: string[] = [];
  for (let dir = dirname(repoRoot); ; dir = dirname(dir)) {
    const candidate = join(dir, "shared", "gradbench");
    tried.push(candidate);
    if (has(candidate)) return candidate;
    if (dirname(dir) === dir) break;
  }
  throw new GradbenchSetupError(
    `pnpm gradbench: no relay found (driver.py and run_eval.py: they start a GradBench eval and a tool ` +
      `and pass the messages between them, in place of GradBench's Rust CLI). ` +
      `Looked in ${tried.join(", ")}. Pass --relay DIR.`,
  );
}

function git(gradbench: string, args: readonly string[]): string | undefined {
  const r = spawnSync("git", ["-C", gradbench, ...args], { encoding: "utf8" });
  return r.status === 0 ? r.stdout : undefined;
}

/** The whole setup, or a {@link GradbenchSetupError} naming the first thing missing. */
export function checkSetup(options: RunOptions, repoRoot: string): Setup {
  const { gradbench } = options;
  if (!existsSync(gradbench)) {
    throw new GradbenchSetupError(
      `pnpm gradbench: --gradbench ${gradbench} does not exist. Clone github.com/gradbench/gradbench and pass its root.`,
    );
  }
  const missing = options.evals.filter((e) => !existsSync(join(evalDir(gradbench, e), "run.py")));
  if (missing.length > 0) {
    throw new GradbenchSetupError(
      `pnpm gradbench: ${gradbench} is not a GradBench checkout with the evals asked for: ` +
        `no python/gradbench/gradbench/evals/{${missing.join(",")}}/run.py. ` +
        `Pass the root of a clone of github.com/gradbench/gradbench.`,
    );
  }
  const relay = findRelay(options.relay, repoRoot);
  const python = options.python ?? (existsSync("/usr/bin/python3") ? "/usr/bin/python3" : "python3");
  const probe = spawnSync(python, ["-c", "import numpy, scipy, pydantic, dataclasses_json"], { encoding: "utf8" });
  if (probe.status !== 0) {
    const why = probe.error !== undefined ? probe.error.message : (probe.stderr.trim().split("\n").pop() ?? "");
    throw new GradbenchSetupError(
      `pnpm gradbench: ${python} cannot run GradBench's evals (${why}). ` +
        `They need numpy, scipy, pydantic and dataclasses-json: ` +
        `on Debian, apt-get install python3-numpy python3-scipy python3-pydantic python3-dataclasses-json; or pass --python EXE.`,
    );
  }
  const commit = git(gradbench, ["rev-parse", "HEAD"])?.trim() ?? "unknown";
  const changed = (git(gradbench, ["status", "--porcelain", "--untracked-files=no"]) ?? "").split("\n").filter((l) => l.trim() !== "");
  return { gradbench, relay, python, commit, changed };
}

/** Whether an eval checks its answers against GradBench's C++ manual tool (its run.py calls it). */
export function validatesWithManual(gradbench: string, name: string): boolean {
  return /tool="manual"/.test(readFileSync(join(evalDir(gradbench, name), "run.py"), "utf8"));
}

/** The hand files `hand{i}_*.txt` present in one of ht's data directories, by i. */
function handNumbers(dir: string): Set<number> {
  if (!existsSync(dir)) return new Set();
  return new Set(readdirSync(dir).map((f) => /^hand(\d+)_.*\.txt$/.exec(f)).filter((m) => m !== null).map((m) => Number(m[1])));
}

/**
 * How `name` runs: its flags; or why it cannot. It cannot when it validates against the
 * manual tool and that is not built, or when its data is absent (lstm's text). ht's run.py
 * stops at the first absent hand file of its default range (1–12 of complicated_big):
 * unless the user gave ht's flags, the range ends at the last present one, and the note says so.
 */
export function planEval(setup: Setup, options: RunOptions, name: string): EvalPlan {
  const { gradbench } = setup;
  if (validatesWithManual(gradbench, name) && !existsSync(join(gradbench, "tools/manual/bin", name))) {
    return {
      kind: "not run",
      reason:
        `its expected answers come from GradBench's C++ manual tool, not built in the checkout (no tools/manual/bin/${name}): ` +
        `build it as tools/manual/README.md says (make -C cpp, make -C tools/manual)`,
    };
  }
  const flags = evalFlags(options, name);
  const notes: string[] = [];
  if (name === "lstm" && !existsSync(join(gradbench, "evals/lstm/data/lstm_full.txt"))) {
    return {
      kind: "not run",
      reason:
        "evals/lstm/data/lstm_full.txt (the text whose characters are the sequence) is absent from the checkout; " +
        "a copy whose blob is missing lacks it. " +
        "Any UTF-8 text of at least 8192 characters there gives inputs of the same shapes",
    };
  }
  if (name === "ht" && options.evalArgs.ht === undefined) {
    const present = handNumbers(join(gradbench, "evals/ht/data/complicated_big"));
    let last = 0;
    while (last < 12 && present.has(last + 1)) last++;
    if (last === 0) return { kind: "not run", reason: "evals/ht/data/complicated_big has no hand1_*.txt" };
    if (last < 12) {
      flags.unshift("--max", String(last));
      notes.push(`ht: hand${last + 1} is absent from the checkout's evals/ht/data/complicated_big; run with --max ${last}`);
    }
  }
  return { kind: "run", flags, notes };
}
