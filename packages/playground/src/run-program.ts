/**
 * @file A program of the paper's language, run as `wengert run FILE --trace --derivative`
 * runs it (in the worker): its value and type, each outermost rd's terms with their
 * `let`s linked to the source, the CLI's warnings and error. A program whose one free
 * variable is `x : real` is a function f of x: it is evaluated at the page's x, its terms
 * there are those of `grad_x(x: real. f)`, and f, f′ and f″ are computed by wengert at
 * every point of the plot (f′ as that grad, f″ as a grad of it), ties and kinks marked.
 */
import {
  check, evaluate, parse, showRdTerm, showType, showValue, tokenize, TieError, TypeCheckError, WengertError,
  type EvalOptions, type Term, type TermOrigins, type TraceTerm, type Value,
} from "@wengert/core";
import { operatorSpan, Tokens } from "./operator-span.js";
import type { FunctionOfX, Mark, Plot, PlotRange, Problem, Reply, RdTerms, Span, TermLine } from "./protocol.js";

type Checked = ReturnType<typeof check>;
type TypeEnv = Parameters<typeof check>[2];
const REAL: TypeEnv = { x: { kind: "real" } };

/** A message, with the first place in `file` it names. */
function placed(message: string, file: string): Problem {
  const m = new RegExp(`${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:(\\d+):(\\d+)`).exec(message);
  return m === null ? { message } : { message, line: Number(m[1]), col: Number(m[2]) };
}

/** The CLI's one-line message for an error (`wengert: FILE:LINE:COL: …`), and its place. */
export function problemOf(e: unknown, file: string): Problem {
  const message = `wengert: ${e instanceof WengertError ? e.message : String(e)}`;
  const at = e as { line?: unknown; col?: unknown };
  if (typeof at.line === "number" && typeof at.col === "number") return { message, line: at.line, col: at.col };
  return placed(message, file);
}

/** An operation's token, and what it is called beside a link: `mul at 4:7` (the place of its `*`), `rd at 1:3`. */
function linkTo(M: Term, tokens: Tokens): { origin: Span | null; note: string } {
  const origin = operatorSpan(M, tokens);
  const what = M.kind === "op" ? M.op : M.kind === "add" ? "+" : M.kind;
  const at = origin ?? M.pos;
  return { origin, note: `${what} at ${at.line}:${at.col}` };
}

/** The printed term, line by line, each `let vK` with its origin. */
function linesOf(text: string, link: (k: number) => { origin: Span | null; note: string } | undefined): TermLine[] {
  return text.split("\n").map((line) => {
    const m = /^let v(\d+):/.exec(line);
    const o = m === null ? undefined : link(Number(m[1]));
    return o === undefined || o.origin === null ? { text: line } : { text: line, origin: o.origin, note: o.note };
  });
}

/** An rd's two terms as the CLI prints them, with links. */
function rdTerms(file: string, tokens: Tokens, at: Term["pos"], trace: TraceTerm, derivative: TraceTerm, origins: TermOrigins): RdTerms {
  const ofTrace = (k: number) => {
    const M = origins.trace.get(k);
    return M === undefined ? undefined : linkTo(M, tokens);
  };
  const ofDerivative = (k: number) => {
    if (k < trace.length) return ofTrace(k);
    const rule = origins.rules.get(k);
    const M = rule === undefined ? undefined : origins.trace.get(rule);
    if (M === undefined) return undefined;
    const { origin, note } = linkTo(M, tokens);
    return { origin, note: `the reverse rule of v${rule}, ${note}` };
  };
  const i = tokens.indexAt(at);
  const t = tokens.list[i];
  return {
    at: t === undefined ? null : { start: t.start, end: t.end, line: t.line, col: t.col },
    trace: linesOf(showRdTerm("trace", file, at, trace), ofTrace),
    derivative: linesOf(showRdTerm("derivative", file, at, derivative), ofDerivative),
  };
}

/** `grad_L(x: real. body)`, placed where the body starts. */
const gradAt = (point: Term, body: Term): Term => ({ kind: "grad", point, param: { name: "x", pos: body.pos }, body, pos: body.pos });

/** The point of the plot's runs: a variable the checker and evaluator are told of. */
const POINT = "p";

/**
 * f, f′, f″ at each point. f′ and f″ are traced with ties: "error" first: a tie or kink
 * met there is marked, and the value is then the one of wengert's convention (ties: "ignore").
 */
function plot(body: Term, file: string, range: PlotRange): Plot {
  const p: Term = { kind: "var", name: POINT, pos: body.pos };
  const d1 = gradAt(p, body);
  const d2 = gradAt(p, gradAt({ kind: "var", name: "x", pos: body.pos }, body));
  const env: TypeEnv = { [POINT]: { kind: "real" } };
  const [c0, c1, c2] = [check(body, file, REAL), check(d1, file, env), check(d2, file, env)];
  const xs: number[] = [];
  const columns: (number | null)[][] = [[], [], []];
  const marks: Mark[] = [];
  let problem: Problem | undefined;
  for (let k = 0; k < range.points; k++) {
    const x = range.from + ((range.to - range.from) * k) / (range.points - 1);
    xs.push(x);
    const runs: [Term, Checked, EvalOptions["env"]][] = [[body, c0, { x }], [d1, c1, { [POINT]: x }], [d2, c2, { [POINT]: x }]];
    runs.forEach(([term, checked, values], j) => {
      const at = (ties: "error" | "ignore") => evaluate(term, checked, { file, ties, env: values }) as number;
      try {
        if (j === 0) return columns[j].push(at("ignore"));
        try {
          columns[j].push(at("error"));
        } catch (e) {
          if (!(e instanceof TieError)) throw e;
          if (!marks.some((m) => m.x === x)) marks.push({ x, what: /: ([^:]*? (?:at a tie|at its kink))/.exec(e.message)?.[1] ?? e.message });
          columns[j].push(at("ignore"));
        }
      } catch (e) {
        columns[j].push(null);
        problem ??= problemOf(e, file);
      }
    });
  }
  return { xs, f: columns[0], df: columns[1], d2f: columns[2], marks, problem };
}

/** f at x: its value, f′ and f″ there, its terms (of grad_x(x. f)), and the plot. */
function functionOfX(body: Term, file: string, tokens: Tokens, x: number, range: PlotRange, checked: Checked, onRd: EvalOptions["onRd"]): FunctionOfX {
  const value = evaluate(body, checked, { file, env: { x }, onRd });
  const type = showType(checked.type);
  if (checked.type.kind !== "real") return { x, value: showValue(value), type, derivatives: null, terms: null, plot: null };
  let terms: RdTerms | null = null;
  const point: Term = { kind: "num", value: x, pos: body.pos };
  const d1 = gradAt(point, body);
  const first = evaluate(d1, check(d1, file), {
    file,
    onRd: (pos, t, d, origins) => (terms = rdTerms(file, tokens, pos, t, d, origins)),
  });
  const d2 = gradAt(point, gradAt({ kind: "var", name: "x", pos: body.pos }, body));
  const second = evaluate(d2, check(d2, file), { file });
  return { x, value: showValue(value), type, derivatives: [showValue(first), showValue(second)], terms, plot: plot(body, file, range) };
}

/** Run a program as the CLI does, and more for a function of x. */
export function runProgram(request: { id: number; source: string; file: string; x: number; range: PlotRange }): Reply {
  const { id, source, file } = request;
  const tokens = new Tokens(tokenize(source));
  const warnings: Problem[] = [];
  const rds: RdTerms[] = [];
  const reply = (result: string | null, error: Problem | null, fn: FunctionOfX | null = null): Reply =>
    ({ kind: "program", id, result, warnings, error, rds, fn });
  // the CLI prints a tie's warning to stderr: here it is listed under the program
  const onRd: EvalOptions["onRd"] = (pos, t, d, origins) => void rds.push(rdTerms(file, tokens, pos, t, d, origins));
  const warn = console.warn;
  console.warn = (...args: unknown[]) => void warnings.push(placed(args.map(String).join(" "), file));
  try {
    const program = parse(source, file);
    let closed: Checked | null = null;
    try {
      closed = check(program, file);
    } catch (e) {
      // a program whose one free variable is x: real is a function of x
      let open: Checked;
      try {
        open = check(program, file, REAL);
      } catch (f) {
        // with x free, what else is wrong (another free variable) says more than x's being free
        throw e instanceof TypeCheckError && e.what === "unbound variable x" ? f : e;
      }
      return reply(null, null, functionOfX(program, file, tokens, request.x, request.range, open, onRd));
    }
    const value: Value = evaluate(program, closed, { file, onRd });
    return reply(`${showValue(value)} : ${showType(closed.type)}`, null);
  } catch (e) {
    return reply(null, problemOf(e, file));
  } finally {
    console.warn = warn;
  }
}
