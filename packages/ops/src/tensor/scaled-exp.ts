/**
 * @file c·exp(x − m) elementwise, m and c broadcast to x: logsumexp's cotangent
 * ȳ·exp(x − y), the softmax scaled, which its reverse rule would otherwise compute as three
 * operations (x − y, exp, ȳ·) with three buffers as long as x and three passes over them.
 *
 * The numbers are those of the three operations, `zip(c, map(zip(x, m, −), exp), ×)`, which
 * this computes where it has no faster way: where m and c are one element each (a
 * reduction over every axis, GradBench's lse) and x is long, simd-exp.ts's pass makes each
 * element in one go, the same IEEE steps in the same order.
 */
import { exp } from "../exp.js";
import { broadcastDims, size, type Dims } from "./dims.js";
import { ARITH, map, zip } from "./elementwise.js";
import { alloc, release } from "./pool.js";
import { EXP_SIMD_FROM, simdScaledExp } from "./simd-exp.js";

const one = (v: number | Float64Array): number | null => (typeof v === "number" ? v : v.length === 1 ? v[0] : null);

/** c·exp(x − m), the result of dims `out` (x, m and c broadcast to it). */
export function scaledExp(x: number | Float64Array, xd: Dims, m: number | Float64Array, md: Dims, c: number | Float64Array, cd: Dims, out: Dims): Float64Array {
  const n = size(out);
  const [mv, cv] = [one(m), one(c)];
  if (typeof x !== "number" && x.length === n && n >= EXP_SIMD_FROM && mv !== null && cv !== null) {
    const r = alloc(n, true);
    if (simdScaledExp(r, x, mv, cv)) return r;
    release(r);
  }
  const shiftedDims = broadcastDims(xd, md) as Dims;
  const shifted = zip(x, xd, m, md, shiftedDims, ARITH.sub);
  const e = map(shifted, exp);
  release(shifted);
  const r = zip(c, cd, e, shiftedDims, out, ARITH.mul);
  release(e);
  return r;
}
