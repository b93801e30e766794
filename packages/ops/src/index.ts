/**
 * @file @wengert/ops: wengert's primitive operations, as data.
 */
// First and last (extent.ts): a bundler emits ops's modules between these two.
export { opsExtent } from "./extent.js";
export type { Extent } from "./extent.js";
export { UNARY_NAMES, BINARY_NAMES, scalarOps, unaryOps, binaryOps } from "./scalar.js";
export type { ScalarPrimitives } from "./scalar.js";
export type {
  Emitter, UnaryName, BinaryName, OpName, UnaryOp, BinaryOp, ScalarOp, UnaryRule, BinaryRule, TangentRule,
  UnaryTaylor, BinaryTaylor, Derived, Kink, UnaryDeclaration, BinaryDeclaration,
} from "./scalar.js";
export { PREDICATE_NAMES, predicates } from "./predicates.js";
export type { Predicate, PredicateName } from "./predicates.js";
export { numeric } from "./numeric.js";
export * as series from "./series.js";
export type { Series } from "./series.js";
export { rng } from "./random.js";
// Tensors: dims, kernels, and the tensor primitives as data.
export * from "./tensor/dims.js";
export type { ConvParams, Reduction } from "./tensor/kernels.js";
export * as kernels from "./tensor/kernels.js";
export { EXP_SIMD_FROM, residentOperand } from "./tensor/simd-exp.js";
export { rowMinima, type RowMinima, type RowMinimaArgs } from "./tensor/row-minima.js";
export { productRowMinima, type ProductRowMinimaArgs } from "./tensor/product-row-minima.js";
export { nearestCentroids, PointSet } from "./tensor/simd-nearest.js";
export type { Arg, Buf, Contribution, ConvDims, EmbedParams, GatherParams, ReduceParams, SliceParams, TensorCall } from "./tensor/op.js";
export { broadcastLanes, type LaneArgs } from "./tensor/lanes.js";
export { tensorOps, TENSOR_OP_NAMES, sumTo, inversePerm } from "./tensor/ops.js";
export type { TensorDeclaration, TensorEmitter, TensorOp, TensorOpName, TensorPrimitives } from "./tensor/ops.js";
export { alloc, pooledCopy, release, poolStats, SLAB_MAX } from "./tensor/pool.js";
export { indexRangeStats } from "./tensor/index-range.js";
export { IndexValueError, indexVector } from "./tensor/index-tensor.js";
import "./extent-end.js";
