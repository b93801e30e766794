/**
 * @file `defineFunction`: an eval function with a typed `prepare`/`run` pair, as the
 * registry holds it.
 *
 * `EvalModule` holds `EvalFunction<never>` (any input type); a function whose `prepare`
 * returns a concrete type is not assignable to it under strict function types (its
 * return type is not `never`), so each module states its functions through this helper,
 * which checks that `prepare`'s result is what `run` takes and then erases the type.
 */
import type { EvalFunction } from "./module.js";

export function defineFunction<I>(f: EvalFunction<I>): EvalFunction<never> {
  return f as unknown as EvalFunction<never>;
}
