/**
 * @file @wengert/optim: parameter trees, optax-style optimizers and a SciPy-like
 * `minimize`, over the gradients, Hessian-vector products and Hessians of @wengert/core.
 */
// Parameter trees (tree.ts, tree-math.ts, ravel.ts).
export { treeMap, treeMap2, treeLeaves, treeFlatten, treeUnflatten, treeStructure, treeLeavesUpTo, isLeaf } from "./tree.js";
export type { Tree, Leaf, TensorLeaf, TreeDef, IntoOptions, Shaped, TreeLike } from "./tree.js";
export { zerosLike, fullLike, treeAdd, treeSub, treeScale, treeAxpy, treeDot, treeNorm, treeSize } from "./tree-math.js";
export { ravelTree } from "./ravel.js";
export type { Raveled } from "./ravel.js";
// Gradient transformations and optimizers, as optax's.
export { gradientTransformation, chain, identity, scale, scaleBySchedule, scaleByLearningRate, applyUpdates } from "./transform.js";
export type { GradientTransformation, ChainState, Schedule, ScalarOrSchedule, CountState } from "./transform.js";
export { sgd, momentum } from "./optimizers/sgd.js";
export type { SgdOptions, MomentumState } from "./optimizers/sgd.js";
export { adam, scaleByAdam } from "./optimizers/adam.js";
export type { AdamOptions, AdamState } from "./optimizers/adam.js";
export { adamw, addDecayedWeights } from "./optimizers/adamw.js";
export type { AdamWOptions } from "./optimizers/adamw.js";
export { rmsprop, scaleByRms } from "./optimizers/rmsprop.js";
export type { RmsOptions, RmspropOptions, RmsState } from "./optimizers/rmsprop.js";
export { clipByGlobalNorm } from "./clip.js";
export {
  constantSchedule, polynomialSchedule, linearSchedule, exponentialDecay, cosineDecaySchedule, warmupCosineDecaySchedule,
  piecewiseConstantSchedule, joinSchedules,
} from "./schedules.js";
export type { PolynomialScheduleOptions, ExponentialDecayOptions, CosineDecayOptions, WarmupCosineDecayOptions } from "./schedules.js";
// The training loop.
export { fit } from "./fit.js";
export type { FitOptions, FitResult, Progress } from "./fit.js";
// SciPy's minimize.
export { minimize } from "./minimize/minimize.js";
export type { Method, MinimizeOptions, MinimizeResult, Iterate } from "./minimize/minimize.js";
export type { Stop } from "./minimize/outcome.js";
export type { Objective } from "./core.js";
export { TreeStructureError, OptimOptionsError } from "./errors.js";
