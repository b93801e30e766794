/**
 * vmap's batching rules, one table row (or more) per tensor primitive: vmap(f)(xs) is f
 * mapped over the lanes to the bit, with every argument batched and with each one shared
 * by every lane in turn, in f as it is and behind a branch that lanes take apart; and a
 * primitive with a rule runs one kernel call per block of lanes, not one per lane (the
 * calls of its `forward` do not grow with the batch).
 */
import { TENSOR_OP_NAMES, tensorOps, type TensorOpName } from "@wengert/ops";
import ndarray from "ndarray";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  add, broadcastTo, concat, conv2d, gather, grad, gt, index, logSoftmax, logsumexp, matmul, max, min, mul, neg, reshape, scatterAdd,
  sin, slice, stack, sum, tanh, transpose, vmap, where, type NdArray, type Scalar, type Tensor,
} from "../../src/index.js";
import { expectLanes, numbers } from "../helpers/same-bits.js";
import { rng, sizeOf } from "../helpers/tensors.js";

type Value = Tensor | Scalar;
interface Case {
  /** The arguments' dims at one lane ([] for a real). */
  readonly dims: readonly (readonly number[])[];
  readonly f: (xs: readonly Value[]) => unknown;
}

const ALONG_1 = Int32Array.of(4, 0, 2, 2);
/** `at` as a traced tensor computed from a (0 · a + at), for gather's and scatterAdd's traced indices. */
const positions = (a: Value, at: ArrayLike<number>): Tensor => add(mul(a as Tensor, 0), Float64Array.from(at)) as Tensor;

/** Every tensor primitive: a missing row is a type error. Elementwise ones need no rule (the last table). */
const CASES: { readonly [K in TensorOpName]: readonly Case[] } = {
  sum: [
    { dims: [[3, 4]], f: ([x]) => sum(x as Tensor, 1) },
    { dims: [[3, 4]], f: ([x]) => sum(x as Tensor) },
  ],
  max: [{ dims: [[3, 4]], f: ([x]) => max(x as Tensor, 0, true) }],
  min: [{ dims: [[2, 3, 4]], f: ([x]) => min(x as Tensor, [1, 2]) }],
  logsumexp: [{ dims: [[3, 4]], f: ([x]) => logsumexp(x as Tensor, 1) }],
  logSoftmax: [{ dims: [[3, 4]], f: ([x]) => logSoftmax(x as Tensor, 0) }],
  // logsumexp's cotangent: grad's reverse sweep runs it
  scaledExp: [{ dims: [[3, 4]], f: ([x]) => grad((v: Tensor) => sum(logsumexp(v, 1)), x as Tensor) }],
  reshape: [{ dims: [[3, 4]], f: ([x]) => reshape(x as Tensor, [2, 6]) }],
  broadcastTo: [
    { dims: [[4]], f: ([x]) => broadcastTo(x as Tensor, [3, 4]) },
    { dims: [[3, 1]], f: ([x]) => broadcastTo(x as Tensor, [2, 3, 4]) },
  ],
  transpose: [{ dims: [[2, 3, 4]], f: ([x]) => transpose(x as Tensor, [2, 0, 1]) }],
  matmul: [
    { dims: [[3, 4], [4, 2]], f: ([a, b]) => matmul(a as Tensor, b as Tensor) },
    { dims: [[2, 3, 4], [4, 5]], f: ([a, b]) => matmul(a as Tensor, b as Tensor) },
    { dims: [[3, 4], [2, 4, 5]], f: ([a, b]) => matmul(a as Tensor, b as Tensor) },
  ],
  slice: [{ dims: [[4, 5]], f: ([x]) => slice(x as Tensor, [1, 2], [3, 5]) }],
  index: [{ dims: [[3, 4]], f: ([x]) => mul(index(x as Tensor, [2, 1]), index(x as Tensor, [0, 3])) }],
  // the pieces of index and slice gathered by the sweep into one embed
  embed: [
    {
      dims: [[3, 4], []],
      f: ([x, c]) => grad((y: Tensor) => add(mul(index(y, [0, 1]), c as Scalar), sum(sin(slice(y, [1, 0], [3, 2])))), x as Tensor),
    },
  ],
  pack: [{ dims: [[3], []], f: ([x, c]) => stack([index(x as Tensor, [0]), mul(index(x as Tensor, [2]), c as Scalar), 3]) }],
  gather: [{ dims: [[3, 5]], f: ([x]) => gather(x as Tensor, ALONG_1, 1) }],
  scatterAdd: [{ dims: [[5, 3], [3, 3]], f: ([t, v]) => scatterAdd(t as Tensor, [1, 3, 1], v as Tensor, 0) }],
  // traced indices: whole numbers made from a lane's argument (times zero, plus the positions)
  gatherAt: [{ dims: [[3, 5], [4]], f: ([x, a]) => gather(x as Tensor, positions(a, ALONG_1), 1) }],
  scatterAddAt: [{ dims: [[5, 3], [3], [3, 3]], f: ([t, a, v]) => scatterAdd(t as Tensor, positions(a, [1, 3, 1]), v as Tensor, 0) }],
  concat: [
    { dims: [[2, 3], [1, 3]], f: ([x, y]) => concat([x as Tensor, y as Tensor], 0) },
    { dims: [[2, 3], [2, 1]], f: ([x, y]) => concat([x as Tensor, y as Tensor], 1) },
  ],
  where: [{ dims: [[2, 3], []], f: ([a, b]) => where(ndarray(Float64Array.of(1, 0, 1, 0, 0, 1), [2, 3]), a as Tensor, b as Scalar) }],
  // no rule: lane by lane (gatherAt and scatterAddAt too, above)
  conv2d: [{ dims: [[1, 2, 5, 5], [3, 2, 3, 3]], f: ([x, w]) => conv2d(x as Tensor, w as Tensor) }],
  conv2dInput: [{ dims: [[1, 2, 5, 5], [3, 2, 3, 3]], f: ([x, w]) => grad((y: Tensor) => sum(tanh(conv2d(y, w as Tensor))), x as Tensor) }],
  conv2dFilter: [{ dims: [[1, 2, 5, 5], [3, 2, 3, 3]], f: ([x, w]) => grad((v: Tensor) => sum(tanh(conv2d(x as Tensor, v))), w as Tensor) }],
};

/** Scalar primitives on tensors: their rule is derived (the kernel over the lanes, broadcast). */
const ELEMENTWISE: readonly Case[] = [
  { dims: [[3, 1], [4]], f: ([a, b]) => add(a as Tensor, b as Tensor) },
  { dims: [[3, 4], []], f: ([a, c]) => mul(tanh(a as Tensor), c as Scalar) },
  { dims: [[4]], f: ([a]) => neg(sin(a as Tensor)) },
];

/** With no rule, a primitive is computed lane by lane. */
const NO_RULE = new Set<TensorOpName>(["conv2d", "conv2dInput", "conv2dFilter", "gatherAt", "scatterAddAt"]);

const B = 9;
/** B lanes of each argument (a leading axis; a Float64Array for reals), seeded. */
function batch(c: Case, seed: number): (NdArray | Float64Array)[] {
  const r = rng(seed);
  return c.dims.map((d) => {
    const data = Float64Array.from({ length: B * sizeOf(d) }, () => 2 * r() - 1);
    return d.length === 0 ? data : ndarray(data, [B, ...d]);
  });
}
/** Lane l of a batched argument, or the argument itself where it is shared. */
function laneOf(x: NdArray | Float64Array, d: readonly number[], l: number, shared: boolean): Value {
  if (shared) return x as unknown as Value;
  if (x instanceof Float64Array) return x[l];
  const w = sizeOf(d);
  return ndarray(Float64Array.from(x.data.subarray(l * w, (l + 1) * w)), [...d]) as unknown as Value;
}
/** The first lane of a batched argument, shared by every lane. */
function sharedOf(x: NdArray | Float64Array, d: readonly number[]): NdArray | Float64Array {
  return laneOf(x, d, 0, false) as never;
}

/** vmap(f) with argument `shared` (or none) the same for every lane: lane l's numbers are f's at lane l, bit for bit. */
function expectMapped(c: Case, f: (xs: readonly Value[]) => unknown, shared: number | null, seed: number): void {
  const xs = batch(c, seed).map((x, k) => (k === shared ? sharedOf(x, c.dims[k]) : x));
  const inAxes = c.dims.map((_, k) => (k === shared ? null : 0));
  const parts = (ys: unknown): unknown[] => (Array.isArray(ys) ? ys : [ys]);
  const got = parts(vmap(f, { inAxes })(xs)).map((y) => numbers(y));
  const perLane = Array.from({ length: B }, (_, l) => parts(f(xs.map((x, k) => laneOf(x, c.dims[k], l, k === shared)))).map((y) => numbers(y)));
  expectLanes(got, perLane);
}

/** f behind a branch on its first argument's first element: lanes take it apart (traced apart, each trace run at the others). */
const branched =
  (f: Case["f"]) =>
  (xs: readonly Value[]): unknown => {
    const x = xs[0];
    const first = typeof x === "number" || !("shape" in (x as object)) ? x : index(x as Tensor, (x as unknown as NdArray).shape.map(() => 0));
    const y = f(xs);
    return gt(first as Scalar, 0) ? y : Array.isArray(y) ? y.map((v: Tensor) => neg(v)) : neg(y as Tensor);
  };

const rows = (name: TensorOpName) => CASES[name].map((c, i) => [`${name} #${i}`, c] as const);

afterEach(() => {
  vi.restoreAllMocks();
});

describe("vmap's batching rules", () => {
  it("the table has a row for every tensor primitive", () => {
    expect(Object.keys(CASES).sort()).toEqual([...TENSOR_OP_NAMES].sort());
  });

  describe.each(TENSOR_OP_NAMES.flatMap(rows))("%s", (_name, c) => {
    it("batched = f at each lane, bit for bit: every argument batched, and each shared in turn", () => {
      expectMapped(c, c.f, null, 1);
      for (let k = 0; k < c.dims.length; k++) if (c.dims.length > 1) expectMapped(c, c.f, k, 2 + k);
    });
    it("with lanes that take different branches", () => {
      expectMapped(c, branched(c.f), null, 11);
    });
  });

  describe.each(ELEMENTWISE.map((c, i) => [`elementwise #${i}`, c] as const))("%s", (_name, c) => {
    it("batched = f at each lane, bit for bit, and behind a branch", () => {
      expectMapped(c, c.f, null, 21);
      for (let k = 0; k < c.dims.length; k++) if (c.dims.length > 1) expectMapped(c, c.f, k, 22 + k);
      expectMapped(c, branched(c.f), null, 31);
    });
  });

  it("wide tensors, reals made from them, and their results read later: the same numbers, lanes branching apart", () => {
    // 6000 elements × 9 lanes; what is made is read by the outputs, sum's real, the slice,
    // the concat twice as wide, and inside only (add(z, y))
    const idx = Int32Array.from({ length: 3000 }, (_, i) => (i * 7919) % 6000);
    const wide: Case = {
      dims: [[6000], [], [4, 3]],
      f: ([x, c, m]) => {
        const y = sin(x as Tensor);
        const z = mul(y, c as Scalar) as Tensor;
        const s = sum(z);
        const g = gather(add(z, y), idx, 0);
        const head = slice(g, [0], [12]);
        const both = sum(reshape(concat([z, y], 0), [2, 6000]), 0);
        return [mul(s, s), add(g, max(y)), matmul(m as Tensor, reshape(head, [3, 4]) as Tensor), both];
      },
    };
    for (const shared of [null, 1, 2]) expectMapped(wide, wide.f, shared, 41);
    expectMapped(wide, branched(wide.f), null, 42);
  });

  it("a primitive with a rule runs once per block of lanes: its kernel calls do not grow with the batch", () => {
    for (const name of TENSOR_OP_NAMES) {
      for (const c of CASES[name]) {
        const spy = vi.spyOn(tensorOps[name], "forward");
        const callsAt = (lanes: number): number => {
          spy.mockClear();
          const r = rng(5);
          const xs = c.dims.map((d) => {
            const data = Float64Array.from({ length: lanes * sizeOf(d) }, () => 2 * r() - 1);
            return d.length === 0 ? data : ndarray(data, [lanes, ...d]);
          });
          vmap(c.f)(xs);
          return spy.mock.calls.length;
        };
        const [few, many] = [callsAt(3), callsAt(12)];
        // the one trace at the first lane calls forward; the lanes call it only without a rule
        expect(few, `${name}: forward not called while tracing`).toBeGreaterThan(0);
        if (NO_RULE.has(name)) expect(many, name).toBeGreaterThan(few);
        else expect(many, name).toBe(few);
        spy.mockRestore();
      }
    }
  });
});
