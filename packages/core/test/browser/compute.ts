/**
 * What the browser test computes, in the page (bundled with @wengert/core by esbuild)
 * and in Node (browser.test.ts), whose numbers must agree: with reals, a gradient, a
 * third derivative by nested grad and a compileGrad run long enough to replay compiled
 * code, jit of hvp and of hessian, vmap of grad over lanes that branch and loop apart, and
 * grad of a scan; with tensors, the gradient of an MLP whose matrix products are large enough
 * for the WebAssembly SIMD gemm, and a ShapeError's call site. Calls of the wasm
 * kernels are counted by wrapping WebAssembly.Instance (the modules are instantiated
 * at first use), so the SIMD path is seen to be taken, not assumed.
 */
import ndarray from "ndarray";
import {
  add,
  compileGrad,
  cos,
  div,
  exp,
  grad,
  gt,
  hessian,
  hvp,
  jit,
  lt,
  matmul,
  mean,
  mul,
  scan,
  sin,
  square,
  sub,
  tanh,
  vmap,
  type NdArray,
  type Scalar,
  type Tensor,
} from "@wengert/core";

/** What needs no tensor: reals and compileGrad. */
export interface RealResults {
  readonly gradient: number[];
  readonly third: number;
  /** compileGrad's gradients at five points, and its stats after them. */
  readonly replays: number[][];
  readonly stats: { traces: number; replays: number; compiled: number };
  /** jit(hvp) at four points, jit(hessian) at three (rows), vmap(grad) over five lanes, grad of a scan. */
  readonly jitted: { hvps: number[][]; hessians: number[][][]; perExample: number[]; scanned: number; jitStats: { compiled: number } };
}

/** What needs tensors (ndarrays, which compile their constructors with new Function). */
export interface TensorResults {
  readonly mlp: { W1: number[]; b1: number[]; W2: number[] };
  /** Calls of each exported wasm function during the MLP's gradient. */
  readonly wasmCalls: Record<string, number>;
  /** A ShapeError's message, and the place (file:line:) of the line that raised it. */
  readonly shapeError: { message: string; place: string };
}

export interface Results {
  readonly reals: RealResults;
  /** Left out where the page asks for reals only. */
  readonly tensors?: TensorResults;
}

export function computeReals(): RealResults {
  // f(p) = p0 sin p1 + exp(p1 p2)
  const gradient = grad((p: Scalar[]) => add(mul(p[0], sin(p[1])), exp(mul(p[1], p[2]))), [0.3, -1.2, 0.7]) as number[];
  // d³/dx³ of sin x · exp(x / 2), by three nested grads
  const d = (f: (x: Scalar) => Scalar) => (x: Scalar) => grad(f, x);
  const third = d(d(d((x: Scalar) => mul(sin(x), exp(mul(x, 0.5))))))(0.4) as number;
  return { gradient, third, ...replayed(), jitted: jitted() };
}

/** Rosenbrock's hvp and Hessian under jit, Newton's √a per lane under vmap(grad), a chain as a scan. */
function jitted(): RealResults["jitted"] {
  const rosen = (x: Scalar[]): Scalar => {
    let s: Scalar = 0;
    for (let i = 0; i + 1 < x.length; i++) s = add(s, add(mul(100, square(sub(x[i + 1], square(x[i])))), square(sub(1, x[i]))));
    return s;
  };
  const h = jit((xv: [number[], number[]]) => hvp(rosen, xv[0], xv[1]) as number[]);
  const hvps = [0.1, 0.2, 0.3, 0.4].map((t) => h([[t, 1 - t, 2 * t, -t], [1, -1, 0.5, 2]]));
  const H = jit((x: number[]) => hessian(rosen, x) as number[][]);
  const hessians = [0.3, 0.6, 0.9].map((t) => H([t, -t, 1 + t]));
  const newton = (a: Scalar): Scalar => {
    let y = a;
    for (let it = 0; it < 50; it++) {
      const r = sub(mul(y, y), a);
      if (!(gt(r, 1e-12) || lt(r, -1e-12))) break;
      y = mul(0.5, add(y, div(a, y)));
    }
    return gt(y, 1) ? mul(mul(y, y), y) : sin(y);
  };
  const perExample = Array.from(vmap((x: Scalar) => grad(newton, x))(Float64Array.of(0.25, 0.5, 2, 4, 9)) as Float64Array);
  const chain = (x: Scalar): Scalar => scan((y: Scalar) => [add(mul(0.9, y), mul(0.1, sin(y)))], x, 5000)[0];
  const scanned = grad(chain, 0.3) as number;
  return { hvps, hessians, perExample, scanned, jitStats: { compiled: h.stats.compiled } };
}

export function computeTensors(): TensorResults {
  const counting = countWasmCalls();
  let mlp: TensorResults["mlp"];
  try {
    mlp = mlpGradient();
  } finally {
    counting.restore();
  }
  return { mlp, wasmCalls: counting.calls, shapeError: shapeError() };
}

/** A deterministic uniform generator on [−1, 1) (mulberry32), the same in every engine. */
function uniform(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return (((t ^ (t >>> 14)) >>> 0) / 4294967296) * 2 - 1;
  };
}

const matrix = (r: () => number, rows: number, cols: number, scale: number): NdArray =>
  ndarray(Float64Array.from({ length: rows * cols }, () => scale * r()), [rows, cols]);

/**
 * The gradient of a two-layer MLP's squared error: X (64×48) · W1 (48×32) is 98 304
 * multiply-adds, and so are the products of its reverse rule, past gemm's SIMD threshold.
 */
function mlpGradient(): TensorResults["mlp"] {
  const r = uniform(7);
  const X = matrix(r, 64, 48, 1);
  const y = matrix(r, 64, 1, 1);
  const p0 = { W1: matrix(r, 48, 32, 0.2), b1: Float64Array.from({ length: 32 }, () => 0.1 * r()), W2: matrix(r, 32, 1, 0.2) };
  const loss = (p: { W1: Tensor; b1: Tensor; W2: Tensor }): Scalar => mean(square(sub(matmul(tanh(add(matmul(X, p.W1), p.b1)), p.W2), y)));
  const g = grad(loss, p0) as unknown as { W1: NdArray; b1: Float64Array; W2: NdArray };
  return { W1: Array.from(g.W1.data as Float64Array), b1: Array.from(g.b1), W2: Array.from(g.W2.data as Float64Array) };
}

/** compileGrad of a function with a branch, at five points on one side of it: traced once, then replayed, then compiled. */
function replayed(): { replays: number[][]; stats: RealResults["stats"] } {
  const f = (p: Scalar[]): Scalar => (gt(p[0], 0) ? mul(square(p[0]), cos(p[1])) : mul(p[0], sin(p[1])));
  const g = compileGrad(f);
  const replays = [0.5, 1, 1.5, 2, 2.5].map((a) => g([a, a / 3]) as number[]);
  return { replays, stats: { ...g.stats } };
}

/** add of [2, 3] and [4], raised on the same line as its place is taken. */
function shapeError(): TensorResults["shapeError"] {
  const nd = (dims: number[]) => ndarray(new Float64Array(dims[0] * (dims[1] ?? 1)), dims);
  const [place, message] = [callerPlace(), messageOf(() => add(nd([2, 3]), nd([4])))];
  return { message, place };
}

/** `file:line:` of the caller's frame in this engine's stack (V8's "at f (file:1:2)", or "f@file:1:2"). */
function callerPlace(): string {
  const places = (new Error().stack ?? "").split("\n").flatMap((l) => /^\s*(?:at (?:.* \()?|[^@]*@)(.*):(\d+):\d+\)?$/.exec(l) ?? []);
  // [match, file, line] per frame: this function's, then the caller's
  return `${places[4].replace(/^file:\/\//, "")}:${places[5]}:`;
}

function messageOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    return (e as Error).message;
  }
  return "no error";
}

interface WasmInstance {
  exports: Record<string, unknown>;
}
type InstanceConstructor = new (module: object, imports: object) => WasmInstance;

/** Count calls of the exported functions of wasm modules instantiated from now until restore(). */
function countWasmCalls(): { calls: Record<string, number>; restore(): void } {
  const wasm = (globalThis as unknown as { WebAssembly: { Instance: InstanceConstructor } }).WebAssembly;
  const Instance = wasm.Instance;
  const calls: Record<string, number> = {};
  const counted = function (module: object, imports: object): WasmInstance {
    const exports: Record<string, unknown> = {};
    for (const [name, v] of Object.entries(new Instance(module, imports).exports)) {
      exports[name] =
        typeof v === "function"
          ? (...args: unknown[]) => {
              calls[name] = (calls[name] ?? 0) + 1;
              return (v as (...a: unknown[]) => unknown)(...args);
            }
          : v;
    }
    return { exports };
  };
  wasm.Instance = counted as unknown as InstanceConstructor;
  return { calls, restore: () => void (wasm.Instance = Instance) };
}
