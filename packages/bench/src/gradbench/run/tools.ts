/**
 * @file The tools `pnpm gradbench` runs: wengert (this package's wengert-gradbench), and
 * GradBench's own `manual` (its C++ hand-written derivatives, through its cpp.py) and
 * `pytorch` (its Python tool) when the checkout can run them. A tool of GradBench runs an
 * eval only if its tools/NAME/evals.txt lists the eval without an expected failure.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { OtherTool } from "./args.js";
import type { Setup } from "./checkout.js";

export type ToolName = "wengert" | OtherTool;

/** The shell command that starts the tool (the relay runs it in the checkout's root), or why the tool cannot run. */
export type ToolPlan = { readonly kind: "run"; readonly command: string } | { readonly kind: "not run"; readonly reason: string };

/** A word for `sh -c`: single-quoted unless plain. */
export const shellWord = (s: string): string => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", `'\\''`)}'`);

/**
 * A GradBench tool's evals.txt: each line an eval, optionally followed by the outcome the
 * tool is known to have on it ("error", "timeout"); undefined for a listed eval without one.
 */
export function parseEvalsTxt(text: string): Map<string, string | undefined> {
  const out = new Map<string, string | undefined>();
  for (const line of text.split("\n")) {
    const [name, ...rest] = line.trim().split(/\s+/);
    if (name) out.set(name, rest.length > 0 ? rest.join(" ") : undefined);
  }
  return out;
}

/**
 * The environment the pytorch tool runs in: one thread, as GradBench's published PyTorch
 * figures were measured (float64, one thread) and as wengert and the C++ tool run. Left to
 * itself PyTorch starts a thread per core for its kernels, and a comparison of one core
 * against all of them says little about either library.
 */
export const PYTORCH_ENV: Readonly<Record<string, string>> = { OMP_NUM_THREADS: "1", MKL_NUM_THREADS: "1" };

/** `PYTORCH_ENV` as the words before a command in `sh -c` (the relay runs a tool's command through the shell). */
export const pytorchEnvWords = (): string =>
  Object.entries(PYTORCH_ENV)
    .map(([name, value]) => `${name}=${shellWord(value)}`)
    .join(" ");

const torchProbe = new Map<string, string | undefined>();

/** Why `python` cannot import torch (undefined: it can). Asked once per Python. */
function torchMissing(python: string): string | undefined {
  if (!torchProbe.has(python)) {
    const r = spawnSync(python, ["-c", "import torch"], { encoding: "utf8" });
    torchProbe.set(python, r.status === 0 ? undefined : (r.error?.message ?? r.stderr.trim().split("\n").pop() ?? `exit ${r.status}`));
  }
  return torchProbe.get(python);
}

/** How `tool` runs eval `name` in `setup`'s checkout; `wengertMain` is wengert-gradbench's main.js. */
export function planTool(tool: ToolName, setup: Setup, name: string, wengertMain: string): ToolPlan {
  if (tool === "wengert") return { kind: "run", command: `${shellWord(process.execPath)} ${shellWord(wengertMain)}` };
  const evalsTxt = join(setup.gradbench, "tools", tool, "evals.txt");
  const listed = existsSync(evalsTxt) ? parseEvalsTxt(readFileSync(evalsTxt, "utf8")) : new Map<string, string | undefined>();
  if (!listed.has(name)) return { kind: "not run", reason: `GradBench's ${tool} has no ${name} (tools/${tool}/evals.txt)` };
  const known = listed.get(name);
  if (known !== undefined) return { kind: "not run", reason: `GradBench's tools/${tool}/evals.txt expects "${known}" on ${name}` };
  const python = shellWord(setup.python);
  switch (tool) {
    case "manual":
      // cpp.py rebuilds the eval's program (make -B) when the eval defines its module
      if (!existsSync(join(setup.gradbench, "cpp/json.hpp"))) {
        return {
          kind: "not run",
          reason: "the checkout has no cpp/json.hpp, which GradBench's C++ tools include (cpp/Makefile fetches it)",
        };
      }
      return { kind: "run", command: `${python} python/gradbench/gradbench/cpp.py manual` };
    case "pytorch": {
      const why = torchMissing(setup.python);
      if (why !== undefined) return { kind: "not run", reason: `${setup.python} cannot import torch (${why}); on Debian: apt-get install python3-torch` };
      return { kind: "run", command: `${pytorchEnvWords()} ${python} python/gradbench/gradbench/tools/pytorch/run.py` };
    }
  }
}
