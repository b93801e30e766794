/**
 * @file Gradient clipping by global norm (Pascanu et al. 2013), as optax's
 * clip_by_global_norm: when ‖g‖ (all components together) reaches `maxNorm`, every
 * component is scaled by maxNorm/‖g‖, so the direction is kept and the length capped.
 */
import { checkRange } from "./options.js";
import { treeNorm } from "./tree-math.js";
import { treeMap } from "./tree.js";
import { gradientTransformation, type GradientTransformation } from "./transform.js";

/** Scales the updates down to global norm `maxNorm` when they are longer. */
export function clipByGlobalNorm(maxNorm: number): GradientTransformation<null> {
  checkRange("clipByGlobalNorm", "maxNorm", maxNorm, 0, Infinity, true);
  return gradientTransformation({
    init: () => null,
    update: (updates, state) => {
      const norm = treeNorm(updates);
      // optax: (t / ‖g‖) · maxNorm, in that order, where ‖g‖ ≥ maxNorm
      return [norm < maxNorm ? updates : treeMap((t) => (t / norm) * maxNorm, updates), state];
    },
  });
}
