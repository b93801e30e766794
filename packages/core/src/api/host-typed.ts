/**
 * @file Traced values where the types promise numbers and tensors: a clear error, never a
 * wrong number.
 *
 * A transformation at a point of numbers and tensors is typed as returning numbers and
 * tensors (api/types.ts). When `f` closes over a value that an enclosing `rd` traces —
 * the paper's nested example `1.rd_1(x. x × 1.rd_1(y. x + y))` — its results are traced
 * values of that enclosing trace, as they must be for the outer derivative to go through
 * them (Sec. 3: the free variables of the inner trace term). JavaScript operators on a
 * traced real already throw a TracedOperatorError (traced.ts); what a Float64Array, an
 * ndarray or a number offers besides operators (elements, `length`, iteration, `data`,
 * `get`, `toFixed`) would read `undefined` on a traced value, and a loop over it would
 * silently do nothing. Such results are handed back behind a proxy that throws instead.
 */
import { TracedOperatorError } from "../errors.js";
import { Real, Tensor } from "../trace/traced.js";

/** Members of Float64Array, ndarray and number that a traced value lacks. */
const HOST_MEMBERS: ReadonlySet<PropertyKey> = new Set<PropertyKey>([
  "length", "data", "size", "get", "set", "index", "pick", "lo", "hi", "step", "T",
  "subarray", "slice", "map", "forEach", "reduce", "fill", "at", "every", "some", "join", "indexOf", "includes",
  "entries", "keys", "values", "buffer", "toFixed", "toPrecision", "toExponential",
  Symbol.iterator,
]);
const ELEMENT = /^(0|[1-9][0-9]*)$/;

/**
 * `v`, a traced value returned where x and the seed (or tangent) were untraced, behind a
 * proxy on which reading an element or a member of a Float64Array, ndarray or number
 * throws a TracedOperatorError naming `caller`. Everything a traced value has (its trace,
 * `shape`, `value`, what wengert's functions read) reads through.
 */
export function hostTyped<V>(v: V, caller: string): V {
  if (!(v instanceof Real || v instanceof Tensor)) return v;
  return new Proxy(v, {
    get(target, p, receiver) {
      if (!(p in target) && (HOST_MEMBERS.has(p) || (typeof p === "string" && ELEMENT.test(p)))) throw mistyped(target, p, caller);
      return Reflect.get(target, p, receiver);
    },
  }) as V;
}

function mistyped(v: Real | Tensor, p: PropertyKey, caller: string): TracedOperatorError {
  const what = v instanceof Tensor ? `a traced tensor (${v})` : "a traced real";
  const read = typeof p === "string" && ELEMENT.test(p) ? `its element [${p}]` : typeof p === "symbol" ? "its elements (iterating)" : `.${p}`;
  return new TracedOperatorError(
    `${caller}: this result is ${what}, not a number or tensor you hold, so it has no ${read}: x was not traced, ` +
      `but f uses a value that an enclosing rd traces, so the result depends on it and is traced too (README, "Types"). ` +
      `Compute with it using wengert's functions (add, mul, index, sum, …), which take it as they take numbers and tensors.`,
  );
}
