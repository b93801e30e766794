/**
 * Nested derivatives of a scan whose body works on tensors are scans (diff/scan-nested.ts):
 * grad of grad, hessian, hvp, jvp of grad, jacobian of grad and third orders give the numbers
 * of the loop written out, bit for bit, and the derivative's terms keep a number of
 * instructions that does not grow with the iterations (counted, not timed). Bodies:
 * elementwise, carry′ read by its rule (tanh), slices and concatenation along the axis
 * (GradBench ode's right-hand side), an index, a captured tensor used twice per step (RK2),
 * two carries (a tensor and a real), tensor ys used after the loop, decisions that change
 * part way; under jit and vmap too. Bodies whose cotangents the loop written out masks from block to block (slices
 * that leave elements out, a tensor output read by an index after the loop) nest with the masks (diff/cotangent-mask.ts);
 * a `where` on a traced condition is recorded iteration by iteration by the loop itself.
 */
import { describe, expect, it } from "vitest";
import { add, concat, grad, gt, hessian, hvp, index, jit, lt, mul, scan, sin, slice, sum, tanh, vmap, where, type Operand, type Scalar, type TensorArg } from "../../src/index.js";
import { reverseStats } from "../../src/eval/scan-reverse-run.js";
import { expectSame } from "../helpers/same-bits.js";
import { expectSameToThirdOrder, gradNorm, nestedSizes, type F } from "../helpers/nested.js";

const T = (v: unknown): TensorArg => v as TensorArg;
const M = 4;
const START = new Float64Array([1, 2, 3, 4]);

/** One step: the carry (a tensor, and a real where the body keeps two), a parameter a, the captured tensor x = a·(1, 2, 3, 4). */
type Step = (c: Operand[], a: Scalar, x: TensorArg) => Operand[];

const rhs = (x: TensorArg, y: TensorArg, a: Scalar): TensorArg => T(concat([slice(x, [0], [1]), T(mul(a, mul(slice(x, [1], [M]), slice(y, [0], [M - 1]))))], 0));

const BODIES: { name: string; step: Step; carry: number; ys?: boolean }[] = [
  { name: "elementwise (y + 0.1·a·sin y)", step: ([y], a) => [add(y, mul(0.1, mul(a, sin(T(y)))))], carry: 1 },
  { name: "carry′ read by its rule (tanh(a·y))", step: ([y], a) => [tanh(T(mul(a, y)))], carry: 1 },
  { name: "slices and concat along the axis (ode's right-hand side)", step: ([y], a, x) => [add(y, mul(0.1, rhs(x, T(y), a)))], carry: 1 },
  { name: "an index (y + 0.1·y₁·a·sin y)", step: ([y], a) => [add(y, mul(0.1, mul(index(T(y), [1]), mul(a, sin(T(y))))))], carry: 1 },
  {
    name: "RK2 over a captured tensor used twice",
    step: ([y], a, x) => {
      const k1 = mul(sin(T(y)), x);
      const k2 = mul(sin(T(add(y, mul(0.05, k1)))), x);
      return [add(y, mul(0.1 * 0.5, mul(a, add(k1, k2))))];
    },
    carry: 1,
  },
  { name: "two carries (a tensor, a real)", step: ([y, s], a) => [add(y, mul(0.1, mul(s, sin(T(y))))), add(mul(0.9, s), mul(0.01, mul(a, sum(T(y)))))], carry: 2 },
  { name: "tensor ys used after the loop", step: ([y], a) => [add(mul(0.9, y), mul(0.1, mul(a, sin(T(y)))))], carry: 1, ys: true },
  {
    name: "decisions that change part way (Σy crosses 5 once)",
    step: ([y], a) => [lt(sum(T(y)), 5) ? add(mul(1.1, y), mul(0.02, a)) : add(y, mul(0.001, mul(a, sin(T(y)))))],
    carry: 1,
  },
];

/** f(θ) = Σ carry² (+ 0.01 Σ Σ ys), the carry starting at θ₀·(1, 2, 3, 4) (and θ₁ for a real), a = θ₁: as a scan, and the loop written out. */
function scanAndLoop(step: Step, carry: number, ys: boolean): { S: (n: number) => F; L: (n: number) => F } {
  const init = (th: Scalar[]): Operand[] => [mul(th[0], START), ...(carry > 1 ? [th[1]] : [])] as Operand[];
  const out = (c: Operand[], path: Operand[]): Scalar => {
    let s: Scalar = c.reduce<Scalar>((t, v) => add(t, sum(T(mul(v, v)))) as Scalar, 0);
    for (const p of path) s = add(s, mul(0.01, sum(T(p)))) as Scalar;
    return s;
  };
  const S = (n: number): F => (th) => {
    const x = T(mul(th[1], START));
    const [c, path] = scan((cr: Operand[]) => {
      const next = step(cr, th[1], x);
      return ys ? [next, next[0]] : [next];
    }, init(th), n);
    return out(c as Operand[], (path ?? []) as Operand[]);
  };
  const L = (n: number): F => (th) => {
    const x = T(mul(th[1], START));
    let c = init(th);
    const path: Operand[] = [];
    for (let i = 0; i < n; i++) {
      c = step(c, th[1], x);
      if (ys) path.push(c[0]);
    }
    return out(c, path);
  };
  return { S, L };
}

describe("nested derivatives of a scan of tensors are scans, with the loop's numbers", () => {
  for (const { name, step, carry, ys } of BODIES) {
    const { S, L } = scanAndLoop(step, carry, ys ?? false);
    it(`${name}: grad∘grad, hessian, hvp, jvp∘grad, jacobian∘grad and third orders as the loop written out, bit for bit`, () => {
      expectSameToThirdOrder(S(30), L(30), [0.3, 0.8], [0.1, 0.2]);
    });
    // (iterations whose ys are read after the loop are placed as the loop written out places them)
    if (ys !== true) {
      it(`${name}: the terms of ∂f/∂θ₀, its derivative and grad∘grad keep as many instructions at 10⁴ iterations as at 100`, () => {
        const small = nestedSizes(S(100), [0.3, 0.8]);
        expect(nestedSizes(S(10_000), [0.3, 0.8])).toEqual(small);
        // the loop written out keeps its body's instructions per iteration
        expect(nestedSizes(L(100), [0.3, 0.8])[0]).toBeGreaterThan(100 * 3);
      });
    }
  }

  it("jit of grad∘grad, of hessian and of hvp (replayed, at several points) and vmap of grad∘grad give each point's numbers", () => {
    const { S, L } = scanAndLoop(BODIES[0].step, 1, false);
    const gg = (f: F) => (z: Scalar): Scalar => grad((w: Scalar) => grad((u: Scalar) => f([u, 0.8]), w), z) as Scalar;
    const points = [0.3, 0.35, 0.5];
    const jg = jit(gg(S(40)));
    const jh = jit((th: Scalar[]) => hessian(S(40), th));
    const jv = jit((th: Scalar[]) => hvp(S(40), th, [0.1, 0.2]));
    for (let round = 0; round < 3; round++) {
      for (const x of points) {
        expectSame(jg(x), gg(L(40))(x));
        expectSame(jh([x, 0.8]), hessian(L(40), [x, 0.8]));
        expectSame(jv([x, 0.8]), hvp(L(40), [x, 0.8], [0.1, 0.2]));
      }
    }
    expectSame(vmap(gg(S(40)))(Float64Array.from(points)), Float64Array.from(points, (x) => gg(L(40))(x) as number));
  });

  it("the reverse sweeps of grad∘grad store the carries their checkpoint policy asks for (√n, not n)", () => {
    const n = 2500;
    const f = (policy: "sqrt" | "every"): F => (th) => {
      const [y] = scan((y: Operand) => [add(y, mul(0.01, mul(th[1], sin(T(y)))))], mul(th[0], START) as Operand, n, { checkpoint: policy });
      return sum(T(mul(y, y))) as Scalar;
    };
    const every = grad(gradNorm(f("every")), [0.3, 0.8]);
    expect(reverseStats.maxStored).toBeGreaterThanOrEqual(n);
    expectSame(grad(gradNorm(f("sqrt")), [0.3, 0.8]), every);
    expect(reverseStats.maxStored).toBeLessThanOrEqual(2 * Math.ceil(Math.sqrt(n)));
    expect(reverseStats.swept).toBe(n);
  });

  it("xs of tensors computed from θ (a cotangent each): grad∘grad and third orders as the loop's, the terms keeping per iteration the xs' own instructions, fewer than the body's", () => {
    const xsOf = (th: Scalar[], n: number): Operand[] =>
      Array.from({ length: n }, (_, i) => mul(th[1], Float64Array.from([0.5, 0.25, 1.5, 0.3], (d) => d * (1 + (i % 3)))) as Operand);
    const step = (y: Operand, x: Operand, a: Scalar): Operand => add(mul(0.5, mul(a, sin(T(y)))), x) as Operand;
    const S = (n: number): F => (th) => {
      const [y] = scan((y: Operand, x: Operand) => [step(y, x, th[1])], mul(th[0], START) as Operand, xsOf(th, n));
      return sum(T(mul(y, y))) as Scalar;
    };
    const L = (n: number): F => (th) => {
      let y = mul(th[0], START) as Operand;
      for (const x of xsOf(th, n)) y = step(y, x, th[1]);
      return sum(T(mul(y, y))) as Scalar;
    };
    expectSameToThirdOrder(S(20), L(20), [0.3, 0.8], [0.1, 0.2]);
    const perIteration = (g: (n: number) => F): number[] => {
      const [a, b] = [nestedSizes(g(100), [0.3, 0.8]), nestedSizes(g(200), [0.3, 0.8])];
      return a.map((v, j) => (b[j] - v) / 100);
    };
    const [scanned, loop] = [perIteration(S), perIteration(L)];
    scanned.forEach((v, j) => expect(v).toBeLessThan(loop[j] / 2));
  });

  it("bodies whose cotangents the loop written out masks nest with the masks, with the loop's numbers; a where on a traced condition is recorded per iteration", () => {
    // a where on a traced condition: its decisions are recorded iteration by iteration (by the loop itself)
    const decided: Step = ([y], a) => [where(gt(T(y), 0.5), T(mul(a, sin(T(y)))), T(mul(0.9, y)))];
    // slices that leave elements out: the carry's cotangent masked to the first two elements
    const sliced: Step = ([y], a) => [concat([T(mul(a, slice(T(y), [0], [2]))), sin(slice(T(y), [0], [2]))], 0)];
    for (const [step, nests] of [[decided, false], [sliced, true]] as const) {
      const { S, L } = scanAndLoop(step, 1, false);
      expectSameToThirdOrder(S(20), L(20), [0.3, 0.8], [0.1, 0.2]);
      const [small, large] = [nestedSizes(S(100), [0.3, 0.8])[0], nestedSizes(S(200), [0.3, 0.8])[0]];
      if (nests) expect(large).toBe(small);
      else expect(large).toBeGreaterThan(small);
    }
  });

  it("a tensor carry read by an index after the loop (RK2 of ode's right-hand side) nests, with the loop's numbers", () => {
    const rk2 = (x: TensorArg, y: TensorArg): TensorArg => {
      const k1 = rhs(x, y, 1);
      const k2 = rhs(x, T(add(y, mul(0.05, k1))), 1);
      return T(add(y, mul(0.1, add(k1, k2))));
    };
    const S = (x: TensorArg): Scalar => index(T(scan((y: Operand) => [rk2(x, T(y)) as Operand], mul(0.5, x) as Operand, 12)[0]), [3]) as Scalar;
    const L = (x: TensorArg): Scalar => {
      let y = T(mul(0.5, x));
      for (let i = 0; i < 12; i++) y = rk2(x, y);
      return index(y, [3]) as Scalar;
    };
    const total = (g: unknown): Scalar => sum(T(g)) as Scalar;
    const x = new Float64Array([0.5, 0.6, 0.7, 0.8]);
    expectSame(grad((v: TensorArg) => total(grad(S, v)), T(x)), grad((v: TensorArg) => total(grad(L, v)), T(x)));
  });
});
