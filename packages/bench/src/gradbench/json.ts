/**
 * @file Reading GradBench inputs (parsed JSON) into Float64Arrays, and turning
 * outputs (numbers, Float64Arrays, ndarrays, nested) back into plain JSON values.
 *
 * Readers throw an `InputError` naming the field, so a malformed input answers
 * `success: false` with a useful message rather than a NaN deep inside a computation.
 */

export class InputError extends Error {
  override readonly name = "InputError";
}

const describe = (v: unknown): string =>
  v === undefined
    ? "missing"
    : v === null
      ? "null"
      : Array.isArray(v)
        ? `an array of length ${v.length}`
        : typeof v === "object"
          ? "an object"
          : `${typeof v} ${JSON.stringify(v)}`;

/** The input as an object (GradBench inputs of every eval but `hello` are objects). */
export function record(input: unknown, what = "the input"): Record<string, unknown> {
  if (typeof input !== "object" || input === null || Array.isArray(input)) throw new InputError(`${what} is ${describe(input)}; expected an object`);
  return input as Record<string, unknown>;
}

/** A field of an object input, which must be present. */
export function field(input: Record<string, unknown>, name: string): unknown {
  if (!Object.hasOwn(input, name)) throw new InputError(`the input has no field "${name}"`);
  return input[name];
}

export function number(v: unknown, what: string): number {
  if (typeof v !== "number") throw new InputError(`${what} is ${describe(v)}; expected a number`);
  return v;
}

export function integer(v: unknown, what: string, min = 0): number {
  if (typeof v !== "number" || !Number.isInteger(v) || v < min) throw new InputError(`${what} is ${describe(v)}; expected an integer ≥ ${min}`);
  return v;
}

/** A JSON array of numbers as a Float64Array. */
export function numbers(v: unknown, what: string): Float64Array {
  if (!Array.isArray(v)) throw new InputError(`${what} is ${describe(v)}; expected an array of numbers`);
  const out = new Float64Array(v.length);
  for (let i = 0; i < v.length; i++) {
    const x = v[i];
    if (typeof x !== "number") throw new InputError(`${what}[${i}] is ${describe(x)}; expected a number`);
    out[i] = x;
  }
  return out;
}

/** A JSON array of equally long arrays of numbers (`double[][]`), row-major in one Float64Array. */
export function matrix(v: unknown, what: string): { data: Float64Array; rows: number; cols: number } {
  if (!Array.isArray(v)) throw new InputError(`${what} is ${describe(v)}; expected an array of arrays of numbers`);
  const rows = v.length;
  const cols = rows === 0 ? 0 : Array.isArray(v[0]) ? (v[0] as unknown[]).length : -1;
  const data = new Float64Array(rows * Math.max(cols, 0));
  for (let i = 0; i < rows; i++) {
    const row = v[i];
    if (!Array.isArray(row) || row.length !== cols) {
      throw new InputError(`${what}[${i}] is ${describe(row)}; expected an array of ${Math.max(cols, 0)} numbers (as ${what}[0])`);
    }
    for (let j = 0; j < cols; j++) {
      const x = row[j];
      if (typeof x !== "number") throw new InputError(`${what}[${i}][${j}] is ${describe(x)}; expected a number`);
      data[i * cols + j] = x;
    }
  }
  return { data, rows, cols: Math.max(cols, 0) };
}

interface NdLike {
  readonly data: ArrayLike<number>;
  readonly shape: readonly number[];
  readonly stride: readonly number[];
  readonly offset: number;
}

const isNdLike = (v: object): v is NdLike =>
  "shape" in v && "stride" in v && "offset" in v && "data" in v && Array.isArray((v as NdLike).shape) && ArrayBuffer.isView((v as NdLike).data);

const finite = (x: number): number | null => (Number.isFinite(x) ? x : null);

function nested(a: NdLike, axis: number, base: number): unknown {
  const n = a.shape[axis];
  const s = a.stride[axis];
  if (axis === a.shape.length - 1) {
    const out = new Array<number | null>(n);
    for (let i = 0; i < n; i++) out[i] = finite(a.data[base + i * s]);
    return out;
  }
  const out = new Array<unknown>(n);
  for (let i = 0; i < n; i++) out[i] = nested(a, axis + 1, base + i * s);
  return out;
}

/**
 * A value as plain JSON: typed arrays become arrays, ndarrays nested arrays (row-major),
 * non-finite numbers `null` (JSON has no NaN; GradBench's intermediary rejects it),
 * arrays and plain objects recursively.
 */
export function jsonable(v: unknown): unknown {
  if (typeof v === "number") return finite(v);
  if (typeof v !== "object" || v === null) return v;
  if (ArrayBuffer.isView(v) && !(v instanceof DataView)) {
    const a = v as unknown as ArrayLike<number>;
    const out = new Array<number | null>(a.length);
    for (let i = 0; i < a.length; i++) out[i] = finite(Number(a[i]));
    return out;
  }
  if (Array.isArray(v)) return v.map(jsonable);
  if (isNdLike(v)) return v.shape.length === 0 ? finite(v.data[v.offset]) : nested(v, 0, v.offset);
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) out[k] = jsonable(x);
  return out;
}
