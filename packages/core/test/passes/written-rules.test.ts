/**
 * The rules written out as code from the primitive table (diff/tangents.ts'
 * `tangentOnNumbers`) against the same table's rules run through the numeric emitter
 * (`tangentFromTable`), to the bit (toBe tells −0 from 0), for every scalar primitive,
 * at its domain's points and at 0, −0, ±1, ±∞ and NaN, with each argument's tangent
 * there or not. (The reverse rules written out, sweep.ts and dual-rules.ts, are held to
 * the symbolic sweeps in fast-path.test.ts and hvp-sweep.test.ts; no-code.test.ts runs
 * all three where no code may be made.)
 */
import { describe, expect, it } from "vitest";
import { BINARY_NAMES, binaryOps, UNARY_NAMES, unaryOps } from "@wengert/ops";
import { tangentFromTable, tangentOnNumbers } from "../../src/diff/tangents.js";
import { CODE } from "../../src/trace/opcodes.js";

const SPECIAL = [0, -0, 1, -1, Infinity, -Infinity, NaN];
const TANGENTS = [0.75, -0, -2.5];

describe("tangents written out as code = the table's tangents through the numeric emitter, to the bit", () => {
  it("is code here (else this file would compare the table with itself)", () => {
    expect(tangentOnNumbers).not.toBe(tangentFromTable);
  });

  it.each([...UNARY_NAMES])("unary %s", (name) => {
    const { forward, domain } = unaryOps[name];
    for (const x of [...domain, ...SPECIAL]) {
      const out = forward(x);
      for (const tx of TANGENTS) {
        const args = [CODE[name], x, 0, out, tx, 0, true, false] as const;
        expect(tangentOnNumbers(...args), `${name}(${x}) along ${tx}`).toBe(tangentFromTable(...args));
      }
    }
  });

  it.each([...BINARY_NAMES])("binary %s, with the tangent of a, of b, or of both", (name) => {
    const { forward, domain } = binaryOps[name];
    const points = [...domain, ...SPECIAL.flatMap((s) => [[s, 0.5], [1.5, s], [s, s]] as const)];
    for (const [x, y] of points) {
      const out = forward(x, y);
      for (const [hx, hy] of [[true, false], [false, true], [true, true]] as const) {
        for (const tx of TANGENTS) {
          const args = [CODE[name], x, y, out, tx, -1.25 * tx, hx, hy] as const;
          expect(tangentOnNumbers(...args), `${name}(${x}, ${y}) along ${hx ? tx : "—"}, ${hy ? -1.25 * tx : "—"}`).toBe(tangentFromTable(...args));
        }
      }
    }
  });
});
