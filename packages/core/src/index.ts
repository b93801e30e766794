/**
 * @file @wengert/core: trace-based reverse-mode differentiation of TypeScript programs.
 */
// First and last (trace/extent.ts): a bundler emits wengert's modules between these two.
import "./trace/extent.js";
export { rd, grad, valueAndGrad, fd, traceOf, derivativeOf } from "./api/rd.js";
export type { RdOptions } from "./api/options.js";
// What f receives, and what comes back (outside any trace numbers and tensors, inside traced values).
export type { Traced, Untraced, Cotangent, Like, Jacobian, Hessian, BatchOf, BatchOutput } from "./api/types.js";
export * from "./api/primitives.js";
export { Real, isScalar } from "./trace/traced.js";
export { primal } from "./trace/record.js";
export type { Scalar, Operand } from "./trace/traced.js";
export type { TieMode } from "./trace/tracer.js";
// Tensors (docs/tensors.md): ndarrays and Float64Arrays in, traced tensors inside f.
export {
  sum, mean, max, min, logsumexp, softmax, logSoftmax, reshape, transpose, broadcastTo, matmul, dot, outer,
  slice, index, gather, scatterAdd, concat, stack, unstack, where, conv2d, shapeOf,
} from "./api/tensor.js";
export type { Indices, TensorArg, TensorResult, RealResult, Conv2dOptions } from "./api/tensor.js";
export { Tensor } from "./trace/traced.js";
export type { NdArray, ConcreteTensor } from "./trace/host-tensor.js";
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
  ScanWrittenOutError,
} from "./errors.js";
// thrown by gatherAt and scatterAddAt (traced indices) at an entry that is no position along the axis
export { IndexValueError } from "@wengert/ops";
// The paper's language (docs/language.md).
export { runProgram, parse, check, evaluate, showValue, showType, showRdTerm, tokenize, ParseError, TypeCheckError, StepLimitError } from "./lang/index.js";
export type { Value, EvalOptions, RunResult, TermOrigins, Token, TokenType, Term, BoolTerm, Pos } from "./lang/index.js";
// Forward mode, Taylor mode, pullbacks, Jacobians, Hessians.
export { jvp, taylor } from "./api/forward.js";
export { vjp, jacobian, jacrev, jacfwd, hessian, hvp } from "./api/jacobian.js";
export type { JacfwdOptions, Pullback } from "./api/jacobian.js";
// User primitives and checking.
export { defineOp } from "./api/defineOp.js";
export type { OpSpec, UserOp } from "./api/defineOp.js";
export { checkGrad } from "./api/checkGrad.js";
// Repeated gradients by replaying a guarded trace (docs/compile.md).
export { compileGrad } from "./api/compile.js";
export type { CompiledGrad } from "./api/compile.js";
// Any function traced once and replayed where its decisions hold (docs/jit-vmap.md).
export { jit } from "./api/jit.js";
export type { Jitted, JitStats } from "./api/jit.js";
// A function over a batch of points, lanes grouped by their decisions (docs/jit-vmap.md).
export { vmap } from "./api/vmap.js";
export type { Axes, JitLanes, VmapOptions, Vmapped } from "./api/vmap.js";
export { indexed, Indexed } from "./api/indexed.js";
export type { IndexedOptions } from "./api/indexed.js";
export type { CheckGradOptions, GradCheck, GradCheckReport } from "./api/checkGrad.js";
export { NaNError, TraceLengthError, DefineOpError, GradientCheckError, ArgumentError } from "./errors.js";
// Loops traced once and applied per iteration, with checkpointed reverse sweeps (docs/scan.md).
export { scan } from "./api/scan.js";
export type { ScanOptions } from "./api/scan.js";
export { checkpoint } from "./api/checkpoint.js";
import "./trace/extent-end.js";
