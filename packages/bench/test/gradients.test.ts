/**
 * The hand-written gradients (the reference every candidate is checked against)
 * against central differences and against wengert's; W6's RK4 adjoint especially.
 * No peer library is loaded here.
 */
import { describe, expect, it } from "vitest";
import { isUnsupported } from "../src/types.js";
import { relativeError, toVec } from "../src/check.js";
import { fdAlong, fdGradient, fdJacobianRows, fdPartial } from "./helpers/fd.js";
import {
  rosenbrock,
  rosenbrockGrad,
  rosenbrockInput,
  rosenbrockTensors,
  rosenbrockWengertGrad,
  w1,
  w1Tensors,
} from "../src/workloads/w1-rosenbrock.js";
import { mlpData, mlpGrad, mlpGradLength, mlpLoss, mlpParams, w2, wengertW2, D, H, K, type MlpParams } from "../src/workloads/w2-mlp.js";
import { control, controlGrad, controlInput, controlWengertGrad, g, gPrime, w3 } from "../src/workloads/w3-control.js";
import { rosenbrockHvp, rosenbrockWengertHvp, w4 } from "../src/workloads/w4-hvp.js";
import { rosenbrockHessian, rosenbrockHessianRows, w4Hessian } from "../src/workloads/w4-hessian.js";
import { minimalControlGrad, minimalGrad } from "../src/tape-floor.js";
import { perExampleInput, w7 } from "../src/workloads/w7-per-example.js";
import { chain, chainDerivative, chainWengertDerivative, w5, X0 } from "../src/workloads/w5-chain.js";
import { odeGrad, odeLoss, odeWengertGrad, THETA, DT, w6 } from "../src/workloads/w6-ode.js";

describe("W1 rosenbrock", () => {
  it("hand-written gradient = central differences", () => {
    const x = rosenbrockInput(50);
    expect(relativeError(rosenbrockGrad(x), fdGradient(rosenbrock, x, 1e-5))).toBeLessThan(1e-8);
  });
  it("hand-written gradient = wengert's (n = 1000)", () => {
    const x = rosenbrockInput(1000);
    expect(relativeError(rosenbrockWengertGrad(Array.from(x)), rosenbrockGrad(x))).toBeLessThan(1e-12);
  });
  it("the tape floor's minimal tape gives wengert's gradient bit for bit (the same operations, the same order of adjoint sums), at sizes that grow its columns", () => {
    for (const n of [2, 1000, 3000]) {
      const x = rosenbrockInput(n);
      const minimal = Array.from(minimalGrad(x));
      expect(minimal).toEqual(rosenbrockWengertGrad(Array.from(x)));
      expect(relativeError(minimal, rosenbrockGrad(x))).toBeLessThan(1e-12);
    }
  });
  it("the workload's candidates agree at n = 1000", () => {
    const w = w1(1000);
    expect(w.primal()).toBeCloseTo(rosenbrock(rosenbrockInput(1000)), 12);
    expect(isUnsupported(w.wengert)).toBe(false);
    if (!isUnsupported(w.wengert)) expect(relativeError(toVec(w.wengert()), toVec(w.hand()))).toBeLessThan(1e-12);
  });
  it("written with wengert's tensors, as the peers write it: grad and compileGrad = hand-written (n = 1000)", () => {
    const w = w1Tensors(1000);
    expect(w.primal()).toBeCloseTo(rosenbrock(rosenbrockInput(1000)), 12);
    expect(isUnsupported(w.wengert)).toBe(false);
    if (!isUnsupported(w.wengert)) expect(relativeError(toVec(w.wengert()), toVec(w.hand()))).toBeLessThan(1e-12);
    expect(relativeError(toVec(w.wengertCompiled!()), toVec(w.hand()))).toBeLessThan(1e-12);
    expect(relativeError([rosenbrockTensors(rosenbrockInput(1000) as never) as number], [rosenbrock(rosenbrockInput(1000))])).toBeLessThan(1e-12);
  });
});

describe("W2 mlp", () => {
  const data = mlpData();
  const p = mlpParams();
  const flat = (q: MlpParams) => Float64Array.from([...q.W1, ...q.b1, ...q.W2, ...q.b2]);
  const unflat = (v: Float64Array): MlpParams => {
    let o = 0;
    const take = (n: number) => v.slice(o, (o += n));
    return { W1: take(D * H), b1: take(H), W2: take(H * K), b2: take(K) };
  };
  const loss = (v: ArrayLike<number>) => mlpLoss(unflat(Float64Array.from(v)), data);

  it("hand-written gradient = central differences (every 97th component, and the first of b1, W2, b2)", () => {
    const v = flat(p);
    const grad = mlpGrad(p, data);
    expect(grad.length).toBe(mlpGradLength);
    const idx = [...Array.from({ length: Math.ceil(mlpGradLength / 97) }, (_, k) => k * 97), D * H, D * H + 5, D * H + H, D * H + H + H * K];
    for (const i of idx) {
      const fd = fdPartial(loss, v, i, 1e-5);
      expect(Math.abs(grad[i] - fd)).toBeLessThan(1e-8 * Math.max(1, Math.abs(fd)));
    }
  });
  it("wengert's W2 (tensor ops, float64) = the hand-written gradient", () => {
    expect(isUnsupported(w2().wengert)).toBe(false);
    const g = wengertW2()();
    expect(g.length).toBe(mlpGradLength);
    expect(relativeError(g, mlpGrad(p, data))).toBeLessThan(1e-12);
  });
  it("wengert's W2 by compileGrad: grad's numbers, on the trace and on replays", () => {
    const run = w2().wengertCompiled!;
    const want = wengertW2()();
    for (let k = 0; k < 3; k++) expect(run()).toEqual(want);
  });
});

describe("W3 control flow", () => {
  it("the tape floor's minimal tape gives wengert's gradient bit for bit (Newton's loop and the branch op for op), at sizes that grow its columns", () => {
    for (const m of [3, 1000, 3000]) {
      const a = controlInput(m);
      const minimal = Array.from(minimalControlGrad(a));
      expect(minimal).toEqual(controlWengertGrad(Array.from(a)));
      expect(relativeError(minimal, controlGrad(a))).toBeLessThan(1e-12);
    }
  });
  it("g′ = central differences away from the branch point a = 1", () => {
    for (const a of [0.5, 0.73, 0.99, 1.01, 1.5, 2.2, 2.499]) {
      const fd = (g(a + 1e-6) - g(a - 1e-6)) / 2e-6;
      expect(Math.abs(gPrime(a) - fd)).toBeLessThan(1e-7);
    }
  });
  it("hand-written gradient = central differences of f on a (m = 40, no a_k at the branch point)", () => {
    const a = Float64Array.from({ length: 40 }, (_, k) => 0.51 + (2 * k) / 40);
    expect(relativeError(controlGrad(a), fdGradient(control, a, 1e-6))).toBeLessThan(1e-8);
  });
  it("hand-written gradient = wengert's (m = 1000, including a_250 = 1 where y > 1 is a tie)", () => {
    const a = controlInput(1000);
    expect(a[250]).toBe(1);
    expect(relativeError(controlWengertGrad(Array.from(a)), controlGrad(a))).toBeLessThan(1e-12);
  });
  it("the workload has a vectorised and a per-element form of the peers", () => {
    expect(w3().peers.map((v) => v.label)).toEqual(["", "per element"]);
  });
});

describe("W4 hvp", () => {
  it("hand-written H·v = central differences of the gradient along v", () => {
    const n = 60;
    const x = rosenbrockInput(n);
    const v = Float64Array.from({ length: n }, (_, i) => Math.sin(3 * i) + 0.5);
    expect(relativeError(rosenbrockHvp(x, v), fdAlong(rosenbrockGrad, x, v, 1e-6))).toBeLessThan(1e-7);
  });
  it("hand-written H·v = wengert's hvp (n = 1000, v = ones)", () => {
    const w = w4(1000);
    if (isUnsupported(w.wengert)) throw new Error("wengert should do W4");
    expect(relativeError(toVec(w.wengert()), toVec(w.hand()))).toBeLessThan(1e-12);
    const x = Array.from(rosenbrockInput(30));
    const v = x.map((_, i) => (i % 3) - 1);
    expect(relativeError(rosenbrockWengertHvp(x, v), rosenbrockHvp(x, v))).toBeLessThan(1e-12);
  });
  it("jit of the HVP: hvp's numbers, traced once, then replayed and compiled", () => {
    const w = w4(200);
    if (isUnsupported(w.wengert)) throw new Error("wengert should do W4");
    const want = Array.from(toVec(w.wengert()));
    for (let k = 0; k < 4; k++) expect(Array.from(toVec(w.wengertCompiled!()))).toEqual(want);
  });
});

describe("W4 dense Hessian", () => {
  it("hand-written Hessian = central differences of the gradient (n = 20)", () => {
    const n = 20;
    const x = rosenbrockInput(n);
    const H = rosenbrockHessian(x);
    // the gradient's derivative in x_j: the Hessian's column j
    fdJacobianRows(rosenbrockGrad, x, 1e-6).forEach((column, j) => expect(relativeError(H.filter((_, k) => k % n === j), column)).toBeLessThan(1e-7));
  });
  it("the hand-written Hessian as fresh rows = the one in a buffer, to the bit, and its rows are new at each call", () => {
    const x = rosenbrockInput(40);
    const rows = rosenbrockHessianRows(x);
    const [a, b] = [rows(), rows()];
    expect(toVec(a)).toEqual(rosenbrockHessian(x));
    expect(a[3]).not.toBe(b[3]);
    expect(w4Hessian(40, "rows").hand()).toEqual(a);
  });
  it("every wengert candidate = the hand-written Hessian, bit for bit among themselves (n = 40)", () => {
    const runs = [w4Hessian(40), w4Hessian(40, "into"), w4Hessian(40, "lanes"), w4Hessian(40, "rows")].flatMap((w) => (isUnsupported(w.wengert) ? [] : [w.wengert, w.wengertCompiled!]));
    // they return rows; laid out row-major as the harness checks them
    const want = Array.from(toVec(runs[0]()));
    expect(relativeError(want, rosenbrockHessian(rosenbrockInput(40)))).toBeLessThan(1e-12);
    for (const run of runs) for (let k = 0; k < 4; k++) expect(Array.from(toVec(run()))).toEqual(want);
  });
});

describe("W7 per-example gradients", () => {
  it("hand-written per-example gradients = wengert's vmap(grad) and jit of it, through every loop count and both branches", () => {
    const w = w7(2000);
    if (isUnsupported(w.wengert)) throw new Error("wengert should do W7");
    const hand = toVec(w.hand());
    expect(relativeError(toVec(w.wengert()), hand)).toBeLessThan(1e-12);
    const want = Array.from(toVec(w.wengert()));
    for (let k = 0; k < 4; k++) expect(Array.from(toVec(w.wengertCompiled!()))).toEqual(want);
    // the points take every branch: some below 1 (sin), some above (y³)
    const a = perExampleInput(2000);
    expect(a.some((x) => x < 1) && a.some((x) => x > 1)).toBe(true);
  });
});

describe("W5 deep chain", () => {
  it("hand-written derivative = central differences (N = 1000)", () => {
    const fd = (chain(X0 + 1e-6, 1000) - chain(X0 - 1e-6, 1000)) / 2e-6;
    expect(Math.abs(chainDerivative(X0, 1000) - fd)).toBeLessThan(1e-8);
  });
  it("hand-written derivative = wengert's (N = 1000 and N = 100000)", () => {
    expect(relativeError([chainWengertDerivative(X0, 1000)], [chainDerivative(X0, 1000)])).toBeLessThan(1e-12);
    const w = w5(100000);
    if (isUnsupported(w.wengert)) throw new Error("wengert should do W5");
    expect(relativeError(toVec(w.wengert()), toVec(w.hand()))).toBeLessThan(1e-11);
  });
});

describe("W5's float32 tolerance", () => {
  it("covers the error of the same recurrence in float32", () => {
    const f = Math.fround;
    for (const N of [100000, 200000]) {
      let y = f(X0);
      let d = f(1);
      for (let i = 0; i < N; i++) {
        d = f(d * f(f(0.9) + f(f(0.1) * f(Math.cos(y)))));
        y = f(f(f(0.9) * y) + f(f(0.1) * f(Math.sin(y))));
      }
      const err = relativeError([d], [chainDerivative(X0, N)]);
      expect(err).toBeGreaterThan(1e-3); // the default float32 tolerance would not do
      expect(err).toBeLessThan(w5(N).float32Tolerance!.tol / 2);
    }
  });
});

describe("W6 ode: the discrete adjoint of RK4", () => {
  const fdTheta = (steps: number, h: number) => fdGradient((th) => odeLoss(th, steps), THETA, h);
  for (const steps of [1, 2, 7, 1000]) {
    it(`adjoint = central differences (${steps} step${steps > 1 ? "s" : ""})`, () => {
      expect(relativeError(odeGrad(THETA, steps), fdTheta(steps, 1e-6))).toBeLessThan(1e-8);
    });
  }
  it("adjoint = central differences at another θ and dt", () => {
    const th = [0.7, 1.3, 2.1, 0.4];
    const dt = 0.05;
    const fd = fdGradient((t) => odeLoss(t, 200, dt), th, 1e-6);
    expect(relativeError(odeGrad(th, 200, dt), fd)).toBeLessThan(1e-8);
  });
  it("one step, by hand: the adjoint of RK4 with 1 step equals forward sensitivities", () => {
    // Forward-mode sensitivity of one RK4 step along each θ direction, written independently.
    const step = (th: number[], dth: number[]) => {
      const f = (u: number, v: number, du: number, dv: number): [number, number, number, number] => [
        th[0] * u - th[1] * u * v,
        th[3] * u * v - th[2] * v,
        dth[0] * u + th[0] * du - dth[1] * u * v - th[1] * (du * v + u * dv),
        dth[3] * u * v + th[3] * (du * v + u * dv) - dth[2] * v - th[2] * dv,
      ];
      const [u, v, du, dv] = [1, 1, 0, 0];
      const k1 = f(u, v, du, dv);
      const k2 = f(u + (DT / 2) * k1[0], v + (DT / 2) * k1[1], du + (DT / 2) * k1[2], dv + (DT / 2) * k1[3]);
      const k3 = f(u + (DT / 2) * k2[0], v + (DT / 2) * k2[1], du + (DT / 2) * k2[2], dv + (DT / 2) * k2[3]);
      const k4 = f(u + DT * k3[0], v + DT * k3[1], du + DT * k3[2], dv + DT * k3[3]);
      const comb = (j: number) => (DT / 6) * (k1[j] + 2 * k2[j] + 2 * k3[j] + k4[j]);
      const [U, V, dU, dV] = [u + comb(0), v + comb(1), du + comb(2), dv + comb(3)];
      return 2 * U * dU + 2 * V * dV;
    };
    const th = Array.from(THETA);
    const forward = [0, 1, 2, 3].map((i) => step(th, [0, 1, 2, 3].map((j) => (j === i ? 1 : 0))));
    expect(relativeError(odeGrad(THETA, 1), forward)).toBeLessThan(1e-14);
  });
  it("adjoint = wengert's gradient (1000 steps)", () => {
    expect(relativeError(odeWengertGrad(Array.from(THETA)), odeGrad(THETA))).toBeLessThan(1e-12);
    const w = w6();
    if (isUnsupported(w.wengert)) throw new Error("wengert should do W6");
    expect(relativeError(toVec(w.wengert()), toVec(w.hand()))).toBeLessThan(1e-12);
  });
});

describe("relativeError", () => {
  it("is relative to the largest reference component, and infinite on a mismatch", () => {
    expect(relativeError([1, 2.002], [1, 2])).toBeCloseTo(0.001, 12);
    expect(relativeError([1], [1, 2])).toBe(Infinity);
    expect(relativeError([NaN], [1])).toBe(Infinity);
    expect(relativeError([0, 0], [0, 0])).toBe(0);
  });
});
