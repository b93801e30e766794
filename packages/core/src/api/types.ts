/**
 * @file The types of values at the API boundary: as `f` receives them, and as the
 * transformations hand them back.
 *
 * They follow one runtime rule (transform.ts, `emitTransformed`): a transformation's results are
 * traced values of the enclosing trace (`Real`, `Tensor`) when anything it depends on
 * — a leaf of `x`, of the seed or tangent, or a value `f` closes over — belongs to a
 * live trace; otherwise they are numbers and tensors (`x`'s tensors in `x`'s containers,
 * `f(x)`'s as ndarrays). The types see `x`, the seed and the tangent, which is what
 * "outside any trace" means statically; a value `f` closes over is invisible to them
 * (README, "Types": the paper's nested example, and what happens then).
 */
import type { AnyNdArray, NdArray } from "../trace/host-tensor.js";
import type { Indexed } from "./indexed.js";
import type { Real, Scalar, Tensor } from "../trace/traced.js";

/** A tensor the user holds. */
type HostTensor = Float64Array | AnyNdArray;

type IsAny<X> = 0 extends 1 & X ? true : false;

/** Whether some leaf of `X` may be traced (`true` in the result's union if so). */
type MayTrace<X> = unknown extends X
  ? true
  : X extends Real | Tensor
    ? true
    : X extends number | HostTensor
      ? false
      : X extends readonly unknown[]
        ? MayTrace<X[number]>
        : X extends object
          ? MayTrace<X[keyof X]>
          : false;

/**
 * Whether `X` surely holds a traced value: a leaf that is `Real` or `Tensor` (not a union
 * with a number) at a place every value of `X` has (a tuple's element, a record's field;
 * an array may be empty).
 */
type Sure<X> = IsAny<X> extends true ? false : [X] extends [never] ? false : [SureEach<X>] extends [true] ? true : false;
type SureEach<X> = X extends Real | Tensor
  ? true
  : X extends number | HostTensor
    ? false
    : X extends readonly unknown[]
      ? number extends X["length"]
        ? false
        : true extends { [K in keyof X]: Sure<X[K]> }[number]
          ? true
          : false
      : X extends object
        ? true extends { [K in keyof X]-?: Sure<X[K]> }[keyof X]
          ? true
          : false
        : false;

/**
 * Whether the results of a transformation depending on values of type `X` are traced:
 * `"host"` when no leaf of `X` can be (numbers and tensors come back), `"traced"` when
 * one surely is (traced values come back), `"maybe"` otherwise (either).
 */
export type Mode<X> = Sure<X> extends true ? "traced" : true extends MayTrace<X> ? "maybe" : "host";

type AsReal<L, M> = M extends "host" ? number : M extends "traced" ? Real : L extends Real ? Real : Scalar;
/** A tensor as it comes back: in its container (a Float64Array stays one), or traced. */
type AsTensor<L, M> = M extends "host" ? HostOf<L> : M extends "traced" ? Tensor : L extends Tensor ? Tensor : HostOf<L> | Tensor;
type HostOf<L> = L extends Float64Array ? Float64Array : NdArray;

/**
 * A value shaped like `X` as a transformation in mode `M` hands it back, leaf by leaf:
 * numbers (literal types widened) and tensors in their containers, or traced values.
 */
export type Value<X, M> = unknown extends X
  ? X
  : X extends number | Real
    ? AsReal<X, M>
    : X extends Tensor | HostTensor
      ? AsTensor<X, M>
      : X extends readonly unknown[]
        ? { -readonly [K in keyof X]: Value<X[K], M> }
        : X extends object
          ? { -readonly [K in keyof X]: Value<X[K], M> }
          : X;

/** A value as `f` receives it: numbers become traced reals, tensors traced tensors, in the same containers. */
export type Traced<X> =
  IsAny<X> extends true
    ? any // eslint-disable-line @typescript-eslint/no-explicit-any -- x typed any: so is f's parameter
    : unknown extends X
      ? unknown
      : X extends number | Real
        ? Real
        : X extends Tensor | HostTensor
          ? Tensor
          : X extends readonly unknown[]
            ? { -readonly [K in keyof X]: Traced<X[K]> }
            : X extends object
              ? { -readonly [K in keyof X]: Traced<X[K]> }
              : never;

/**
 * A value as the user holds it outside any trace: traced reals become numbers, traced
 * tensors ndarrays (how `f(x)` comes back at the outermost level).
 */
export type Untraced<X> = unknown extends X
  ? X
  : X extends number | Real
    ? number
    : X extends Float64Array
      ? Float64Array
      : X extends Tensor | HostTensor
        ? NdArray
        : X extends readonly unknown[]
          ? { -readonly [K in keyof X]: Untraced<X[K]> }
          : X extends object
            ? { -readonly [K in keyof X]: Untraced<X[K]> }
            : X;

/**
 * What may be passed where a value shaped like `X` is expected (a seed shaped like `f(x)`,
 * a tangent shaped like `x`, the argument of a compiled gradient): numbers or traced
 * reals for reals, tensors of any kind for tensors, records with the same keys. Where
 * `X` is a tuple an array of its items will do (`x` written `[1, 2]` is a tuple, a tangent
 * kept in a `number[]` is not); its length is checked when the call runs.
 */
export type Like<X> = unknown extends X
  ? unknown
  : X extends number | Real
    ? Scalar
    : X extends Tensor | HostTensor
      ? Tensor | HostTensor
      : X extends readonly unknown[]
        ? number extends X["length"]
          ? readonly Like<X[number]>[]
          : { readonly [K in keyof X]: Like<X[K]> } | readonly Like<X[number]>[]
        : X extends object
          ? { readonly [K in keyof X]: Like<X[K]> }
          : X;

/**
 * The cotangent `rd` returns, shaped like `x`: traced when `x` or the seed (`With`) is.
 * Outside any trace: `number` for a number, `number[]` for `number[]`, a Float64Array
 * for a Float64Array, an ndarray for an ndarray.
 */
export type Cotangent<X, With = []> = Value<X, Mode<[X, With]>>;

/** `f(x)` (or a tangent shaped like it) for `f` returning `Y`, in mode `M`. */
export type Output<Y, M> = Value<Untraced<Y>, M>;

/**
 * A Jacobian of `f` returning `Y` at `x` of type `X` in mode `M`: shaped like `f(x)`,
 * each leaf shaped like `x`, holding the block ∂y/∂x — a number (traced inside a trace)
 * where both are reals, else an ndarray of dims [...dims y, ...dims x] (jacobian.ts).
 */
export type Jacobian<Y, X, M> = Rows<Untraced<Y>, X, M>;
type Rows<Y, X, M> = unknown extends Y
  ? unknown
  : Y extends number
    ? Blocks<X, M, true>
    : Y extends HostTensor
      ? Blocks<X, M, false>
      : Y extends readonly unknown[]
        ? { -readonly [K in keyof Y]: Rows<Y[K], X, M> }
        : Y extends object
          ? { -readonly [K in keyof Y]: Rows<Y[K], X, M> }
          : Y;
type Blocks<X, M, OutReal> = unknown extends X
  ? unknown
  : X extends number | Real
    ? OutReal extends true
      ? AsReal<X, M>
      : NdArray
    : X extends Tensor | HostTensor
      ? NdArray
      : X extends readonly unknown[]
        ? { -readonly [K in keyof X]: Blocks<X[K], M, OutReal> }
        : X extends object
          ? { -readonly [K in keyof X]: Blocks<X[K], M, OutReal> }
          : X;

/** The Hessian at `x` of type `X`: the Jacobian of the gradient, shaped like `x` with leaves shaped like `x`. */
export type Hessian<X> = Jacobian<X, X, Mode<X>>;

/** A real as a transformation in mode `M` hands it back (f(x) of grad's valueAndGrad). */
export type RealIn<M> = AsReal<number, M>;

/**
 * A tensor computed from arguments of types `A` (a tuple of them, or one): traced when
 * one is, an ndarray when none can be (api/tensor.ts).
 */
export type TensorOf<A> = AsTensor<NdArray, Mode<A>>;
/** A real computed from arguments of types `A`: traced when one is, a number when none can be. */
export type RealOf<A> = RealIn<Mode<A>>;
/** The mode of a list's items: a list that cannot be empty is traced when all its items are. */
export type ItemsOf<Ts extends readonly unknown[]> = number extends Ts["length"] ? Ts[number] : Ts;

/** Which inputs or outputs are batched along their leading axis (0) and which are not (null), as a prefix of their structure (vmap). */
export type Axes = 0 | null | readonly Axes[] | { readonly [key: string]: Axes };

/** `A`'s axes at key `K` of the structure (none where `A` has no such key: a missing one is an error at run time). */
type AxesAt<A, K> = K extends keyof A ? A[K] : never;

/**
 * A batch of values shaped like `X` (what `f` takes) under the axes `A` (vmap's inAxes):
 * where `A` is 0, a real is a Float64Array of the lanes' values (or an `indexed` batch)
 * and a tensor of dims d one of dims [B, ...d] (traced inside a trace); where `A` is
 * null, a value as `f` takes it.
 */
export type BatchOf<X, A> = unknown extends X
  ? unknown
  : A extends null
    ? Like<X>
    : A extends 0
      ? Lanes<X>
      : X extends readonly unknown[]
        ? { readonly [K in keyof X]: BatchOf<X[K], AxesAt<A, K>> }
        : X extends object
          ? { readonly [K in keyof X]: BatchOf<X[K], AxesAt<A, K>> }
          : never;
type Lanes<X> = X extends number | Real
  ? Float64Array | Tensor | Indexed
  : X extends Tensor | HostTensor
    ? HostTensor | Tensor
    : X extends readonly unknown[]
      ? { readonly [K in keyof X]: Lanes<X[K]> }
      : X extends object
        ? { readonly [K in keyof X]: Lanes<X[K]> }
        : X;

/**
 * What a vmapped `f` returning `Y` returns under the axes `A` (outAxes) in mode `M`:
 * where `A` is 0, a real as a Float64Array of the lanes' values and a tensor as an ndarray
 * of dims [B, ...d] (a traced tensor inside a trace); where null, `f(x)` as one lane's.
 */
export type BatchOutput<Y, A, M> = unknown extends Y ? unknown : BatchOut<Untraced<Y>, A, M>;
type BatchOut<Y, A, M> = A extends null
  ? Value<Y, M>
  : A extends 0
    ? LanesOut<Y, M>
    : Y extends readonly unknown[]
      ? { -readonly [K in keyof Y]: BatchOut<Y[K], AxesAt<A, K>, M> }
      : Y extends object
        ? { -readonly [K in keyof Y]: BatchOut<Y[K], AxesAt<A, K>, M> }
        : never;
type LanesOut<Y, M> = Y extends number
  ? AsTensor<Float64Array, M>
  : Y extends HostTensor
    ? AsTensor<NdArray, M>
    : Y extends readonly unknown[]
      ? { -readonly [K in keyof Y]: LanesOut<Y[K], M> }
      : Y extends object
        ? { -readonly [K in keyof Y]: LanesOut<Y[K], M> }
        : Y;
/**
 * A value of type `X` as a scan's body receives it (the carry, an x), in mode `M`, the
 * mode of the scan's init and xs: inside a trace every leaf comes in traced, numbers
 * included, so `Traced<X>` when one of them surely is traced; numbers and tensors as they
 * are when none can be; each leaf either where either may be. (As for the transformations,
 * a traced value the body closes over is invisible to the types: a scan of numbers inside
 * `grad`, its body closing over `grad`'s x, receives traced reals typed `number`.)
 */
export type BodyArg<X, M> = [X] extends [undefined] ? X : M extends "traced" ? Traced<X> : Value<X, M>;

/**
 * A scan's ys as they come back, in mode `M` (as `BodyArg`): numbers and tensors when
 * nothing of init and xs can be traced; else a real is a `Scalar`, a tensor an ndarray
 * or a `Tensor` (inside a trace a value computed from literals alone comes back a number,
 * the rest traced).
 */
export type ScanResult<X, M> = Output<X, M extends "host" ? "host" : "maybe">;

/**
 * A scan's carry as it comes back: as `ScanResult` of init's type, except that a tensor
 * is what the body last returned for it (a Float64Array of init may come back an ndarray,
 * as the primitives return; the body receives it so from the second iteration on).
 */
export type ScanCarry<C, M> = ScanResult<Loose<C>, M>;
/** init's type with each Float64Array also an ndarray (what the primitives return): a carry after the first iteration. */
export type Loose<X> = unknown extends X
  ? X
  : X extends Float64Array
    ? Float64Array | NdArray
    : X extends number | Real | Tensor | HostTensor
      ? X
      : X extends readonly unknown[]
        ? { -readonly [K in keyof X]: Loose<X[K]> }
        : X extends object
          ? { -readonly [K in keyof X]: Loose<X[K]> }
          : X;
