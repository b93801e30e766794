/**
 * @file @wengert/core: trace-based reverse-mode differentiation of TypeScript programs.
 */
export { rd, grad, valueAndGrad, fd, traceOf, derivativeOf } from "./api/rd.js";
export type { RdOptions, Traced, Cotangent } from "./api/transform.js";
export * from "./api/primitives.js";
export { Real, primal, isScalar } from "./trace/tracer.js";
export type { Scalar, TieMode, Operand } from "./trace/tracer.js";
// Tensors (docs/tensors.md): ndarrays and Float64Arrays in, traced tensors inside f.
export {
  sum, mean, max, min, logsumexp, softmax, logSoftmax, reshape, transpose, broadcastTo, matmul, dot, outer,
  slice, index, gather, scatterAdd, concat, stack, unstack, where, conv2d, shapeOf,
} from "./api/tensor.js";
export type { TensorArg, TensorResult, RealResult, Conv2dOptions } from "./api/tensor.js";
export { Tensor } from "./trace/tensor.js";
export type { NdArray, ConcreteTensor } from "./trace/tensor.js";
export { TraceTerm } from "./trace/term.js";
// Tape buffers kept between calls for reuse (bounded): for memory accounting.
export { keptBytes as pooledBytes } from "./trace/columns.js";
export type { Shape } from "./structure.js";
export {
  WengertError,
  InputTypeError,
  SeedMismatchError,
  OutputTypeError,
  ClosedTraceError,
  TracedOperatorError,
  TieError,
  EvaluationError,
  ShapeError,
} from "./errors.js";
// The paper's language (docs/language.md).
export { runProgram, parse, check, evaluate, showValue, showType, ParseError, TypeCheckError, StepLimitError } from "./lang/index.js";
export type { Value, EvalOptions, RunResult } from "./lang/index.js";
// Forward mode, Taylor mode, pullbacks, Jacobians, Hessians.
export { jvp, taylor } from "./api/forward.js";
export { vjp, jacobian, jacrev, jacfwd, hessian, hvp } from "./api/jacobian.js";
// User primitives and checking.
export { defineOp } from "./api/defineOp.js";
export type { OpSpec, UserOp } from "./api/defineOp.js";
export { checkGrad } from "./api/checkGrad.js";
// Repeated gradients by replaying a guarded trace (docs/compile.md).
export { compileGrad } from "./api/compile.js";
export type { CompiledGrad } from "./api/compile.js";
export type { CheckGradOptions, GradCheck, GradCheckReport } from "./api/checkGrad.js";
export { NaNError, TraceLengthError, DefineOpError, GradientCheckError } from "./errors.js";
// Loops traced once and applied per iteration, with checkpointed reverse sweeps (docs/scan.md).
export { scan } from "./api/scan.js";
export type { ScanOptions } from "./api/scan.js";
export { checkpoint } from "./api/checkpoint.js";
