/**
 * Where no code may be made (a Content-Security-Policy without 'unsafe-eval': mayMakeCode
 * is false), the numeric sweeps run the primitive table's rules as they are, with no rule
 * written out: the reverse sweep (diff/sweep.ts), the forward sweep (diff/tangents.ts)
 * and hvp's dual sweep (diff/dual-rules.ts). They give the numbers of the paths that
 * build the derivative term, as the written-out rules do (fast-path.test.ts,
 * hvp-sweep.test.ts), to the bit (grad's up to the sign of a zero, as there).
 */
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { BINARY_NAMES, UNARY_NAMES } from "@wengert/ops";
import { grad, hvp, jvp, NaNError, traceOf, type Scalar } from "../../src/index.js";
import { derivativeOf } from "../../src/api/rd.js";
import { hvpSweep } from "../../src/diff/hvp-sweep.js";
import { dualRules } from "../../src/diff/dual-rules.js";
import { tangentFromTable, tangentOnNumbers } from "../../src/diff/tangents.js";
import { binaryCases, point, special, unaryCases, type F } from "../helpers/cases.js";
import { branchy } from "../helpers/programs/generate.js";
import { firstOf } from "../helpers/programs/run.js";
import { IGNORE } from "../helpers/ties.js";

vi.mock("../../src/jit/javascript.js", async (original) => ({ ...(await original<typeof import("../../src/jit/javascript.js")>()), mayMakeCode: () => false }));

/** H·v by jvp of grad, the derivative term built in jvp's trace. */
const symbolic = (f: F, x: number[], v: number[]): unknown => jvp((p: Scalar[]) => grad(f, p, IGNORE), x, v, IGNORE)[1];

function nanSafe<T>(run: () => T): T | null {
  try {
    return run();
  } catch (err) {
    if (err instanceof NaNError) return null;
    throw err;
  }
}

function expectSame(f: F, x: number[], v: number[]): void {
  expect(hvpSweep(traceOf(f, x, IGNORE), v), `hvpSweep at ${x} along ${v}`).toEqual(symbolic(f, x, v));
  const built = derivativeOf(f, x, 1, IGNORE).evaluate(x, 1) as number[];
  (grad(f, x, IGNORE) as number[]).forEach((g, i) => expect(g, `grad at ${x}`).toBe(built[i]));
  const [, fast] = jvp(f, x, v, IGNORE) as [number, number];
  // the tangent term built (checkNaN asks for it), where no value on the way is NaN or infinite
  const slow = nanSafe(() => jvp(f, x, v, { ...IGNORE, checkNaN: true }) as [number, number]);
  if (slow !== null) expect(fast, `jvp at ${x} along ${v}`).toBe(slow[1]);
}

describe("where no code may be made, the sweeps run the table's rules", () => {
  it("writes no rule out", () => {
    expect(tangentOnNumbers).toBe(tangentFromTable);
    expect(dualRules.toString()).not.toContain("switch");
  });

  it.each([...UNARY_NAMES])("unary %s", (name) => {
    for (const [f, x, v] of unaryCases(name)) expectSame(f, x, v);
  });

  it.each([...BINARY_NAMES])("binary %s", (name) => {
    for (const [f, x, v] of binaryCases(name)) expectSame(f, x, v);
  });

  it("on random programs with branches and literals, at random and special points", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 3 }), fc.oneof(point, special), branchy, point, (m, x, prog, v) => {
        const f = firstOf(prog);
        expect(hvp(f, x.slice(0, m), v.slice(0, m), IGNORE)).toEqual(symbolic(f, x.slice(0, m), v.slice(0, m)));
      }),
      { numRuns: 200, seed: 17 },
    );
  });
});
