/**
 * @file Two results compared to the last bit: every number of a result in order (reals,
 * Float64Arrays, ndarrays, arrays and records of them), Object.is on each, so −0 is not 0.
 * The scan tests hold a scan's numbers to the loop written out with it; the vmap tests a batch to f lane by lane.
 */
import { expect } from "vitest";

/** Every number of a result, in order (tensors element by element, -0 kept apart from 0). */
export function numbers(v: unknown, out: number[] = []): number[] {
  if (typeof v === "number") out.push(v);
  else if (v instanceof Float64Array) out.push(...v);
  else if (v !== null && typeof v === "object" && "data" in v && (v as { data: unknown }).data instanceof Float64Array) out.push(...(v as { data: Float64Array }).data);
  else if (Array.isArray(v)) for (const e of v) numbers(e, out);
  else if (v !== null && typeof v === "object") for (const k of Object.keys(v)) numbers((v as Record<string, unknown>)[k], out);
  else throw new Error(`not a result: ${String(v)}`);
  return out;
}

/** The two results are the same numbers, to the last bit (the first is the scan's, the second the loop's, in a failure's message). */
export function expectSame(scanned: unknown, loop: unknown): void {
  const a = numbers(scanned);
  const b = numbers(loop);
  expect(a.length).toBe(b.length);
  a.forEach((x, i) => {
    if (!Object.is(x, b[i])) expect.fail(`number ${i}: ${x} (scan) vs ${b[i]} (loop)`);
  });
}

/**
 * vmap's outputs (each a batch's numbers, lane after lane) hold, lane by lane, f's at that
 * lane (perLane[l][j], output j at lane l), to the last bit.
 */
export function expectLanes(got: readonly (readonly number[])[], perLane: readonly (readonly (readonly number[])[])[]): void {
  got.forEach((out, j) => {
    const w = perLane[0][j].length;
    expect(out.length).toBe(perLane.length * w);
    perLane.forEach((want, l) =>
      want[j].forEach((y, e) => {
        if (!Object.is(out[l * w + e], y)) expect.fail(`output ${j}, lane ${l}, element ${e}: ${out[l * w + e]} (vmap) vs ${y} (f at the lane)`);
      }),
    );
  });
}
