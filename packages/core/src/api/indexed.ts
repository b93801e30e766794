/**
 * @file `indexed`: a batch of reals for vmap read through an index, lane l's value at
 * `values[index[l]·stride + offset]`, without writing the batch out.
 *
 * Per-point data often lives in tables shared by many points: bundle adjustment's
 * observations each read one camera's 11 parameters and one point's 3 (GradBench `ba`),
 * a mesh's triangles their vertices. Gathered into columns first, a batch is written and
 * read once more than it is used; indexed, jit(vmap(f))'s compiled lanes read each value
 * from its table where f uses it (jit/lanes.ts). Lane by lane the numbers are those of f
 * at the gathered point.
 */
import { ArgumentError } from "../errors.js";

/** Where an indexed batch's lane l reads: `values[index[l]·stride + offset]`. */
export interface IndexedOptions {
  /** Default 1. */
  readonly stride?: number;
  /** Default 0. */
  readonly offset?: number;
}

/** A batch of reals of index.length lanes, lane l's value at values[index[l]·stride + offset] (made by `indexed`). */
export class Indexed {
  /** @internal use `indexed`, which checks that every lane reads inside `values`. */
  constructor(
    readonly values: Float64Array,
    readonly index: Int32Array,
    readonly stride: number,
    readonly offset: number,
  ) {}

  /** The lanes' values written out, one per lane. */
  dense(): Float64Array {
    const { values, index, stride, offset } = this;
    const out = new Float64Array(index.length);
    for (let l = 0; l < index.length; l++) out[l] = values[index[l] * stride + offset];
    return out;
  }
}

/**
 * A batch of reals for vmap (batched, 0 in inAxes) whose lane l is
 * `values[index[l]·stride + offset]`: a column of a row-major table (stride its row
 * length, offset the column) picked per lane by `index`. Checked once here: every lane
 * reads inside `values`.
 */
export function indexed(values: Float64Array, index: Int32Array, options: IndexedOptions = {}): Indexed {
  const { stride = 1, offset = 0 } = options;
  if (!(values instanceof Float64Array) || !(index instanceof Int32Array)) {
    throw new ArgumentError("indexed: values must be a Float64Array and index an Int32Array (lane l reads values[index[l]·stride + offset]).");
  }
  if (!Number.isInteger(stride) || stride < 1 || !Number.isInteger(offset) || offset < 0 || offset >= stride) {
    throw new ArgumentError(`indexed: stride ${stride} and offset ${offset}; expected integers with 0 ≤ offset < stride.`);
  }
  const rows = Math.floor((values.length - offset + stride - 1) / stride);
  const l = outside(index, rows);
  if (l >= 0) {
    throw new ArgumentError(
      `indexed: index[${l}] is ${index[l]}, outside the ${rows} rows of values (${values.length} numbers, stride ${stride}, offset ${offset}); ` +
        `every index must be in 0 … ${rows - 1}.`,
    );
  }
  return new Indexed(values, index, stride, offset);
}

/** The first lane whose index is not in 0 … rows − 1, or −1 (a loop of its own: V8 optimizes it alone, mid-loop). */
function outside(index: Int32Array, rows: number): number {
  for (let l = 0; l < index.length; l++) if (index[l] < 0 || index[l] >= rows) return l;
  return -1;
}
