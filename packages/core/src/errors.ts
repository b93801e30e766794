/**
 * @file Every error wengert raises on a user's mistake: what, where, and the fix.
 */

/** The class of every error wengert raises on a user's mistake; its name is the subclass's. */
export class WengertError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/**
 * An input `x` (or a seed) holds something that is not a number, `[]`, array or plain
 * object; or a tensor the user holds cannot be read (an ndarray of another dtype, or
 * one whose shape, strides and offset reach past its data).
 */
export class InputTypeError extends WengertError {}

/** The seed's structure differs from the structure of `f(x)`. */
export class SeedMismatchError extends WengertError {}

/** `f` returned something that is not a real, `[]`, array or plain object of them. */
export class OutputTypeError extends WengertError {}

/** A traced value was used after the `rd` call that traced it had returned. */
export class ClosedTraceError extends WengertError {}

/** A JavaScript operator (`*`, `<`, `+`…) was applied to a traced value. */
export class TracedOperatorError extends WengertError {}

/**
 * A predicate was decided at a tie, or a kinked primitive evaluated at its kink,
 * with `options.ties = "error"`: the derivative is not defined there (the paper's
 * divergence, made visible).
 */
export class TieError extends WengertError {}

/** A trace term could not be evaluated (a missing input, a free variable). */
export class EvaluationError extends WengertError {}

/** With options.checkNaN: a primitive's result (forward, or in a rule) is NaN or infinite. */
export class NaNError extends WengertError {}

/** The trace grew beyond options.maxTraceLength. */
export class TraceLengthError extends WengertError {}

/**
 * A parameter that is not data is outside the values the function takes (taylor's
 * order k above 170, where j! overflows; a buffer for `into` of the wrong length; indexed's
 * stride and offset): the message gives the range and why.
 */
export class ArgumentError extends WengertError {}

/** A user primitive's spec (defineOp) is malformed, or its rule returned the wrong thing. */
export class DefineOpError extends WengertError {}

/** One comparison checkGrad made along one direction. */
export interface GradCheck {
  readonly direction: number;
  readonly test: "reverse vs finite differences" | "forward vs reverse";
  readonly expected: number;
  readonly got: number;
  readonly error: number;
  readonly ok: boolean;
}

/** What checkGrad found: every check, and whether all passed. */
export interface GradCheckReport {
  readonly ok: boolean;
  readonly checks: readonly GradCheck[];
}

/** checkGrad found a derivative that disagrees with finite differences or with forward mode. */
export class GradientCheckError extends WengertError {
  constructor(
    message: string,
    /** Every check made, failed or not. */
    readonly report: GradCheckReport,
  ) {
    super(message);
  }
}

/**
 * A tensor primitive was applied to arguments whose shapes do not fit (or with
 * parameters that do not fit them). The message names the primitive, the shapes and
 * the place it was called from.
 */
export class ShapeError extends WengertError {}

/**
 * A scan given `options.nested: "scan"` would be written out iteration by iteration in a
 * derivative that is differentiated again (docs/scan.md, "What stays written out"): the
 * message names the scan, why, and the fix.
 */
export class ScanWrittenOutError extends WengertError {}
