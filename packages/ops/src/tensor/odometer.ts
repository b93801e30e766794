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
    for (let ax = rank - 1; ax >= 0; ax--) {
      idx[ax]++;
      for (let k = 0; k < st.length; k++) offs[k] += st[k][ax];
      if (idx[ax] < out[ax]) break;
      for (let k = 0; k < st.length; k++) offs[k] -= st[k][ax] * out[ax];
      idx[ax] = 0;
    }
  }
}
