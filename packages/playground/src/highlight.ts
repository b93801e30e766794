/**
 * @file The program as highlighted HTML, token by token as wengert's lexer reads it:
 * keywords (and rd_, fd_, grad_), numbers, names, punctuation, comments. Each token
 * carries its offsets, so a `let` linked to it can light it up. Past a lexical error the
 * rest is left plain (the parser's message says what is wrong there).
 */
import type { Token } from "@wengert/core";

const escape = (s: string): string => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

function classOf(t: Token): string {
  if (t.type === "num") return "num";
  if (t.type === "ident") return /^(rd|fd|grad)_/.test(t.text) ? "kw" : "name";
  if (/^[a-z]/.test(t.type)) return "kw";
  return "punct";
}

/** Spaces and comments between tokens. */
function gap(text: string): string {
  return text.replace(/#[^\n]*|[^#]+/g, (part) => (part.startsWith("#") ? `<span class="comment">${escape(part)}</span>` : escape(part)));
}

/** `source` as HTML, the token containing `error` (an offset), if any, marked. */
export function highlight(source: string, tokens: readonly Token[], error: number | null): string {
  let out = "";
  let at = 0;
  for (const t of tokens) {
    out += gap(source.slice(at, t.start));
    const bad = error !== null && t.start <= error && error < Math.max(t.end, t.start + 1) ? " tok-error" : "";
    out += `<span class="${classOf(t)}${bad}" data-s="${t.start}" data-e="${t.end}">${escape(t.text)}</span>`;
    at = t.end;
  }
  const rest = source.slice(at);
  if (error !== null && error >= at) {
    // an error past the last token (a bad character, the end of input): mark where it is
    const k = Math.min(error - at, rest.length);
    const mark = rest.slice(k, k + 1);
    const shown = mark === "" || mark === "\n" ? " " : escape(mark);
    out += gap(rest.slice(0, k)) + `<span class="tok-error">${shown}</span>` + (mark === "\n" ? "\n" : "") + gap(rest.slice(k + 1));
  } else out += gap(rest);
  // a final newline in a <pre> shows no line: keep the overlay as tall as the textarea
  return out + "\n";
}

/** The offset of 1-based line and column (columns count code points) in `source`. */
export function offsetOf(source: string, line: number, col: number): number {
  let i = 0;
  for (let l = 1; l < line && i < source.length; i++) if (source[i] === "\n") l++;
  for (let c = 1; c < col && i < source.length && source[i] !== "\n"; c++) i += (source.codePointAt(i) ?? 0) > 0xffff ? 2 : 1;
  return i;
}
