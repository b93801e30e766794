/**
 * `options.nested: "scan"` (docs/scan.md, "What stays written out"): where a derivative that is
 * differentiated again would write a scan out, it throws a ScanWrittenOutError naming why;
 * where the scan nests, the option changes nothing (the same numbers as without it); an
 * evaluated-only trace (jit) and the outermost derivative never write the loop out for it.
 */
import { describe, expect, it } from "vitest";
import { add, grad, hessian, hvp, index, jit, jvp, mul, scan, ScanWrittenOutError, sin, sum, where, type Operand, type Scalar, type TensorArg } from "../../src/index.js";
import { expectSame } from "../helpers/same-bits.js";

const T = (v: unknown): TensorArg => v as TensorArg;
const START = new Float64Array([1, 2, 3, 4]);
type Options = { nested?: "any" | "scan" };

/** y ← y + 0.1·a·sin y from θ₀·(1, 2, 3, 4), a = θ₁; read as Σ y² or by an index after the loop. */
const chain = (n: number, read: "sum" | "index", options: Options) => (th: Scalar[]): Scalar => {
  const [y] = scan((c: Operand) => [add(c, mul(0.1, mul(th[1], sin(T(c)))))], mul(th[0], START) as Operand, n, options);
  return read === "sum" ? (sum(T(mul(y, y))) as Scalar) : (index(T(y), [3]) as Scalar);
};

/** A where in the body, on a fixed mask: y ← y + 0.1·a·(m ? sin y : y). */
const MASK = new Float64Array([1, 0, 1, 0]);
const branchy = (n: number, options: Options) => (th: Scalar[]): Scalar => {
  const [y] = scan((c: Operand) => [add(c, mul(0.1, mul(th[1], where(MASK, sin(T(c)), T(c)))))], mul(th[0], START) as Operand, n, options);
  return sum(T(mul(y, y))) as Scalar;
};

const TH = [0.3, 0.8];

describe('scan options.nested: "scan"', () => {
  it("changes nothing where the scan nests: hessian of Σ y², bit for bit", () => {
    expectSame(hessian(chain(40, "sum", { nested: "scan" }), TH), hessian(chain(40, "sum", {}), TH));
  });

  it("nests, without throwing, where the written-out sweep masks cotangents: an index after the loop, a where in the body (the loop's numbers)", () => {
    expectSame(hessian(chain(40, "index", { nested: "scan" }), TH), hessian(chain(40, "index", {}), TH));
    const gg = (o: Options) => grad((th: Scalar[]) => grad(branchy(40, o), th)[1], TH);
    expectSame(gg({ nested: "scan" }), gg({}));
  });

  it("covers the forward sweeps too: jvp of grad nests (the same numbers), grad of a jvp inside names its forward sweep", () => {
    const jg = (o: Options) => (th: Scalar[]) => jvp((u: Scalar[]) => grad(chain(40, "sum", o), u) as Scalar[], th, [1, 0])[1] as Scalar[];
    expectSame(jg({ nested: "scan" })(TH), jg({})(TH));
    const gj = (o: Options) => (th: Scalar[]) => jvp(chain(40, "sum", o), th, [1, 0])[1] as Scalar;
    expect(() => grad(gj({ nested: "scan" }), TH)).toThrow(/forward sweep/);
    expectSame(grad(gj({ nested: "any" }), TH), grad(gj({}), TH));
  });

  it("names the third derivatives that write a sweep out (grad of hvp, grad of grad of grad; a body of reals)", () => {
    const reals = (o: Options) => (th: Scalar[]): Scalar => scan((y: Scalar) => [add(y, mul(0.1, mul(th[1], sin(y))))], th[0], 40, o)[0];
    const gh = (o: Options) => (th: Scalar[]) => (hvp(reals(o), th, [1, 0]) as Scalar[])[0];
    expect(() => grad(gh({ nested: "scan" }), TH)).toThrow(/keeps no scan \(a `jvp` of a term that holds a reverse sweep/);
    expectSame(grad(gh({ nested: "any" }), TH), grad(gh({}), TH));
    // grad of grad of grad: the scan of rules is differentiated inside yet another trace
    const g3 = (o: Options) => (th: Scalar[]) => grad((u: Scalar[]) => (grad(reals(o), u) as Scalar[])[1], th)[0];
    expectSame(grad(g3({}), TH), grad(g3({ nested: "any" }), TH));
    expect(() => grad(g3({ nested: "scan" }), TH)).toThrow(/differentiated once more/);
  });

  it("does not throw at the outermost derivative, nor in jit's evaluated trace", () => {
    expectSame(grad(chain(40, "index", { nested: "scan" }), TH), grad(chain(40, "index", {}), TH));
    const g = jit((th: Scalar[]) => grad(chain(40, "index", { nested: "scan" }), th) as Scalar[]);
    expectSame(g(TH), grad(chain(40, "index", {}), TH));
  });

  it("does not throw for a short loop (written out at a few iterations whatever it holds)", () => {
    expectSame(hessian(chain(3, "index", { nested: "scan" }), TH), hessian(chain(3, "index", {}), TH));
  });

  it("rejects another value, naming the option", () => {
    expect(() => grad(chain(40, "sum", { nested: "never" as "scan" }), TH)).toThrow(/options\.nested is "never"/);
  });
});
