/**
 * @file Where the user called wengert from, for error messages.
 *
 * The first stack frame outside wengert's own files (this package's source or build,
 * and @wengert/ops) is the user's call.
 */
import { fileURLToPath } from "node:url";

const CORE = fileURLToPath(new URL("../", import.meta.url));

function ours(frame: string): boolean {
  return frame.includes(CORE) || /[\\/](@wengert[\\/]ops|packages[\\/]ops)[\\/]/.test(frame) || frame.includes("node:internal") || frame.includes("(native)");
}

/** `, at file:line:column` for the user's call, or "" when it cannot be told. */
export function atCallSite(): string {
  const site = callSite();
  return site ? `, at ${site}` : "";
}

/** `file:line:column` of the user's call, or "" when it cannot be told. */
export function callSite(): string {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 64;
  const stack = new Error().stack ?? "";
  Error.stackTraceLimit = limit;
  const frames = stack.split("\n").slice(1).map((l) => l.trim());
  // frames with a location: "at f (file:1:2)" or "at file:1:2"
  const user = frames.find((f) => f.startsWith("at ") && /:\d+:\d+\)?$/.test(f) && !ours(f));
  if (user === undefined) return "";
  const m = /\(([^()]*)\)$/.exec(user) ?? /^at (.*)$/.exec(user);
  return m ? m[1].replace(/^file:\/\//, "") : user;
}
