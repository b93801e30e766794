/**
 * User primitives (defineOp) to any order of differentiation, in every transformation,
 * printed by name and called by name from the term language; malformed specs and rules;
 * and the checking tools: checkGrad (and its report), checkNaN, maxTraceLength.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import {
  add, checkGrad, compileGrad, cos, defineOp, DefineOpError, div, exp, fd, grad, GradientCheckError, hessian, hvp, index, jacfwd, jacobian, jvp, log, lt,
  mul, NaNError, rd, runProgram, sigmoid, sin, sqrt, square, sub, sum, taylor, traceOf, TraceLengthError, TypeCheckError, vjp,
  WengertError, type GradCheckReport, type Scalar, type Tensor,
} from "../src/index.js";
import { reverseDerivative } from "../src/diff/reference.js";
import { evaluateTree, leavesOf, toTree, valueOf } from "../src/trace/tree.js";
import { expectClose, thrown } from "./helpers/check.js";

type U = (x: Scalar) => Scalar;
const nth = (f: U, n: number): U => (n === 0 ? f : (x) => grad(nth(f, n - 1), x));
/** GradientCheckError's type does not declare `report` (it is added with Object.assign). */
type GCE = GradientCheckError & { report: GradCheckReport };

const cube = defineOp({ name: "cube", forward: (x) => x * x * x, reverse: ([x], _y, ct) => [mul(ct, mul(3, mul(x, x)))] });
const POINTS = [-1.3, 0.5, 2];

describe("a unary user primitive: cube(x) = x³, reverse 3x²·ct", () => {
  it.each(POINTS)("orders 0–4 by nested grad at %d: x³, 3x², 6x, 6, 0", (x) => {
    expect(cube(x)).toBe(x * x * x);
    const want = [x ** 3, 3 * x ** 2, 6 * x, 6, 0];
    for (let k = 0; k <= 4; k++) expectClose(nth(cube, k)(x), want[k], 1e-14, 1e-14, `cube^(${k})(${x})`);
  });

  it.each(POINTS)("by jvp, jvp of jvp, and jvp and grad nested both ways at %d", (x) => {
    for (const v of [1, -0.5, 3]) {
      expectClose(jvp(cube, x, v), [x ** 3, 3 * x ** 2 * v], 1e-14, 1e-14, "jvp");
      expectClose(jvp((y: Scalar) => jvp(cube, y, v)[1], x, v)[1], 6 * x * v * v, 1e-14, 1e-14, "jvp∘jvp");
      const third = jvp((y: Scalar) => jvp((z: Scalar) => jvp(cube, z, v)[1], y, v)[1], x, v)[1];
      expectClose(third, 6 * v ** 3, 1e-14, 1e-14, "jvp∘jvp∘jvp");
    }
    expectClose(jvp((y: Scalar) => grad(cube, y), x, 1)[1], 6 * x, 1e-14, 1e-14, "jvp of grad");
    expectClose(grad((y: Scalar) => jvp(cube, y, 1)[1] as Scalar, x), 6 * x, 1e-14, 1e-14, "grad of jvp");
  });

  it.each([[0.7, -1.2], [2, 0.5]])("by hessian, hvp and jacobian at (%d, %d)", (a, b) => {
    // f(a, b) = a³ b: ∇²f = [[6ab, 3a²], [3a², 0]]
    const f = ([p, q]: Scalar[]) => mul(cube(p), q);
    const H = [[6 * a * b, 3 * a * a], [3 * a * a, 0]];
    expectClose(hessian(f, [a, b]), H, 1e-14, 1e-14, "hessian");
    expectClose(hvp(f, [a, b], [1, -2]), [H[0][0] - 2 * H[0][1], H[1][0] - 2 * H[1][1]], 1e-14, 1e-14, "hvp");
    expectClose(hessian(cube, a), 6 * a, 1e-14, 1e-14, "hessian of a scalar function");
    expectClose(grad((x: Scalar) => hessian(cube, x) as Scalar, a), 6, 1e-14, 1e-14, "third derivative through hessian");
    expectClose(jacobian(([p, q]: Scalar[]) => [cube(p), cube(q), mul(p, q)], [a, b]), [[3 * a * a, 0], [0, 3 * b * b], [b, a]], 1e-14, 1e-14, "jacobian");
    const pullback = vjp(([p, q]: Scalar[]) => [cube(p), cube(q)], [a, b])[1];
    expectClose(pullback([2, 3]), [6 * a * a, 9 * b * b], 1e-14, 1e-14, "vjp");
  });

  it("prints by its name in trace terms", () => {
    expect(String(traceOf(cube, 2))).toBe("x : real.\nlet v0:real = x in\nlet v1:real = cube(v0) in\nv1");
    expect(String(traceOf((x: Scalar) => sin(cube(x)), 2))).toContain("let v1:real = cube(v0) in\nlet v2:real = sin(v1) in");
  });

  it("is called by its name from the term language, to any order", () => {
    expect(runProgram("cube(2)")).toEqual({ value: 8, type: "real" });
    expect(runProgram("grad_2(x: real. cube(x))")).toEqual({ value: 12, type: "real" });
    expect(runProgram("grad_2(x: real. grad_x(y: real. cube(y)))")).toEqual({ value: 12, type: "real" });
    expect(runProgram("grad_2(x: real. grad_x(y: real. grad_y(z: real. cube(z))))")).toEqual({ value: 6, type: "real" });
    expect(runProgram("1.fd_{real * real, 2}(x: real. <cube(x), x>)").value).toEqual([12, 1]);
    expect(() => runProgram("cube(1, 2)")).toThrow(TypeCheckError);
    expect(() => runProgram("cube(1, 2)")).toThrow("the argument of cube has type real * real, expected real");
  });

  it("in taylor, by its Taylor rule derived from the reverse rule: x³ along v to every order", () => {
    for (const x of POINTS) {
      for (const v of [1, -0.5]) expectClose(taylor(cube, x, v, 5), [x ** 3, 3 * x ** 2 * v, 6 * x * v ** 2, 6 * v ** 3, 0, 0], 1e-14, 1e-14, `taylor(cube, ${x}, ${v})`);
    }
    // composed with built-ins: sin(x³)
    const s = taylor((x: Scalar) => sin(cube(x)), 0.8, 1, 3) as number[];
    const nested = [0, 1, 2, 3].map((k) => nth((x) => sin(cube(x)), k)(0.8) as number);
    expectClose(s, nested, 1e-12, 1e-12, "taylor of sin(cube(x)) against nested grad");
  });

  it("in taylor, a rule that applies its own primitive is an error naming it (its derivation would not end)", () => {
    const myexp = defineOp({ name: "myexp", forward: Math.exp, reverse: ([x], _y, ct) => [mul(ct, myexp(x))] });
    expect(grad(myexp, 1)).toBe(Math.exp(1));
    expect(taylor(myexp, 1, 1, 0)).toEqual([Math.exp(1)]);
    const err = thrown(() => taylor(myexp, 1, 1, 2));
    expect(err).toBeInstanceOf(WengertError);
    expect(err.message).toMatch(/^taylor: the Taylor rule of myexp is derived from its reverse rule, and that rule needs the series of myexp itself/);
    // written with its output y instead, the same primitive derives: y′ = y x′
    const myexp2 = defineOp({ name: "myexp2", forward: Math.exp, reverse: ([_x], y, ct) => [mul(ct, y)] });
    expectClose(taylor(myexp2, 1, 1, 4), [1, 1, 1, 1, 1].map(() => Math.E), 1e-14, 1e-14, "taylor(myexp2)");
  });

  it("passes checkGrad", () => {
    expect(checkGrad(cube, 1.3).ok).toBe(true);
    expect(checkGrad((x: Scalar[]) => [cube(x[0]), mul(cube(x[1]), x[0])], [0.4, -1.1]).ok).toBe(true);
  });
});

// logaddexp(a, b) = log(eᵃ + eᵇ), computed stably; ∂a = e^(a−y) = σ(a − b), ∂b = σ(b − a).
const logaddexp = defineOp({
  name: "logaddexp",
  forward: (a, b) => Math.max(a, b) + Math.log1p(Math.exp(-Math.abs(a - b))),
  reverse: ([a, b], y, ct) => [mul(ct, exp(sub(a, y))), mul(ct, exp(sub(b, y)))],
});
const lae = ([a, b]: Scalar[]) => logaddexp(a, b);
const sig = (t: number) => 1 / (1 + Math.exp(-t));

describe("a user primitive's rules run anew in every grad", () => {
  it("a rule reading a value that changed between calls gives the new one; −0 and +0 are two points", () => {
    let k = 2;
    const scaled = defineOp({ name: "scaledByK", forward: (x) => k * x, reverse: (_a, _y, ct) => [mul(ct, k)] });
    expect(grad(scaled, 0)).toBe(2);
    k = 3;
    expect([grad(scaled, 0), grad(scaled, 1), grad(scaled, 0)]).toEqual([3, 3, 3]);
    const lg = defineOp({ name: "logAbs", forward: (x) => Math.log(Math.abs(x)), reverse: ([x], _y, ct) => [div(ct, x)] });
    expect([grad(lg, -0), grad(lg, 0), grad(lg, -0)]).toEqual([-Infinity, Infinity, -Infinity]);
  });
  it("a reverse rule that returns a traced value from elsewhere: ClosedTraceError or DefineOpError, not a TracedOperatorError", () => {
    let leaked: Scalar = 0;
    grad((x: Scalar) => (leaked = mul(x, 1)), 1);
    const leaky = defineOp({ name: "leaky", forward: (x) => x, reverse: () => [leaked] });
    expect(() => grad(leaky, 1)).toThrow(/^leaky's reverse rule: a traced value .* was used after the grad call that traced it returned/);
    let s: Scalar = 0;
    const capS = defineOp({ name: "capS", forward: (x) => x, reverse: (_a, _y, ct) => [mul(ct, s)] });
    expect(() => grad((u: Scalar) => ((s = u), grad(capS, 2) as Scalar), 3)).toThrow(/^capS: the reverse rule's result 1 is a value traced by an enclosing grad/);
  });
  it("a forward that returns no number is a DefineOpError naming it (a forgotten return gave NaN)", () => {
    const noReturn = defineOp({ name: "noReturn", forward: ((x: number) => void x) as never, reverse: (_a, _y, ct) => [ct] });
    expect(() => noReturn(2)).toThrow("noReturn: forward returned undefined; expected a number (a forgotten return?).");
    expect(() => grad(noReturn, 2)).toThrow(DefineOpError);
  });
});

describe("a user primitive on a tensor", () => {
  it("is an error naming it (its rules are for reals: on a tensor every derivative came out 0)", () => {
    const x = Float64Array.of(1, 2);
    const message = /^cube: argument 1 is .*; a user primitive \(defineOp\) applies to numbers and traced reals/;
    expect(() => cube(x as never)).toThrow(message);
    expect(() => grad((t: Tensor) => sum(cube(t as never) as never), x)).toThrow(message);
    expect(() => grad((t: Tensor) => sum(t), x)).not.toThrow();
    expect(grad((t: Tensor) => cube(index(t, 1)), x)).toEqual(Float64Array.of(0, 12));
  });
});

describe("a binary user primitive: logaddexp", () => {
  it.each([[0.3, 1.1], [-2, 0.5], [4, -1], [700, 700]])("value, both partials, Hessian and a third partial at (%d, %d)", (a, b) => {
    const p = sig(a - b);
    expectClose(logaddexp(a, b), Math.max(a, b) + Math.log(1 + Math.exp(-Math.abs(a - b))), 1e-15, 0, "value");
    expectClose(grad(lae, [a, b]), [p, 1 - p], 1e-13, 1e-15, "gradient");
    const q = p * (1 - p);
    expectClose(hessian(lae, [a, b]), [[q, -q], [-q, q]], 1e-12, 1e-14, "Hessian");
    expectClose(grad((x: Scalar[]) => (grad(lae, x) as Scalar[])[0], [a, b]), [q, -q], 1e-12, 1e-14, "∇∂a");
    expectClose(grad((x: Scalar[]) => (hessian(lae, x) as Scalar[][])[0][0], [a, b])[0], q * (1 - 2 * p), 1e-11, 1e-12, "∂aaa");
    expectClose(jvp(lae, [a, b], [1, 2])[1], p + 2 * (1 - p), 1e-13, 1e-15, "jvp");
  });

  it("with one argument constant, by grad and jvp, and by name in the term language", () => {
    expectClose(grad((a: Scalar) => logaddexp(a, 3), 1), sig(-2), 1e-15, 0, "∂a with b constant");
    expectClose(jvp((b: Scalar) => logaddexp(1, b), 3, 2)[1], 2 * sig(2), 1e-15, 0, "jvp along b with a constant");
    const r = runProgram("grad_{<1, 2>}(p: real * real. logaddexp(fst(p), snd(p)))");
    expectClose(r.value, [sig(-1), sig(1)], 1e-15, 0, "grad_<1,2> in the language");
    expect(String(traceOf(lae, [1, 2]))).toContain("logaddexp(v0, v1)");
  });

  it("runs its reverse rule once per application in a gradient (not once per argument)", () => {
    let calls = 0;
    const hyp2 = defineOp({ name: "hypot2", forward: (a, b) => a * a + b * b, reverse: ([a, b], _y, ct) => (calls++, [mul(ct, mul(2, a)), mul(ct, mul(2, b))]) });
    expect(grad(([a, b]: Scalar[]) => hyp2(a, b), [1, 4])).toEqual([2, 8]);
    expect(hessian(([a, b]: Scalar[]) => hyp2(a, b), [1, 4])).toEqual([[2, 0], [0, 2]]);
    calls = 0;
    grad(([a, b]: Scalar[]) => hyp2(a, b), [1, 4]);
    expect(calls).toBe(1);
  });

  it("with checkNaN, the cotangent of a constant argument is not computed (no false alarm)", () => {
    // a·√b at b = 0: ∂a = √0 = 0 is all that is needed; ∂b = a/(2√0) = ∞ is not.
    const asqrt = defineOp({ name: "asqrt", forward: (a, b) => a * Math.sqrt(b), reverse: ([a, b], _y, ct) => [mul(ct, sqrt(b)), div(mul(ct, a), mul(2, sqrt(b)))] });
    expect(grad((a: Scalar) => asqrt(a, 0), 1, { checkNaN: true })).toBe(0);
    expect(jvp((a: Scalar) => mul(a, sqrt(0)), 1, 1, { checkNaN: true })).toEqual([0, 0]); // the built-ins
    expect(jvp((a: Scalar) => asqrt(a, 0), 1, 1, { checkNaN: true })).toEqual([0, 0]);
    expect(hessian((a: Scalar) => asqrt(a, 0), 1, { checkNaN: true })).toBe(0);
  });
});

describe("a user primitive takes the built-ins' paths in every transformation", () => {
  // f uses both user primitives, the binary one with its rule reading y
  const f = ([a, b]: Scalar[]) => add(logaddexp(mul(a, b), cube(a)), mul(cube(b), sin(a)));
  const points = [[0.3, -1.2], [1.1, 0.4], [-0.7, 0.9]];

  it("hessian and hvp run hvp's sweep on duals: the numbers of jvp of grad built symbolically, to the bit", () => {
    for (const x of points) {
      expect(hessian(f, x)).toEqual(jacfwd((p: Scalar[]) => grad(f, p), x));
      expect(hvp(f, x, [0.5, -2])).toEqual(jvp((p: Scalar[]) => grad(f, p), x, [0.5, -2])[1]);
    }
  });

  it("the Fig. 6 reference differentiates them, by their rules as trace terms", () => {
    for (const x of points) {
      const term = traceOf(f, x);
      const { C, T } = toTree(term);
      const expected = leavesOf(evaluateTree(reverseDerivative(valueOf(term.output.shape, [1]), valueOf(term.params[0].shape, x), "x", T, C)));
      expectClose(grad(f, x), expected, 1e-13, 1e-15, "grad against Fig. 6");
    }
  });

  it("compileGrad replays their traces and compiles them to JavaScript, with grad's numbers", () => {
    const g = compileGrad(f);
    for (let k = 0; k < 4; k++) for (const x of points) expect(g(x)).toEqual(grad(f, x));
    expect(g.stats.traces).toBe(1);
    expect(g.stats.compiled).toBeGreaterThan(0);
  });

  it("a rule deciding on its arguments: replayed by the interpreter (compiled code has no values), an error in Fig. 6", () => {
    // relu²: 2x where x > 0, else 0, decided in the rule
    const relu2 = defineOp({ name: "relu2", forward: (x) => (x > 0 ? x * x : 0), reverse: ([x], _y, ct) => [lt(x, 0) ? 0 : mul(ct, mul(2, x))] });
    const h = (x: Scalar) => mul(relu2(x), 3);
    const g = compileGrad(h);
    for (let k = 0; k < 4; k++) for (const x of [1.5, -2, 0.25]) expect(g(x)).toBe(x > 0 ? 6 * x : 0);
    expect(g.stats).toEqual({ traces: 1, replays: 11, compiled: 0 });
    expect(hessian(h, 1.5)).toBe(6);
    expect(taylor(h, 1.5, 1, 2)).toEqual([6.75, 9, 6]);
    const { C, T } = toTree(traceOf(h, 1.5));
    const err = thrown(() => reverseDerivative(valueOf({ kind: "real" }, [1]), valueOf({ kind: "real" }, [1.5]), "x", T, C));
    expect(err).toBeInstanceOf(DefineOpError);
    expect(err.message).toMatch(/^the reverse rule of relu2: lt reads a value, and in the Fig. 6 reference .* the rule runs on none/);
  });
});

describe("tangent rules", () => {
  it("jvp calls the tangent rule, grad the reverse rule", () => {
    const calls = { reverse: 0, tangent: 0 };
    const twice = defineOp({ name: "twice", forward: (x) => 2 * x, reverse: (_a, _y, ct) => (calls.reverse++, [mul(2, ct)]), tangent: (_a, [dx]) => (calls.tangent++, mul(2, dx)) });
    expect(jvp(twice, 3, 5)).toEqual([6, 10]);
    expect(calls).toEqual({ reverse: 0, tangent: 1 });
    expect(grad(twice, 3)).toBe(2);
    expect(calls).toEqual({ reverse: 1, tangent: 1 });
  });

  it("of a binary op gets the tangent 0 for a constant argument", () => {
    const seen: number[] = [];
    const hyp = defineOp({
      name: "hyp2t",
      forward: (a, b) => a * a + b * b,
      reverse: ([a, b], _y, ct) => [mul(ct, mul(2, a)), mul(ct, mul(2, b))],
      tangent: ([a, b], [da, db]) => (seen.push(typeof db === "number" ? db : NaN), add(mul(mul(2, a), da), mul(mul(2, b), db))),
    });
    expect(jvp(([a, b]: Scalar[]) => hyp(a, b), [3, 4], [1, -1])).toEqual([25, 6 - 8]);
    expect(jvp((a: Scalar) => hyp(a, 4), 3, 1)).toEqual([25, 6]);
    expect(seen.at(-1)).toBe(0);
  });

  it("a wrong tangent rule is what jvp returns, and checkGrad finds forward ≠ reverse", () => {
    const bad = defineOp({ name: "cubeBadTangent", forward: (x) => x ** 3, reverse: ([x], _y, ct) => [mul(ct, mul(3, square(x)))], tangent: ([x], [dx]) => mul(dx, mul(2, square(x))) });
    expect(jvp(bad, 2, 1)[1]).toBe(8);
    expect(grad(bad, 2)).toBe(12);
    const { report } = thrown(() => checkGrad(bad, 1.3)) as GCE;
    expect(report.checks.filter((c) => !c.ok).map((c) => c.test)).toEqual(Array(4).fill("forward vs reverse"));
  });
});

describe("malformed specs", () => {
  const rev = (_a: Scalar[], _y: Scalar, ct: Scalar) => [ct];
  const bad = (spec: unknown) => () => defineOp(spec as Parameters<typeof defineOp>[0]);
  const ident = 'expected an identifier such as "cube" (it is how the term language calls it).';
  const cases: [string, unknown, string][] = [
    ["the spec is not an object", null, "defineOp: the spec is null; expected { name, forward, reverse }."],
    ["no name", { forward: (x: number) => x, reverse: rev }, `defineOp: name is undefined; ${ident}`],
    ["a name with a space", { name: "my op", forward: (x: number) => x, reverse: rev }, `defineOp my op: name is a string ("my op"); ${ident}`],
    ["a name starting with a digit", { name: "2x", forward: (x: number) => x, reverse: rev }, `defineOp 2x: name is a string ("2x"); ${ident}`],
    ["a keyword", { name: "let", forward: (x: number) => x, reverse: rev }, "defineOp let: let is a keyword or predicate of the term language; choose another name."],
    ["a predicate", { name: "lt", forward: (x: number) => x, reverse: rev }, "defineOp lt: lt is a keyword or predicate of the term language; choose another name."],
    ["a derivative subscript", { name: "rd_1", forward: (x: number) => x, reverse: rev }, "defineOp rd_1: rd_1 is a keyword or predicate of the term language; choose another name."],
    ["a built-in's name", { name: "sin", forward: (x: number) => x, reverse: rev }, "defineOp sin: a primitive named sin exists already."],
    ["a user primitive's name", { name: "cube", forward: (x: number) => x, reverse: rev }, "defineOp cube: a primitive named cube exists already."],
    ["forward missing", { name: "noForward", reverse: rev }, "defineOp noForward: forward is missing: the kernel on numbers, e.g. forward: (x) => x * x * x."],
    ["forward of 3 parameters", { name: "three", forward: (a: number, b: number, c: number) => a + b + c, reverse: rev }, "defineOp three: forward takes 3 parameters; a primitive takes 1 or 2 reals."],
    ["forward of 0 parameters", { name: "zero", forward: () => 1, reverse: rev }, "defineOp zero: forward takes 0 parameters; a primitive takes 1 or 2 reals."],
    ["reverse missing", { name: "noReverse", forward: (x: number) => x }, "defineOp noReverse: reverse is missing: the reverse rule ([x], y, ct) => [cotangent of x], written with wengert's functions (mul, cos, …)."],
    ["tangent not a function", { name: "badTangent", forward: (x: number) => x, reverse: rev, tangent: 3 }, "defineOp badTangent: tangent is a number; expected a function or nothing."],
  ];

  it.each(cases)("%s", (_label, spec, message) => {
    const err = thrown(bad(spec));
    expect(err).toBeInstanceOf(DefineOpError);
    expect(err.message).toBe(message);
  });

  it("a rejected spec registers nothing: the name can then be defined", () => {
    const ok = defineOp({ name: "noForward", forward: (x) => x + 1, reverse: rev });
    expect(grad((x: Scalar) => mul(ok(x), x), 2)).toBe(2 * 2 + 1);
  });

  it("forward given but not a function is named for what it is, not as missing", () => {
    expect(thrown(bad({ name: "fwdString", forward: "x * x", reverse: rev })).message).toMatch(/forward is a string/);
  });

  it("a reverse rule returning the wrong number of cotangents, or a non-scalar, is named at its first use", () => {
    const two = defineOp({ name: "twoCotangents", forward: (x) => x, reverse: (_a, _y, ct) => [ct, ct] });
    expect(two(3)).toBe(3); // the forward kernel alone is fine
    const err = thrown(() => grad(two, 1));
    expect(err).toBeInstanceOf(DefineOpError);
    expect(err.message).toMatch(/^twoCotangents: the reverse rule returned .*; expected an array of 1 cotangent\(s\), one per argument\.$/);
    expect(err.message, "the message should say how many it returned").toMatch(/\b2\b/);
    const one = defineOp({ name: "oneCotangent", forward: (a, b) => a * b, reverse: ([, b], _y, ct) => [mul(ct, b)] });
    expect(() => grad(([a, b]: Scalar[]) => one(a, b), [1, 2])).toThrow(/oneCotangent: the reverse rule returned .*; expected an array of 2 cotangent\(s\)/);
    const str = defineOp({ name: "stringCotangent", forward: (x) => x, reverse: () => ["a" as unknown as Scalar] });
    expect(() => grad(str, 1)).toThrow('stringCotangent: the reverse rule\'s result 0 is a string ("a"); expected a number or a traced real.');
    expect(() => jvp(str, 1, 1)).toThrow(DefineOpError);
  });
});

describe("checkGrad", () => {
  const badCube = defineOp({ name: "badCube", forward: (x) => x * x * x, reverse: ([x], _y, ct) => [mul(ct, mul(2, mul(x, x)))] });

  it("rejects options under which no check can fail (no direction) or none can pass", () => {
    for (const directions of [0, -1, NaN, 1.5]) {
      expect(() => checkGrad(badCube, 1.3, { directions })).toThrow(`checkGrad: options.directions is ${directions}; expected a positive integer.`);
    }
    expect(() => checkGrad(badCube, 1.3, { eps: 0 })).toThrow("checkGrad: options.eps is 0; expected a positive number.");
    expect(() => checkGrad(badCube, 1.3, { rtol: "a" as never })).toThrow('checkGrad: options.rtol is a string ("a"); expected a number ≥ 0.');
    expect(() => checkGrad(badCube, 1.3, { directions: 1 })).toThrow(GradientCheckError);
    // rd's own options go on to every evaluation, and are checked there
    expect(() => checkGrad(cube, 1.3, { directions: 1, chekNaN: true } as never)).toThrow(/checkGrad: options.chekNaN is not an option; the options are directions, eps/);
    expect(() => checkGrad(cube, 1.3, null as never)).toThrow("checkGrad: options is null; expected an object such as { checkNaN: true }.");
  });

  it("passes a right rule; its report holds 2 checks per direction", () => {
    const report = checkGrad((x: Scalar) => mul(cube(x), sin(x)), 0.9);
    expect(report.ok).toBe(true);
    expect(report.checks.map((c) => [c.direction, c.test])).toEqual(
      [0, 1, 2, 3].flatMap((d) => [[d, "reverse vs finite differences"], [d, "forward vs reverse"]]),
    );
    for (const c of report.checks) {
      expect(c.ok).toBe(true);
      expect(c.error).toBe(Math.abs(c.got - c.expected));
      expect(c.error).toBeLessThanOrEqual(1e-6 * Math.max(1, Math.abs(c.expected)));
    }
    // the reverse value is what forward is held to, direction by direction
    for (let d = 0; d < 4; d++) expect(report.checks[2 * d + 1].expected).toBe(report.checks[2 * d].got);
  });

  it("catches a wrong reverse rule (2x² for 3x²) and puts the report on the error", () => {
    const err = thrown(() => checkGrad(badCube, 1.3));
    expect(err).toBeInstanceOf(GradientCheckError);
    expect(err.message).toMatch(/^checkGrad: reverse vs finite differences disagree along direction \d: expected -?[\d.e-]+, got -?[\d.e-]+ \(error [\d.e+-]+\); 4 of 8 checks failed\. The report is on this error's \.report\.$/);
    const { report } = err as GCE;
    expect(report.ok).toBe(false);
    for (const c of report.checks) {
      if (c.test === "forward vs reverse") expect(c.ok).toBe(true); // forward comes from the same (wrong) rule
      else {
        expect(c.ok).toBe(false);
        expect(c.got / c.expected).toBeCloseTo(2 / 3, 6); // reverse / true derivative
      }
    }
  });

  it("options: directions, seed (reproducible), tolerances; structured x and f(x)", () => {
    expect(checkGrad(sin, 1, { directions: 2 }).checks).toHaveLength(4);
    expect(checkGrad(sin, 1, { seed: 7 })).toEqual(checkGrad(sin, 1, { seed: 7 }));
    expect(checkGrad(sin, 1, { seed: 7 }).checks[0].expected).not.toBe(checkGrad(sin, 1, { seed: 8 }).checks[0].expected);
    const slightlyOff = defineOp({ name: "slightlyOff", forward: (x) => x ** 3, reverse: ([x], _y, ct) => [mul(ct, mul(3.0003, square(x)))] });
    expect(() => checkGrad(slightlyOff, 1.3)).toThrow(GradientCheckError);
    expect(checkGrad(slightlyOff, 1.3, { rtol: 1e-3 }).ok).toBe(true);
    const f = ({ a, b }: { a: Scalar; b: Scalar[] }) => ({ s: mul(a, b[0]), t: [logaddexp(a, b[1]), cube(b[0])] });
    expect(checkGrad(f, { a: 0.5, b: [1.5, -0.2] }).ok).toBe(true);
  });
});

describe("checkNaN", () => {
  it("names log in log(x − x), in the forward pass", () => {
    const err = thrown(() => grad((x: Scalar) => log(sub(x, x)), 1, { checkNaN: true }));
    expect(err).toBeInstanceOf(NaNError);
    expect(err.message).toMatch(/^grad: checkNaN: log\(0\) = -Infinity in the forward pass \(f itself\)/);
    expect(() => grad((x: Scalar) => log(sub(x, x)), 1)).not.toThrow();
  });

  it("checks binary primitives too, on two traced reals or one and a number (their common path skips checks only when none is asked)", () => {
    const cases: [string, (x: Scalar) => Scalar, RegExp][] = [
      ["div(x, x − x)", (x) => div(x, sub(x, x)), /^grad: checkNaN: div\(1, 0\) = Infinity in the forward pass/],
      ["div(x, 0)", (x) => div(x, 0), /^grad: checkNaN: div\(1, 0\) = Infinity/],
      ["mul(1e308, x·10)", (x) => mul(1e308, mul(x, 10)), /^grad: checkNaN: mul\(1e\+308, 10\) = Infinity/],
    ];
    for (const [name, f, message] of cases) {
      expect(() => grad(f, 1), name).not.toThrow();
      expect(thrown(() => grad(f, 1, { checkNaN: true })).message, name).toMatch(message);
    }
  });

  it("names the reverse (or tangent) rule of sqrt at 0, where only the derivative is infinite", () => {
    expect(grad(sqrt, 0)).toBe(Infinity);
    expect(() => grad(sqrt, 0, { checkNaN: true })).toThrow(NaNError);
    expect(() => grad(sqrt, 0, { checkNaN: true })).toThrow(/^grad: checkNaN: .*the reverse rule of sqrt/);
    expect(() => rd((x: Scalar) => [sqrt(x), x], 0, [1, 1], { checkNaN: true })).toThrow(/the reverse rule of sqrt/);
    expect(() => vjp(sqrt, 0, { checkNaN: true })[1](1)).toThrow(/the reverse rule of sqrt/);
    expect(() => jvp(sqrt, 0, 1, { checkNaN: true })).toThrow(/^jvp: checkNaN: .*the tangent rule of sqrt/);
    expect(() => hessian(sqrt, 0, { checkNaN: true })).toThrow(NaNError);
    expect(grad(sqrt, 4, { checkNaN: true })).toBe(0.25);
  });

  it("names a user primitive's reverse rule", () => {
    const mysqrt = defineOp({ name: "mysqrt", forward: Math.sqrt, reverse: (_a, y, ct) => [div(ct, mul(2, y))] });
    expect(() => grad(mysqrt, 0, { checkNaN: true })).toThrow(/the reverse rule of mysqrt/);
    expect(() => grad((x: Scalar) => grad(mysqrt, x), 0, { checkNaN: true })).toThrow(/the reverse rule of mysqrt/);
  });

  it("applies to an inner rd's derivative computation when set on the inner call", () => {
    // the inner grad computes sqrt'(0) = ∞ inside an outer grad that did not ask for checks
    expect(() => grad((x: Scalar) => grad(sqrt, sub(x, x), { checkNaN: true }), 1)).toThrow(NaNError);
    // and names where, as an outer checkNaN does: the rule, not "the forward pass"
    const C = { checkNaN: true };
    expect(() => grad((x: Scalar) => grad(sqrt, x, C) as Scalar, 0)).toThrow(/^grad: checkNaN: div\(1, 0\) = Infinity in the reverse rule of sqrt \(for v1\)/);
    expect(() => jvp((x: Scalar) => grad(sqrt, x, C) as Scalar, 0, 1)).toThrow(/in the reverse rule of sqrt/);
    expect(() => grad((x: Scalar) => jvp(sqrt, x, 1, C)[1] as Scalar, 0)).toThrow(/^jvp: checkNaN: .* in the tangent rule of sqrt/);
  });
});

describe("maxTraceLength", () => {
  const runaway = (x: Scalar): Scalar => {
    let y = x;
    while (lt(y, 10)) y = sin(y); // sin y < 10 forever
    return y;
  };
  const givesUp = (x: Scalar): Scalar => {
    let y = x;
    for (let i = 0; lt(y, 10); i++) {
      if (i > 1e6) throw new Error("still looping");
      y = sin(y);
    }
    return y;
  };
  const over = /the trace reached 1001 instructions, over options\.maxTraceLength = 1000/;

  it("turns a runaway loop into a TraceLengthError in every transformation", () => {
    const o = { maxTraceLength: 1000 };
    for (const [name, g] of Object.entries({
      grad: () => grad(runaway, 1, o),
      jvp: () => jvp(runaway, 1, 1, o),
      // fd ran f on numbers first (for the shape of f(x)), where no limit applies: it never
      // returned (here the loop gives up after 10⁶ steps, so that the test fails instead)
      fd: () => fd(givesUp, 1, 1, o),
      vjp: () => vjp(runaway, 1, o),
      taylor: () => taylor(runaway, 1, 1, 2, o),
      jacobian: () => jacobian(runaway, 1, o),
      hessian: () => hessian(runaway, 1, o),
      nested: () => grad((x: Scalar) => grad(runaway, x, o), 1),
    })) {
      const err = thrown(g);
      expect(err, name).toBeInstanceOf(TraceLengthError);
      expect(err.message, name).toMatch(over);
    }
  });

  it("counts binary instructions too", () => {
    const steps = (x: Scalar) => {
      let y = x;
      for (let i = 0; i < 10; i++) y = add(mul(y, y), x);
      return y;
    };
    expect(() => grad(steps, 0.1, { maxTraceLength: 21 })).not.toThrow(); // x and twenty
    expect(() => grad(steps, 0.1, { maxTraceLength: 20 })).toThrow("grad: the trace reached 21 instructions, over options.maxTraceLength = 20");
  });

  it("counts instructions: sin(sin(x)) is 3 (x and two sins)", () => {
    expect(grad((x: Scalar) => sin(sin(x)), 1, { maxTraceLength: 3 })).toBeCloseTo(Math.cos(Math.sin(1)) * Math.cos(1), 15);
    expect(() => grad((x: Scalar) => sin(sin(x)), 1, { maxTraceLength: 2 })).toThrow("grad: the trace reached 3 instructions, over options.maxTraceLength = 2");
    const tenSins = (x: Scalar) => Array.from({ length: 10 }).reduce<Scalar>((y) => sin(y), x);
    expect(() => grad(tenSins, 1, { maxTraceLength: 1000 })).not.toThrow();
    expect(() => grad(sin, 1, { maxTraceLength: 0 })).toThrow("grad: options.maxTraceLength is 0; expected a positive number.");
  });

  describe("checkGrad (in a child process, since a hang cannot be interrupted in-process)", () => {
    const root = fileURLToPath(new URL("../../../", import.meta.url));
    beforeAll(() => {
      execFileSync("npx", ["tsc", "-b", "packages/ops", "packages/core"], { cwd: root, stdio: "pipe" });
    }, 180_000);

    it("stops a runaway f with maxTraceLength too", () => {
      const code = `import { checkGrad, lt, sin } from "@wengert/core";
        const runaway = (x) => { let y = x; while (lt(y, 10)) y = sin(y); return y; };
        try { checkGrad(runaway, 1, { maxTraceLength: 1000 }); console.log("returned"); } catch (e) { console.log(e.name); }`;
      const r = spawnSync(process.execPath, ["--input-type=module", "-e", code], { cwd: root, encoding: "utf8", timeout: 5000 });
      expect(r.signal, "checkGrad did not return within 5 s: it runs f on numbers, where maxTraceLength does not apply").toBeNull();
      expect(r.stdout.trim()).toBe("TraceLengthError");
    });
  });
});
