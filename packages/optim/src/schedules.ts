/**
 * @file Learning-rate schedules: functions of the update count (0 at the first update),
 * as optax's (optax/schedules/_schedule.py), to pass wherever a learning rate goes.
 */
import { OptimOptionsError } from "./errors.js";
import { checkOptions } from "./options.js";
import type { Schedule } from "./transform.js";

const required = (caller: string, options: object, keys: readonly string[]): void => {
  for (const key of keys) {
    if ((options as Record<string, unknown>)[key] === undefined) {
      throw new OptimOptionsError(`${caller}: option ${key} is required; pass { ${keys.join(", ")} }.`);
    }
  }
};

/** Always `value`. */
export function constantSchedule(value: number): Schedule {
  return () => value;
}

export interface PolynomialScheduleOptions {
  readonly initValue: number;
  readonly endValue: number;
  /** The exponent (1: linear). */
  readonly power: number;
  /** Steps from initValue to endValue; ≤ 0 gives a constant initValue. */
  readonly transitionSteps: number;
  /** Steps at initValue before the transition (default 0). */
  readonly transitionBegin?: number;
}

/** (init − end)·(1 − t/T)^power + end over the transition, t clipped to [0, T]. */
export function polynomialSchedule(options: PolynomialScheduleOptions): Schedule {
  checkOptions("polynomialSchedule", options, {
    initValue: "number",
    endValue: "number",
    power: "number",
    transitionSteps: "number",
    transitionBegin: "number",
  });
  required("polynomialSchedule", options, ["initValue", "endValue", "power", "transitionSteps"]);
  const { initValue, endValue, power, transitionSteps } = options;
  if (transitionSteps <= 0) return () => initValue;
  const begin = Math.max(0, options.transitionBegin ?? 0);
  return (count) => {
    const t = Math.min(Math.max(count - begin, 0), transitionSteps);
    const frac = 1 - t / transitionSteps;
    return (initValue - endValue) * frac ** power + endValue;
  };
}

/** From initValue to endValue linearly over transitionSteps. */
export function linearSchedule(options: Omit<PolynomialScheduleOptions, "power">): Schedule {
  checkOptions("linearSchedule", options, { initValue: "number", endValue: "number", transitionSteps: "number", transitionBegin: "number" });
  return polynomialSchedule({ ...options, power: 1 });
}

export interface ExponentialDecayOptions {
  readonly initValue: number;
  /** Steps over which the value is multiplied by decayRate. */
  readonly transitionSteps: number;
  readonly decayRate: number;
  /** Steps at initValue first (default 0). */
  readonly transitionBegin?: number;
  /** Decay in whole transitions only (default false). */
  readonly staircase?: boolean;
  /** A bound the value does not pass (a floor when decaying). */
  readonly endValue?: number;
}

/** initValue · decayRate^((count − begin)/transitionSteps) after `transitionBegin`. */
export function exponentialDecay(options: ExponentialDecayOptions): Schedule {
  checkOptions("exponentialDecay", options, {
    initValue: "number", transitionSteps: "number", decayRate: "number", transitionBegin: "number", staircase: "boolean", endValue: "number",
  });
  required("exponentialDecay", options, ["initValue", "transitionSteps", "decayRate"]);
  const { initValue, transitionSteps, decayRate, staircase = false, endValue } = options;
  if (transitionSteps <= 0 || decayRate === 0) return () => initValue;
  const begin = Math.max(0, options.transitionBegin ?? 0);
  const bound = endValue === undefined ? (v: number) => v : decayRate < 1 ? (v: number) => Math.max(v, endValue) : (v: number) => Math.min(v, endValue);
  return (count) => {
    const decreased = count - begin;
    const p = staircase ? Math.floor(decreased / transitionSteps) : decreased / transitionSteps;
    return bound(decreased <= 0 ? initValue : initValue * decayRate ** p);
  };
}

export interface CosineDecayOptions {
  readonly initValue: number;
  /** Steps to decay over (> 0); the value stays at alpha·initValue after. */
  readonly decaySteps: number;
  /** The final value as a fraction of initValue (default 0). */
  readonly alpha?: number;
  /** Exponent of the cosine factor (default 1). */
  readonly exponent?: number;
}

/** initValue · ((1 − α)·(½(1 + cos(π t/T)))^exponent + α), t = min(count, T) (Loshchilov & Hutter 2017). */
export function cosineDecaySchedule(options: CosineDecayOptions): Schedule {
  checkOptions("cosineDecaySchedule", options, { initValue: "number", decaySteps: "number", alpha: "number", exponent: "number" });
  required("cosineDecaySchedule", options, ["initValue", "decaySteps"]);
  const { initValue, decaySteps, alpha = 0, exponent = 1 } = options;
  if (!(decaySteps > 0)) throw new OptimOptionsError(`cosineDecaySchedule: decaySteps is ${decaySteps}; it must be positive.`);
  return (count) => {
    const t = Math.min(count, decaySteps);
    const cosine = 0.5 * (1 + Math.cos((Math.PI * t) / decaySteps));
    return initValue * ((1 - alpha) * cosine ** exponent + alpha);
  };
}

export interface WarmupCosineDecayOptions {
  readonly initValue: number;
  readonly peakValue: number;
  /** Steps of linear warmup from initValue to peakValue. */
  readonly warmupSteps: number;
  /** Steps in all, warmup included. */
  readonly decaySteps: number;
  /** The value at the end (default 0). */
  readonly endValue?: number;
  readonly exponent?: number;
}

/** Linear warmup to peakValue, then cosine decay to endValue (optax.warmup_cosine_decay_schedule). */
export function warmupCosineDecaySchedule(options: WarmupCosineDecayOptions): Schedule {
  checkOptions("warmupCosineDecaySchedule", options, {
    initValue: "number", peakValue: "number", warmupSteps: "number", decaySteps: "number", endValue: "number", exponent: "number",
  });
  required("warmupCosineDecaySchedule", options, ["initValue", "peakValue", "warmupSteps", "decaySteps"]);
  const { initValue, peakValue, warmupSteps, decaySteps, endValue = 0, exponent = 1 } = options;
  const alpha = peakValue === 0 ? 0 : endValue / peakValue;
  return joinSchedules(
    [
      linearSchedule({ initValue, endValue: peakValue, transitionSteps: warmupSteps }),
      cosineDecaySchedule({ initValue: peakValue, decaySteps: decaySteps - warmupSteps, alpha, exponent }),
    ],
    [warmupSteps],
  );
}

/** initValue, multiplied by scales[b] from each boundary b on (a record from boundary to scale). */
export function piecewiseConstantSchedule(initValue: number, boundariesAndScales: { readonly [boundary: number]: number } = {}): Schedule {
  const steps = Object.entries(boundariesAndScales)
    .map(([b, s]) => [Number(b), s] as const)
    .sort((a, b) => a[0] - b[0]);
  for (const [b, s] of steps) {
    if (!(s >= 0)) throw new OptimOptionsError(`piecewiseConstantSchedule: the scale at ${b} is ${s}; scales must be non-negative.`);
  }
  return (count) => {
    let v = initValue;
    for (const [b, s] of steps) if (count >= b) v *= s;
    return v;
  };
}

/** schedules[0] before boundaries[0], then schedules[i + 1] counted from boundaries[i] (optax.join_schedules). */
export function joinSchedules(schedules: readonly Schedule[], boundaries: readonly number[]): Schedule {
  if (schedules.length !== boundaries.length + 1) {
    throw new OptimOptionsError(`joinSchedules: ${schedules.length} schedules and ${boundaries.length} boundaries; pass one boundary fewer than schedules.`);
  }
  return (count) => {
    let out = schedules[0](count);
    boundaries.forEach((b, i) => {
      if (count >= b) out = schedules[i + 1](count - b);
    });
    return out;
  };
}
