/**
 * @file One eval against one tool, through the relay: `driver.py --eval … --tool … -o LOG`
 * in the checkout's root (GradBench's evals read their data relative to it), with
 * PYTHONPATH at the checkout's Python package. The relay's progress lines go to stderr
 * as they come; its log is read back (log.ts) into the evaluations.
 */
import { spawn } from "node:child_process";
import { createReadStream, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { createInterface } from "node:readline";
import type { Setup } from "./checkout.js";
import { parseRelayLog, type RelayLog } from "./log.js";
import { shellWord } from "./tools.js";

export interface RelayRun extends RelayLog {
  /** The relay's exit code (1 when anything was invalid or failed; null if killed). */
  readonly exitCode: number | null;
  /** The last lines the eval, the tool or the relay wrote to stderr (for a run that broke off). */
  readonly stderrTail: readonly string[];
  readonly seconds: number;
}

export interface RelayRequest {
  readonly eval: string;
  /** The eval's run.py flags. */
  readonly flags: readonly string[];
  /** The tool's shell command. */
  readonly tool: string;
  /** Prefix of the progress lines on stderr, e.g. "gmm/wengert". */
  readonly label: string;
}

const TAIL = 20;

export async function runRelay(setup: Setup, request: RelayRequest): Promise<RelayRun> {
  const dir = mkdtempSync(join(tmpdir(), "wengert-gradbench-"));
  const logFile = join(dir, "log.jsonl");
  const evalCommand = [setup.python, join(setup.relay, "run_eval.py"), request.eval, ...request.flags].map(shellWord).join(" ");
  const started = performance.now();
  try {
    const pythonPath = join(setup.gradbench, "python/gradbench");
    const child = spawn(setup.python, [join(setup.relay, "driver.py"), "--eval", evalCommand, "--tool", request.tool, "-o", logFile], {
      cwd: setup.gradbench,
      env: { ...process.env, PYTHONPATH: process.env.PYTHONPATH ? `${pythonPath}${delimiter}${process.env.PYTHONPATH}` : pythonPath },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const tail: string[] = [];
    const keep = (line: string) => {
      tail.push(line);
      if (tail.length > TAIL) tail.shift();
    };
    createInterface({ input: child.stdout }).on("line", (line) => process.stderr.write(`  ${request.label}  ${line}\n`));
    createInterface({ input: child.stderr }).on("line", (line) => {
      keep(line);
      process.stderr.write(`  ${request.label} !${line}\n`);
    });
    const exitCode = await new Promise<number | null>((resolve, reject) => {
      child.on("error", reject);
      child.on("close", (code) => resolve(code));
    });
    let log: RelayLog = { evaluations: [] };
    try {
      log = await parseRelayLog(createInterface({ input: createReadStream(logFile), crlfDelay: Infinity }));
    } catch (e) {
      keep(`(the relay's log could not be read: ${e instanceof Error ? e.message : String(e)})`);
    }
    return { ...log, exitCode, stderrTail: tail, seconds: (performance.now() - started) / 1000 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
