/**
 * Nested derivatives of a scan are scans (diff/scan-nested.ts): grad of grad, hessian,
 * hvp, jvp of grad and third orders of a function that calls scan give the numbers of the
 * loop written out, bit for bit, and keep a number of instructions that does not grow with
 * the iterations (counted, not timed), the reverse sweeps storing the carries their
 * checkpoint policy asks for. Bodies whose rules read computed values, carry′ itself (tanh,
 * exp), two carries, a captured value, ys used after the loop, and decisions that change
 * part way; a scan over data is scan-nested-xs.test.ts's, and checkpoint(f), written out, keeps the loop's numbers.
 */
import { describe, expect, it } from "vitest";
import {
  add,
  checkpoint,
  exp,
  grad,
  hessian,
  hvp,
  jacobian,
  jit,
  lt,
  mul,
  scan,
  sin,
  sub,
  tanh,
  traceOf,
  vmap,
  type Scalar,
} from "../../src/index.js";
import { reverseStats } from "../../src/eval/scan-reverse-run.js";
import { expectSame } from "../helpers/same-bits.js";
import { expectSameOverPoints, expectSameToThirdOrder, gradNorm, nestedSizes, sumSquares, type F } from "../helpers/nested.js";

type Body = (carry: Scalar[], a: Scalar) => Scalar[];

const BODIES: { name: string; body: Body; carry: number }[] = [
  { name: "y ← a·sin y", body: ([y], a) => [mul(a, sin(y))], carry: 1 },
  { name: "rules reading computed values (y·y)", body: ([y], a) => [add(mul(y, mul(y, 0.3)), mul(a, 0.1))], carry: 1 },
  { name: "rules reading carry′ (tanh)", body: ([y], a) => [tanh(mul(a, y))], carry: 1 },
  { name: "rules reading carry′ (exp of sin)", body: ([y], a) => [exp(mul(a, sin(y)))], carry: 1 },
  { name: "decisions that change part way", body: ([y], a) => [lt(y, 1) ? add(mul(1.2, y), mul(a, 0.05)) : mul(0.5, sin(y))], carry: 1 },
  {
    name: "two carries (Euler steps of Lotka–Volterra)",
    body: ([u, v], a) => {
      const uv = mul(u, v);
      return [add(u, mul(0.01, sub(mul(a, u), uv))), add(v, mul(0.01, sub(uv, mul(3, v))))];
    },
    carry: 2,
  },
  { name: "two carries, one read as carry′", body: ([u, v], a) => [tanh(add(mul(a, u), v)), mul(0.9, u)], carry: 2 },
];

/** f(θ) = Σ carry² (+ 0.01 Σ ys) after n steps, the carry starting at θ's first leaves, a = θ's last: as a scan, or the loop written out. */
function model(body: Body, carry: number, n: number, ys: boolean, options?: { checkpoint: "every" | "sqrt" | number }): { scanned: F; loop: F } {
  const out = (c: Scalar[], path: Scalar[]): Scalar => (ys ? add(sumSquares(c), path.reduce<Scalar>((s, p) => add(s, mul(0.01, p)), 0)) : sumSquares(c));
  const scanned: F = (th) => {
    const a = th[th.length - 1];
    const [c, path] = scan(
      (cr: Scalar[]) => {
        const next = body(cr, a);
        return [next, next[0]];
      },
      th.slice(0, carry),
      n,
      options,
    );
    return out(c as Scalar[], path as Scalar[]);
  };
  const loop: F = (th) => {
    const a = th[th.length - 1];
    let c = th.slice(0, carry);
    const path: Scalar[] = [];
    for (let i = 0; i < n; i++) {
      c = body(c, a);
      path.push(c[0]);
    }
    return out(c, path);
  };
  return { scanned, loop };
}

describe("nested derivatives of a scan: the loop's numbers, bit for bit", () => {
  for (const { name, body, carry } of BODIES) {
    for (const ys of [false, true]) {
      it(`${name}${ys ? ", ys used" : ""}: grad∘grad, hessian, hvp, jvp∘grad, third orders`, () => {
        const { scanned: S, loop: L } = model(body, carry, 23, ys);
        const th = carry === 1 ? [0.3, 0.8] : [1, 0.5, 1.5];
        const v = th.map((_, i) => 0.1 * (i + 1));
        expectSameToThirdOrder(S, L, th, v);
      });
    }
  }
  // carries passed on unchanged, swapped, or given one cotangent twice: states of the sweep that are one variable, or none
  const PAIRS: Record<string, (c: Scalar[], a: Scalar) => Scalar[]> = {
    swapped: ([u, v], a) => [v, mul(a, u)],
    "one passed on unchanged": ([u, v], a) => [tanh(add(mul(a, u), v)), v],
    "one value twice": ([u, v], a) => {
      const w = mul(a, sin(add(u, v)));
      return [w, add(w, 0.1)];
    },
    "sums passed through": ([u, v], a) => [add(u, v), add(v, a)],
  };
  for (const [name, body] of Object.entries(PAIRS)) {
    it(`two carries, ${name}: jacobian of grad, hessian, grad∘grad∘grad`, () => {
      const out = (c: Scalar[]): Scalar => add(c[0], mul(c[1], 0.5));
      const S: F = (th) => out(scan((c: Scalar[]) => [body(c, th[2])], [th[0], th[1]], 30)[0] as Scalar[]);
      const L: F = (th) => {
        let c = [th[0], th[1]];
        for (let i = 0; i < 30; i++) c = body(c, th[2]);
        return out(c);
      };
      const th = [0.3, 0.4, 0.9];
      expectSame(jacobian((x: Scalar[]) => grad(S, x), th), jacobian((x: Scalar[]) => grad(L, x), th));
      expectSame(hessian(S, th), hessian(L, th));
      expectSame(grad(gradNorm(gradNorm(S)), th), grad(gradNorm(gradNorm(L)), th));
    });
  }
  it("each checkpoint policy, and under jit and vmap", () => {
    const body = BODIES[3].body;
    for (const checkpoint of ["every", "sqrt", 7] as const) {
      const { scanned: S, loop: L } = model(body, 1, 50, false, { checkpoint });
      expectSame(hvp(S, [0.3, 0.8], [1, 0.5]), hvp(L, [0.3, 0.8], [1, 0.5]));
      expectSame(grad(gradNorm(S), [0.3, 0.8]), grad(gradNorm(L), [0.3, 0.8]));
    }
    const { scanned: S, loop: L } = model(body, 1, 40, false);
    const js = jit((x: Scalar[]) => hvp(S, x, [1, 0.5]));
    for (const x of [0.3, 0.35, 2]) expectSame(js([x, 0.8]), hvp(L, [x, 0.8], [1, 0.5]));
    const f = (y: Scalar): Scalar => grad((z: Scalar) => grad((w: Scalar) => S([w, 0.8]), z), y);
    const g = (y: Scalar): Scalar => grad((z: Scalar) => grad((w: Scalar) => L([w, 0.8]), z), y);
    expectSame(vmap(f)(new Float64Array([0.3, 0.5, 1.5])), vmap(g)(new Float64Array([0.3, 0.5, 1.5])));
  });
  it("vmap and jit of grad∘grad over a long loop (a stacked scan in their traces) give each point's numbers", () => {
    const { scanned: S, loop: L } = model(BODIES[0].body, 1, 600, false);
    expectSameOverPoints(S, L, [0.3, 0.5, 1.5, -0.7]);
  });
  it("a carry's cotangent that comes in as a captured value itself (seed 1: 1·a is a) is passed on apart from the value's own", () => {
    const n = 12;
    const S: F = ([y0, a, b]) => scan((y: Scalar) => [add(mul(a, y), b)], y0, n)[0];
    const L: F = ([y0, a, b]) => {
      let y = y0;
      for (let i = 0; i < n; i++) y = add(mul(a, y), b);
      return y;
    };
    const th = [0.3, 0.5, 0.7];
    expectSame(jacobian((x: Scalar[]) => grad(S, x), th), jacobian((x: Scalar[]) => grad(L, x), th));
  });
  it("closed form: y ← a·y, whose n-th carry is aⁿ y₀", () => {
    const n = 30;
    const f: F = ([y0, a]) => scan(([y]: Scalar[]) => [[mul(a, y)]], [y0], n)[0][0];
    const [y0, a] = [0.7, 1.05];
    const h = hessian(f, [y0, a]) as number[][];
    const cross = n * a ** (n - 1);
    expect(h[0][0]).toBe(0);
    expect(h[0][1]).toBeCloseTo(cross, 10);
    expect(h[1][0]).toBeCloseTo(cross, 10);
    expect(h[1][1]).toBeCloseTo(n * (n - 1) * a ** (n - 2) * y0, 9);
    const third = grad((x: Scalar[]) => (hessian(f, x) as Scalar[][])[1][1], [y0, a]) as number[];
    expect(third[0]).toBeCloseTo(n * (n - 1) * a ** (n - 2), 9);
    expect(third[1]).toBeCloseTo(n * (n - 1) * (n - 2) * a ** (n - 3) * y0, 7);
  });
  it("a scan over data (scan-nested-xs.test.ts), and checkpoint(f), written out where differentiated again, keep the loop's numbers", () => {
    const xs = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8];
    const S: F = ([y0, a]) => scan((y: Scalar, x: Scalar) => [add(mul(a, sin(y)), x)], y0, xs)[0];
    const L: F = ([y0, a]) => xs.reduce<Scalar>((y, x) => add(mul(a, sin(y)), x), y0);
    expectSame(grad(gradNorm(S), [0.3, 0.9]), grad(gradNorm(L), [0.3, 0.9]));
    const layer = (y: Scalar, a: Scalar): Scalar => {
      let h = y;
      for (let i = 0; i < 5; i++) h = tanh(mul(a, h));
      return h;
    };
    const kept = checkpoint(layer);
    const C: F = ([y0, a]) => kept(kept(y0, a), a);
    const W: F = ([y0, a]) => layer(layer(y0, a), a);
    expectSame(hessian(C, [0.3, 0.9]), hessian(W, [0.3, 0.9]));
    expectSame(grad(gradNorm(C), [0.3, 0.9]), grad(gradNorm(W), [0.3, 0.9]));
  });
});

describe("nested derivatives of a scan: memory that does not grow with the iterations", () => {
  /** y ← a·sin y, n times, no ys (a loop whose trace is a few instructions). */
  const chain =
    (n: number, checkpoint: "every" | "sqrt" = "every"): F =>
    ([y0, a]) =>
      scan((y: Scalar) => [mul(a, sin(y))], y0, n, { checkpoint })[0];
  it("the derivative term of grad, traced inside another grad, is a few instructions for any n", () => {
    const small = nestedSizes(chain(100), [0.3, 0.8]);
    expect(nestedSizes(chain(10_000), [0.3, 0.8])).toEqual(small);
    // the loop written out: some instructions per iteration
    expect(small[0]).toBeLessThan(40);
    expect(traceOf((th: Scalar[]) => (grad(model(BODIES[0].body, 1, 100, false).loop, th) as Scalar[])[0], [0.3, 0.8]).length).toBeGreaterThan(500);
  });
  it("grad∘grad at n = 10⁴: the loop's numbers, its sweeps storing about 2√n carries under 'sqrt'", () => {
    const n = 10_000;
    const loop: F = ([y0, a]) => {
      let y = y0;
      for (let i = 0; i < n; i++) y = mul(a, sin(y));
      return y;
    };
    expectSame(grad(gradNorm(chain(n, "sqrt")), [0.3, 0.8]), grad(gradNorm(loop), [0.3, 0.8]));
    // the last sweep run: the forward scan's, from ⌈√n⌉ checkpoints, one segment at a time
    expect(reverseStats.maxStored).toBeLessThanOrEqual(2 * Math.ceil(Math.sqrt(n)));
    expect(reverseStats.swept).toBe(n);
  });
});
