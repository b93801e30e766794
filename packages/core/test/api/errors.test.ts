/**
 * Bad input: each mistake raises its own error class, naming the problem and the place.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  abs, add, ClosedTraceError, compileGrad, derivativeOf, eq, fd, grad, InputTypeError, jit, jvp, lt, mul, OutputTypeError, rd, type Real,
  type Scalar, SeedMismatchError, sin, TieError, TracedOperatorError, valueAndGrad, vjp, vmap, WengertError,
} from "../../src/index.js";

afterEach(() => vi.restoreAllMocks());

describe("seeds", () => {
  it("a seed of the wrong type names both types", () => {
    // @ts-expect-error: the seed is not shaped like f(x), which the types see too
    expect(() => rd((x: Scalar) => [x, x], 1, 1)).toThrow(SeedMismatchError);
    // @ts-expect-error: likewise
    expect(() => rd((x: Scalar) => [x, x], 1, 1)).toThrow("rd: seed has type real, expected real × real. Pass a seed shaped like f(x).");
  });
  it("a mismatch inside the seed names its path", () => {
    const f = (x: Scalar) => [x, { w: x, b: x }];
    // @ts-expect-error: seed[1].b is not a real
    expect(() => rd(f, 1, [1, { w: 1, b: [1, 2] }])).toThrow("rd: seed[1].b has type real × real, expected real (f(x) has type real × {w: real, b: real}).");
    // @ts-expect-error: seed[1] lacks b
    expect(() => rd(f, 1, [1, { w: 1 }])).toThrow(/seed\[1\] has type \{w: real\}, expected \{w: real, b: real\}/);
  });
  it("a record seed has the keys of f(x) as its own: inherited ones (toString, __proto__) do not count", () => {
    // @ts-expect-error: b is not a key of f(x)
    expect(() => rd((x: Scalar) => ({ a: x, toString: x }), 1, { a: 1, b: 2 })).toThrow(
      "rd: seed has type {a: real, b: real}, expected {a: real, toString: real}.",
    );
  });
  it("fd's v is checked against x, and said to be v", () => {
    const f = (p: { a: Scalar; b: Scalar[] }) => [mul(p.a, p.b[0]), sin(p.b[1])];
    const x = { a: 1, b: [2, 3] };
    expect(() => fd(f, x, { a: 1, b: [1] } as never)).toThrow(
      "fd: v.b has type ⟨real⟩, expected real × real (x has type {a: real, b: real × real}). Pass a v shaped like x.",
    );
    expect(() => fd(f, x, [1, 1] as never)).toThrow(/^fd: v has type real × real, expected \{a: real, b: real × real\}/);
  });
  it("a record seed may list its keys in any order", () => {
    expect(rd((p: { a: Scalar; b: Scalar }) => ({ a: mul(p.a, 2), b: mul(p.b, 3) }), { a: 1, b: 1 }, { b: 10, a: 1 })).toEqual({ a: 2, b: 30 });
  });
  it("grad of a function that does not return a real says what it returned", () => {
    expect(() => grad((x: Scalar) => [x, x] as unknown as Scalar, 1)).toThrow(OutputTypeError);
    expect(() => grad((x: Scalar) => [x, x] as unknown as Scalar, 1)).toThrow("grad: f returned real × real at x; grad needs f to return a real.");
  });
});

describe("inputs and outputs", () => {
  it("a non-numeric input names its path", () => {
    const x = [1, { w: "a", b: 2 }];
    expect(() => rd((v: unknown) => 0 as Scalar, x as never, 0)).toThrow(InputTypeError);
    expect(() => rd(() => 0, x, 0)).toThrow(
      'x[1].w is a string ("a"); rd\'s input must be a number, a tensor (ndarray or Float64Array), [] (unit), an array or a plain object of them.',
    );
    expect(() => grad(() => 0, [1, null] as never)).toThrow("x[1] is null");
    // eslint-disable-next-line no-sparse-arrays
    expect(() => grad(() => 0, [1, , 3] as never)).toThrow("x[1] is undefined");
    expect(() => grad(() => 0, [1, 2, NaN, "3"] as never)).toThrow('x[3] is a string ("3")');
    expect(() => grad(() => 0, new Date() as never)).toThrow("x is an object of class Date");
  });
  it("a non-numeric output names its path", () => {
    expect(() => rd(() => [1, "two"], 1, [1, 1])).toThrow(OutputTypeError);
    expect(() => rd(() => [1, "two"], 1, [1, 1])).toThrow("rd: f(x)[1] is a string");
    // @ts-expect-error: f returns no value
    expect(() => rd(() => undefined, 1, 1)).toThrow("rd: f(x) is undefined");
  });
  it("a primitive given something else than a scalar says which argument", () => {
    expect(() => grad((x: Scalar) => mul(x, "3" as never), 1)).toThrow(
      'mul: argument 2 is a string ("3"); expected a number, a tensor (ndarray or Float64Array) or a traced value',
    );
  });
  it("f must be a function and options must be known", () => {
    expect(() => rd(3 as never, 1, 1)).toThrow("rd: f is number");
    expect(() => rd((x: Scalar) => x, 1, 1, { ties: "loud" as never })).toThrow('rd: options.ties is "loud"; expected one of "warn", "error", "ignore".');
  });
  it("an option misspelt or of another type is an error, not a check silently left off", () => {
    const f = (x: Scalar) => sin(x);
    expect(() => grad(f, 1, { chekNaN: true } as never)).toThrow("grad: options.chekNaN is not an option; the options are ties, checkNaN and maxTraceLength.");
    expect(() => grad(f, 1, { checkNaN: "yes" } as never)).toThrow("grad: options.checkNaN is a string (\"yes\"); expected true or false.");
    expect(() => grad(f, 1, { checkNaN: 1 } as never)).toThrow("grad: options.checkNaN is 1; expected true or false.");
    expect(() => grad(f, 1, { maxTraceLength: "10" } as never)).toThrow('grad: options.maxTraceLength is a string ("10"); expected a positive number.');
    expect(() => grad(f, 1, null as never)).toThrow("grad: options is null; expected an object such as { checkNaN: true }.");
    expect(() => jvp(f, 1, 1, { tie: "error" } as never)).toThrow(/jvp: options.tie is not an option/);
    expect(grad(f, 1, { checkNaN: false, ties: "error", maxTraceLength: 10 })).toBe(Math.cos(1));
    expect(() => fd(f, 1, 1, "abc" as never)).toThrow('fd: options is a string ("abc"); expected an object such as { checkNaN: true }.');
  });
});

describe("traced values", () => {
  it("used after their rd returned", () => {
    let leaked: Scalar = 0;
    grad((x: Scalar) => ((leaked = mul(x, x)), leaked), 2);
    expect(() => sin(leaked)).toThrow(ClosedTraceError);
    // grad recycles its tape's columns (trace/columns.ts): the value is gone, and the message says so
    expect(() => sin(leaked)).toThrow("sin: a traced value (v1, its value gone with its trace) was used after the grad call that traced it returned.");
    expect(() => (leaked as unknown as Real).value).toThrow(ClosedTraceError);
    expect((leaked as unknown as Real).toString()).toBe("Real(?)");
    // where the tape is not recycled (vjp: its pullback reads the term), the message shows the value
    let kept: Scalar = 0;
    vjp((x: Scalar) => ((kept = mul(x, x)), sin(kept)), 2);
    expect(() => sin(kept)).toThrow("sin: a traced value (v1, value 4) was used after the vjp call that traced it returned.");
    jvp((x: Scalar) => ((kept = mul(x, x)), sin(kept)), 2, 1);
    expect(() => sin(kept)).toThrow("sin: a traced value (v1, its value gone with its trace) was used after the jvp call that traced it returned.");
    expect(() => grad((y: Scalar) => mul(y, leaked), 1)).toThrow(ClosedTraceError);
    expect(() => rd((y: Scalar) => y, leaked as never, 1)).toThrow(ClosedTraceError);
    expect(() => lt(leaked, 1)).toThrow(ClosedTraceError);
  });
  it("returned from f after their rd returned: a ClosedTraceError, not NaN and a zero derivative", () => {
    let leaked: Scalar = 0;
    grad((x: Scalar) => (leaked = x), 7);
    expect(() => valueAndGrad(() => leaked, 1)).toThrow(/^valueAndGrad: a traced value \(v0, its value gone with its trace\) was used after the grad call/);
    expect(() => jvp(() => leaked, 1, 1)).toThrow(ClosedTraceError);
    expect(() => rd((x: Scalar) => [x, leaked], 1, [1, 1])).toThrow(ClosedTraceError);
  });
  it("JSON.stringify prints a traced value as String does, not its whole trace", () => {
    let json = "";
    grad((x: Scalar) => {
      let y = x;
      for (let i = 0; i < 1000; i++) y = sin(y);
      json = JSON.stringify({ loss: y });
      return y;
    }, 1);
    expect(json).toMatch(/^\{"loss":0\.\d+\}$/);
    // it reads the value as String(x) does: compileGrad does not replay a trace that did
    const f = (x: Scalar[]) => (JSON.stringify(x[0]) === "1" ? mul(x[0], 3) : mul(x[0], x[0]));
    const g = compileGrad(f);
    expect([g([1]), g([2]), g([2]), g([2])]).toEqual([[3], [4], [4], [4]]);
  });
  it("a generator object is named in messages (its constructor has no name)", () => {
    const gen = (function* () {})();
    expect(() => grad(() => gen as never, 1)).toThrow(/is an object of class \(none\)/);
  });
  it("with JavaScript operators, instead of silently losing the derivative", () => {
    expect(() => grad((x: Scalar) => ((x as unknown as number) * 2) as Scalar, 1)).toThrow(TracedOperatorError);
    expect(() => grad((x: Scalar) => (((x as unknown as number) < 0 ? 0 : x) as Scalar), 1)).toThrow(TracedOperatorError);
    expect(() => grad((x: Scalar) => Math.sin(x as unknown as number), 1)).toThrow(TracedOperatorError);
    // printing is fine
    grad((x: Scalar) => (expect(`${x}`).toBe("1"), x), 1);
  });
  it("is printed readably", () => {
    grad((x: Scalar) => (expect(String(x)).toBe("1.5"), expect((x as Real).toString()).toBe("Real(1.5)"), x), 1.5);
  });
});

describe("ties", () => {
  const relu = (x: Scalar) => (lt(x, 0) ? 0 : x);
  const notZero = (x: Scalar) => (eq(x, 0) ? 0 : x);

  it("are silent away from the tie", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    expect(grad(relu, 2)).toBe(1);
    expect(grad(relu, -2)).toBe(0);
    expect(grad(notZero, 3)).toBe(1);
    expect(grad(abs, -3)).toBe(-1);
    expect(warn).not.toHaveBeenCalled();
  });
  it("warn once per rd call by default", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    expect(grad((x: Scalar) => add(relu(x), relu(x)), 0)).toBe(2);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0][0]).toMatch(/grad: lt\(0, 0\) was decided at a tie .* \(and 1 more\)/);
    // `if x = 0 then 0 else x` at 0: not silently given the derivative 0
    expect(grad(notZero, 0)).toBe(0);
    expect(warn).toHaveBeenCalledTimes(2);
    expect(warn.mock.calls[1][0]).toMatch(/eq\(0, 0\)/);
  });
  it("raise a TieError naming the predicate and the value with ties: error", () => {
    expect(() => grad(notZero, 0, { ties: "error" })).toThrow(TieError);
    expect(() => grad(notZero, 0, { ties: "error" })).toThrow("grad: eq(0, 0) was decided at a tie (both sides equal)");
    expect(() => grad(abs, 0, { ties: "error" })).toThrow("grad: abs(0) was evaluated at its kink; wengert uses abs'(0) = 0 (sign(0) = 0).");
  });
  it("are not reported with ties: ignore, and the convention holds", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    expect(grad(abs, 0, { ties: "ignore" })).toBe(0);
    expect(grad(relu, 0, { ties: "ignore" })).toBe(1);
    expect(warn).not.toHaveBeenCalled();
  });
  it("are reported to the rd whose variable the predicate depends on", () => {
    // the inner rd (ties: error) is not concerned by a tie on the outer variable
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const g = (x: Scalar) => rd((y: Scalar) => (lt(x, 0) ? y : mul(2, y)), 1, 1, { ties: "error" });
    expect(grad((x: Scalar) => mul(x, g(x) as Scalar), 0)).toBe(2);
    expect(warn).toHaveBeenCalledTimes(1);
  });
  it("an inner transformation without ties of its own takes the enclosing one's", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    // the tie is on the inner rd's own variable y: only the inner trace sees it
    const inner = (x: Scalar) => mul(x, rd((y: Scalar) => (lt(y, 0) ? y : mul(2, y)), 0, 1) as Scalar);
    expect(grad(inner, 1, { ties: "ignore" })).toBe(2);
    expect(jit((x: number) => grad(inner, x), { ties: "ignore" })(1)).toBe(2);
    expect(vmap((x: Scalar) => grad(inner, x), { ties: "ignore" })(Float64Array.of(1, 3))).toEqual(Float64Array.of(2, 2));
    expect(warn).not.toHaveBeenCalled();
    expect(() => grad(inner, 1, { ties: "error" })).toThrow(/^rd: lt\(0, 0\) was decided at a tie/);
    expect(() => jit((x: number) => grad(inner, x), { ties: "error" })(1)).toThrow(TieError);
    // its own options win, and the default is still a warning
    const quiet = (x: Scalar) => mul(x, rd((y: Scalar) => (lt(y, 0) ? y : mul(2, y)), 0, 1, { ties: "ignore" }) as Scalar);
    expect(grad(quiet, 1, { ties: "error" })).toBe(2);
    expect(warn).not.toHaveBeenCalled();
    expect(grad(inner, 1)).toBe(2);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0][0]).toMatch(/^wengert: rd: lt\(0, 0\)/);
  });
  it("a predicate on untraced numbers or of a value with itself is no tie", () => {
    expect(grad((x: Scalar) => (lt(1, 1) || eq(x, x) ? x : 0), 0, { ties: "error" })).toBe(1);
  });
});

describe("errors are WengertErrors with their own class name", () => {
  it("name", () => {
    try {
      // @ts-expect-error: the seed is not shaped like f(x)
      rd((x: Scalar) => [x], 1, 1);
    } catch (e) {
      expect(e).toBeInstanceOf(WengertError);
      expect((e as Error).name).toBe("SeedMismatchError");
    }
    expect.assertions(2);
  });
  it("an exception in f closes the trace and propagates", () => {
    expect(() => grad(() => { throw new RangeError("boom"); }, 1)).toThrow(RangeError);
    expect(grad((x: Scalar) => mul(x, x), 3)).toBe(6);
    expect(valueAndGrad((x: Scalar) => sin(x), 0)).toEqual([0, 1]);
    expect(String(derivativeOf((x: Scalar) => x, 1, 1))).toContain("W : real.");
  });
});

describe("long structures in messages", () => {
  it("a long product of one type is written T^n, as the language writes it", () => {
    // @ts-expect-error: the seed is not shaped like f(x)
    expect(() => rd((x: Scalar[]) => x[0], [1, 2, 3, 4, 5, 6], [1])).toThrow("seed has type ⟨real⟩, expected real");
    expect(() => rd((x: Scalar[]) => x, [1, 2, 3, 4, 5, 6], [1])).toThrow("expected real^6");
  });
});
