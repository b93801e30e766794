#!/usr/bin/env node
/**
 * @file `wengert`: run, evaluate or type-check programs of the paper's language.
 */
import { readFileSync } from "node:fs";
import { WengertError } from "../errors.js";
import { check, parse, runProgram, showRdTerm, showType, showValue } from "../lang/index.js";
import { TIE_MODES, type TieMode } from "../trace/tracer.js";

const USAGE = `usage:
  wengert run FILE [options]     evaluate the program in FILE and print its value and type
  wengert eval 'TERM' [options]  evaluate a term given on the command line
  wengert check FILE             type-check FILE only
options:
  --trace           print the trace term of each outermost rd
  --derivative      print the derivative term of each outermost rd
  --max-steps N     evaluation steps allowed before giving up (default 10000000)
  --ties MODE       warn (default), error or ignore: predicates decided at a tie
the language: docs/language.md`;

class UsageError extends WengertError {}

function main(argv: string[]): number {
  const [command, ...rest] = argv;
  if (command === undefined || command === "--help" || command === "-h" || command === "help") {
    console.log(USAGE);
    return command === undefined ? 2 : 0;
  }
  let trace = false;
  let derivative = false;
  let maxSteps: number | undefined;
  let ties: TieMode = "warn";
  const positional: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i];
    if (a === "--trace") trace = true;
    else if (a === "--derivative") derivative = true;
    else if (a === "--max-steps") {
      maxSteps = Number(rest[++i]);
      if (!Number.isInteger(maxSteps) || maxSteps <= 0) throw new UsageError(`--max-steps needs a positive integer, got ${rest[i] ?? "nothing"}`);
    } else if (a === "--ties") {
      ties = rest[++i] as TieMode;
      if (!TIE_MODES.includes(ties)) throw new UsageError(`--ties needs one of ${TIE_MODES.join(", ")}, got ${rest[i] ?? "nothing"}`);
    } else if (a.startsWith("--")) throw new UsageError(`unknown option ${a}`);
    else positional.push(a);
  }
  if (positional.length !== 1) throw new UsageError(`${command} takes exactly one ${command === "eval" ? "term" : "file"}`);
  const [arg] = positional;

  const read = (file: string): string => {
    try {
      return readFileSync(file, "utf8");
    } catch (e) {
      throw new UsageError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
    }
  };

  switch (command) {
    case "check": {
      const checked = check(parse(read(arg), arg), arg);
      console.log(`${arg}: well typed, of type ${showType(checked.type)}`);
      return 0;
    }
    case "run":
    case "eval": {
      const source = command === "run" ? read(arg) : arg;
      const file = command === "run" ? arg : "<eval>";
      const result = runProgram(source, {
        file,
        maxSteps,
        ties,
        onRd: trace || derivative
          ? (pos, t, d) => {
              if (trace) console.log(showRdTerm("trace", file, pos, t));
              if (derivative) console.log(showRdTerm("derivative", file, pos, d));
            }
          : undefined,
      });
      console.log(`${showValue(result.value)} : ${result.type}`);
      return 0;
    }
    default:
      throw new UsageError(`unknown command ${command}\n${USAGE}`);
  }
}

try {
  process.exitCode = main(process.argv.slice(2));
} catch (e) {
  if (e instanceof WengertError) {
    console.error(`wengert: ${e.message}${e instanceof UsageError && !e.message.includes("usage:") ? " (wengert --help for usage)" : ""}`);
    process.exitCode = e instanceof UsageError ? 2 : 1;
  } else if (e instanceof RangeError && /call stack/.test(e.message)) {
    // what runs on the host's stack: the parser, over the source's nesting
    console.error(`wengert: the JavaScript stack overflowed (${e.message}): a source nested thousands of brackets deep? node --stack-size=N raises the limit.`);
    process.exitCode = 3;
  } else {
    throw e;
  }
}
