/**
 * Loops of the paper's language (a letrec whose body calls itself only in tail position)
 * run inside a trace as a scan: the same numbers as the loop written out in TypeScript,
 * bit for bit, to second order; a trace of a few instructions for any number of
 * iterations (counted); the step limit still stops a loop that does not end.
 */
import { describe, expect, it } from "vitest";
import { add, grad, lt, mul, sin, type Scalar } from "../../src/index.js";
import { runProgram, StepLimitError } from "../../src/lang/index.js";
import { tailSelfCalls } from "../../src/lang/loops.js";
import { parse } from "../../src/lang/parser.js";

const CHAIN = (n: number, point = "0.3") => `letrec loop(p: real * real): real =
  let <i, y> = p in if i < ${n} then loop(<i + 1, 0.9 * y + 0.1 * sin(y)>) else y in
grad_${point}(x: real. loop(<0, x>))`;

const chain = (n: number) => (x: Scalar): Scalar => {
  let y = x;
  for (let i = 0; i < n; i++) y = add(mul(0.9, y), mul(0.1, sin(y)));
  return y;
};

describe("letrec loops as scans", () => {
  it("the same gradient as the loop written out, bit for bit", () => {
    for (const n of [1, 2, 10, 1000]) expect(Object.is(runProgram(CHAIN(n)).value, grad(chain(n), 0.3))).toBe(true);
  });
  it("a trace of a few instructions for 10⁴ iterations", () => {
    let length = 0;
    runProgram(CHAIN(10_000), { onRd: (_pos, trace) => (length = trace.length) });
    expect(length).toBeLessThan(20);
    expect(length).toBeGreaterThan(0);
  });
  it("a loop whose end depends on the traced value, to second order", () => {
    const src = `letrec f(y: real): real = if y < 10 then f(y * 1.1 + 0.01) else y * y in
grad_1.5(x: real. grad_x(z: real. x * f(z)))`;
    const f = (y: Scalar): Scalar => {
      let v = y;
      while (lt(v, 10)) v = add(mul(v, 1.1), 0.01);
      return mul(v, v);
    };
    const want = grad((x: Scalar) => grad((z: Scalar) => mul(x, f(z)), x), 1.5);
    expect(Object.is(runProgram(src).value, want)).toBe(true);
  });
  it("a loop that does not end stops at the step limit", () => {
    const src = "letrec f(y: real): real = f(y + 1) in grad_1(x: real. f(x))";
    expect(() => runProgram(src, { maxSteps: 100_000 })).toThrow(StepLimitError);
  });
  it("only tail calls make a loop", () => {
    const body = (src: string) => {
      const t = parse(src);
      if (t.kind !== "letrec") throw new Error("not a letrec");
      return tailSelfCalls(t.name, t.fnBody);
    };
    expect(body("letrec f(x: real): real = if x < 1 then f(x + 1) else x in f(0)")?.size).toBe(1);
    expect(body("letrec f(x: real): real = if x < 1 then 1 + f(x + 1) else x in f(0)")).toBe(null);
    expect(body("letrec f(x: real): real = let y = f(x) in y in f(0)")).toBe(null);
    expect(body("letrec f(x: real): real = x in f(0)")).toBe(null);
  });
});
