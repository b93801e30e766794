/**
 * The primitives' user functions, each made for its primitive (trace/record.ts
 * `specialised`), against the generic recording path (applyUnary, applyBinary, decide):
 * the same trace term, the same values to the last bit, the same folding of literals.
 */
import { BINARY_NAMES, predicates, UNARY_NAMES, type PredicateName } from "@wengert/ops";
import { describe, expect, it } from "vitest";
import * as wengert from "../../src/index.js";
import { traceOf, type Scalar } from "../../src/index.js";
import { mayMakeCode } from "../../src/jit/javascript.js";
import { CODE } from "../../src/trace/opcodes.js";
import { applyBinary, applyUnary, decide } from "../../src/trace/record.js";
import { Tape } from "../../src/trace/tape.js";

type Fn = (...args: unknown[]) => unknown;
const user = (name: string): Fn => (wengert as unknown as Record<string, Fn>)[name];

/** Points that exercise the folding rules (−0, 1, 0) and the edges of the kernels. */
const POINTS = [-0, 0, 1, -1, 0.5, 2.5, -3.75, 1e-300, Infinity, -Infinity, NaN];

/** The printed term and its values: what must agree (`pow(x, 0)` is a traced real that is the literal 1). */
function record(f: (xs: Scalar[]) => Scalar[], xs: number[]): string {
  const term = traceOf(f, xs, { ties: "ignore" });
  const values = Array.from(term.tape.val.subarray(0, term.tape.length), (v) => (Object.is(v, -0) ? "-0" : String(v)));
  return `${String(term)}\n${values.join(",")}`;
}

describe("a primitive's own function = the generic recording path", () => {
  it("is a function of its own, named for its primitive, where code may be made", () => {
    for (const name of [...UNARY_NAMES, ...BINARY_NAMES, ...Object.keys(predicates)]) {
      expect(user(name).name).toBe(mayMakeCode() ? name : "");
    }
  });

  it("unary: on numbers, traced reals, and a traced literal", () => {
    for (const name of UNARY_NAMES) {
      const f = user(name);
      const code = CODE[name];
      for (const p of POINTS) {
        expect(Object.is(f(p), applyUnary(code, p))).toBe(true);
        const mine = record(([x]) => [f(x) as Scalar, f(wengert.pow(x, 0)) as Scalar], [p]);
        const generic = record(([x]) => [applyUnary(code, x), applyUnary(code, applyBinary(CODE.pow, x, 0))], [p]);
        expect(mine, `${name}(${p})`).toBe(generic);
      }
    }
  });

  it("binary: reals with reals, with numbers on either side, and with literals of the trace", () => {
    for (const name of BINARY_NAMES) {
      const f = user(name);
      const code = CODE[name];
      for (const p of POINTS) {
        for (const q of POINTS) {
          expect(Object.is(f(p, q), applyBinary(code, p, q)), `${name}(${p}, ${q})`).toBe(true);
          const mine = record(([x, y]) => [f(x, y), f(x, q), f(p, y), f(x, x), f(wengert.pow(x, 0), y)] as Scalar[], [p, q]);
          const generic = record(([x, y]) => [applyBinary(code, x, y), applyBinary(code, x, q), applyBinary(code, p, y), applyBinary(code, x, x), applyBinary(code, applyBinary(CODE.pow, x, 0), y)], [p, q]);
          expect(mine, `${name}(${p}, ${q})`).toBe(generic);
        }
      }
    }
  });

  it("a number beside a traced real: only a literal that may fold (x + 0, x · 1, x^0) or a literal x asks appendWithLiteral", () => {
    if (!mayMakeCode()) return;
    const proto = Tape.prototype as unknown as { appendWithLiteral: Fn };
    const original = proto.appendWithLiteral;
    let asked = 0;
    proto.appendWithLiteral = function (this: Tape, ...args: unknown[]) {
      asked++;
      return original.apply(this, args);
    };
    const count = (f: (x: Scalar) => Scalar): number => {
      asked = 0;
      traceOf(f, 1.5);
      return asked;
    };
    try {
      // sub, div: no fold; add and mul by a literal that is no identity: none either (each on both sides)
      expect(count((x) => wengert.add(wengert.mul(0.5, wengert.sub(wengert.div(2, x), 3)), 7))).toBe(0);
      expect(count((x) => wengert.mul(x, 1))).toBe(1);
      expect(count((x) => wengert.add(-0, x))).toBe(1);
      expect(count((x) => wengert.pow(x, 0))).toBe(1);
      expect(count((x) => wengert.sub(wengert.pow(x, 0), 2))).toBe(2);
    } finally {
      proto.appendWithLiteral = original;
    }
  });

  it("two reals (or one, unary) of an unchecked trace: the instruction written into the columns, Tape's append asked only where the tape has no room", () => {
    if (!mayMakeCode()) return;
    const proto = Tape.prototype as unknown as Record<"appendBinary" | "appendUnary", Fn>;
    const originals = { appendBinary: proto.appendBinary, appendUnary: proto.appendUnary };
    const asked = { appendBinary: 0, appendUnary: 0 };
    for (const m of ["appendBinary", "appendUnary"] as const) {
      proto[m] = function (this: Tape, ...args: unknown[]) {
        asked[m]++;
        return originals[m].apply(this, args);
      };
    }
    const n = 2000;
    const f = (x: Scalar): Scalar => {
      let y = x;
      for (let i = 0; i < n; i++) y = wengert.sin(wengert.mul(y, x));
      return y;
    };
    let term: string;
    try {
      term = record(([x]) => [f(x)], [0.75]);
    } finally {
      Object.assign(proto, originals);
    }
    // the columns are made ready in runs that double (makeRoom): a few dozen asks at most, not one per operation
    expect(asked.appendBinary + asked.appendUnary).toBeLessThan(40);
    const generic = record(([x]) => {
      let y: Scalar = x;
      for (let i = 0; i < n; i++) y = applyUnary(CODE.sin, applyBinary(CODE.mul, y, x));
      return [y];
    }, [0.75]);
    expect(term).toBe(generic);
  });

  it("predicates: the same decisions, and the same ties reported", () => {
    for (const name of Object.keys(predicates) as PredicateName[]) {
      const f = user(name);
      for (const p of POINTS) {
        for (const q of POINTS) {
          const decisions = (g: (a: unknown, b: unknown) => unknown) => {
            const out: unknown[] = [];
            const term = traceOf(([x, y]: Scalar[]) => (out.push(g(x, q), g(x, y), g(p, y), g(x, x)), x), [p, q], { ties: "ignore" });
            return [out, String(term)];
          };
          expect(decisions(f), `${name}(${p}, ${q})`).toEqual(decisions((a, b) => decide(name, a, b)));
          let ties = 0;
          const warn = console.warn;
          console.warn = () => void ties++;
          try {
            wengert.grad((x: Scalar) => (f(x, p) ? x : wengert.neg(x)), p);
          } finally {
            console.warn = warn;
          }
          expect(ties, `${name}(x, ${p}) at x = ${p}`).toBe(Number.isNaN(p) ? 0 : 1);
        }
      }
    }
  });
});
