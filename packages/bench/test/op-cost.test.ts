/**
 * `pnpm bench -- --ops`: every mode of every case computes the same thing (so the times
 * compare like with like), and the table.
 */
import { describe, expect, it } from "vitest";
import { caller, OP_CASES, OP_MODES, OP_SIZES, opCostTable, type OpCostRow } from "../src/op-cost.js";

const dataOf = (v: unknown): number[] => Array.from((v instanceof Float64Array ? v : (v as { data: Float64Array }).data) as Float64Array);

describe("the cases", () => {
  for (const c of OP_CASES) {
    it(`${c.name}: the plain loop, untraced and traced give one value; grad and compileGrad one gradient`, () => {
      for (const n of [1, 14]) {
        const x = Float64Array.from({ length: n }, (_, i) => 0.3 + 0.1 * i);
        const plain = caller(c, "plain loop")(x) as number;
        expect(caller(c, "untraced")(x)).toBeCloseTo(plain, 12);
        expect(caller(c, "traced")(x)).toBeCloseTo(plain, 12);
        const compiled = caller(c, "compileGrad");
        // the first call traces, later ones replay (and compile)
        for (let k = 0; k < 4; k++) expect(dataOf(compiled(x))).toEqual(dataOf(caller(c, "grad")(x)));
      }
    });
  }
});

it("the table: a row per case and mode, a column per size, ratios to the plain loop", () => {
  const rows: OpCostRow[] = OP_CASES.flatMap((c) => OP_MODES.map((mode, m) => ({ op: c.name, mode, ns: OP_SIZES.map((n) => (m + 1) * 1000 * (1 + n / 1000)) })));
  const md = opCostTable(rows);
  expect(md).toContain("| operation | mode | n = 1 | n = 14 | n = 256 | n = 10⁴ |");
  expect(md).toContain("| add | plain loop | 1 µs | 1.01 µs | 1.26 µs | 11 µs |");
  expect(md).toContain("| add | untraced | 2 µs (×2) | 2.03 µs (×2) | 2.51 µs (×2) | 22 µs (×2) |");
  expect(md).toContain("| sum | compileGrad | 5 µs (×5) |");
  expect(md.split("\n").filter((l) => l.startsWith("| ") && !l.startsWith("| operation"))).toHaveLength(OP_CASES.length * OP_MODES.length);
});
