/**
 * @file Trace and derivative terms on the page, printed as the CLI prints them, each
 * `let` linked to the operation of the program it came from: hovering or focusing one
 * lights up its token in the program, Enter or a click puts the caret there; the caret
 * in the program lights up the `let`s it emitted. In a term, the arrow keys go from
 * `let` to `let`. What a `let` is linked to is also said in words (its title, and the
 * page's link line), not by colour alone.
 */
import type { RdTerms, Span, TermLine } from "./protocol.js";

export interface LinkHandlers {
  /** A let is pointed at (null: none). */
  readonly onLight: (span: Span | null, note: string) => void;
  /** A let is chosen: go to its source. */
  readonly onSelect: (span: Span) => void;
}

const spanOf = (e: HTMLElement): Span => ({ start: Number(e.dataset.s), end: Number(e.dataset.e), line: Number(e.dataset.line), col: Number(e.dataset.col) });

function termBlock(title: string, lines: readonly TermLine[], links: LinkHandlers): HTMLPreElement {
  const pre = document.createElement("pre");
  pre.className = "term";
  pre.dataset.cli = "";
  pre.tabIndex = 0;
  pre.setAttribute("aria-label", `${title}; arrow keys go from let to let, Enter shows its source`);
  lines.forEach((l, i) => {
    const span = document.createElement("span");
    span.className = "line";
    span.textContent = l.text;
    if (l.origin !== undefined) {
      span.classList.add("let");
      span.tabIndex = -1;
      Object.assign(span.dataset, { s: l.origin.start, e: l.origin.end, line: l.origin.line, col: l.origin.col });
      span.title = `from ${l.note}`;
    }
    pre.append(span);
    if (i < lines.length - 1) pre.append("\n");
  });
  const lets = () => [...pre.querySelectorAll<HTMLElement>(".let")];
  const point = (e: HTMLElement | null) => links.onLight(e === null ? null : spanOf(e), e?.title ?? "");
  // the mouse lights up the let under it; leaving it, the one with the focus (if any) is lit again
  const focused = () => (pre.contains(document.activeElement) ? (document.activeElement as HTMLElement).closest<HTMLElement>(".let") : null);
  pre.addEventListener("mouseover", (e) => {
    const l = (e.target as HTMLElement).closest<HTMLElement>(".let");
    if (l !== null) point(l);
  });
  pre.addEventListener("mouseout", (e) => {
    const from = (e.target as HTMLElement).closest(".let");
    if (from !== null && !from.contains(e.relatedTarget as Node | null)) point(focused());
  });
  pre.addEventListener("focusin", (e) => point((e.target as HTMLElement).closest(".let")));
  pre.addEventListener("click", (e) => {
    const l = (e.target as HTMLElement).closest<HTMLElement>(".let");
    if (l !== null) links.onSelect(spanOf(l));
  });
  pre.addEventListener("keydown", (e) => {
    const all = lets();
    const here = all.indexOf(document.activeElement as HTMLElement);
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      const next = all[Math.max(0, Math.min(all.length - 1, here < 0 ? 0 : here + (e.key === "ArrowDown" ? 1 : -1)))];
      next?.focus();
    } else if (e.key === "Enter" && here >= 0) {
      e.preventDefault();
      links.onSelect(spanOf(all[here]));
    }
  });
  return pre;
}

/** One outermost rd: its trace term beside its derivative term. */
export function rdView(heading: string, rd: RdTerms, links: LinkHandlers): HTMLElement {
  const section = document.createElement("section");
  section.className = "rd";
  const h = document.createElement("h3");
  h.textContent = heading;
  const pair = document.createElement("div");
  pair.className = "pair";
  for (const [kind, lines] of [["trace term", rd.trace], ["derivative term", rd.derivative]] as const) {
    const figure = document.createElement("figure");
    const caption = document.createElement("figcaption");
    caption.textContent = kind;
    figure.append(caption, termBlock(`${kind} of ${heading}`, lines, links));
    pair.append(figure);
  }
  section.append(h, pair);
  return section;
}

/** Light up the lets (in `root`) linked to the token at `offset`; how many. */
export function lightLets(root: HTMLElement, offset: number | null): number {
  let n = 0;
  root.querySelectorAll<HTMLElement>(".let").forEach((e) => {
    const on = offset !== null && Number(e.dataset.s) <= offset && offset <= Number(e.dataset.e);
    e.classList.toggle("linked", on);
    if (on) n++;
  });
  return n;
}
