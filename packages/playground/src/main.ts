/**
 * @file The playground page: two tabs (the paper's language; TypeScript with the API),
 * wired to the worker that runs wengert. Everything runs in the browser.
 */
import examples from "virtual:examples";
import { Editor } from "./editor.js";
import { plotView } from "./plot.js";
import type { FunctionOfX, PlotRange, Problem, Reply } from "./protocol.js";
import { readHash, writeHash } from "./share.js";
import { lightLets, rdView, type LinkHandlers } from "./terms-view.js";
import { WorkerClient, type Outcome } from "./worker-client.js";

const $ = <T extends HTMLElement = HTMLElement>(id: string): T => document.getElementById(id) as T;
const WORKER = "worker.js";
const programs = new WorkerClient(WORKER);
const scripts = new WorkerClient(WORKER);

const DEFAULT_TS = `import { grad, traceOf, derivativeOf, mul, sin, lt } from "@wengert/core";

// TypeScript: its types are stripped (not checked), then it runs in a worker.
const relu = (x: number) => (lt(x, 0) ? 0 : x);
const f = (x: number) => mul(relu(sin(x)), x);

console.log(grad(f, 2));              // f′(2)
console.log(traceOf(f, 2));           // the trace term of f at 2
console.log(derivativeOf(f, 2, 1));   // its derivative term
`;

// ---- tabs (WAI-ARIA tabs: arrow keys move between them, Tab goes into the panel) ----

const tabs = [...document.querySelectorAll<HTMLButtonElement>('[role="tab"]')];
function selectTab(tab: HTMLButtonElement, focus = false): void {
  for (const t of tabs) {
    const on = t === tab;
    t.setAttribute("aria-selected", String(on));
    t.tabIndex = on ? 0 : -1;
    $(t.getAttribute("aria-controls")!).hidden = !on;
  }
  if (focus) tab.focus();
}
tabs.forEach((tab, i) => {
  tab.addEventListener("click", () => selectTab(tab));
  tab.addEventListener("keydown", (e) => {
    const k = { ArrowRight: 1, ArrowLeft: -1 }[e.key];
    if (k === undefined) return;
    e.preventDefault();
    selectTab(tabs[(i + k + tabs.length) % tabs.length], true);
  });
});

// ---- the language tab ----

const status = $<HTMLOutputElement>("status");
const linkLine = $<HTMLOutputElement>("link");
const select = $<HTMLSelectElement>("example");
const number = (id: string): number => Number($<HTMLInputElement>(id).value);
const limitMs = (): number => Math.max(0.1, number("limit") || 5) * 1000;

const links: LinkHandlers = {
  onLight: (span, note) => {
    editor.light(span);
    linkLine.textContent = span === null ? "" : `This let came from ${note.replace(/^from /, "")}.`;
  },
  onSelect: (span) => editor.select(span),
};

const editor = new Editor($("program"), {
  label: "Program in the paper's language",
  onRun: () => void runProgram(),
  onCaret: (offset) => {
    const n = lightLets($("panel-lang"), offset);
    linkLine.textContent = n === 0 ? "" : `The caret is on an operation: ${n} let${n === 1 ? "" : "s"} of the terms below came from it (marked ◆).`;
  },
});

select.append(new Option("(your own program)", "-1"));
const groups = new Map<string, HTMLOptGroupElement>();
examples.forEach((ex, i) => {
  let g = groups.get(ex.group);
  if (g === undefined) {
    g = document.createElement("optgroup");
    g.label = ex.group;
    groups.set(ex.group, g);
    select.append(g);
  }
  g.append(new Option(ex.file, String(i)));
});
select.addEventListener("change", () => {
  const ex = examples[Number(select.value)];
  if (ex === undefined) return;
  editor.value = ex.source;
  void runProgram();
});
// an edited example is the user's own program (and the CLI would name it by another file)
editor.textarea.addEventListener("input", () => {
  if (examples[Number(select.value)]?.source !== editor.value) select.value = "-1";
});

/** The file name the CLI would print: the example's path while it is unedited. */
function fileName(): string {
  const ex = examples[Number(select.value)];
  return ex !== undefined && ex.source === editor.value ? ex.file : "<playground>";
}

function range(): PlotRange | string {
  const [from, to, points] = [number("from"), number("to"), number("points")];
  if (!Number.isFinite(from) || !Number.isFinite(to) || !(from < to)) return "the plot's interval needs from < to";
  if (!Number.isInteger(points) || points < 2 || points > 2001) return "the plot needs 2 to 2001 points";
  return { from, to, points };
}

let runs = 0;
async function runProgram(): Promise<void> {
  const r = range();
  const x = number("x");
  if (typeof r === "string" || !Number.isFinite(x)) {
    status.textContent = typeof r === "string" ? `Not run: ${r}.` : "Not run: x must be a number.";
    return;
  }
  const run = ++runs;
  status.textContent = "Running…";
  const file = fileName();
  const outcome = await programs.run({ kind: "program", source: editor.value, file, x, range: r }, limitMs());
  if (run !== runs) return; // a newer run took over
  if (outcome.kind !== "reply") return void stopped(outcome, status);
  showProgram(outcome.reply as Extract<Reply, { kind: "program" }>);
}

function stopped(outcome: Exclude<Outcome, { kind: "reply" }>, where: HTMLElement): void {
  if (outcome.kind === "timeout") {
    where.textContent =
      `Stopped after ${outcome.ms / 1000} s: the worker running it was terminated (a loop that does not end?). ` +
      "Raise the time limit, or change the program, and run again.";
  } else if (outcome.kind === "crashed") where.textContent = `The worker failed: ${outcome.message}`;
}

function problemLine(p: Problem, kind: "warning" | "error"): HTMLElement {
  const line = document.createElement("pre");
  line.className = `stderr ${kind}`;
  line.dataset.stderr = "";
  line.textContent = p.message;
  return line;
}

function showProgram(reply: Extract<Reply, { kind: "program" }>): void {
  editor.setProblem(reply.error);
  const out = $("lang-output");
  out.textContent = "";
  const result = $("result");
  result.textContent = "";
  for (const w of reply.warnings) result.append(problemLine(w, "warning"));
  if (reply.error !== null) result.append(problemLine(reply.error, "error"));
  if (reply.result !== null) {
    const value = document.createElement("pre");
    value.className = "value";
    value.id = "value";
    value.dataset.cli = "";
    value.textContent = reply.result;
    result.prepend(value);
  }
  if (reply.fn !== null) {
    const value = document.createElement("pre");
    value.className = "value";
    value.textContent = `f(${reply.fn.x}) = ${reply.fn.value} : ${reply.fn.type}`;
    result.prepend(value);
  }
  showFunction(reply.fn);
  reply.rds.forEach((rd) => out.append(rdView(`rd at ${rd.trace[0].text.replace(/^.* at /, "")}`, rd, links)));
  if (reply.rds.length === 0 && reply.fn === null && reply.error === null) out.textContent = "The program evaluated no rd.";
  const n = reply.rds.length;
  status.textContent =
    reply.error !== null
      ? "Stopped by an error (shown under its line)."
      : `Done: ${n === 0 ? "no rd" : `${n} rd${n === 1 ? "" : "s"}`} evaluated${reply.fn !== null ? ", f plotted" : ""}.`;
}

function showFunction(fn: FunctionOfX | null): void {
  const box = $("function");
  box.textContent = "";
  $("function-hint").hidden = fn !== null;
  if (fn === null) return;
  const summary = document.createElement("p");
  summary.className = "fx";
  summary.id = "fx";
  const d = fn.derivatives;
  summary.textContent =
    `f(${fn.x}) = ${fn.value} : ${fn.type}` +
    (d === null ? " (only a function to real is differentiated and plotted)" : `;  f′(${fn.x}) = ${d[0]};  f″(${fn.x}) = ${d[1]}`);
  box.append(summary);
  if (fn.plot !== null && d !== null) {
    box.append(plotView(fn.plot, { x: fn.x, values: [Number(fn.value), Number(d[0]), Number(d[1])] }));
    if (fn.plot.problem !== undefined) box.append(problemLine(fn.plot.problem, "error"));
  }
  if (fn.terms !== null) {
    const view = rdView(`f at x = ${fn.x}, as grad_${fn.x < 0 ? `{${fn.x}}` : fn.x}(x: real. f) traces and differentiates it`, fn.terms, links);
    view.id = "f-terms";
    $("lang-output").before(view);
  }
}

$("run").addEventListener("click", () => void runProgram());
for (const id of ["x", "from", "to", "points"]) $(id).addEventListener("change", () => void runProgram());

function share(shared: Parameters<typeof writeHash>[0]): void {
  const url = `${location.href.replace(/#.*$/, "")}${writeHash(shared)}`;
  history.replaceState(null, "", url);
  const field = $<HTMLInputElement>("share-url");
  field.value = url;
  field.hidden = false;
  field.select();
  void navigator.clipboard?.writeText(url).then(
    () => (status.textContent = "The link is in the address bar and copied."),
    () => (status.textContent = "The link is in the address bar and selected below."),
  );
}
$("share").addEventListener("click", () => share({ src: editor.value, x: number("x"), from: number("from"), to: number("to"), points: number("points") }));

// ---- the TypeScript tab ----

const tsSource = $<HTMLTextAreaElement>("ts-source");
const tsOutput = $("ts-output");
const tsStatus = $<HTMLOutputElement>("ts-status");
tsSource.value = DEFAULT_TS;
let tsRuns = 0;
async function runScript(): Promise<void> {
  const run = ++tsRuns;
  tsStatus.textContent = "Running…";
  tsOutput.textContent = "";
  const outcome = await scripts.run({ kind: "typescript", source: tsSource.value }, limitMs());
  if (run !== tsRuns) return;
  if (outcome.kind !== "reply") return void stopped(outcome, tsStatus);
  const reply = outcome.reply as Extract<Reply, { kind: "typescript" }>;
  for (const line of reply.output) {
    const pre = document.createElement("pre");
    pre.className = line.stream === "log" ? "stdout" : `stderr ${line.stream === "warn" ? "warning" : "error"}`;
    pre.textContent = line.text;
    tsOutput.append(pre);
  }
  tsStatus.textContent = reply.output.some((l) => l.stream === "error") ? "Done, with an error (shown in the output)." : "Done.";
}
$("ts-run").addEventListener("click", () => void runScript());
tsSource.addEventListener("keydown", (e) => {
  if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
    e.preventDefault();
    void runScript();
  }
});
$("ts-share").addEventListener("click", () => share({ ts: tsSource.value }));

// ---- start: a shared program, or the first example ----

const shared = readHash(location.hash);
for (const key of ["x", "from", "to", "points"] as const) if (shared[key] !== undefined) $<HTMLInputElement>(key).value = String(shared[key]);
if (shared.ts !== undefined) {
  tsSource.value = shared.ts;
  selectTab($<HTMLButtonElement>("tab-ts"));
  void runScript();
}
editor.value = shared.src ?? examples[0].source;
select.value = String(examples.findIndex((e) => e.source === editor.value));
void runProgram();
