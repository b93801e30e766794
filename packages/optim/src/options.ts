/**
 * @file Checking an options object: a misspelt key (`beta1` for `b1`) or a value of the
 * wrong type would otherwise be ignored silently and the optimizer run on defaults.
 */
import { OptimOptionsError } from "./errors.js";

/** What an option may hold. */
export type OptionKind = "number" | "boolean" | "function" | "string" | "object" | "number or function" | "number or object";

const fits = (kind: OptionKind, v: unknown): boolean => {
  switch (kind) {
    case "number":
      return typeof v === "number" && !Number.isNaN(v);
    case "boolean":
    case "function":
    case "string":
      return typeof v === kind;
    case "object":
      return typeof v === "object" && v !== null;
    case "number or function":
      return (typeof v === "number" && !Number.isNaN(v)) || typeof v === "function";
    case "number or object":
      return (typeof v === "number" && !Number.isNaN(v)) || (typeof v === "object" && v !== null);
    default:
      return assertNever(kind);
  }
};

function assertNever(x: never): never {
  throw new Error(`unexpected ${String(x)}`);
}

/** That `options` is undefined or an object of the keys of `spec`, each of its kind (undefined allowed). */
export function checkOptions(caller: string, options: unknown, spec: { readonly [key: string]: OptionKind }): void {
  if (options === undefined) return;
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new OptimOptionsError(`${caller}: options is ${JSON.stringify(options)}; pass an object of ${Object.keys(spec).join(", ")}.`);
  }
  for (const [key, v] of Object.entries(options)) {
    const kind = spec[key];
    if (kind === undefined) {
      throw new OptimOptionsError(`${caller}: unknown option ${JSON.stringify(key)}; the options are ${Object.keys(spec).join(", ")}.`);
    }
    if (v !== undefined && !fits(kind, v)) {
      throw new OptimOptionsError(`${caller}: option ${key} is ${typeof v === "string" ? JSON.stringify(v) : String(v)}; expected a ${kind}.`);
    }
  }
}

/** That a numeric argument lies in [lo, hi] (or (lo, hi] with `open`). */
export function checkRange(caller: string, name: string, v: number, lo: number, hi: number, open = false): void {
  if (!(typeof v === "number" && (open ? v > lo : v >= lo) && v <= hi)) {
    throw new OptimOptionsError(`${caller}: ${name} is ${String(v)}; expected a number in ${open ? "(" : "["}${lo}, ${hi}].`);
  }
}
