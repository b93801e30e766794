/**
 * @file f, f′ and f″ of a function of x as an SVG plot, computed by wengert at every
 * point (the worker's run-program.ts). The curves differ by their dashes as well as their
 * colours, ties and kinks are marked and named, the point last evaluated is marked, and
 * every value is also in a table.
 */
import type { Plot } from "./protocol.js";

const W = 640;
const H = 320;
const PAD = { left: 56, right: 16, top: 16, bottom: 40 };
const SVG = "http://www.w3.org/2000/svg";

export const CURVES = [
  { key: "f", label: "f(x)", dash: "" },
  { key: "df", label: "f′(x)", dash: "7 4" },
  { key: "d2f", label: "f″(x)", dash: "2 3" },
] as const;

/** A short label for an axis: 3 significant digits, no trailing zeros. */
const tick = (v: number): string => (Math.abs(v) < 1e-12 ? "0" : String(Number(v.toPrecision(3))));

/** Round ticks in [lo, hi]: steps of 1, 2 or 5 times a power of ten, about `n` of them. */
function ticks(lo: number, hi: number, n: number): number[] {
  const raw = (hi - lo) / n;
  const p = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw) ?? 10 * p;
  const out: number[] = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) out.push(Math.abs(t) < step * 1e-9 ? 0 : t);
  return out;
}

function el<K extends keyof SVGElementTagNameMap>(name: K, attrs: Record<string, string | number>, text?: string): SVGElementTagNameMap[K] {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

/** The plot of `p`, with the point `at` (x and f, f′, f″ there) marked. */
export function plotView(p: Plot, at: { x: number; values: readonly number[] }): HTMLElement {
  const figure = document.createElement("figure");
  figure.className = "plot";
  const finite = [p.f, p.df, p.d2f].flat().filter((v): v is number => v !== null && Number.isFinite(v));
  let [lo, hi] = finite.length === 0 ? [-1, 1] : [Math.min(...finite), Math.max(...finite)];
  if (hi - lo < 1e-12) [lo, hi] = [lo - 1, hi + 1];
  const margin = (hi - lo) * 0.08;
  [lo, hi] = [lo - margin, hi + margin];
  const [x0, x1] = [p.xs[0], p.xs[p.xs.length - 1]];
  const sx = (x: number) => PAD.left + ((x - x0) / (x1 - x0)) * (W - PAD.left - PAD.right);
  const sy = (y: number) => PAD.top + ((hi - y) / (hi - lo)) * (H - PAD.top - PAD.bottom);
  const svg = el("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-labelledby": "plot-title plot-desc" });
  svg.append(
    el("title", { id: "plot-title" }, `f, f′ and f″ from x = ${x0} to ${x1}`),
    el(
      "desc",
      { id: "plot-desc" },
      `${p.xs.length} points each; f solid, f′ dashed, f″ dotted; ` +
        "ties and kinks marked with a labelled vertical line; the values are in the table below.",
    ),
  );
  // axes: the frame, y = 0 where it is in view, ticks at the ends and between
  const axes = el("g", { class: "axes" });
  axes.append(el("rect", { x: PAD.left, y: PAD.top, width: W - PAD.left - PAD.right, height: H - PAD.top - PAD.bottom, fill: "none" }));
  if (lo < 0 && hi > 0) axes.append(el("line", { class: "zero", x1: PAD.left, x2: W - PAD.right, y1: sy(0), y2: sy(0) }));
  for (const x of ticks(x0, x1, 6)) {
    axes.append(el("line", { class: "tick", x1: sx(x), x2: sx(x), y1: H - PAD.bottom, y2: H - PAD.bottom + 4 }));
    axes.append(el("text", { x: sx(x), y: H - PAD.bottom + 17, "text-anchor": "middle" }, tick(x)));
  }
  for (const y of ticks(lo, hi, 5)) {
    axes.append(el("line", { class: "tick", x1: PAD.left - 4, x2: PAD.left, y1: sy(y), y2: sy(y) }));
    axes.append(el("text", { x: PAD.left - 7, y: sy(y) + 4, "text-anchor": "end" }, tick(y)));
  }
  axes.append(el("text", { x: W - PAD.right, y: H - 6, "text-anchor": "end" }, "x"));
  svg.append(axes);
  // ties and kinks: a labelled vertical line at each
  for (const m of p.marks) {
    const g = el("g", { class: "mark", "data-x": m.x });
    g.append(el("title", {}, `x = ${m.x}: ${m.what}`));
    g.append(el("line", { x1: sx(m.x), x2: sx(m.x), y1: PAD.top, y2: H - PAD.bottom }));
    g.append(el("text", { x: sx(m.x) + 4, y: PAD.top + 12 }, /kink/.test(m.what) ? "kink" : "tie"));
    svg.append(g);
  }
  CURVES.forEach((c, j) => {
    const ys = p[c.key];
    let d = "";
    let pen = "M";
    ys.forEach((y, k) => {
      if (y === null || !Number.isFinite(y)) return void (pen = "M");
      d += `${pen}${sx(p.xs[k]).toFixed(2)},${sy(y).toFixed(2)}`;
      pen = "L";
    });
    svg.append(el("path", { class: `curve c${j}`, d, "data-curve": c.key, "stroke-dasharray": c.dash, fill: "none" }));
  });
  // the point last evaluated
  if (at.x >= x0 && at.x <= x1) {
    const g = el("g", { class: "here" });
    g.append(el("title", {}, `x = ${at.x}`));
    g.append(el("line", { x1: sx(at.x), x2: sx(at.x), y1: PAD.top, y2: H - PAD.bottom }));
    at.values.forEach((y, j) => Number.isFinite(y) && y >= lo && y <= hi && g.append(el("circle", { class: `c${j}`, cx: sx(at.x), cy: sy(y), r: 4 })));
    const right = sx(at.x) > W - 90;
    g.append(el("text", { x: sx(at.x) + (right ? -4 : 4), y: H - PAD.bottom - 6, "text-anchor": right ? "end" : "start" }, `x = ${tick(at.x)}`));
    svg.append(g);
  }
  const legend = document.createElement("figcaption");
  const key = (c: (typeof CURVES)[number], j: number): string =>
    `<span class="key"><svg width="36" height="10" aria-hidden="true">` +
    `<line class="curve c${j}" x1="0" x2="36" y1="5" y2="5" stroke-dasharray="${c.dash}"/></svg>${c.label}</span>`;
  legend.innerHTML = CURVES.map(key).join(" ");
  if (p.marks.length > 0) legend.append(` — marked: ${p.marks.map((m) => `${m.what} (x = ${m.x})`).join("; ")}`);
  figure.append(svg, legend, table(p));
  return figure;
}

function table(p: Plot): HTMLElement {
  const details = document.createElement("details");
  details.innerHTML = `<summary>The ${p.xs.length} points as a table</summary>`;
  const t = document.createElement("table");
  t.className = "values";
  t.innerHTML = `<thead><tr><th scope="col">x</th>${CURVES.map((c) => `<th scope="col">${c.label}</th>`).join("")}<th scope="col">note</th></tr></thead>`;
  const body = document.createElement("tbody");
  p.xs.forEach((x, k) => {
    const row = document.createElement("tr");
    const cells = [x, ...CURVES.map((c) => p[c.key][k])].map((v) => (v === null ? "—" : String(v)));
    cells.push(p.marks.find((m) => m.x === x)?.what ?? "");
    for (const [i, text] of cells.entries()) {
      const cell = document.createElement(i === 0 ? "th" : "td");
      if (i === 0) cell.setAttribute("scope", "row");
      cell.textContent = text;
      row.append(cell);
    }
    body.append(row);
  });
  t.append(body);
  details.append(t);
  return details;
}
