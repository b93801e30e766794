/**
 * @file The symbolic emitter: the primitives as methods that record into a trace, the
 * emitter reverse and tangent rules run against when derivatives are built as terms.
 * Every method is made from the primitive tables (@wengert/ops): a primitive declared
 * there is a method here with nothing to add.
 */
import { alloc, BINARY_NAMES, broadcastDims, kernels, predicates, size, TENSOR_OP_NAMES, tensorOps, UNARY_NAMES } from "@wengert/ops";
import type { Emitter, TensorEmitter, TensorOpName } from "@wengert/ops";
import { shapeError } from "./callsite.js";
import { CODE, CONST } from "./opcodes.js";
import type { Trace } from "./tracer.js";

/**
 * Primitives as methods emitting into a sink (a trace, or a tape being built): the
 * emitter that reverse rules run against when derivatives are built symbolically.
 * User primitives' rules are written with the public functions: they find the trace
 * as the emitter's `sink`.
 */
export function emitterFor(sink: Trace): TensorEmitter<number> {
  const e = Object.create(emitterMethods()) as { sink: Trace };
  e.sink = sink;
  return e as unknown as TensorEmitter<number>;
}

/** The emitter's methods, shared by every emitter (each reads its sink from `this`), made once. */
let methods: object | null = null;

function emitterMethods(): object {
  if (methods !== null) return methods;
  type This = { readonly sink: Trace };
  const m: Record<string, unknown> = {
    lit(this: This, c: number) {
      return this.sink.constant(c);
    },
  };
  // the built-in scalar primitives: the rules are written with them (a user primitive's rules with the public functions)
  for (const name of UNARY_NAMES) {
    const code = CODE[name];
    m[name] = function (this: This, x: number) {
      return this.sink.record(code, x);
    };
  }
  for (const name of BINARY_NAMES) {
    const code = CODE[name];
    m[name] = function (this: This, a: number, b: number) {
      return this.sink.record(code, a, b);
    };
  }
  // the tensor primitives, each by its declaration's `call`: the method's arguments as the
  // instruction's arguments and parameters
  for (const name of TENSOR_OP_NAMES) {
    const code = CODE[name];
    // this emitter's values, variables, stand for the signature's `Arg`s
    const call = tensorOps[name].call as unknown as (...xs: unknown[]) => { readonly args: readonly number[]; readonly params: unknown };
    m[name] = function (this: This, ...xs: unknown[]) {
      const { args, params } = call(...xs);
      return this.sink.recordOp(code, args, params);
    };
  }
  // the methods that are no primitives
  type Others = Omit<TensorEmitter<number>, keyof Emitter<number> | TensorOpName>;
  const others: { [K in keyof Others]: (this: This, ...args: Parameters<Others[K]>) => ReturnType<Others[K]> } = {
    dims(x) {
      return this.sink.tape.dims(x);
    },
    zeros(dims) {
      return this.sink.tape.tensorConstant({ dims, data: alloc(size(dims)) });
    },
    // a mask decided on the values a rule sees, emitted as a literal (see decideTensor)
    decide(pred, a, b) {
      const sink = this.sink;
      const tape = sink.tape;
      if (tape.op[a] !== CONST || tape.op[b] !== CONST) sink.opaque = true;
      const dims = broadcastDims(tape.dims(a), tape.dims(b));
      if (typeof dims === "string") throw shapeError(pred, dims);
      const test = predicates[pred].test;
      return tape.tensorConstant({ dims, data: kernels.zip(tape.value(a), tape.dims(a), tape.value(b), tape.dims(b), dims, (x, y) => (test(x, y) ? 1 : 0)) });
    },
  };
  Object.assign(m, others);
  methods = m;
  return m;
}

