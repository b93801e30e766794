/**
 * @file Programs shared by URL: `#src=` then `encodeURIComponent(program)` opens the
 * language tab with that program and runs it; `#ts=` does the same for the TypeScript
 * tab. Optional `&x=`, `&from=`, `&to=`, `&points=` set the point and the plot.
 */

export interface Shared {
  readonly src?: string;
  readonly ts?: string;
  readonly x?: number;
  readonly from?: number;
  readonly to?: number;
  readonly points?: number;
}

export function readHash(hash: string): Shared {
  const out: Record<string, string | number> = {};
  for (const part of hash.replace(/^#/, "").split("&")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    const [key, raw] = [part.slice(0, eq), part.slice(eq + 1)];
    let value: string;
    try {
      value = decodeURIComponent(raw);
    } catch {
      continue; // a malformed link: ignore that part
    }
    if (key === "src" || key === "ts") out[key] = value;
    else if (["x", "from", "to", "points"].includes(key) && value.trim() !== "" && Number.isFinite(Number(value))) out[key] = Number(value);
  }
  return out as Shared;
}

export function writeHash(shared: Shared): string {
  const parts: string[] = [];
  for (const key of ["src", "ts", "x", "from", "to", "points"] as const) {
    const v = shared[key];
    if (v !== undefined) parts.push(`${key}=${encodeURIComponent(String(v))}`);
  }
  return `#${parts.join("&")}`;
}
