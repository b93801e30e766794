/**
 * scan and checkpoint against the loop written out: the same numbers, bit for bit
 * (Object.is on every number, tensors element by element), for the value, grad, jvp,
 * fd, hessian and nested grad to third order, on loops whose iterations change their
 * decisions part way, carry literals, tensors, ys and xs, capture values, nest. Memory
 * is counted, not timed: the instructions a trace keeps, the carries a reverse sweep
 * stores. Each program is written twice, as a scan and as the loop itself.
 */
import { afterEach, describe, expect, it } from "vitest";
import {
  abs, add, checkpoint, compileGrad, primal, concat, cos, defineOp, derivativeOf, div, exp, fd, grad, hessian, hvp, index, jacobian, jvp, lt, mul, scan, ShapeError, sin, slice, sub, sum, taylor,
  TieError, traceOf, vjp, WengertError, type Operand, type Scalar, type TensorArg,
} from "../../src/index.js";
import { reverseStats } from "../../src/eval/scan-reverse-run.js";
import { scanCode } from "../../src/jit/scan-code.js";
import { expectSame } from "../helpers/same-bits.js";

type F = (x: never) => unknown;

/** Sum of a cotangent's numbers (reals, tensors): a real to differentiate again. */
const total = (g: unknown): Scalar => {
  if (typeof g === "number" || (g !== null && typeof g === "object" && g.constructor?.name === "Real")) return g as Scalar;
  if (Array.isArray(g)) return g.reduce((s: Scalar, t) => add(s, total(t)), 0);
  return sum(g as Operand) as Scalar;
};

interface Case {
  readonly name: string;
  readonly scanned: F;
  readonly loop: F;
  readonly x: unknown;
  readonly v: unknown;
  /** Transformations whose results are compared (default: all). */
  readonly only?: readonly string[];
}

const TRANSFORMS: Record<string, (f: F, x: unknown, v: unknown) => unknown> = {
  value: (f, x) => f(x as never),
  grad: (f, x) => grad(f as never, x as never),
  jvp: (f, x, v) => jvp(f as never, x as never, v as never),
  fd: (f, x, v) => fd(f as never, x as never, v as never),
  hessian: (f, x) => hessian(f as never, x as never),
  "grad of grad": (f, x) => grad((y: never) => total(grad(f as never, y)), x as never),
  "grad³": (f, x) => grad((y: never) => total(grad((z: never) => total(grad(f as never, z)), y)), x as never),
  "grad of jvp": (f, x, v) => grad((y: never) => total(jvp(f as never, y, v as never)[1]), x as never),
};

const N = 25;
const DT = 0.01;
const chainStep = (y: Scalar): Scalar => add(mul(0.9, y), mul(0.1, sin(y)));
const lotka = (th: readonly Scalar[]) => ([u, v]: readonly Scalar[]): Scalar[] => {
  const [a, b, c, d] = th;
  const uv = mul(u, v);
  return [add(u, mul(DT, sub(mul(a, u), mul(b, uv)))), add(v, mul(DT, sub(mul(d, uv), mul(c, v))))];
};
const branchy = (y: Scalar): Scalar => (lt(y, 1) ? add(mul(1.2, y), 0.05) : mul(0.5, sin(y)));
const LITERAL_XS = Array.from({ length: N }, (_, i) => [0, 1, -0, 0.5, 2][i % 5]);
const T = (v: Operand): TensorArg => v as TensorArg;
const rhs = (x: Operand, y: Operand, n: number): Operand => concat([slice(T(x), [0], [1]), T(mul(slice(T(x), [1], [n]), slice(T(y), [0], [n - 1])))], 0);
const rk2 = (x: Operand, n: number, h: number) => (y: Operand): Operand => {
  const k1 = rhs(x, y, n);
  const k2 = rhs(x, add(y, mul(h / 2, k1)), n);
  return add(y, mul(h, add(k1, k2)));
};

const CASES: Case[] = [
  {
    name: "a chain of one real",
    scanned: ((x: Scalar) => scan((y: Scalar) => [chainStep(y)], x, N)[0]) as F,
    loop: ((x: Scalar) => {
      let y = x;
      for (let i = 0; i < N; i++) y = chainStep(y);
      return y;
    }) as F,
    x: 0.3,
    v: 1,
  },
  {
    name: "an ODE whose parameters are used every step and after the loop, from literal initial values",
    scanned: ((th: Scalar[]) => {
      const [s] = scan((s: Scalar[]) => [lotka(th)(s)], [1, 1], N);
      return add(add(mul(s[0], s[0]), mul(s[1], s[1])), mul(th[0], th[1]));
    }) as F,
    loop: ((th: Scalar[]) => {
      let s: Scalar[] = [1, 1];
      for (let i = 0; i < N; i++) s = lotka(th)(s);
      return add(add(mul(s[0], s[0]), mul(s[1], s[1])), mul(th[0], th[1]));
    }) as F,
    x: [1.5, 1.0, 3.0, 1.0],
    v: [0.1, 0.2, 0.3, 0.4],
  },
  {
    name: "an operation on captured values alone inside the body",
    scanned: ((th: Scalar[]) => scan((s: Scalar) => [add(s, mul(exp(th[0]), sin(s)))], th[1], N)[0]) as F,
    loop: ((th: Scalar[]) => {
      let s = th[1];
      for (let i = 0; i < N; i++) s = add(s, mul(exp(th[0]), sin(s)));
      return s;
    }) as F,
    x: [0.1, 0.5],
    v: [1, 2],
  },
  {
    name: "decisions that change part way",
    scanned: ((x: Scalar) => scan((y: Scalar) => [branchy(y)], x, N)[0]) as F,
    loop: ((x: Scalar) => {
      let y = x;
      for (let i = 0; i < N; i++) y = branchy(y);
      return y;
    }) as F,
    x: 0.3,
    v: 1,
  },
  {
    name: "ys: the trajectory, summed after the loop",
    scanned: ((x: Scalar) => {
      const [, ys] = scan((y: Scalar) => {
        const y2 = chainStep(y);
        return [y2, y2];
      }, x, N);
      return ys.reduce((s: Scalar, y) => add(s, mul(y, y)), 0);
    }) as F,
    loop: ((x: Scalar) => {
      let y = x;
      const ys: Scalar[] = [];
      for (let i = 0; i < N; i++) ys.push((y = chainStep(y)));
      return ys.reduce((s: Scalar, y) => add(s, mul(y, y)), 0);
    }) as F,
    x: 0.3,
    v: 1,
  },
  {
    name: "ys: the carry as it came in, two of them read",
    scanned: ((x: Scalar) => {
      const [, ys] = scan((y: Scalar) => [chainStep(y), y], x, N);
      return add(mul(ys[3], ys[3]), ys[17]);
    }) as F,
    loop: ((x: Scalar) => {
      let y = x;
      const ys: Scalar[] = [];
      for (let i = 0; i < N; i++) {
        ys.push(y);
        y = chainStep(y);
      }
      return add(mul(ys[3], ys[3]), ys[17]);
    }) as F,
    x: 0.3,
    v: 1,
  },
  {
    name: "xs of numbers, among them 0, 1 and −0 (which the tape folds)",
    scanned: ((x: Scalar) => scan((y: Scalar, xi: Scalar) => [add(mul(y, xi), mul(0.1, sin(y)))], x, LITERAL_XS)[0]) as F,
    loop: ((x: Scalar) => {
      let y = x;
      for (let i = 0; i < N; i++) y = add(mul(y, LITERAL_XS[i]), mul(0.1, sin(y)));
      return y;
    }) as F,
    x: 0.3,
    v: 1,
  },
  {
    name: "traced xs, also used after the loop",
    scanned: ((xs: Scalar[]) => add(scan((y: Scalar, xi: Scalar) => [add(mul(y, cos(xi)), mul(xi, 0.1))], 0.5, xs)[0], mul(xs[0], xs[3]))) as F,
    loop: ((xs: Scalar[]) => {
      let y: Scalar = 0.5;
      for (const xi of xs) y = add(mul(y, cos(xi)), mul(xi, 0.1));
      return add(y, mul(xs[0], xs[3]));
    }) as F,
    x: [0.1, 0.2, 0.3, 0.4, 0.5, 0.6],
    v: [1, 1, 1, 1, 1, 1],
  },
  {
    name: "a carry passed on unchanged and a literal time counter",
    scanned: ((x: Scalar) => {
      const [c] = scan(([y, t, k]: Scalar[]) => [[add(y, mul(k, sin(add(y, t)))), add(t, 0.1), k]], [x, 0, mul(x, 2)], N);
      return add(c[0], c[2]);
    }) as F,
    loop: ((x: Scalar) => {
      let c: Scalar[] = [x, 0, mul(x, 2)];
      for (let i = 0; i < N; i++) c = [add(c[0], mul(c[2], sin(add(c[0], c[1])))), add(c[1], 0.1), c[2]];
      return add(c[0], c[2]);
    }) as F,
    x: 0.3,
    v: 1,
  },
  {
    name: "an initial carry holding one variable twice",
    scanned: ((x: Scalar) => {
      const [c] = scan((c: Scalar[]) => [[add(c[0], mul(0.1, sin(c[1]))), mul(c[1], 0.9)]], [x, x], N);
      return add(c[0], c[1]);
    }) as F,
    loop: ((x: Scalar) => {
      let c: Scalar[] = [x, x];
      for (let i = 0; i < N; i++) c = [add(c[0], mul(0.1, sin(c[1]))), mul(c[1], 0.9)];
      return add(c[0], c[1]);
    }) as F,
    x: 0.3,
    v: 1,
  },
  {
    name: "a scan inside the body",
    scanned: ((x: Scalar) => scan((y: Scalar) => [scan((z: Scalar) => [add(mul(0.5, z), sin(y))], y, 3)[0]], x, 8)[0]) as F,
    loop: ((x: Scalar) => {
      let y = x;
      for (let i = 0; i < 8; i++) {
        let z = y;
        for (let j = 0; j < 3; j++) z = add(mul(0.5, z), sin(y));
        y = z;
      }
      return y;
    }) as F,
    x: 0.3,
    v: 1,
  },
  {
    name: "a grad inside the body",
    scanned: ((x: Scalar) => scan((y: Scalar) => [add(y, mul(0.1, grad((u: Scalar) => mul(sin(u), y), y)))], x, 10)[0]) as F,
    loop: ((x: Scalar) => {
      let y = x;
      for (let i = 0; i < 10; i++) y = add(y, mul(0.1, grad((u: Scalar) => mul(sin(u), y), y)));
      return y;
    }) as F,
    x: 0.3,
    v: 1,
  },
  {
    name: "a scan inside grad whose body uses the outer variable",
    scanned: ((x: Scalar) => grad((y: Scalar) => scan((z: Scalar) => [add(mul(z, x), sin(z))], y, 10)[0], mul(x, 0.5))) as F,
    loop: ((x: Scalar) =>
      grad((y: Scalar) => {
        let z = y;
        for (let i = 0; i < 10; i++) z = add(mul(z, x), sin(z));
        return z;
      }, mul(x, 0.5))) as F,
    x: 0.3,
    v: 1,
  },
  {
    name: "a carry of tensors read by slices, a captured tensor",
    scanned: ((x: Operand) => index(T(scan((y: Operand) => [rk2(x, 4, 0.1)(y)], new Float64Array(4) as Operand, 12)[0]), [3])) as F,
    loop: ((x: Operand) => {
      let y: Operand = new Float64Array(4);
      for (let i = 0; i < 12; i++) y = rk2(x, 4, 0.1)(y);
      return index(T(y), [3]);
    }) as F,
    x: new Float64Array([0.5, 0.6, 0.7, 0.8]),
    v: new Float64Array([1, 2, 3, 4]),
    only: ["value", "grad", "jvp", "fd", "grad of grad"],
  },
  {
    name: "tensor ys read by index after the loop",
    scanned: ((x: Operand) => {
      const [y, ys] = scan((y: Operand, xi: Scalar) => {
        const y2 = add(mul(y, cos(xi)), mul(0.1, sin(y)));
        return [y2, mul(y2, 2)];
      }, x, [0.1, 0.2, 0.3]);
      return add(add(index(T(ys[0]), [1]), index(T(ys[2]), [0])), sum(mul(y, y)));
    }) as F,
    loop: ((x: Operand) => {
      let y = x;
      const ys: Operand[] = [];
      for (const xi of [0.1, 0.2, 0.3]) {
        y = add(mul(y, cos(xi)), mul(0.1, sin(y)));
        ys.push(mul(y, 2));
      }
      return add(add(index(T(ys[0]), [1]), index(T(ys[2]), [0])), sum(mul(y, y)));
    }) as F,
    x: new Float64Array([0.3, 0.4]),
    v: new Float64Array([1, -1]),
    only: ["value", "grad", "jvp", "fd", "grad of grad"],
  },
  {
    name: "checkpointed layers, with two results and a captured value",
    scanned: layers(checkpoint),
    loop: layers((layer) => layer),
    x: [0.3, 0.7],
    v: [1, 2],
  },
];

/** Four layers of five steps each, p[0] captured, with `wrap` (checkpoint, or nothing) around each layer. */
function layers(wrap: <A extends Scalar[]>(layer: (...a: A) => [Scalar, Scalar]) => (...a: A) => [Scalar, Scalar]): F {
  return (p: Scalar[]) => {
    const layer = wrap((h: Scalar, w: Scalar): [Scalar, Scalar] => {
      let y = h;
      for (let i = 0; i < 5; i++) y = add(mul(w, sin(y)), mul(exp(p[0]), y));
      return [y, cos(y)];
    });
    let h = p[0];
    let s: Scalar = 0;
    for (let l = 0; l < 4; l++) {
      const [y, c] = layer(h, p[1]);
      h = y;
      s = add(s, c);
    }
    return add(mul(h, h), s);
  };
}

afterEach(() => {
  scanCode.enabled = true;
});

describe("scan and checkpoint give the loop's numbers, bit for bit", () => {
  for (const c of CASES) {
    for (const [t, run] of Object.entries(TRANSFORMS)) {
      if (c.only !== undefined && !c.only.includes(t)) continue;
      it(`${c.name}: ${t}`, () => {
        expectSame(run(c.scanned, c.x, c.v), run(c.loop, c.x, c.v));
      });
    }
  }
  it("interpreted and compiled code agree (bodies of reals run as JavaScript)", () => {
    for (const c of CASES.slice(0, 9)) {
      const compiled = [grad(c.scanned as never, c.x as never), jvp(c.scanned as never, c.x as never, c.v as never)];
      scanCode.enabled = false;
      const interpreted = [grad(c.scanned as never, c.x as never), jvp(c.scanned as never, c.x as never, c.v as never)];
      scanCode.enabled = true;
      expectSame(compiled, interpreted);
    }
  });
  it("taylor, hvp, vjp and jacobian", () => {
    const [c, tr] = [CASES[0], CASES[5]];
    expectSame(taylor(c.scanned as never, c.x as never, c.v as never, 3), taylor(c.loop as never, c.x as never, c.v as never, 3));
    expectSame(hvp(c.scanned as never, c.x as never, 1 as never), hvp(c.loop as never, c.x as never, 1 as never));
    const ys = (x: Scalar[]) => scan((y: Scalar, xi: Scalar) => [add(mul(y, xi), sin(y)), mul(y, 2)], x[0], [x[1], x[2], x[1]])[1];
    const ysLoop = (x: Scalar[]) => {
      let y = x[0];
      const out: Scalar[] = [];
      for (const xi of [x[1], x[2], x[1]]) {
        out.push(mul(y, 2));
        y = add(mul(y, xi), sin(y));
      }
      return out;
    };
    expectSame(jacobian(ys as never, [0.3, 0.4, 0.5]), jacobian(ysLoop as never, [0.3, 0.4, 0.5]));
    expectSame(vjp(tr.scanned as never, 0.3)[1](1), vjp(tr.loop as never, 0.3)[1](1));
  });
  it("compileGrad replays a trace holding a scan, and traces again where the body decides otherwise", () => {
    const scanned = compileGrad(CASES[3].scanned as never);
    const loop = compileGrad(CASES[3].loop as never);
    for (const x of [0.3, 0.31, 0.7, 0.3, 0.05, 0.32]) expectSame(scanned(x as never), loop(x as never));
    expect(scanned.stats.replays).toBeGreaterThan(0);
    expect(scanned.stats.traces).toBeLessThan(6);
  });
});

describe("what a scan keeps", () => {
  const chain = (n: number, options = {}) => (x: Scalar) => scan((y: Scalar) => [chainStep(y)], x, n, options)[0];
  it("a trace of a few instructions for a loop of any length", () => {
    expect(traceOf(chain(10_000), 0.3).length).toBeLessThan(5);
    const loop = (x: Scalar) => {
      let y = x;
      for (let i = 0; i < 10_000; i++) y = chainStep(y);
      return y;
    };
    expect(traceOf(loop, 0.3).length).toBeGreaterThan(40_000);
  });
  it("the body traced once, again only where a decision comes out otherwise", () => {
    let calls = 0;
    const counted = (y: Scalar): [Scalar] => {
      calls++;
      return [lt(y, 2) ? add(y, 0.01) : mul(y, 1.0001)];
    };
    grad((x: Scalar) => scan(counted, x, 1000)[0], 0.3);
    // the decision lt(y, 2) changes once, at iteration 170: traced there and at the first
    expect(calls).toBe(2);
    expect(traceOf((x: Scalar) => scan(counted, x, 1000)[0], 0.3).length).toBeLessThan(8);
  });
  it("carries stored by the reverse sweep: every one, about 2√n, or n/k + k", () => {
    const n = 10_000;
    grad(chain(n, { checkpoint: "every" }), 0.3);
    expect(reverseStats.maxStored).toBe(n);
    grad(chain(n, { checkpoint: "sqrt" }), 0.3);
    expect(reverseStats.maxStored).toBe(100 + 100);
    grad(chain(n, { checkpoint: 1000 }), 0.3);
    expect(reverseStats.maxStored).toBe(10 + 1000);
    expect(reverseStats.swept).toBe(n);
  });
  it("the reverse sweep recomputes each iteration once: from the stored carry nearest before it, not from the start", () => {
    // the body's evaluations, counted by a user primitive's kernel (interpreted here; compiled below)
    let calls = 0;
    const countedSin = defineOp({ name: "countedSin", forward: (y) => (calls++, Math.sin(y)), reverse: ([y], _s, ct) => [mul(ct, cos(y))] });
    const counted = (n: number, options = {}) => (x: Scalar) => scan((y: Scalar) => [add(mul(0.9, y), mul(0.1, countedSin(y)))], x, n, options)[0];
    scanCode.enabled = false;
    const n = 10_000;
    const callsOf = (options: object): number => {
      calls = 0;
      expect(grad(counted(n, options), 0.3)).toBeCloseTo(grad(chain(n, options), 0.3), 14);
      return calls;
    };
    // the primal run (and the traced iteration), then the sweep recomputing the carries from the start: all
    // but the last, which no block reads
    const every = callsOf({ checkpoint: "every" });
    expect(every).toBe(2 * n);
    // and before the sweep a run storing every k-th carry up to the last checkpoint, each segment then recomputed
    // from its own but for its last iteration
    const checkpointed: [object, number][] = [[{ checkpoint: "sqrt" }, 100], [{ checkpoint: 100 }, 100], [{ checkpoint: 1000 }, 1000]];
    for (const [options, k] of checkpointed) expect(callsOf(options)).toBe(n + 1 + (n / k - 1) * k + (n - n / k));
    // compiled code counts nothing: its carries recomputed from elsewhere would change the numbers
    scanCode.enabled = true;
    const want = grad(chain(n, { checkpoint: "every" }), 0.3);
    for (const [options] of checkpointed) expect(grad(chain(n, options), 0.3)).toBe(want);
  });
  it("a body with a user primitive runs as compiled code: its kernel called, the numbers of the interpreter and of the loop written out", () => {
    let calls = 0;
    const softSin = defineOp({ name: "softSin", forward: (y) => (calls++, Math.sin(y) / (1 + y * y)), reverse: ([y], _s, ct) => [mul(ct, softSinPrime(y))] });
    const softSinPrime = (y: Scalar): Scalar => sub(div(cos(y), add(1, mul(y, y))), div(mul(mul(2, y), sin(y)), mul(add(1, mul(y, y)), add(1, mul(y, y)))));
    const n = 2000;
    const body = (y: Scalar, w: Scalar): Scalar => add(mul(0.9, y), mul(w, softSin(y)));
    const scanned = ([x, w]: Scalar[]) => scan((y: Scalar) => [body(y, w)], x, n, { checkpoint: "sqrt" })[0];
    const written = ([x, w]: Scalar[]) => {
      let y = x;
      for (let i = 0; i < n; i++) y = body(y, w);
      return y;
    };
    const at = [0.3, 0.2];
    scanCode.enabled = true;
    calls = 0;
    const compiled = [scanned(at as never), grad(scanned, at), jvp(scanned, at, [1, -0.5])];
    expect(calls).toBeGreaterThanOrEqual(3 * n);
    scanCode.enabled = false;
    const interpreted = [scanned(at as never), grad(scanned, at), jvp(scanned, at, [1, -0.5])];
    scanCode.enabled = true;
    expectSame(compiled, interpreted);
    expectSame(compiled, [written(at as never), grad(written, at), jvp(written, at, [1, -0.5])]);
  });
  it("a checkpointed call keeps its arguments and results, and traces f once for calls alike", () => {
    let calls = 0;
    const f = checkpoint((h: Scalar, w: Scalar) => {
      calls++;
      let y = h;
      for (let i = 0; i < 100; i++) y = add(mul(w, sin(y)), mul(0.5, y));
      return y;
    });
    const net = (p: Scalar[]) => {
      let h = p[0];
      for (let l = 0; l < 10; l++) h = f(h, p[1]);
      return h;
    };
    expect(traceOf(net as never, [0.3, 0.7]).length).toBeLessThan(30);
    // traced by the first call; the other nine, and grad's, apply its term
    grad(net as never, [0.3, 0.7]);
    expect(calls).toBe(1);
  });
  it("a checkpointed call with a literal the tape folds (w = 1) is one instruction still, not its body placed", () => {
    const body = (h: Scalar, w: Scalar): Scalar => {
      let y = h;
      for (let i = 0; i < 100; i++) y = add(mul(w, sin(y)), mul(0.5, y));
      return y;
    };
    const f = checkpoint(body);
    const g = (h: Scalar) => f(h, 1);
    expect(traceOf(g, 0.3).length).toBeLessThan(10);
    expectSame(grad(g, 0.3), grad((h: Scalar) => body(h, 1), 0.3));
  });
});

describe("bodies met again", () => {
  it("a body of the same instructions but another carry structure, or one that read a value, is its own", () => {
    const pair = (x: Scalar) => scan(([u, v]: Scalar[]) => [[add(u, sin(v)), mul(v, 0.9)]], [x, mul(x, 2)], 5)[0];
    const record = (x: Scalar) => scan(({ u, v }: { u: Scalar; v: Scalar }) => [{ u: add(u, sin(v)), v: mul(v, 0.9) }], { u: x, v: mul(x, 2) }, 5)[0];
    expectSame(grad((x: Scalar) => total(pair(x)), 0.3), grad((x: Scalar) => { const c = record(x); return add(c.u, c.v); }, 0.3));
    // the same instructions, decided by reading the value (no guard): traced at every iteration
    const chosen = (y: Scalar): [Scalar] => [primal(y) < 0.5 ? mul(y, 1.5) : mul(y, 0.5)];
    const plain = (y: Scalar): [Scalar] => [mul(y, 1.5)];
    const loop = (x: Scalar) => {
      let y = x;
      for (let i = 0; i < 12; i++) y = lt(y, 0.5) ? mul(y, 1.5) : mul(y, 0.5);
      return y;
    };
    grad((x: Scalar) => scan(plain, x, 12)[0], 0.3);
    expectSame(grad((x: Scalar) => scan(chosen, x, 12)[0], 0.3), grad(loop, 0.3));
  });
});

describe("scan's errors and messages", () => {
  it("a carry that changes type or shape is a ShapeError naming the iteration", () => {
    const grows = (c: Scalar[]) => [c.length < 3 ? [...c, 0] : c] as [Scalar[]];
    expect(() => scan(grows, [1], 5)).toThrow(/iteration 0/);
    expect(() => scan(grows, [1], 5)).toThrow(ShapeError);
    expect(() => grad((x: Scalar) => scan((c: Scalar) => [[c, c] as never], x, 3)[0], 0.3)).toThrow(/carry of type real × real at iteration 0, but it came in as real/);
    // (inside a traced scan, x is a traced value too: decided with lt, not <)
    const late = (c: Scalar, x: Scalar) => [lt(x, 3) ? c : ([c] as never)] as [Scalar];
    expect(() => grad((y: Scalar) => scan(late, y, [0, 1, 2, 3, 4])[0], 0.3)).toThrow(/iteration 3/);
    const tensorGrows = (y: Operand, i: Scalar) => [lt(i, 2) ? y : concat([T(y), T(y)], 0)] as [Operand];
    expect(() => grad((x: Operand) => sum(scan(tensorGrows, x, [0, 1, 2])[0]), new Float64Array(2))).toThrow(/real\[4\] at iteration 2, but it came in as real\[2\]/);
    // on numbers (the loop of a carry of one number passes it on as it is): the same reports
    const lateNumber = (c: number, x: number) => [x < 3 ? c + x : [c]] as [number];
    expect(() => scan(lateNumber, 0.5, [0, 1, 2, 3, 4])).toThrow("scan: the body returned a carry of type ⟨real⟩ at iteration 3, but it came in as real;");
    expect(() => scan(lateNumber, 0.5, [0, 1, 2, 3, 4])).toThrow(ShapeError);
    expect(() => scan((c: number, x: number) => (x < 2 ? [c, x] : [c, x, x]) as never, 1, [0, 1, 2])).toThrow(/an array of length 3 at iteration 2/);
    const [last, ys] = scan((c: number, x: number) => [c * 2 + x, x < 2 ? undefined : c] as [number, number?], 1, [0, 1, 2, 3]);
    expect(last).toBe(((1 * 2 + 0) * 2 + 1) * 2 * 2 + 2 * 2 + 3);
    expect(ys).toEqual([undefined, undefined, 5, 12]);
  });
  it("options and arguments are checked", () => {
    expect(() => scan((c: number) => [c], 1, 3, { checkpoint: "often" as never })).toThrow(WengertError);
    expect(() => scan((c: number) => [c], 1, 3, { chekpoint: 2 } as never)).toThrow(/chekpoint is not an option/);
    expect(() => scan((c: number) => [c], 1, -1)).toThrow(/non-negative integer/);
    expect(() => scan((c: number) => 3 as never, 1, 2)).toThrow(/must return \[carry, y\]/);
  });
  it("ties and kinks are reported as the loop reports them", () => {
    const step = (y: Scalar): [Scalar] => [lt(y, 0.25) ? mul(y, 2) : add(y, 0.05)];
    const loop = (x: Scalar) => {
      let y = x;
      for (let i = 0; i < 5; i++) y = step(y)[0];
      return y;
    };
    const scanned = (x: Scalar) => scan(step, x, 5)[0];
    const warnings = (f: (x: Scalar) => Scalar, x: number): string[] => {
      const seen: string[] = [];
      const warn = console.warn;
      console.warn = (m: string) => seen.push(m);
      try {
        grad(f, x);
      } finally {
        console.warn = warn;
      }
      return seen;
    };
    expect(warnings(scanned, 0.125)).toEqual(warnings(loop, 0.125));
    expect(warnings(scanned, 0.125)).toHaveLength(1);
    expect(() => grad(scanned, 0.125, { ties: "error" })).toThrow(TieError);
    const kinked = (y: Scalar): [Scalar] => [add(abs(sub(y, 0.2)), y)];
    const kinkLoop = (x: Scalar) => {
      let y = x;
      for (let i = 0; i < 5; i++) y = kinked(y)[0];
      return y;
    };
    for (const x of [0.1, 0.2]) expect(warnings((x) => scan(kinked, x, 5)[0], x)).toEqual(warnings(kinkLoop, x));
  });
  it("outside any trace, the loop itself; the derivative term of a scan evaluates at other points", () => {
    expect(scan((c: number, x: number) => [c + x, c * x], 1, [1, 2, 3])).toEqual([7, [1, 4, 12]]);
    const f = (x: Scalar) => scan((y: Scalar) => [chainStep(y)], x, 30)[0];
    const d = derivativeOf(f, 0.3, 1);
    const loop = (x: Scalar) => {
      let y = x;
      for (let i = 0; i < 30; i++) y = chainStep(y);
      return y;
    };
    expectSame(d.evaluate(0.4, 1), [grad(loop, 0.4)]);
    expectSame(traceOf(f, 0.3).evaluate(0.5), loop(0.5));
  });
});
