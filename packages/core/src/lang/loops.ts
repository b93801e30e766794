/**
 * @file Loops of the paper's language: a recursive function whose body calls itself only
 * in tail position is the loop `x ← M(x)` until its body returns a value. Inside a trace
 * the evaluator runs such a loop as a scan (api/scan.ts `loopUntilDone`): its body traced
 * once, one instruction for the iterations, the same numbers as the recursion.
 */
import type { Term } from "./syntax.js";

/**
 * The calls of `name` in tail position of its body, when every call of `name` there is
 * one (the function is a loop); null otherwise. Iterative: a program's nesting may be deep.
 */
export function tailSelfCalls(name: string, body: Term): ReadonlySet<Term> | null {
  const tails = new Set<Term>();
  const stack: { readonly M: Term; readonly tail: boolean }[] = [{ M: body, tail: true }];
  const sub = (M: Term, tail = false): void => {
    stack.push({ M, tail });
  };
  while (stack.length > 0) {
    const { M, tail } = stack.pop()!;
    switch (M.kind) {
      case "var":
      case "num":
      case "unit":
        break;
      case "add":
        sub(M.left);
        sub(M.right);
        break;
      case "op":
      case "fst":
      case "snd":
        sub(M.arg);
        break;
      case "let":
      case "letTuple":
        sub(M.bound);
        sub(M.body, tail);
        break;
      case "pair":
        sub(M.fst);
        sub(M.snd);
        break;
      case "if":
        if (M.cond.kind === "pred") sub(M.cond.arg);
        sub(M.then, tail);
        sub(M.else, tail);
        break;
      case "letrec":
        // a function of the same name hides this one in its scope
        if (M.name !== name) {
          sub(M.fnBody);
          sub(M.body, tail);
        } else if (!M.recursive) sub(M.fnBody);
        break;
      case "call":
        if (M.fn === name) {
          if (!tail) return null;
          tails.add(M);
        }
        sub(M.arg);
        break;
      case "rd":
        sub(M.seed);
        sub(M.point);
        sub(M.body);
        break;
      case "grad":
        sub(M.point);
        sub(M.body);
        break;
      case "fd":
        sub(M.direction);
        sub(M.point);
        sub(M.body);
        break;
    }
  }
  return tails.size > 0 ? tails : null;
}

/** What an iteration of a loop's body ends with when it calls the loop again: the next argument. */
export class Next {
  constructor(readonly value: unknown) {}
}
