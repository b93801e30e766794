/**
 * @file Why a scan is written out in a derivative that is differentiated again, for a scan
 * given `options.nested: "scan"`, which asks to be told rather than to keep the loop's
 * memory silently (docs/scan.md, "What stays written out"). The conditions are those of
 * scan-nested.ts `nestable` (a reverse sweep) and scan-tangent-nested.ts `tangentNestable`
 * (a forward one); the message names the first that holds.
 */
import { ScanWrittenOutError } from "../errors.js";
import { hasScans, type ScanParams } from "../trace/scan-ops.js";

/** Iterations below which a loop is written out whatever it holds (scan-nested.ts STACK_FROM + 2): a few instructions, no memory to speak of. */
export const SHORT_LOOP = 6;

/**
 * Why scan `p` is written out (`keepsNone`: the transformation emitting it keeps no scan).
 */
export function writtenOutReason(p: ScanParams, keepsNone: boolean): string {
  const { body } = p;
  if (keepsNone && p.stacked === undefined) {
    return (
      "the transformation emitting it keeps no scan (a `jvp` of a term that holds a reverse sweep emitted as scans: " +
      "`grad` of `hvp`, `jvp` of `hessian`; a Hessian's columns inside a trace)"
    );
  }
  if (p.stacked !== undefined) {
    return "it is the reverse sweep of a scan emitted as a scan of its rules, differentiated once more (a third derivative)";
  }
  if (body.opaque) return "its body reads a traced value (`primal`) or decides on one without a guard";
  if (!body.reals) {
    if (hasScans(body.term.tape)) return "a scan runs inside its body";
    if (body.literal.some((l) => l !== 0)) {
      return "its body works on tensors and some of its inputs are literals (an untraced initial carry, xs that are data)";
    }
    return "it is the forward sweep (a `jvp` inside a derivative, `taylor`) of a body on tensors";
  }
  if (hasScans(body.term.tape)) return "a scan runs inside its body";
  if (!body.carryKind.every((k) => k === "internal" || k === "identity" || k === "literal")) {
    return "a leaf of its carry is neither computed by the body, passed on unchanged, nor a literal throughout";
  }
  return "its forward sweep (a `jvp` inside a derivative) runs over traced xs, or a literal of its carry is not one throughout";
}

/** Throw, for scan `p` written out where options.nested is "scan", why and the fix. */
export function refuseWriteOut(p: ScanParams, keepsNone: boolean): never {
  throw new ScanWrittenOutError(
    `${p.caller} (iterations ${p.start} to ${p.start + p.n - 1}), options.nested "scan": a derivative that is differentiated again ` +
      `would write this loop out, one block of instructions per iteration, because ${writtenOutReason(p, keepsNone)}. ` +
      'Drop options.nested (or pass "any") to accept the loop written out (the same numbers, the memory of the loop), ' +
      "or restructure the loop as docs/scan.md's \"What stays written out\" describes.",
  );
}
