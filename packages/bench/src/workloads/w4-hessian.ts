/**
 * @file W4 dense Hessian: the whole Hessian of W1 rosenbrock at n = 100.
 *
 * Hand-written: the tridiagonal Hessian written into a zeroed n × n Float64Array.
 * wengert: `hessian` and `jit(hessian)`; `jit(hessian).into(x, out)`, the Hessian written
 * into one buffer as the hand-written one is; and the columns as lanes, `vmap` of `jvp` of
 * `grad` over the basis vectors, and `jit` of that. jax-js: `hessian` (jacfwd of grad,
 * by vmap) eager and jit. TF.js has no forward mode. wengert's are timed as they return the Hessian, rows of numbers (of Float64Arrays for
 * the lanes), laid out row-major only for the check (check.ts toVec): a copy into one
 * Float64Array per call took 50–100 µs, 40–80 times the hand-written Hessian.
 */
import type { Array as JaxArray } from "@jax-js/jax";
import { grad, hessian, jit, jvp, vmap, type Scalar } from "@wengert/core";
import type { Builder, Jax, PeerVariant, Rows, Workload } from "../types.js";
import { jaxRosenbrockLoss, rosenbrock, rosenbrockInput, rosenbrockW } from "./w1-rosenbrock.js";

export const HESSIAN_SIZE = 100;

/**
 * Hand-written: with t_i = x_{i+1} − x_i², term i adds −400 t_i + 800 x_i² + 2 to
 * H_ii, −400 x_i to H_i,i+1 and H_i+1,i, and 200 to H_i+1,i+1.
 */
export function rosenbrockHessian(x: ArrayLike<number>, out: Float64Array = new Float64Array(x.length * x.length)): Float64Array {
  const n = x.length;
  out.fill(0);
  for (let i = 0; i < n - 1; i++) {
    const xi = x[i];
    const t = x[i + 1] - xi * xi;
    out[i * n + i] += -400 * t + 800 * xi * xi + 2;
    out[i * n + i + 1] += -400 * xi;
    out[(i + 1) * n + i] += -400 * xi;
    out[(i + 1) * n + i + 1] += 200;
  }
  return out;
}

/** The hand-written Hessian at x returned as wengert returns it: a function making n fresh rows of numbers per call. */
export function rosenbrockHessianRows(x: ArrayLike<number>): () => number[][] {
  const n = x.length;
  const zeros: number[] = Array.from({ length: n }, () => 0.5).fill(0);
  return (): number[][] => {
    const H: number[][] = [];
    for (let i = 0; i < n; i++) H.push(zeros.slice());
    for (let i = 0; i < n - 1; i++) {
      const xi = x[i];
      const t = x[i + 1] - xi * xi;
      H[i][i] += -400 * t + 800 * xi * xi + 2;
      H[i][i + 1] += -400 * xi;
      H[i + 1][i] += -400 * xi;
      H[i + 1][i + 1] += 200;
    }
    return H;
  };
}

/** H·e_i for every basis vector e_i, as lanes: lane i is column i (= row i: H is symmetric). */
const columns = ([x, v]: [Scalar[], Scalar[]]): Scalar[] => jvp((p: Scalar[]) => grad(rosenbrockW, p) as Scalar[], x, v)[1] as Scalar[];

const jaxHessian =
  (jit: boolean): Builder<Jax> =>
  (jax, n) => {
    const np = jax.numpy;
    const h0 = jax.hessian(jaxRosenbrockLoss(jax));
    const h = jit ? jax.jit(h0) : h0;
    const x = np.array(new Float32Array(rosenbrockInput(n)));
    return () => (h(x.ref) as JaxArray).dataSync();
  };

/** The peers of a row after the first: TF.js has no forward mode, jax-js's are timed in another row. */
const peersAsIn = (row: string, note: string): PeerVariant[] => [
  { label: "", note, tfjs: { unsupported: "no forward mode" }, jaxEager: { unsupported: `as in ${row}` }, jaxJit: { unsupported: `as in ${row}` } },
];

export function w4Hessian(n = HESSIAN_SIZE, by: "hessian" | "lanes" | "rows" | "into" = "hessian"): Workload {
  const x = rosenbrockInput(n);
  const xs = Array.from(x);
  const out = new Float64Array(n * n);
  const basis = xs.map((_, i) => Float64Array.from(xs, (_, j) => (i === j ? 1 : 0)));
  const byLanes = vmap(columns, { inAxes: [null, 0] });
  const compiledLanes = jit(byLanes);
  const compiledHessian = jit((p: Scalar[]) => hessian(rosenbrockW, p));
  const common = { family: "W4" as const, what: "dense Hessian", size: n, sizeName: "n", primal: () => rosenbrock(x), hand: () => rosenbrockHessian(x, out) };
  const byHessian = {
    wengert: (): Rows => hessian(rosenbrockW, xs) as number[][],
    wengertCompiled: (): Rows => compiledHessian(xs) as number[][],
  };
  if (by === "rows") {
    return {
      ...common,
      ...byHessian,
      id: "W4-hessian-rows",
      title: `W4 dense Hessian n=${n}, hand-written returning rows`,
      hand: rosenbrockHessianRows(x),
      peers: peersAsIn("the first row", "hand-written: the Hessian made as wengert returns it, fresh rows of numbers per call; wengert as in the first row"),
    };
  }
  if (by === "into") {
    // the compiled Hessian written into one buffer, as the hand-written one refills its own
    const buffer = new Float64Array(n * n);
    return {
      ...common,
      id: "W4-hessian-into",
      title: `W4 dense Hessian n=${n} into a buffer`,
      wengert: () => Float64Array.from(hessian(rosenbrockW, xs).flat()),
      wengertCompiled: () => compiledHessian.into(xs, buffer),
      peers: peersAsIn(
        "the first row",
        "wengert compiled: jit(hessian).into(x, out), the Hessian row-major into one Float64Array per call as the hand-written one; " +
          "uncached: hessian's rows copied into a fresh one",
      ),
    };
  }
  if (by === "lanes") {
    return {
      ...common,
      id: "W4-hessian-lanes",
      title: `W4 dense Hessian n=${n} by vmap(jvp)`,
      wengert: (): Rows => byLanes([xs, basis]) as Float64Array[],
      wengertCompiled: (): Rows => compiledLanes([xs, basis]) as Float64Array[],
      peers: peersAsIn("the row above", "wengert: vmap over the basis of jvp of grad (and jit of it); peers as in the row above"),
    };
  }
  return {
    ...common,
    ...byHessian,
    id: "W4-hessian",
    title: `W4 dense Hessian rosenbrock n=${n}`,
    peers: [
      {
        label: "",
        note: "wengert: hessian and jit(hessian); jax-js: hessian (jacfwd of grad)",
        tfjs: { unsupported: "no forward mode" },
        jaxEager: jaxHessian(false),
        jaxJit: jaxHessian(true),
      },
    ],
  };
}
