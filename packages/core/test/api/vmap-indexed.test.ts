/**
 * vmap over `indexed` batches (api/indexed.ts): lane l reads values[index[l]·stride +
 * offset]. Lane by lane the numbers of f at the gathered point, to the bit, whether the
 * lanes run compiled (the table read where f uses it), by columns (the batch written
 * out), or inside a trace; jit(vmap(f)) keeps apart the traces of indexed and plain
 * batches; a bad index, axis or batch size is named.
 */
import { describe, expect, it } from "vitest";
import { ArgumentError, add, cos, grad, gt, indexed, jit, mul, sin, sub, sum, vmap, type Scalar } from "../../src/index.js";
import { laneStats } from "../../src/api/vmap.js";
import { tableReads } from "../../src/api/vmap-plan.js";

/** A table of `rows` rows of `width` numbers, and an index of `B` lanes into it (a fixed pseudo-random pattern). */
function table(rows: number, width: number, B: number): { values: Float64Array; index: Int32Array } {
  const values = Float64Array.from({ length: rows * width }, (_, i) => Math.sin(1.7 * i + 0.3) * 3);
  const index = Int32Array.from({ length: B }, (_, l) => (l * 7919 + 13) % rows);
  return { values, index };
}

/** A branchy function of a row of three and a per-lane real: lanes take either side. */
const f = ([r, s]: [Scalar[], Scalar]): Scalar => (gt(r[0], 0) ? mul(sin(r[1]), add(r[2], s)) : sub(cos(r[2]), mul(r[1], s)));
const onNumbers = (r: number[], s: number): number => f([r, s]) as number;

/** Every lane of `got` is `want`'s, to the bit. */
function sameLanes(got: Float64Array, want: readonly number[]): void {
  expect(got.length).toBe(want.length);
  want.forEach((y, l) => {
    if (!Object.is(got[l], y)) expect.fail(`lane ${l}: ${got[l]} (vmap) vs ${y} (f at the lane)`);
  });
}

function batchOf(B: number) {
  const { values, index } = table(50, 3, B);
  const s = Float64Array.from({ length: B }, (_, l) => 0.01 * l - 1);
  const rows = [0, 1, 2].map((j) => indexed(values, index, { stride: 3, offset: j }));
  const want = Array.from({ length: B }, (_, l) => onNumbers([0, 1, 2].map((j) => values[index[l] * 3 + j]), s[l]));
  const dense = [0, 1, 2].map((j) => Float64Array.from(index, (i) => values[i * 3 + j]));
  return { rows, s, want, dense };
}

const counted = (run: () => unknown): typeof laneStats => {
  const before = { ...laneStats };
  run();
  return { traced: laneStats.traced - before.traced, compiled: laneStats.compiled - before.compiled, columns: laneStats.columns - before.columns };
};

describe("vmap over indexed batches", () => {
  it("jit(vmap(f)) runs indexed lanes compiled, each lane f at its gathered row, to the bit", () => {
    const { rows, s, want } = batchOf(9000);
    const g = jit(vmap(f));
    for (let call = 0; call < 3; call++) {
      const ran = counted(() => sameLanes(g([rows, s]) as Float64Array, want));
      expect(ran.columns).toBe(0);
      expect(ran.compiled).toBeGreaterThan(0);
    }
  });

  it("batches reading one table at one index and stride share its row; a call that shares rows otherwise is planned anew, to the bit", () => {
    const B = 9000;
    const { values, index } = table(50, 3, B);
    const other = table(50, 3, B);
    const s = Float64Array.from({ length: B }, (_, l) => 0.02 * l - 1);
    const wide = Float64Array.from({ length: 50 * 4 }, (_, i) => Math.cos(0.9 * i) * 2);
    // the rows each batch's three inputs read (table, index, stride): shared, and not
    const cases: [Float64Array, Int32Array, number][][] = [
      [[values, index, 3], [values, index, 3], [values, index, 3]],
      [[values, index, 3], [other.values, index, 3], [values, index, 3]],
      [[values, index, 3], [values, other.index, 3], [values, index, 3]],
      [[values, index, 3], [wide, index, 4], [values, index, 3]],
    ];
    const batches = cases.map((rows) => ({
      rows: rows.map(([v, i, stride], j) => indexed(v, i, { stride, offset: j })),
      want: Array.from({ length: B }, (_, l) => onNumbers(rows.map(([v, i, stride], j) => v[i[l] * stride + j]), s[l])),
    }));
    expect(batches.map((b) => tableReads(b.rows))).toEqual([[0, 0, 0], [0, 1, 0], [0, 1, 0], [0, 1, 0]]);
    expect(tableReads([1, ...batches[0].rows, new Float64Array(2)])).toEqual([-1, 1, 1, 1, -1]);
    const g = jit(vmap(f));
    for (let call = 0; call < 3; call++) {
      for (const b of [...batches, ...batches.slice().reverse()]) {
        const ran = counted(() => sameLanes(g([b.rows, s]) as Float64Array, b.want));
        expect(ran.columns).toBe(0);
      }
    }
  });

  it("by columns (a small batch's first calls) and plain vmap, the same numbers", () => {
    const { rows, s, want } = batchOf(40);
    const g = jit(vmap(f));
    const first = counted(() => sameLanes(g([rows, s]) as Float64Array, want));
    expect(first.columns).toBeGreaterThan(0);
    for (let call = 0; call < 3; call++) sameLanes(g([rows, s]) as Float64Array, want);
    sameLanes(vmap(f)([rows, s]) as Float64Array, want);
  });

  it("jit(vmap(f)) called with indexed and with plain batches alike gives each its own numbers", () => {
    const a = batchOf(64);
    const b = batchOf(100);
    const g = jit(vmap(f));
    for (let call = 0; call < 4; call++) {
      sameLanes(g([a.rows, a.s]) as Float64Array, a.want);
      sameLanes(g([b.dense, b.s]) as Float64Array, b.want);
      sameLanes(g([b.rows, b.s]) as Float64Array, b.want);
    }
  });

  it("inside a trace: grad through vmap over an indexed batch is grad over the batch written out", () => {
    const { rows, s, dense } = batchOf(30);
    const lossOf = (batch: Float64Array[]) => (w: Scalar) => sum(vmap(([r, t]: [Scalar[], Scalar]) => mul(w, f([r, t])), { inAxes: [0, 0] })([batch, s]) as never);
    expect(Object.is(grad(lossOf(rows as never), 0.7), grad(lossOf(dense), 0.7))).toBe(true);
  });

  it("names an index outside the table, a bad stride, a null axis and a batch size that differs", () => {
    const { values, index } = table(10, 2, 5);
    expect(() => indexed(values, Int32Array.of(0, 3, 10), { stride: 2 })).toThrow(/index\[2\] is 10, outside the 10 rows/);
    expect(() => indexed(values, Int32Array.of(-1))).toThrow(ArgumentError);
    expect(() => indexed(values, index, { stride: 2, offset: 2 })).toThrow(/0 ≤ offset < stride/);
    const h = ([x, y]: [Scalar, Scalar]) => add(x, y);
    expect(() => vmap(h, { inAxes: [null, 0] })([indexed(values, index), new Float64Array(5)] as never)).toThrow(/indexed batch .* marked null in inAxes/);
    expect(() => vmap(h)([indexed(values, index), new Float64Array(4)])).toThrow(/has 4 lanes|earlier batched input has 5/);
  });
});
