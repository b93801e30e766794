/**
 * @file Where @wengert/core's code begins and ends, so that an error's call site can
 * tell wengert's stack frames from the user's (callsite.ts).
 *
 * This is the first module index.ts imports, and it imports nothing at run time: a
 * bundler, which emits every module after the modules it imports, puts it before the
 * rest of core (and of ops, which core imports); extent-end.ts, imported last, comes
 * after them. A stack captured in each therefore brackets wengert's code in a bundle;
 * unbundled, the start's file names core's directory. (@wengert/ops has the same pair.)
 */
import type { Extent } from "@wengert/ops";

export const coreExtent: Extent = { start: () => new Error().stack ?? "", end: undefined };
