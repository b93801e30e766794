/**
 * The derivatives minimize calls again and again are kept: `hvpOf` and `hessianOf` trace f
 * once and replay it where its decisions hold (jit), with the numbers of core's `hvp` and
 * `hessian` bit for bit; a decision that changes traces again; a Hessian of tensors, which
 * core computes at the outermost level only, traces at every call. Counted: how often f runs.
 */
import ndarray from "ndarray";
import { describe, expect, it } from "vitest";
import { add, dot, hessian, hvp, lt, mul, sin, type Scalar, type Tensor } from "@wengert/core";
import { hessianOf, hvpOf } from "../src/core.js";

/** f(x) = Σ sin(xᵢ)·xᵢ₊₁ + x₀², or −x₀² where x₀ < 0 (a decision), counting its runs. */
function counted(): { f: (x: Scalar[]) => Scalar; runs: () => number } {
  let runs = 0;
  const f = (x: Scalar[]): Scalar => {
    runs++;
    let s: Scalar = lt(x[0], 0) ? (mul(-1, mul(x[0], x[0])) as Scalar) : (mul(x[0], x[0]) as Scalar);
    for (let i = 0; i + 1 < x.length; i++) s = add(s, mul(sin(x[i]), x[i + 1])) as Scalar;
    return s;
  };
  return { f, runs: () => runs };
}

const points = [
  [0.3, -1.2, 2.5],
  [0.7, 0.4, -0.9],
  [1.1, 2.2, 0.1],
];

describe("hvpOf and hessianOf: kept traces, core's numbers", () => {
  it("hvpOf traces f once for points that decide alike, and again where a decision changes; hvp's numbers bit for bit", () => {
    const { f, runs } = counted();
    const h = hvpOf(f as never);
    const v = [0.5, -1, 2];
    const got = points.map((x) => h(x, v));
    expect(runs()).toBe(1);
    // core's hvp runs f at every call
    expect(got).toEqual(points.map((x) => hvp(f, x, v)));
    expect(runs()).toBe(1 + points.length);
    // x₀ < 0 decides otherwise: traced again
    const other = h([-0.4, 1, 1], v);
    expect(runs()).toBe(2 + points.length);
    expect(other).toEqual(hvp(f, [-0.4, 1, 1], v));
  });

  it("hessianOf of reals traces f once for points that decide alike; hessian's numbers bit for bit", () => {
    const { f, runs } = counted();
    const h = hessianOf(f as never);
    const got = points.map((x) => h(x));
    const traced = runs();
    expect(traced).toBe(1);
    expect(got).toEqual(points.map((x) => hessian(f, x)));
  });

  it("hessianOf of a tree with tensors traces at every call (core's hessian of tensors runs at the outermost level), with its numbers", () => {
    let runs = 0;
    const g = (p: { a: Scalar; b: Tensor }): Scalar => {
      runs++;
      return mul(mul(p.a, p.a), dot(p.b, p.b) as Scalar) as Scalar;
    };
    const h = hessianOf(g as never);
    const at = (k: number) => ({ a: 1.5 + k, b: ndarray(new Float64Array([0.5, -2 + k]), [2]) });
    for (let k = 0; k < 3; k++) expect(h(at(k))).toEqual(hessian(g, at(k)));
    expect(runs).toBe(6);
  });
});
