/**
 * @file The places in an `Error().stack`: V8's format (Node, Chromium) and
 * SpiderMonkey's and JavaScriptCore's (Firefox, Safari), the only stack API every
 * engine has.
 *
 *   V8:            "    at f (file:///a/b.js:1:2)", "    at http://host/b.js:1:2",
 *                  "    at eval (eval at g (/a/b.js:3:4), <anonymous>:1:2)", "    at Array.map (<anonymous>)"
 *   Firefox/Safari: "f@http://host/b.js:1:2", "@http://host/b.js:1:2",
 *                  "f@http://host/b.js line 3 > Function:1:2"
 */

/** A place in a stack trace. */
export interface Frame {
  /** A path or URL, as the engine wrote it. */
  readonly file: string;
  readonly line: number;
  readonly column: number;
  /**
   * Code made at run time (eval, new Function) without a name of its own: file, line
   * and column are where it was made, not where it runs.
   */
  readonly evaluated: boolean;
}

/** The frames of a stack with a place, top first; frames without one (native code) are left out. */
export function framesOf(stack: string): Frame[] {
  const frames: Frame[] = [];
  for (const text of stack.split("\n")) {
    const f = parseFrame(text.trim());
    if (f !== null) frames.push(f);
  }
  return frames;
}

/** One line of a stack trace, or null when it names no place. */
export function parseFrame(text: string): Frame | null {
  if (text.startsWith("at ")) {
    const rest = text.slice(3);
    // "f (place)" or a bare place; a function's name never holds " (", a path may
    const open = rest.indexOf(" (");
    return open >= 0 && rest.endsWith(")") ? v8Place(rest.slice(open + 2, -1)) : v8Place(rest.replace(/^async /, ""));
  }
  const at = text.indexOf("@");
  return at >= 0 ? geckoPlace(text.slice(at + 1)) : null;
}

/** "file:1:2", or "eval at g (place), <anonymous>:1:2" for code made by eval in g. */
function v8Place(place: string): Frame | null {
  if (place.startsWith("eval at ")) {
    // the place of the eval is in the parentheses, itself perhaps an eval's
    const open = place.indexOf(" (");
    const close = place.lastIndexOf("), ");
    const origin = open >= 0 && close > open ? v8Place(place.slice(open + 2, close)) : null;
    return origin === null ? null : { ...origin, evaluated: true };
  }
  return filePlace(place, false);
}

/** "file:1:2", or "file line 3 > eval:1:2" for code made by eval at line 3 of file. */
function geckoPlace(place: string): Frame | null {
  const evaluated = / line (\d+) > (?:eval|Function)/.exec(place);
  if (evaluated !== null) return { file: place.slice(0, evaluated.index), line: Number(evaluated[1]), column: 0, evaluated: true };
  return filePlace(place, false);
}

function filePlace(place: string, evaluated: boolean): Frame | null {
  const m = /^(.+):(\d+):(\d+)$/.exec(place);
  return m === null ? null : { file: m[1], line: Number(m[2]), column: Number(m[3]), evaluated };
}

/** The file as a reader wants it: a path for a file: URL, anything else as written. */
export function showFile(file: string): string {
  if (!file.startsWith("file://")) return file;
  const path = file.slice("file://".length).replace(/^\/([A-Za-z]:)/, "$1");
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}
