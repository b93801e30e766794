/**
 * @file W7 per-example gradients: vmap of grad over data-dependent control flow.
 *
 * W3's per-element function g (Newton's iteration for √a, up to 50 steps while
 * |y² − a| > 1e-12, then y > 1 ? y³ : sin y) at B = 10^4 points a_k = 0.5 + (2k + 1)/B
 * (W3's grid shifted by half a step: no point at a = 1, where y = 1 and y > 1 is a tie,
 * nor within float32's rounding of it); the per-example gradients g′(a_k).
 * wengert: `vmap(a => grad(g, a))` (traced afresh per call, one trace per group of lanes
 * that take the same number of steps and branch, the lanes run by compiled code kept by
 * the traces' structure) and `jit(vmap(…))` (those traces kept too).
 *
 * Peers: jax-js's `vmap(grad(g))` with g as written (the loop condition and the branch
 * read from the values), which a transformation of traced values cannot run; and the
 * same with masks (50 masked steps and a `where`, as jax.vmap needs the program written),
 * in jax-js and in TF.js (which has no vmap: the masked program on the whole batch, whose
 * gradient of the sum is the per-example gradient since g_k depends on a_k alone).
 */
import type { Array as JaxArray } from "@jax-js/jax";
import { grad, jit, vmap, type Scalar } from "@wengert/core";
import type { Builder, Jax, Vec, Workload } from "../types.js";
import { control, gPrime, gW, jaxMaskedG, jaxReadingG, tfjsControlAt } from "./w3-control.js";

export const W7_SIZE = 10_000;

export function perExampleInput(B: number): Float64Array {
  return Float64Array.from({ length: B }, (_, k) => 0.5 + (2 * k + 1) / B);
}

/** Hand-written: g′ at each point, carried forward through the same iterations (w3-control.ts). */
export function perExampleGrad(a: ArrayLike<number>, out: Float64Array = new Float64Array(a.length)): Float64Array {
  for (let k = 0; k < a.length; k++) out[k] = gPrime(a[k]);
  return out;
}

const gradOfG = (a: Scalar): Scalar => grad(gW, a) as Scalar;

/** `vmap(a => grad(g, a))`: traced afresh per call (its code found by structure). */
export const perExampleVmap = (a: Float64Array): Float64Array => vmap(gradOfG)(a) as Float64Array;

/** jax-js: vmap of grad of g, as written (the loop condition read from the values) or with masks. */
const jaxPerExample =
  (form: "as written" | "masked", jit: boolean): Builder<Jax> =>
  (jax, B) => {
    const np = jax.numpy;
    const gk = form === "masked" ? (a: JaxArray) => jaxMaskedG(np, a) : jaxReadingG(np, "vmap");
    const v0 = jax.vmap(jax.grad(gk));
    const v = jit ? jax.jit(v0) : v0;
    const a = np.array(new Float32Array(perExampleInput(B)));
    return () => v(a.ref).dataSync();
  };

export function w7(B = W7_SIZE): Workload {
  const a = perExampleInput(B);
  const out = new Float64Array(B);
  const compiled = jit(vmap(gradOfG));
  return {
    id: "W7",
    family: "W7",
    title: `W7 per-example gradients B=${B}`,
    what: "per-example gradients",
    size: B,
    sizeName: "B",
    primal: () => control(a),
    hand: () => perExampleGrad(a, out),
    wengert: (): Vec => perExampleVmap(a),
    wengertCompiled: (): Vec => compiled(a) as Float64Array,
    peers: [
      {
        label: "",
        note: "vmap(grad(g)) with g as written: loop condition and branch read from the values",
        tfjs: { unsupported: "TF.js has no vmap" },
        jaxEager: jaxPerExample("as written", false),
        jaxJit: jaxPerExample("as written", true),
      },
      {
        label: "masked",
        note:
          "the program rewritten with masks (50 masked steps, a where): jax-js vmap(grad(g)); " +
          "TF.js the gradient of the sum over the batch",
        tfjs: tfjsControlAt(perExampleInput),
        jaxEager: jaxPerExample("masked", false),
        jaxJit: jaxPerExample("masked", true),
      },
    ],
  };
}
