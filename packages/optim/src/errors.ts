/**
 * @file The errors of @wengert/optim: what, where, and the fix (all WengertErrors).
 */
import { WengertError } from "@wengert/core";

/** Two trees zipped together differ in structure, or a tree holds something that is not a parameter. */
export class TreeStructureError extends WengertError {}

/** An optimizer, schedule, `fit` or `minimize` was given an option it cannot use. */
export class OptimOptionsError extends WengertError {}
