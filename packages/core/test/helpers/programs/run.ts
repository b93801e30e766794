/**
 * @file One interpreter of random programs (expr.ts), written with wengert's functions:
 * it runs a program on numbers and on traced reals alike, notes each comparison it
 * decides (branches.ts, for finite differences away from branch boundaries), and
 * differentiates inner derivatives with ties: "ignore" (ties.ts).
 */
import { add, fd, ge, grad, gt, le, lt, mul, rd, sin, type Scalar } from "../../../src/index.js";
import { decided } from "../branches.js";
import { IGNORE } from "../ties.js";
import type { Expr, Pred, Program } from "./expr.js";

const PREDS: Record<Pred, (a: Scalar, b: Scalar) => boolean> = { lt, le, gt, ge };

/** The scope's i-th entry, i taken modulo its length (from its end when negative). */
export const at = <T>(scope: readonly T[], i: number): T => scope[((i % scope.length) + scope.length) % scope.length];

function rep(v: Scalar, n: number): Scalar {
  let r = v;
  // rep(v, n) = sin(rep(v, n − 1)) + v / 2, unrolled
  for (let j = 0; j < n; j++) r = add(sin(r), mul(0.5, v));
  return r;
}

/**
 * A comparison, noted when it is decided on numbers (the finite-difference runs): reading
 * a traced value's number would make its trace opaque, which jit, compileGrad and vmap
 * do not replay.
 */
function compare(pred: Pred, l: Scalar, r: Scalar): boolean {
  const taken = PREDS[pred](l, r);
  if (typeof l === "number" && typeof r === "number") decided(l, r, taken);
  return taken;
}

/** The value of `e` in `scope`; `h` is the body of the program's function h(u, w). */
export function evaluate(e: Expr, scope: readonly Scalar[], h: Expr | null): Scalar {
  const go = (x: Expr, more: readonly Scalar[] = []): Scalar => evaluate(x, more.length === 0 ? scope : [...scope, ...more], h);
  switch (e.k) {
    case "var":
      return at(scope, e.i);
    case "const":
      return e.c;
    case "op":
      return e.op.apply(e.args.map((a) => go(a)));
    case "let":
      return go(e.body, [go(e.a)]);
    case "proj":
      return [go(e.a), go(e.b)][e.first ? 0 : 1];
    case "tuple":
      return go(e.body, [go(e.a), go(e.b)]);
    case "if":
      return compare(e.pred, go(e.l), go(e.r)) ? go(e.t) : go(e.e);
    case "for": {
      let acc = go(e.init);
      for (let j = 0; j < e.n; j++) {
        acc = go(e.body, [acc]);
        if (e.exit !== null && compare("lt", go(e.exit, [acc]), 0)) break;
      }
      return acc;
    }
    case "call":
      if (h === null) throw new Error("a call of h in a program without h");
      return evaluate(h, [go(e.a), go(e.b)], null);
    case "rep":
      return rep(go(e.a), e.n);
    case "grad":
      return grad((y: Scalar) => go(e.body, [y]), go(e.at), IGNORE);
    case "rd": {
      const point = go(e.at);
      return rd((y: Scalar) => go(e.body, [y]), point, go(e.seed), IGNORE) as Scalar;
    }
    case "fd": {
      const point = go(e.at);
      return fd((y: Scalar) => go(e.body, [y]), point, go(e.dir), IGNORE) as Scalar;
    }
  }
}

/** The program as a function of its inputs: all its outputs. */
export const outputsOf =
  (p: Program) =>
  (x: readonly Scalar[]): Scalar[] => {
    const scope = [...x];
    for (const s of p.steps) scope.push(evaluate(s, scope, p.h));
    return p.outputs.map((e) => evaluate(e, scope, p.h));
  };
/** The program's first output as a function of its inputs. */
export const firstOf = (p: Program) => (x: readonly Scalar[]): Scalar => outputsOf(p)(x)[0];
/** The first output run on numbers. */
export const onNumbers = (p: Program) => (x: readonly number[]): number => firstOf(p)(x) as number;
