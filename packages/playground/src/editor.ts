/**
 * @file The program editor: a plain <textarea> (so typing, selection, undo, screen
 * readers and the keyboard work as everywhere) over a highlighted copy of its text,
 * with line numbers. A syntax or type error marks its token and line, and is shown
 * under a copy of that line, a caret at its column, as the CLI's one-line message.
 */
import { tokenize } from "@wengert/core";
import { highlight, offsetOf } from "./highlight.js";
import type { Problem, Span } from "./protocol.js";

export interface EditorOptions {
  readonly label: string;
  readonly onRun: () => void;
  /** The caret moved or the text changed: the offset of the caret. */
  readonly onCaret: (offset: number) => void;
}

export class Editor {
  readonly textarea: HTMLTextAreaElement;
  private readonly overlay: HTMLPreElement;
  private readonly gutter: HTMLDivElement;
  private readonly problemBox: HTMLDivElement;
  private problem: Problem | null = null;
  private lit: Span | null = null;

  constructor(root: HTMLElement, private readonly options: EditorOptions) {
    root.classList.add("editor-block");
    root.innerHTML =
      `<div class="editor"><div class="gutter" aria-hidden="true"></div><div class="code">` +
      `<pre class="overlay" aria-hidden="true"></pre>` +
      `<textarea spellcheck="false" autocapitalize="off" autocomplete="off" wrap="off"></textarea>` +
      `</div></div><div class="problem" role="alert"></div>`;
    this.gutter = root.querySelector(".gutter")!;
    this.overlay = root.querySelector(".overlay")!;
    this.textarea = root.querySelector("textarea")!;
    this.problemBox = root.querySelector(".problem")!;
    this.problemBox.id = `${root.id}-problem`;
    this.textarea.setAttribute("aria-label", options.label);
    this.textarea.setAttribute("aria-describedby", this.problemBox.id);
    this.textarea.addEventListener("input", () => {
      this.problem = null; // it may be fixed: the next run says
      this.render();
      options.onCaret(this.textarea.selectionStart);
    });
    this.textarea.addEventListener("scroll", () => this.sync());
    for (const event of ["keyup", "click", "select"]) this.textarea.addEventListener(event, () => options.onCaret(this.textarea.selectionStart));
    this.textarea.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        options.onRun();
      }
    });
  }

  get value(): string {
    return this.textarea.value;
  }

  set value(source: string) {
    this.textarea.value = source;
    this.problem = null;
    this.lit = null;
    this.render();
  }

  /** Show an error (or none) at its place. */
  setProblem(problem: Problem | null): void {
    this.problem = problem;
    this.render();
  }

  /** Light up the token of a linked `let` (null: none). */
  light(span: Span | null): void {
    this.lit = span;
    this.overlay.querySelectorAll(".linked").forEach((e) => e.classList.remove("linked"));
    if (span !== null) this.overlay.querySelector(`[data-s="${span.start}"]`)?.classList.add("linked");
  }

  /** Put the caret on a span's token, selected, and scroll to it. */
  select(span: Span): void {
    this.textarea.focus();
    this.textarea.setSelectionRange(span.start, span.end);
    this.options.onCaret(span.start);
  }

  private render(): void {
    const source = this.textarea.value;
    const p = this.problem;
    const at = p?.line !== undefined && p.col !== undefined ? offsetOf(source, p.line, p.col) : null;
    this.overlay.innerHTML = highlight(source, tokenize(source), at);
    const lines = source.split("\n").length;
    this.gutter.innerHTML = Array.from({ length: lines }, (_, i) => (p?.line === i + 1 ? `<span class="bad">${i + 1}</span>` : `${i + 1}`)).join("\n") + "\n";
    this.light(this.lit);
    this.showProblem(source);
    this.sync();
  }

  /** The message under a copy of the line it points to, a caret at the column. */
  private showProblem(source: string): void {
    const p = this.problem;
    this.problemBox.textContent = "";
    this.problemBox.hidden = p === null;
    if (p === null) return;
    const pre = document.createElement("pre");
    if (p.line !== undefined && p.col !== undefined) {
      const text = source.split("\n")[p.line - 1] ?? "";
      const number = String(p.line);
      const pad = " ".repeat(number.length);
      const caret = `${" ".repeat(Math.max(0, [...text].slice(0, p.col - 1).length))}^`;
      pre.textContent = `${number} | ${text}\n${pad} | ${caret}\n`;
    }
    const message = document.createElement("span");
    message.className = "message";
    message.textContent = p.message;
    pre.append(message);
    this.problemBox.append(pre);
  }

  private sync(): void {
    const { scrollTop, scrollLeft } = this.textarea;
    this.overlay.style.transform = `translate(${-scrollLeft}px, ${-scrollTop}px)`;
    this.gutter.style.transform = `translateY(${-scrollTop}px)`;
  }
}
