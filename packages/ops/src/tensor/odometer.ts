/**
 * @file The odometer: the general walk over a result and the arguments broadcast to it,
 * for the cases the kernels' straight loops do not cover.
 */
import { broadcastStrides, size, type Dims } from "./dims.js";

/**
 * Visit every index of `out` in row-major order, calling `body(o, offsets)` with the
 * flat output index and each argument's flat index (broadcasting by stride 0).
 */
export function odometer(out: Dims, args: readonly Dims[], body: (o: number, offs: Int32Array) => void): void {
  const rank = out.length;
  const n = size(out);
  const st = args.map((d) => broadcastStrides(d, out));
  const offs = new Int32Array(args.length);
  const idx = new Int32Array(rank);
  for (let o = 0; o < n; o++) {
    body(o, offs);
    advance(out, st, idx, offs, rank - 1);
  }
}

/**
 * One step of the odometer on axes 0…top: the multi-index `idx` (of dims `out`) and each
 * argument's flat index move on by one, carrying into the axes before.
 */
function advance(out: Dims, st: readonly number[][], idx: Int32Array, offs: Int32Array, top: number): void {
  for (let ax = top; ax >= 0; ax--) {
    idx[ax]++;
    for (let k = 0; k < st.length; k++) offs[k] += st[k][ax];
    if (idx[ax] < out[ax]) return;
    for (let k = 0; k < st.length; k++) offs[k] -= st[k][ax] * out[ax];
    idx[ax] = 0;
  }
}

/**
 * The odometer by rows of `out` (its last axis): `body(o, offs, along)` once per row,
 * with the row's first flat output index, each argument's flat index there, and each
 * argument's stride along the row (0 where it is broadcast). A kernel then runs a loop
 * per row instead of a call per element (a rank-0 `out` is one row of one element).
 */
export function odometerRows(out: Dims, args: readonly Dims[], body: (o: number, offs: Int32Array, along: Int32Array) => void): void {
  const rank = out.length;
  const st = args.map((d) => broadcastStrides(d, out));
  const m = rank === 0 ? 1 : out[rank - 1];
  const along = Int32Array.from(st, (s) => (rank === 0 ? 0 : s[rank - 1]));
  const n = size(out);
  const offs = new Int32Array(args.length);
  const idx = new Int32Array(rank);
  for (let o = 0; o < n; o += m) {
    body(o, offs, along);
    advance(out, st, idx, offs, rank - 2);
  }
}
