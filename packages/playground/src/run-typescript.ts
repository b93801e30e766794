/**
 * @file TypeScript that uses wengert's API, run in the worker: Sucrase strips its types
 * (it does not check them) and turns its imports into `require` calls; the code then runs
 * as a function whose `require` gives @wengert/core and whose `console` writes to the page.
 * Sucrase keeps line numbers, so an error's line is the user's.
 */
import * as wengert from "@wengert/core";
import { transform } from "sucrase";
import type { Reply } from "./protocol.js";

type Line = { stream: "log" | "warn" | "error"; text: string };

/** A value as a line of output: strings as they are, terms printed, numbers in full. */
export function show(v: unknown, seen = new Set<unknown>()): string {
  if (typeof v === "string") return v;
  if (v instanceof wengert.TraceTerm) return String(v);
  if (typeof v === "number" || typeof v === "boolean" || typeof v === "bigint" || v === undefined || v === null) return String(v);
  if (typeof v === "function") return `[function ${v.name || "(anonymous)"}]`;
  if (v instanceof Error) return `${v.name}: ${v.message}`;
  if (seen.has(v)) return "[circular]";
  seen.add(v);
  if (Array.isArray(v) || ArrayBuffer.isView(v)) return `[${Array.from(v as ArrayLike<unknown>, (x) => show(x, seen)).join(", ")}]`;
  const ownToString = typeof v === "object" && v !== null && typeof (v as { toString?: unknown }).toString === "function";
  if (ownToString && (v as object).toString !== Object.prototype.toString) return String(v);
  return `{ ${Object.entries(v as object).map(([k, x]) => `${k}: ${show(x, seen)}`).join(", ")} }`;
}

/** The line of the user's code an error was thrown at, read from its stack (new Function adds two lines in front). */
function lineOf(e: unknown): string {
  const m = /<anonymous>:(\d+):(\d+)/.exec(String((e as Error)?.stack ?? ""));
  return m === null ? "" : ` (line ${Number(m[1]) - 2})`;
}

export function runTypeScript(request: { id: number; source: string }): Reply {
  const output: Line[] = [];
  const write = (stream: Line["stream"]) => (...args: unknown[]) => void output.push({ stream, text: args.map((a) => show(a)).join(" ") });
  const console = { log: write("log"), info: write("log"), warn: write("warn"), error: write("error") };
  const require = (name: string): unknown => {
    if (name === "@wengert/core") return wengert;
    throw new Error(`only "@wengert/core" can be imported here, not "${name}"`);
  };
  let code: string;
  try {
    code = transform(request.source, { transforms: ["typescript", "imports"], disableESTransforms: true }).code;
  } catch (e) {
    output.push({ stream: "error", text: `syntax error: ${(e as Error).message}` });
    return { kind: "typescript", id: request.id, output };
  }
  // wengert's own warnings (a tie met by grad) go to the page too
  const warn = globalThis.console.warn;
  globalThis.console.warn = console.warn;
  try {
    new Function("require", "console", "exports", "module", code)(require, console, {}, { exports: {} });
  } catch (e) {
    output.push({ stream: "error", text: `${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}${lineOf(e)}` });
  } finally {
    globalThis.console.warn = warn;
  }
  return { kind: "typescript", id: request.id, output };
}
