/**
 * Finite differences of programs with branches: record which branches a run took, and
 * accept a point only where every branch is the same all over the difference stencil.
 */
import { bump, centralDiff4 } from "./check.js";

/** What a run decided: the branches taken and the smallest |l − r| of a comparison. */
export interface Decisions {
  branches: string;
  margin: number;
}

let current: Decisions = { branches: "", margin: Infinity };

/** Note a comparison of `l` and `r` that took `taken` (call it from an interpreter's `if`). */
export function decided(l: number, r: number, taken: boolean): void {
  current.margin = Math.min(current.margin, Math.abs(l - r));
  current.branches += taken ? "T" : "F";
}

/** Run `g` and return its result with the decisions taken while it ran. */
export function recorded<T>(g: () => T): [T, Decisions] {
  const saved = current;
  current = { branches: "", margin: Infinity };
  try {
    return [g(), current];
  } finally {
    current = saved;
  }
}

export const H = 1e-3;
/** Values beyond this are too large to difference accurately. */
export const MAX = 1e4;
const STENCIL = [-2, -1, 1, 2].map((k) => k * H);

/**
 * Reject points where finite differences mean nothing: a comparison within 1e-3 of a
 * tie, any branch decided differently somewhere on the stencil around x (either step
 * size), or values too large to difference accurately.
 */
export function smoothAround(run: (x: number[]) => number, x: number[], atX: Decisions, value: number, max = MAX): boolean {
  if (!Number.isFinite(value) || Math.abs(value) > max || atX.margin < 1e-3) return false;
  for (let i = 0; i < x.length; i++) {
    for (const d of [...STENCIL, ...STENCIL.map((s) => s / 2)]) {
      const [v, dec] = recorded(() => run(bump(x, i, d)));
      if (dec.branches !== atX.branches || !Number.isFinite(v)) return false;
    }
  }
  return true;
}

/** A derivative of `g` at `xi` by fourth-order differences at steps H and H/2; null when they disagree. */
export function reliableDiff(g: (t: number) => number, xi: number): number | null {
  const coarse = centralDiff4(g, xi, H);
  const fine = centralDiff4(g, xi, H / 2);
  return Math.abs(coarse - fine) <= 1e-7 * (1 + Math.abs(fine)) ? fine : null;
}
