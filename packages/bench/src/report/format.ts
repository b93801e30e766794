/** @file Number formatting shared by the table and the chart. */

/** A time in ms as "12.3 µs", "4.56 ms", "1.23 s" (three significant digits). */
export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return String(ms);
  if (ms < 1) return `${sig(ms * 1000)} µs`;
  if (ms < 1000) return `${sig(ms)} ms`;
  return `${sig(ms / 1000)} s`;
}

/** A ratio as "×4.5", "×0.82", "×1230". */
export function formatRatio(r: number): string {
  if (!Number.isFinite(r)) return String(r);
  return `×${r >= 100 ? Math.round(r) : sig(r)}`;
}

export function formatBytes(b: number): string {
  const a = Math.abs(b);
  if (a < 1024) return `${Math.round(b)} B`;
  if (a < 1024 * 1024) return `${sig(b / 1024)} KiB`;
  return `${sig(b / 1024 / 1024)} MiB`;
}

function sig(x: number): string {
  return String(+x.toPrecision(3));
}
