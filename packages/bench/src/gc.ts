/** @file A garbage collector to call: `global.gc` under --expose-gc, else exposed at run time. */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

export function getGc(): () => void {
  const g = (globalThis as { gc?: () => void }).gc;
  if (typeof g === "function") return g;
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
}
