/**
 * @file The lexer of the language's ASCII concrete syntax (see docs/language.md).
 *
 * Tokens carry 1-based line/column positions (columns count code points) and their
 * source offsets, so that the parser can tell `-1` (a literal) from `- 1`, and `<=`
 * from `< =`. The lexer never combines `<`, `>` and `=`: a `>` closing a pair may be
 * followed directly by `=` (`let <x,y>= M in N`), and the parser decides what `>=` is.
 * Tokens are produced on demand, so the first error in the source is the one reported.
 */
import type { Pos } from "./syntax.js";
import { WengertError } from "../errors.js";

/** A syntax error: where, and what was expected and found. One line. */
export class ParseError extends WengertError {
  constructor(
    readonly file: string,
    readonly line: number,
    readonly col: number,
    readonly what: string,
  ) {
    super(`${file}:${line}:${col}: ${what}`);
  }
}

export const KEYWORDS = [
  "let", "letrec", "in", "if", "then", "else", "true", "false", "real", "unit", "fst", "snd", "grad",
] as const;
export type Keyword = (typeof KEYWORDS)[number];

/** `×` is read as `*`; `⟨ ⟩` are kept apart from `< >` (they only delimit pairs and tuples). */
export const PUNCTUATION = [
  "(", ")", "{", "}", "<", ">", "⟨", "⟩", ",", ".", ":", "=", "!=", "+", "-", "*", "/", "^",
] as const;
export type Punct = (typeof PUNCTUATION)[number];

/** A token's kind: a number, a name, the end, a keyword or a punctuation mark. */
export type TokenType = "num" | "ident" | "eof" | Keyword | Punct;

/** A token of the paper's language, with its place (`tokenize`). */
export interface Token {
  readonly type: TokenType;
  /** The source text (`×` for a `*` written so; "" at the end). */
  readonly text: string;
  /** Numbers only: the value. */
  readonly value?: number;
  readonly line: number;
  readonly col: number;
  /** Source offsets (UTF-16 units), end exclusive. */
  readonly start: number;
  readonly end: number;
}

/** How a token is named in messages: `"in"`, `"1.5"`, `end of input`. */
export function describe(t: Token): string {
  return t.type === "eof" ? "end of input" : `"${t.text}"`;
}

/** Prefixes after which a digit starts a subscript: `rd_1` is `rd_` then `1`. */
const SUBSCRIPTED = ["rd_", "fd_", "grad_"];
const KEYWORD_SET: ReadonlySet<string> = new Set(KEYWORDS);
const SINGLE: Readonly<Record<string, Punct>> = {
  "(": "(", ")": ")", "{": "{", "}": "}", "<": "<", ">": ">", "⟨": "⟨", "⟩": "⟩", ",": ",", ".": ".",
  ":": ":", "=": "=", "+": "+", "-": "-", "*": "*", "×": "*", "/": "/", "^": "^",
};
const isDigit = (c: string | undefined): boolean => c !== undefined && c >= "0" && c <= "9";
const isIdentStart = (c: string | undefined): boolean => c !== undefined && (c === "_" || /^\p{L}$/u.test(c));
const isIdentPart = (c: string | undefined): boolean => isIdentStart(c) || isDigit(c) || c === "'";

export class Lexer {
  private offset = 0;
  private line = 1;
  private col = 1;

  constructor(
    private readonly source: string,
    readonly file: string,
  ) {}

  error(pos: Pos, what: string): ParseError {
    return new ParseError(this.file, pos.line, pos.col, what);
  }

  /** The code point at `offset + k` code points (undefined past the end). */
  private peekChar(k = 0): string | undefined {
    let i = this.offset;
    for (; k > 0 && i < this.source.length; k--) i += (this.source.codePointAt(i) ?? 0) > 0xffff ? 2 : 1;
    const cp = this.source.codePointAt(i);
    return cp === undefined ? undefined : String.fromCodePoint(cp);
  }

  private advance(): string {
    const c = this.peekChar() ?? "";
    this.offset += c.length;
    if (c === "\n") {
      this.line++;
      this.col = 1;
    } else {
      this.col++;
    }
    return c;
  }

  private skipSpaceAndComments(): void {
    for (;;) {
      const c = this.peekChar();
      if (c === " " || c === "\t" || c === "\n" || c === "\r") this.advance();
      else if (c === "#") while (this.peekChar() !== undefined && this.peekChar() !== "\n") this.advance();
      else return;
    }
  }

  /** The next token; at the end, an `eof` token (repeatedly). */
  next(): Token {
    this.skipSpaceAndComments();
    const line = this.line, col = this.col, start = this.offset;
    const make = (type: TokenType, value?: number): Token => {
      const text = this.source.slice(start, this.offset);
      return value === undefined ? { type, text, line, col, start, end: this.offset } : { type, text, value, line, col, start, end: this.offset };
    };
    const c = this.peekChar();
    if (c === undefined) return make("eof");
    if (isDigit(c)) return this.number(line, col, start);
    if (isIdentStart(c)) {
      let text = "";
      while (isIdentPart(this.peekChar())) {
        text += this.advance();
        if (SUBSCRIPTED.includes(text) && isDigit(this.peekChar())) break;
      }
      return make(KEYWORD_SET.has(text) ? (text as Keyword) : "ident");
    }
    if (c === "!" && this.peekChar(1) === "=") {
      this.advance();
      this.advance();
      return make("!=");
    }
    const punct = SINGLE[c];
    if (punct !== undefined) {
      this.advance();
      return make(punct);
    }
    const code = c.codePointAt(0) ?? 0;
    const shown = code < 0x20 || code === 0x7f ? "" : `"${c}" `;
    throw this.error({ line, col }, `unexpected character ${shown}(U+${code.toString(16).toUpperCase().padStart(4, "0")})`);
  }

  /** digits ( "." digits )? ( [eE] [+-]? digits )?, not run into a name. */
  private number(line: number, col: number, start: number): Token {
    const digits = (): void => {
      while (isDigit(this.peekChar())) this.advance();
    };
    digits();
    if (this.peekChar() === "." && isDigit(this.peekChar(1))) {
      this.advance();
      digits();
    }
    const e = this.peekChar();
    const sign = this.peekChar(1) === "+" || this.peekChar(1) === "-";
    if ((e === "e" || e === "E") && (isDigit(this.peekChar(sign ? 2 : 1)) || sign)) {
      this.advance();
      if (sign) this.advance();
      if (!isDigit(this.peekChar())) {
        const text = this.source.slice(start, this.offset);
        throw this.error({ line, col }, `malformed number "${text}": expected digits after the exponent`);
      }
      digits();
    }
    if (isIdentPart(this.peekChar())) {
      while (isIdentPart(this.peekChar())) this.advance();
      const text = this.source.slice(start, this.offset);
      const why = /^[0-9.]+[eE]$/.test(text) ? "expected digits after the exponent" : "a number cannot run into a name";
      throw this.error({ line, col }, `malformed number "${text}": ${why}`);
    }
    const text = this.source.slice(start, this.offset);
    const value = Number(text);
    if (!Number.isFinite(value)) throw this.error({ line, col }, `number "${text}" is too large`);
    return { type: "num", text, value, line, col, start, end: this.offset };
  }
}

/**
 * The tokens of `source` up to its end, or up to its first lexical error (an unexpected
 * character, a malformed number); spaces and comments are what lies between them. For
 * highlighting a program as the parser reads it.
 */
export function tokenize(source: string): Token[] {
  const lexer = new Lexer(source, "<input>");
  const tokens: Token[] = [];
  try {
    for (let t = lexer.next(); t.type !== "eof"; t = lexer.next()) tokens.push(t);
  } catch (e) {
    if (!(e instanceof ParseError)) throw e;
  }
  return tokens;
}
