/**
 * The tape's literals: one variable per distinct value (−0 apart from 0, NaN one value),
 * whatever the order of use (a small cache of recent literals sits before the map), and
 * the exact folds (literal op literal, x + 0, x · 1); columns recycled between traces.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CODE, CONST } from "../../src/trace/opcodes.js";
import { Tape } from "../../src/trace/tape.js";
import { columnStats, giveColumn, keptBytes, takeColumn, type Column } from "../../src/trace/columns.js";
import { chain, chainDerivative } from "../helpers/cases.js";
import { grad, sin as sinT, sum as sumT, tanh as tanhT, mul as mulT, type Scalar, type Tensor } from "../../src/index.js";

describe("tape literals", () => {
  it("the same value gives the same variable, another value another, in any order", () => {
    const values = fc.oneof(fc.constantFrom(0, -0, NaN, 1, -1, 0.1, 0.9, Infinity, -Infinity), fc.double());
    fc.assert(
      fc.property(fc.array(values, { minLength: 1, maxLength: 60 }), (cs) => {
        const tape = new Tape();
        const seen: [number, number][] = [];
        for (const c of cs) {
          const v = tape.constant(c);
          expect(tape.op[v]).toBe(CONST);
          expect(Object.is(tape.val[v], c)).toBe(true);
          for (const [c2, v2] of seen) expect(v === v2).toBe(Object.is(c, c2));
          seen.push([c, v]);
        }
      }),
      { numRuns: 200, seed: 3 },
    );
  });

  it("a primitive on a variable and a number (appendWithLiteral) records what append does with the number's literal", () => {
    const specials = fc.constantFrom(0, -0, 1, -1, 2, 0.5, NaN, Infinity);
    const codes = fc.constantFrom(CODE.add, CODE.sub, CODE.mul, CODE.div, CODE.pow, CODE.atan2);
    fc.assert(
      fc.property(codes, fc.oneof(specials, fc.double()), fc.oneof(specials, fc.double()), fc.boolean(), fc.boolean(), (code, x, c, first, literalX) => {
        const [t1, t2] = [new Tape(), new Tape()];
        const [a1, a2] = literalX ? [t1.constant(x), t2.constant(x)] : [t1.input(0, x), t2.input(0, x)];
        const r1 = t1.appendWithLiteral(code, a1, c, first);
        const k = t2.constant(c);
        const r2 = first ? t2.append(code, k, a2) : t2.append(code, a2, k);
        expect(Object.is(t1.val[r1], t2.val[r2])).toBe(true);
        expect(r1 === a1).toBe(r2 === a2); // folded to x alike
        expect(t1.op[r1]).toBe(t2.op[r2]); // a literal alike, or the same primitive
        if (t1.op[r1] === code) expect([t1.val[t1.a[r1]], t1.val[t1.b[r1]]]).toEqual([t2.val[t2.a[r2]], t2.val[t2.b[r2]]]);
      }),
      { numRuns: 500, seed: 5 },
    );
  });

  it("folds literal op literal, x + (−0) and x · 1, and nothing else", () => {
    const tape = new Tape();
    const x = tape.input(0, 2);
    const three = tape.append(CODE.add, tape.constant(1), tape.constant(2));
    expect(tape.op[three]).toBe(CONST);
    expect(tape.val[three]).toBe(3);
    expect(tape.append(CODE.add, x, tape.constant(-0))).toBe(x);
    expect(tape.append(CODE.add, tape.constant(-0), x)).toBe(x);
    expect(tape.append(CODE.mul, tape.constant(1), x)).toBe(x);
    // x + 0 is +0 at x = −0, where the trace may be evaluated again: kept
    for (const sum of [
      tape.append(CODE.add, x, tape.constant(0)),
      tape.appendWithLiteral(CODE.add, x, 0, true),
      tape.appendWithLiteral(CODE.add, x, 0, false),
    ]) {
      expect(sum).not.toBe(x);
      expect(tape.val[sum]).toBe(2);
    }
    const y = tape.append(CODE.sub, x, tape.constant(0));
    expect(y).not.toBe(x);
    expect(tape.val[y]).toBe(2);
    expect(tape.val[tape.append(CODE.div, x, tape.constant(4))]).toBe(0.5);
    expect(tape.val[tape.append(CODE.atan2, x, tape.constant(2))]).toBe(Math.atan2(2, 2));
  });
});

describe("tape columns recycled between traces (trace/columns.ts)", () => {
  it("a column given back is taken again by its kind and length only, and counted by its bytes", () => {
    const kinds: { new (n: number): Column; readonly name: string }[] = [Float64Array, Int32Array, Uint16Array, Uint8Array];
    const length = 12345; // no trace here has columns of this length
    const columns = kinds.map((make) => takeColumn(make, length));
    columns.forEach((c, i) => expect(c).toBeInstanceOf(kinds[i]));
    const before = keptBytes();
    for (const c of columns) giveColumn(c);
    expect(keptBytes() - before).toBe(length * (8 + 4 + 2 + 1));
    expect(takeColumn(Float64Array, length + 1)).not.toBe(columns[0]);
    for (let i = kinds.length - 1; i >= 0; i--) expect(takeColumn(kinds[i], length)).toBe(columns[i]);
    expect(keptBytes()).toBe(before);
    expect(takeColumn(Int32Array, length)).not.toBe(columns[1]); // taken already: a new one
  });

  it("a tape's x column reads 0 for every scalar instruction, in columns that were another tape's", () => {
    // x is zeroed ahead in runs, not written per scalar instruction: columns that come back
    // dirty from a tensor tape must read 0 where instructions are, taken at the start or
    // grown into, and after a copy (extend)
    const scalarsOnly = (tape: Tape, n: number): void => {
      const vs = [tape.input(0, 0.5)];
      for (let i = 1; i < n; i++) vs.push(tape.append(CODE.mul, vs[i - 1], vs[0]));
      expect(vs.filter((v) => tape.x[v] !== 0 || tape.isTensor(v) || tape.dims(v).length !== 0)).toEqual([]);
    };
    const dirty = (length: number): void => {
      for (let k = 0; k < 6; k++) giveColumn(new Int32Array(length).fill(7));
    };
    const length = 64 * 2 ** 3; // a tape starting at 64 grows into columns of this length
    dirty(length);
    const grown = new Tape();
    scalarsOnly(grown, length - 1);
    expect(grown.op.length).toBe(length);
    dirty(4096);
    const taken = new Tape(4096);
    scalarsOnly(taken, 3000);
    const copy = taken.extend();
    const more = [copy.append(CODE.add, 0, 1), copy.append(CODE.sin, 2)];
    expect(more.map((v) => copy.x[v])).toEqual([0, 0]);
    for (const t of [grown, taken, copy]) t.recycle();
  });

  it("an outermost grad hands its columns back; the pool stays bounded", () => {
    grad(chain(20000), 0.3);
    expect(keptBytes()).toBeGreaterThan(0);
    expect(keptBytes()).toBeLessThanOrEqual(64 * 2 ** 20);
    for (let k = 0; k < 5; k++) grad(chain(200000), 0.3);
    expect(keptBytes()).toBeLessThanOrEqual(64 * 2 ** 20);
  });

  it("the reverse sweep's buffers go back too: a second grad of the same length takes, and adds, nothing", () => {
    const f = chain(30000);
    grad(f, 0.3);
    const kept = keptBytes();
    // the tape's five columns and the sweep's three buffers were all in the pool, and are again
    expect(grad(f, 0.4)).toBeCloseTo(chainDerivative(30000, 0.4), 12);
    expect(keptBytes()).toBe(kept);
    const n = 30000 * 4 + 1; // instructions of chain(30000): 4 per step and the input
    expect(kept).toBeGreaterThanOrEqual(n * (2 + 4 + 4 + 8 + 4) + n * (1 + 8 + 1));
  });

  it("an outermost trace starts as long as the last tape recycled needed, if the pool still has its columns", () => {
    grad(chain(30000), 0.3);
    const t = Tape.reusing();
    const capacity = t.op.length;
    expect(capacity).toBeGreaterThanOrEqual(30000 * 4 + 1); // no doubling from 64 up
    // with those columns taken, the next one starts small instead of allocating as much
    expect(Tape.reusing().op.length).toBe(64);
    t.recycle();
    // given back, they serve the next trace as long: nothing is made
    const made = columnStats.madeBytes;
    expect(grad(chain(30000), 0.4)).toBeCloseTo(chainDerivative(30000, 0.4), 12);
    expect(columnStats.madeBytes).toBe(made);
    // a short trace, in the long one's columns, sends the next back to short columns (a
    // repeated short grad's sweep is made for its columns only if they are short)
    grad(chain(10), 0.3);
    const short = Tape.reusing();
    expect(short.op.length).toBe(64);
    short.recycle();
  });

  it("a grad inside a grad hands its trace's columns back once its derivative is in the enclosing trace", () => {
    // f'' of x ↦ x³ sin x by grad of grad: many inner traces, each of a few instructions
    const second = (x: number): number => grad((y: Scalar) => grad((z: Scalar) => mulT(mulT(mulT(z, z), z), sinT(z)), y), x) as number;
    const want = (x: number): number => 6 * x * Math.sin(x) + 6 * x * x * Math.cos(x) - x ** 3 * Math.sin(x);
    for (let k = 0; k < 3; k++) second(0.5);
    const kept = keptBytes();
    expect(kept).toBeGreaterThan(0);
    for (const x of [0.3, 0.7, 1.1, -2]) expect(second(x)).toBeCloseTo(want(x), 12);
    expect(keptBytes()).toBe(kept);
    // the inner trace's tape was recycled: a value leaked from it is gone (its trace closed either way)
    let inner: Scalar = 0;
    grad((y: Scalar) => grad((z: Scalar) => ((inner = z), mulT(z, z)), y), 0.5);
    expect(() => mulT(inner, 2)).toThrow(/a traced value \(v0, its value gone with its trace\) was used after the grad call/);
  });

  it("recycled columns give the same derivatives, also after tensor tapes used them", () => {
    const tensorLoop = (w: Tensor): Scalar => {
      let t: Tensor = w;
      for (let i = 0; i < 3000; i++) t = tanhT(mulT(t, 0.999)) as Tensor;
      return sumT(t) as Scalar;
    };
    for (const n of [5000, 300, 20000, 7]) {
      grad(tensorLoop, Float64Array.of(0.1, 0.2));
      expect(grad(chain(n), 0.3)).toBeCloseTo(chainDerivative(n, 0.3), 12);
    }
  });
});
