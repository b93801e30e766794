/**
 * @file Taylor mode's emitter: every primitive, built-in or user-defined, on truncated
 * power series (ops/series.ts), applied by code.
 *
 * A primitive's series comes from its declaration (ops/scalar.ts): its own Taylor rule,
 * or one derived from its reverse rule. Run on series with cotangent 1, the reverse rule
 * gives the derivative factor g = ∂f(a), and y = f(a₀) + ∫ Σ g·a′ (Huot, Staton, Vákár,
 * papers/002: the series of y is determined by y′ = Σ g·a′). Where g needs y itself
 * (exp's rule is ct · y), y's coefficients come one at a time: coefficient n needs g up
 * to order n − 1 only, so y known up to n − 1 gives it. A user primitive's Taylor rule
 * is always derived, its reverse rule run on series (trace/lifted.ts). A derivation that
 * needs its own primitive's series again (a rule applying the primitive itself, or a
 * cycle of derived rules) would never end: it is an error naming the primitive.
 */
import { BINARY_NAMES, series as S, UNARY_NAMES, type ScalarOp, type Series } from "@wengert/ops";
import { WengertError } from "../errors.js";
import type { CodeEmitter } from "../trace/lifted.js";
import { CODE, primitiveOf, scalarSpec } from "../trace/opcodes.js";

type Rule = (a: Series, b: Series) => Series;

/** Primitives on series of K coefficients: methods by name for the built-ins' rules, `apply` by code for any. */
export function seriesEmitter(K: number): CodeEmitter<Series> {
  const ONE = S.constant(1, K);
  const rules: Rule[] = [];
  // the output of the derivation whose rule is running, and whether the rule has read it
  let probe: Series | null = null;
  let read = false;
  const apply = (code: number, a: Series, b: Series): Series => {
    if (a === probe || b === probe) read = true;
    return (rules[code] ??= ruleOf(code))(a, b);
  };
  const e: Record<string, unknown> = { lit: (c: number) => S.constant(c, K), apply, primal: (s: Series) => s[0], context: "taylor" };
  for (const name of UNARY_NAMES) {
    const code = CODE[name];
    e[name] = (a: Series) => apply(code, a, a);
  }
  for (const name of BINARY_NAMES) {
    const code = CODE[name];
    e[name] = (a: Series, b: Series) => apply(code, a, b);
  }
  const self = e as CodeEmitter<Series>;

  const ruleOf = (code: number): Rule => {
    const spec = scalarSpec(code);
    const own = spec.taylor;
    if (own === "derived") return derivedRule(primitiveOf(code).name, spec);
    return spec.arity === 1 ? (a) => (own as (e: CodeEmitter<Series>, a: Series) => Series)(self, a) : (a, b) => own(self, a, b);
  };

  /** The reverse rules' derivative factors at cotangent 1, with the output's series `y` so far: [argument, g] for each that has one. */
  const factors = (spec: ScalarOp, a: Series, b: Series, y: Series): [Series, Series][] => {
    if (spec.arity === 1) {
      const g = spec.reverse(self, a, y, ONE);
      return g === null ? [] : [[a, g]];
    }
    const terms: [Series, Series][] = [];
    spec.reverse.forEach((r, k) => {
      const g = r(self, a, b, y, ONE);
      if (g !== null) terms.push([k === 0 ? a : b, g]);
    });
    return terms;
  };

  const derivedRule = (name: string, spec: ScalarOp): Rule => {
    let running = false;
    return (a, b) => {
      if (running) {
        throw new WengertError(
          `taylor: the Taylor rule of ${name} is derived from its reverse rule, and that rule needs the series of ${name} itself ` +
            `(it applies ${name}, directly or through another derived rule), so the derivation would not end. Write the reverse rule ` +
            `with the output y in place of ${name}(x) (as exp's is ct · y), or declare a Taylor rule of its own.`,
        );
      }
      running = true;
      try {
        return derive(spec, a, b);
      } finally {
        running = false;
      }
    };
  };

  const derive = (spec: ScalarOp, a: Series, b: Series): Series => {
    const y = S.constant(spec.arity === 1 ? spec.forward(a[0]) : spec.forward(a[0], b[0]), K);
    const outer = { probe, read };
    probe = y;
    read = false;
    let terms: [Series, Series][];
    let readsY: boolean;
    try {
      terms = factors(spec, a, b, y);
      readsY = read || terms.some(([, g]) => g === y);
    } finally {
      probe = outer.probe;
      read = outer.read;
    }
    if (terms.length === 0) return y;
    if (!readsY) return S.integrate(y[0], terms);
    for (let n = 1; n < K; n++) {
      if (n > 1) terms = factors(spec, a, b, y);
      y[n] = S.integrated(terms, n);
    }
    return y;
  };
  return self;
}
