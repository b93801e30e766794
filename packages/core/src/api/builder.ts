/**
 * @file Values of one structure built again and again from their leaves (a jitted
 * function's outputs, call after call): the walk over the structure is planned once.
 *
 * `unflatten` walks the shape on every call, interpreting it; a replay that runs in
 * microseconds would spend much of them there. A builder is a tree of
 * closures made from the shape once (recursive in the nesting of the user's data only).
 */
import { assertNever, type Shape } from "../structure.js";

/** Builds the value from `leaves` (depth-first), starting at leaf `k`. */
type Part = (leaves: readonly unknown[], k: number) => unknown;

/**
 * The builder of values of `shape`: leaves (depth-first, a fresh array the value may
 * take over) to the value.
 */
export function builder(shape: Shape): (leaves: unknown[]) => unknown {
  // an array of reals (a gradient) is its leaves
  if (shape.kind === "tuple" && shape.items.every((s) => s.kind === "real")) return (leaves) => leaves;
  const build = part(shape).build;
  return (leaves) => build(leaves, 0);
}

function part(shape: Shape): { build: Part; width: number } {
  switch (shape.kind) {
    case "real":
    case "tensor":
      return { build: (leaves, k) => leaves[k], width: 1 };
    case "tuple": {
      const n = shape.items.length;
      if (shape.items.every((s) => s.kind === "real")) {
        // an array of reals (a gradient): one copy
        return { build: (leaves, k) => leaves.slice(k, k + n), width: n };
      }
      const items = shape.items.map(part);
      const offsets = offsetsOf(items);
      return { build: (leaves, k) => items.map((p, j) => p.build(leaves, k + offsets[j])), width: offsets[n] };
    }
    case "record": {
      const fields = shape.fields.map(part);
      const offsets = offsetsOf(fields);
      return {
        // own properties, whatever the key (`__proto__` too), as unflatten makes them
        build: (leaves, k) => Object.fromEntries(shape.keys.map((key, j) => [key, fields[j].build(leaves, k + offsets[j])])),
        width: offsets[fields.length],
      };
    }
    default:
      return assertNever(shape);
  }
}

/** Where each part's leaves start, and (last) how many there are in all. */
function offsetsOf(parts: readonly { width: number }[]): number[] {
  const offsets = [0];
  for (const p of parts) offsets.push(offsets[offsets.length - 1] + p.width);
  return offsets;
}
