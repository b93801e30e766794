/**
 * @file What a workload module provides, and what the harness does with it.
 *
 * A workload (one of W1–W6 of packages/bench/WORKLOADS.md, at one size) gives the plain-JS
 * primal, the hand-written gradient (the reference every candidate is checked
 * against, and the practical limit of speed), wengert's gradient, and the peers'
 * versions. Peers are built by a function of the library module and a size, so the
 * workload modules never import a peer library themselves (the unit tests load them
 * without TF.js or jax-js), and so the harness can build a peer at a reduced size
 * first to estimate what a call costs before committing to the full size.
 */
import type * as TfCore from "@tensorflow/tfjs-core";
import type * as JaxJs from "@jax-js/jax";

/** A gradient, flattened (a scalar derivative is a vector of length 1). */
export type Vec = ArrayLike<number>;

/**
 * A matrix as rows, the layout wengert's Hessians and Jacobians are returned in: timed as
 * returned, and laid out row-major for the check against the hand-written one (check.ts toVec).
 */
export type Rows = readonly ArrayLike<number>[];

export type Tf = typeof TfCore;
export type Jax = typeof JaxJs;

/** A peer's gradient at a given size: returns a function computing it (once per call). */
export type Builder<L> = (lib: L, size: number) => () => Vec;

/** Why a candidate does not take part (reported in its cell, never dropped). */
export interface Unsupported {
  readonly unsupported: string;
}

export const isUnsupported = (x: unknown): x is Unsupported =>
  typeof x === "object" && x !== null && typeof (x as Unsupported).unsupported === "string";

/**
 * One way the peers are written for a workload. The main variant (label "") is the form
 * a user of a tensor library would write; W3 adds a second, per-element one (the
 * scalar code of the workload, transcribed op for op).
 */
export interface PeerVariant {
  readonly label: string;
  readonly note?: string;
  /**
   * Smaller sizes (ascending) at which these peers are tried first, so that one whose
   * full-size call would take far too long (or fail) is found out in a fraction of
   * that time; for peers whose cost grows with the size (loops of scalar tensor ops),
   * not for vectorised ones.
   */
  readonly probeSizes?: readonly number[];
  readonly tfjs?: Builder<Tf> | Unsupported;
  readonly jaxEager?: Builder<Jax> | Unsupported;
  readonly jaxJit?: Builder<Jax> | Unsupported;
}

export type Family = "W1" | "W2" | "W3" | "W4" | "W5" | "W6" | "W7";

export interface Workload {
  /** Unique, e.g. "W1-1000". */
  readonly id: string;
  readonly family: Family;
  /** e.g. "W1 rosenbrock n=1000". */
  readonly title: string;
  /** What the "gradient" is here: "gradient", "Hessian-vector product", "derivative". */
  readonly what: string;
  /** The size parameter the peers are built at (n, m, N, RK4 steps; fixed for W2). */
  readonly size: number;
  readonly sizeName: string;
  /** The primal, plain JS on numbers (its result is the loss). */
  readonly primal: () => number;
  /** The hand-written gradient: the reference. */
  readonly hand: () => Vec | Rows;
  /** wengert's gradient, or why wengert cannot do this workload yet. */
  readonly wengert: (() => Vec | Rows) | Unsupported;
  /** wengert compiled, on repeated calls (replaying the guarded trace): compileGrad, or jit of the workload's transformation. */
  readonly wengertCompiled?: () => Vec | Rows;
  readonly peers: readonly PeerVariant[];
  /**
   * Relative tolerance for float32 peers (default 1e-3); set, with a reason, where the
   * workload amplifies rounding (a long chain of steps).
   */
  readonly float32Tolerance?: { readonly tol: number; readonly reason: string };
}
