/**
 * @file Where @wengert/ops's code begins and ends, so that an error's call site can tell
 * wengert's stack frames from the user's (core's trace/callsite.ts).
 *
 * This is the first module index.ts imports, and it imports nothing: a bundler, which
 * emits every module after the modules it imports, puts it before the rest of ops;
 * extent-end.ts, imported last, comes after it. A stack captured in each therefore
 * brackets ops's code in a bundle; unbundled, the start's file names ops's directory.
 */

/** Stacks captured in a package's first and last modules. */
export interface Extent {
  /** A stack whose first frame is in the package's first module. */
  readonly start: () => string;
  /** A stack whose first frame is in its last module; undefined until that module has run. */
  end: (() => string) | undefined;
}

export const opsExtent: Extent = { start: () => new Error().stack ?? "", end: undefined };
