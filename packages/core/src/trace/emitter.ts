/**
 * @file The symbolic emitter: the primitives as methods that record into a trace, the
 * emitter reverse and tangent rules run against when derivatives are built as terms.
 */
import { alloc, BINARY_NAMES, broadcastDims, kernels, predicates, size, UNARY_NAMES, type Emitter, type TensorEmitter } from "@wengert/ops";
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
  const op = (sink: Trace, name: keyof typeof CODE, args: readonly number[], params?: unknown): number => sink.recordOp(CODE[name], args, params);
  const reduce = (name: "sum" | "max" | "min" | "logsumexp") =>
    function (this: This, x: number, axes: readonly number[], keepdims: boolean) {
      return op(this.sink, name, [x], { axes, keepdims });
    };
  type Tensorial = Omit<TensorEmitter<number>, keyof Emitter<number>>;
  const tensor: { [K in keyof Tensorial]: (this: This, ...args: Parameters<Tensorial[K]>) => ReturnType<Tensorial[K]> } = {
    dims(x) {
      return this.sink.tape.dims(x);
    },
    zeros(dims) {
      return this.sink.tape.tensorConstant({ dims, data: alloc(size(dims)) });
    },
    sum: reduce("sum"),
    max: reduce("max"),
    min: reduce("min"),
    logsumexp: reduce("logsumexp"),
    logSoftmax(x, axes) {
      return op(this.sink, "logSoftmax", [x], { axes });
    },
    reshape(x, dims) {
      return op(this.sink, "reshape", [x], { dims });
    },
    broadcastTo(x, dims) {
      return op(this.sink, "broadcastTo", [x], { dims });
    },
    transpose(x, perm) {
      return op(this.sink, "transpose", [x], { perm });
    },
    matmul(a, b) {
      return op(this.sink, "matmul", [a, b]);
    },
    slice(x, starts, ends) {
      return op(this.sink, "slice", [x], { starts, ends });
    },
    index(x, at) {
      return op(this.sink, "index", [x], { at });
    },
    embed(dims, pieces, starts) {
      return op(this.sink, "embed", pieces, { dims, starts });
    },
    pack(xs) {
      return op(this.sink, "pack", xs);
    },
    gather(x, indices, axis) {
      return op(this.sink, "gather", [x], { indices, axis });
    },
    scatterAdd(t, indices, values, axis) {
      return op(this.sink, "scatterAdd", [t, values], { indices, axis });
    },
    concat(xs, axis) {
      return op(this.sink, "concat", xs, { axis });
    },
    where(m, a, b) {
      return op(this.sink, "where", [m, a, b]);
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
    conv2d(x, w, p) {
      return op(this.sink, "conv2d", [x, w], p);
    },
    conv2dInput(g, w, p) {
      return op(this.sink, "conv2dInput", [g, w], p);
    },
    conv2dFilter(x, g, p) {
      return op(this.sink, "conv2dFilter", [x, g], p);
    },
  };
  Object.assign(m, tensor);
  methods = m;
  return m;
}

