/**
 * @file Deep recursion without the JavaScript stack.
 *
 * The type checker and the evaluators are written as the paper writes its rules:
 * recursively, one case per construct. Each is a generator that, instead of calling
 * itself, yields the sub-computation it needs (`const T = yield sub(M)`); `trampoline`
 * runs them with an explicit stack on the heap. A program's run can then be as deep
 * as memory allows (tests run 10^6 nested calls, with the step limit raised to match),
 * never limited by the host's stack. An exception ends the computations it passes
 * through as it would their calls: each is thrown into in turn, so their try/finally run.
 */

/** A computation of an `R` that may ask for sub-computations. */
export type Rec<R> = Generator<Rec<unknown>, R, unknown>;

export function trampoline<R>(root: Rec<R>, onStep?: () => void): R {
  const stack: Rec<unknown>[] = [root];
  let input: unknown = undefined;
  // an exception on its way to the computation below (thrown into it, as a call would)
  let thrown: { error: unknown } | null = null;
  for (;;) {
    const top = stack[stack.length - 1];
    let r: IteratorResult<Rec<unknown>, unknown>;
    try {
      if (thrown === null && onStep !== undefined) {
        // a step limit reached is thrown into the running computation, like any error
        try {
          onStep();
        } catch (error) {
          thrown = { error };
        }
      }
      r = thrown === null ? top.next(input) : top.throw(thrown.error);
      thrown = null;
    } catch (error) {
      // top did not catch it: it ends, and the one that asked for it gets the exception
      // (so that its try/finally run: an rd in the language closes its trace)
      stack.pop();
      if (stack.length === 0) throw error;
      thrown = { error };
      continue;
    }
    input = undefined;
    if (r.done) {
      stack.pop();
      if (stack.length === 0) return r.value as R;
      input = r.value;
    } else if (r.value instanceof TailCall) {
      // the current computation ends with `sub`: it takes its place on the stack
      stack[stack.length - 1] = r.value.sub;
    } else {
      stack.push(r.value);
    }
  }
}

class TailCall {
  constructor(readonly sub: Rec<unknown>) {}
}

/**
 * `return (yield tail(sub)) as R`: the computation's result is `sub`'s, and it needs
 * nothing after it, so `sub` replaces it (a proper tail call: loops written as tail
 * recursion run in constant stack and constant memory). The yield never returns. It
 * is yielded directly: delegated (`yield*` to a generator yielding it), every generator
 * that made a tail call stayed alive until the loop ended, and 5·10⁶ iterations ran
 * out of memory.
 */
export function tail(sub: Rec<unknown>): Rec<unknown> {
  return new TailCall(sub) as unknown as Rec<unknown>;
}

/** `const v = yield* call(sub)`: ask the trampoline to run `sub`, typed. */
export function* call<R>(sub: Rec<R>): Generator<Rec<unknown>, R, unknown> {
  return (yield sub) as R;
}
