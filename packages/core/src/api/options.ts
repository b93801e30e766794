/**
 * @file The options every transformation takes (RdOptions), checked into the settings
 * of its trace.
 */
import { WengertError } from "../errors.js";
import { describe, showValue } from "../structure.js";
import { TIE_MODES, type TieMode, type TraceSettings } from "../trace/tracer.js";

export interface RdOptions {
  /**
   * What to do when a predicate is decided at a tie or a kinked primitive is evaluated
   * at its kink while tracing (where the derivative is not defined): warn once per
   * call (default), throw a TieError, or say nothing.
   */
  readonly ties?: TieMode;
  /**
   * Throw a NaNError naming the first primitive whose result is NaN or infinite, in
   * f or in the derivative computation (default false).
   */
  readonly checkNaN?: boolean;
  /** Throw a TraceLengthError when the trace of f grows beyond this many instructions. */
  readonly maxTraceLength?: number;
}

/** The options of rd and every transformation (RdOptions). */


/** The options of rd and every transformation (RdOptions). */
export const RD_OPTIONS = ["ties", "checkNaN", "maxTraceLength"];

/**
 * That options is an object of the keys `known` only: a misspelt or mistyped option would
 * silently leave a check off (chekNaN, checkNaN: "yes").
 */
export function checkOptionKeys(caller: string, options: unknown, known: readonly string[] = RD_OPTIONS): void {
  if (typeof options !== "object" || options === null) {
    throw new WengertError(`${caller}: options is ${describe(options)}; expected an object such as { checkNaN: true }.`);
  }
  for (const k in options) {
    if (known.includes(k)) continue;
    throw new WengertError(`${caller}: options.${k} is not an option; the options are ${known.slice(0, -1).join(", ")} and ${known.at(-1)}.`);
  }
}

/** The settings of a trace for `options` (checked: a bad option is a WengertError naming it). */
export function settingsOf(caller: string, options: RdOptions, replayable: boolean): TraceSettings {
  checkOptionKeys(caller, options);
  const ties = options.ties ?? "warn";
  if (!TIE_MODES.includes(ties)) {
    throw new WengertError(`${caller}: options.ties is ${JSON.stringify(ties)}; expected one of ${TIE_MODES.map((m) => `"${m}"`).join(", ")}.`);
  }
  if (options.checkNaN !== undefined && typeof options.checkNaN !== "boolean") {
    throw new WengertError(`${caller}: options.checkNaN is ${showValue(options.checkNaN)}; expected true or false.`);
  }
  const maxLength = options.maxTraceLength ?? Infinity;
  if (typeof maxLength !== "number" || !(maxLength > 0)) {
    throw new WengertError(`${caller}: options.maxTraceLength is ${showValue(maxLength)}; expected a positive number.`);
  }
  // every settings object has the same fields in the same order: the tracer reads them per instruction
  return { ties, checkNaN: options.checkNaN === true, maxLength, replayable };
}
