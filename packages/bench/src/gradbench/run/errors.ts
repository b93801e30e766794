/**
 * @file The errors of `pnpm gradbench`: a flag it cannot read, and a setup it cannot
 * run in (no GradBench checkout, no relay, Python without the evals' packages).
 * Their messages say what is wrong, where, and what to do; main.ts prints the message
 * alone.
 */
import { WengertError } from "@wengert/core";

/** A command-line flag that is unknown, lacks its value, or has a value that cannot be read. */
export class GradbenchUsageError extends WengertError {}

/** Something the run needs that is not there: the checkout, the relay, Python's packages. */
export class GradbenchSetupError extends WengertError {}
