/**
 * @file The options every transformation takes (RdOptions), checked into the settings
 * of its trace.
 */
import { WengertError } from "../errors.js";
import { describe, showValue } from "../structure.js";
import { inheritedTies, TIE_MODES, type TieMode, type TraceSettings } from "../trace/tracer.js";

/** The options of `rd` and of every transformation that takes `f` (README "API", Options): checked, an unknown key an error. */
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

/** The ties mode `options` asks for: its own, or else the enclosing transformation's (inheritedTies). */
export const tiesOf = (options: RdOptions): TieMode => options.ties ?? inheritedTies();

/** How a trace is used, besides its options (api/tracing.ts TraceUse). */
export interface TraceRole {
  /** Its decisions are kept as guards (TraceSettings.replayable). */
  readonly replayable: boolean;
  /**
   * Ties of f's own are not reported by this trace: its term is evaluated elsewhere
   * (jit's replays, vmap's lanes), which reports them; transformations called inside f
   * still take options.ties.
   */
  readonly silent: boolean;
}

/**
 * The settings of a trace for `options` (checked: a bad option is a WengertError naming
 * it). Without options.ties, a transformation called inside another takes the enclosing
 * one's: `grad(x => grad(f, x), x0, { ties: "error" })` asks it of the inner grad too.
 */
export function settingsOf(caller: string, options: RdOptions, role: TraceRole): TraceSettings {
  checkOptionKeys(caller, options);
  const ties = tiesOf(options);
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
  return { ties: role.silent ? "ignore" : ties, tiesInside: ties, checkNaN: options.checkNaN === true, maxLength, replayable: role.replayable };
}
