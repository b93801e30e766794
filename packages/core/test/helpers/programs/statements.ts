/**
 * @file Random programs of the compiled replay's statements (jit/reroll.ts), for the
 * tests of loop re-rolling and register promotion: straight pieces of statements and
 * nested loops, unrolled as a trace records them (indices move from one iteration to
 * the next). Each statement is a shape number and how far back it reads; a test maps
 * them to its statements' indices.
 */
import fc from "fast-check";

export interface Drawn {
  readonly shape: number;
  /** How many variables back the statement reads (1 to 6). */
  readonly back: number;
}

export type Piece = { readonly loop: false; readonly stmts: readonly Drawn[] } | { readonly loop: true; readonly count: number; readonly body: readonly Piece[] };

/** Pieces nested up to `depth` loops, of statements of `shapes` shapes, loops of up to `count` iterations. */
export function pieces(o: { readonly shapes: number; readonly count: number; readonly depth: number }): fc.Arbitrary<Piece[]> {
  const straight = fc.record({
    loop: fc.constant(false as const),
    stmts: fc.array(fc.record({ shape: fc.nat(o.shapes - 1), back: fc.integer({ min: 1, max: 6 }) }), { minLength: 1, maxLength: 4 }),
  });
  const piece: fc.Memo<Piece> = fc.memo((depth) =>
    depth <= 1
      ? straight
      : fc.oneof(
          straight,
          fc.record({ loop: fc.constant(true as const), count: fc.integer({ min: 1, max: o.count }), body: fc.array(piece(depth - 1), { minLength: 1, maxLength: 3 }) }),
        ),
  );
  return fc.array(piece(o.depth), { minLength: 1, maxLength: 5 });
}

/** Calls `visit` on each statement of `ps` in the order the unrolled program runs them (iteratively over the pieces). */
export function unrolled(ps: readonly Piece[], visit: (s: Drawn) => void): void {
  const stack: { ps: readonly Piece[]; at: number; left: number }[] = [{ ps, at: 0, left: 1 }];
  while (stack.length > 0) {
    const top = stack[stack.length - 1];
    if (top.at === top.ps.length) {
      top.at = 0;
      if (--top.left === 0) stack.pop();
      continue;
    }
    const p = top.ps[top.at++];
    if (p.loop) stack.push({ ps: p.body, at: 0, left: p.count });
    else p.stmts.forEach(visit);
  }
}
