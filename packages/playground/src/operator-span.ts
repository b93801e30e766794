/**
 * @file Which token of the source an operation of the program is: the place a `let`
 * of a trace term is linked to.
 *
 * The parser places a binary operation where its left operand starts (`x * y` at `x`),
 * and an `rd` where its seed starts, so an operation's place alone would light up the
 * wrong token (and `x * y * z` has two multiplications at `x`). The operator's token is
 * found from the node instead: the name of `sin(x)`, the `*` before the right operand of
 * `x * y` (past any `(`), the `rd_` or `fd_` before the point of `M.rd_L(…)`.
 */
import type { Pos, Term, Token } from "@wengert/core";
import type { Span } from "./protocol.js";

export class Tokens {
  private readonly byPlace = new Map<string, number>();

  constructor(readonly list: readonly Token[]) {
    list.forEach((t, i) => this.byPlace.set(`${t.line}:${t.col}`, i));
  }

  /** The index of the token at `pos`, or of the token that contains it (the `x` of `rd_x`). */
  indexAt(pos: Pos): number {
    const exact = this.byPlace.get(`${pos.line}:${pos.col}`);
    if (exact !== undefined) return exact;
    let best = -1;
    this.list.forEach((t, i) => {
      if (t.line === pos.line && t.col <= pos.col) best = i;
    });
    return best;
  }
}

const spanOf = (t: Token): Span => ({ start: t.start, end: t.end, line: t.line, col: t.col });

/** The token of operation M (`add`, `op`, `rd`, `grad`, `fd`), or null if it has none. */
export function operatorSpan(M: Term, tokens: Tokens): Span | null {
  const list = tokens.list;
  const before = (pos: Pos): Token | undefined => {
    let i = tokens.indexAt(pos) - 1;
    while (i >= 0 && list[i].type === "(") i--;
    return list[i];
  };
  switch (M.kind) {
    case "add": {
      const t = before(M.right.pos);
      return t?.type === "+" ? spanOf(t) : null;
    }
    case "op": {
      const at = list[tokens.indexAt(M.pos)];
      // sin(x), mul(a, b), and -x (neg's sugar starts at its own token)
      if (at !== undefined && (at.text === M.op || (M.op === "neg" && at.type === "-"))) return spanOf(at);
      // a - b, a * b, a / b: the operator before the right operand
      if (M.arg.kind !== "pair") return null;
      const t = before(M.arg.snd.pos);
      return t !== undefined && ["-", "*", "/"].includes(t.type) ? spanOf(t) : null;
    }
    case "grad": {
      const at = list[tokens.indexAt(M.pos)];
      return at !== undefined && at.text.startsWith("grad_") ? spanOf(at) : null;
    }
    case "rd":
    case "fd": {
      // the last rd_ (fd_) token up to the point: the seed may hold rds of its own, the subscript not
      const last = tokens.indexAt(M.point.pos);
      for (let i = last; i >= 0; i--) if (list[i].type === "ident" && list[i].text.startsWith(`${M.kind}_`)) return spanOf(list[i]);
      return null;
    }
    default:
      return null;
  }
}
