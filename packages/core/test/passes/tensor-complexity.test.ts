/**
 * Reading a tensor element by element costs O(n) to differentiate, not O(n²).
 *
 * For n = 100, 1000, 10000 the derivative term's size is measured three ways: its
 * primitive instructions (`term.primitives`), all its instructions (`term.length`), and
 * the elements its instructions compute (Σ over instructions of the size of their
 * result, read from `term.tape`): n one-hot tensors of size n would keep the first two
 * linear but make the third quadratic. Each must grow by less than 11× when n grows 10×
 * and stay under a small constant times n. The gradients are checked as well.
 */
import ndarray from "ndarray";
import { describe, expect, it } from "vitest";
import {
  add, derivativeOf, exp, grad, index, mul, sin, slice, stack, sum, unstack, type NdArray, type Scalar, type Tensor, type TraceTerm,
} from "../../src/index.js";

const SIZES = [100, 1000, 10000];

/** Elements computed by the term's instructions (1 for a real). */
function work(term: TraceTerm): number {
  let w = 0;
  for (let v = 0; v < term.length; v++) w += Math.max(1, term.tape.dims(v).reduce((a, b) => a * b, 1));
  return w;
}

interface Sizes {
  primitives: number;
  length: number;
  work: number;
}

function measure(f: (x: Tensor) => unknown, make: (n: number) => Float64Array | NdArray, seed: (n: number) => unknown = () => 1): Sizes[] {
  return SIZES.map((n) => {
    const term = derivativeOf(f as never, make(n), seed(n));
    return { primitives: term.primitives, length: term.length, work: work(term) };
  });
}

/** Each measure grows by < 11× per 10× of n, and stays under c·n. */
function expectLinear(sizes: Sizes[], c: number): void {
  for (const key of ["primitives", "length", "work"] as const) {
    for (let k = 1; k < sizes.length; k++) {
      const ratio = sizes[k][key] / sizes[k - 1][key];
      expect(ratio, `${key}: ${sizes[k - 1][key]} → ${sizes[k][key]} for n ${SIZES[k - 1]} → ${SIZES[k]}`).toBeLessThan(11);
    }
    sizes.forEach((s, k) => expect(s[key], `${key} at n = ${SIZES[k]}`).toBeLessThan(c * SIZES[k]));
  }
}

const vec = (n: number) => Float64Array.from({ length: n }, (_, i) => Math.sin(i) + 0.01 * i);

describe("linear-time element access", () => {
  it("index(x, i) in a loop: s = Σ x_i · x_i", () => {
    const f = (x: Tensor) => {
      let s: Scalar = 0;
      const n = x.shape[0];
      for (let i = 0; i < n; i++) s = add(s, mul(index(x, i), index(x, i)));
      return s;
    };
    expectLinear(measure(f, vec), 12);
    const x = vec(10000);
    const g = grad(f, x) as Float64Array;
    expect(g).toBeInstanceOf(Float64Array);
    expect(g.every((gi, i) => Math.abs(gi - 2 * x[i]) <= 1e-12 * Math.abs(x[i]) + 1e-15)).toBe(true);
  });

  it("unstack of a vector: s = Σ_i (i + 1) · x_i²", () => {
    const f = (x: Tensor) => (unstack(x) as Scalar[]).reduce<Scalar>((s, e, i) => add(s, mul(i + 1, mul(e, e))), 0);
    expectLinear(measure(f, vec), 12);
    const x = vec(10000);
    const g = grad(f, x) as Float64Array;
    expect(g.every((gi, i) => Math.abs(gi - 2 * (i + 1) * x[i]) <= 1e-12 * Math.abs((i + 1) * x[i]) + 1e-15)).toBe(true);
  });

  it("index of an intermediate tensor (exp(x)), each element read once", () => {
    const f = (x: Tensor) => {
      const y = exp(mul(x, 0.01));
      let s: Scalar = 0;
      for (let i = 0; i < x.shape[0]; i++) s = add(s, index(y, i));
      return s;
    };
    expectLinear(measure(f, vec), 12);
    const x = vec(1000);
    const g = grad(f, x) as Float64Array;
    expect(g.every((gi, i) => Math.abs(gi - 0.01 * Math.exp(0.01 * x[i])) < 1e-15)).toBe(true);
  });

  it("index(x, [i, j]) over a matrix [n/4, 4]", () => {
    const mat = (n: number) => ndarray(vec(n), [n / 4, 4]);
    const f = (x: Tensor) => {
      let s: Scalar = 0;
      const [r, c] = x.shape;
      for (let i = 0; i < r; i++) for (let j = 0; j < c; j++) s = add(s, mul(j + 1, index(x, [i, j])));
      return s;
    };
    expectLinear(measure(f, mat), 12);
    const g = grad(f, mat(1000)) as NdArray;
    expect(g.shape).toEqual([250, 4]);
    expect(Array.from(g.data as Float64Array).every((gi, k) => gi === (k % 4) + 1)).toBe(true);
  });

  it("rows read with slice in a loop", () => {
    const mat = (n: number) => ndarray(vec(n), [n / 2, 2]);
    const f = (x: Tensor) => {
      let s: Scalar = 0;
      for (let i = 0; i < x.shape[0]; i++) s = add(s, sum(mul(slice(x, [i, 0], [i + 1, 2]), i % 3)));
      return s;
    };
    expectLinear(measure(f, mat), 16);
    const g = grad(f, mat(1000)) as NdArray;
    expect(Array.from(g.data as Float64Array).every((gi, k) => gi === Math.floor(k / 2) % 3)).toBe(true);
  });

  it("a vector built from n reals with stack, then reduced", () => {
    const f = (x: Tensor) => sum(mul(stack((unstack(x) as Scalar[]).map((e, i) => mul(e, i % 5))), x));
    expectLinear(measure(f, vec), 16);
    const x = vec(1000);
    const g = grad(f, x) as Float64Array;
    expect(g.every((gi, i) => Math.abs(gi - 2 * (i % 5) * x[i]) <= 1e-12)).toBe(true);
  });

  it("the derivative of the gradient (second order) of the index loop stays linear", () => {
    const f = (x: Tensor) => {
      let s: Scalar = 0;
      for (let i = 0; i < x.shape[0]; i++) s = add(s, mul(index(x, i), mul(index(x, i), index(x, i))));
      return s;
    };
    // the term of v ↦ Hv: rd of grad with a vector seed
    const sizes = measure((x) => grad(f, x as never), vec, (n) => Float64Array.from({ length: n }, () => 1));
    expectLinear(sizes, 40);
  });
});

describe("deep tensor traces", () => {
  it("2·10^5 tensor instructions differentiate without overflowing the stack", () => {
    const f = (x: Tensor) => {
      let y: Tensor = x;
      for (let i = 0; i < 200_000; i++) y = sin(y);
      return sum(y);
    };
    const g = grad(f, new Float64Array(2)) as Float64Array;
    expect(Array.from(g)).toEqual([1, 1]); // sin'(0) = 1 at every step
  });
});
