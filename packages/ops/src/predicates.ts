/**
 * @file The predicates (the paper's `pred`): decided on concrete values, no derivative.
 *
 * Each one is discontinuous where its arguments are equal, which is where the paper's
 * semantics leaves the derivative undefined; tracing reports such ties.
 */
export const PREDICATE_NAMES = ["lt", "le", "gt", "ge", "eq", "ne"] as const;
export type PredicateName = (typeof PREDICATE_NAMES)[number];

export interface Predicate {
  readonly test: (a: number, b: number) => boolean;
  /** The infix symbol, for messages and printing. */
  readonly symbol: string;
}

export const predicates: { readonly [K in PredicateName]: Predicate } = {
  lt: { test: (a, b) => a < b, symbol: "<" },
  le: { test: (a, b) => a <= b, symbol: "<=" },
  gt: { test: (a, b) => a > b, symbol: ">" },
  ge: { test: (a, b) => a >= b, symbol: ">=" },
  eq: { test: (a, b) => a === b, symbol: "=" },
  ne: { test: (a, b) => a !== b, symbol: "!=" },
};
