/**
 * @file The options that make rd differentiate through a branch whose two sides meet
 * without agreeing on the derivative (ties: "ignore"): the random programs of the
 * property tests land on such ties, and the tests compare against differences away
 * from them.
 */
import type { RdOptions } from "../../src/index.js";

export const IGNORE = { ties: "ignore" } as const satisfies RdOptions;
