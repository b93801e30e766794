/**
 * @file results/latest.svg: a horizontal bar chart, log scale, of each candidate's time
 * relative to the hand-written gradient (= 1, the vertical line), one group per
 * workload (and per peer form). Candidates that were not timed say why instead of a bar.
 */
import { COLUMN_TITLES, type BenchResults, type Column } from "../results.js";
import { formatRatio } from "./format.js";

export const escapeXml = (s: string): string =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&apos;");

const BAR_COLUMNS: readonly Column[] = ["primal", "wengert", "wengert-compiled", "tfjs-cpu", "tfjs-wasm", "jax-eager", "jax-jit"];

export const COLORS: Record<Column, string> = {
  primal: "#9e9e9e",
  hand: "#000000",
  wengert: "#d62728",
  "wengert-compiled": "#ff9896",
  "tfjs-cpu": "#1f77b4",
  "tfjs-wasm": "#7fb8e0",
  "jax-eager": "#2ca02c",
  "jax-jit": "#9fdc8c",
};

const SHORT_STATUS: Record<string, string> = {
  failed: "failed",
  skipped: "skipped (too slow)",
  "wrong answer": "wrong answer",
};

interface Bar {
  readonly column: Column;
  readonly ratio?: number;
  readonly text?: string;
}

interface Group {
  readonly title: string;
  readonly bars: readonly Bar[];
}

function groups(results: BenchResults): Group[] {
  const out: Group[] = [];
  for (const w of results.workloads) {
    for (const v of w.variants) {
      const suffix = v.label ? `/${v.label}` : "";
      const cols = v.label ? BAR_COLUMNS.filter((c) => c.startsWith("tfjs") || c.startsWith("jax")) : BAR_COLUMNS;
      const bars = cols.map((column): Bar => {
        const id = column === "primal" || column === "wengert" ? column : column + suffix;
        const c = w.candidates.find((x) => x.id === id);
        if (c === undefined) return { column, text: "—" };
        if (c.status === "ok" && c.ratioToHand !== undefined) return { column, ratio: c.ratioToHand };
        if (c.status === "unsupported") return { column, text: c.note ?? "unsupported" };
        return { column, text: SHORT_STATUS[c.status] ?? c.status };
      });
      out.push({ title: v.label ? `${w.title} (peers ${v.label})` : w.title, bars });
    }
  }
  return out;
}

export function svg(results: BenchResults): string {
  const gs = groups(results);
  const ratios = gs.flatMap((g) => g.bars.flatMap((b) => (b.ratio !== undefined && b.ratio > 0 ? [b.ratio] : [])));
  const lo = Math.min(-1, Math.floor(Math.log10(Math.min(1, ...ratios))));
  const hi = Math.max(1, Math.ceil(Math.log10(Math.max(1, ...ratios))));
  const W = 1000;
  const x0 = 250;
  const x1 = 900;
  const barH = 11;
  const gap = 3;
  const titleH = 18;
  const groupGap = 12;
  const top = 78;
  const x = (r: number) => x0 + ((Math.log10(r) - lo) / (hi - lo)) * (x1 - x0);
  const parts: string[] = [];
  let y = top;
  for (const g of gs) {
    parts.push(`<text x="10" y="${y + 13}" class="group">${escapeXml(g.title)}</text>`);
    y += titleH;
    for (const b of g.bars) {
      parts.push(`<text x="${x0 - 6}" y="${y + barH - 2}" class="label" text-anchor="end">${escapeXml(COLUMN_TITLES[b.column])}</text>`);
      if (b.ratio !== undefined) {
        const w = Math.max(1, x(b.ratio) - x0);
        const tooltip = escapeXml(`${COLUMN_TITLES[b.column]}: ${formatRatio(b.ratio)} hand-written`);
        parts.push(
          `<rect x="${x0}" y="${y}" width="${w.toFixed(1)}" height="${barH}" fill="${COLORS[b.column]}">` +
            `<title>${tooltip}</title></rect>`,
        );
        parts.push(`<text x="${(x0 + w + 4).toFixed(1)}" y="${y + barH - 2}" class="value">${escapeXml(formatRatio(b.ratio))}</text>`);
      } else {
        parts.push(`<text x="${x0 + 4}" y="${y + barH - 2}" class="status">${escapeXml(b.text ?? "")}</text>`);
      }
      y += barH + gap;
    }
    y += groupGap;
  }
  const H = y + 10;
  const grid: string[] = [];
  for (let e = lo; e <= hi; e++) {
    const gx = x(10 ** e).toFixed(1);
    grid.push(`<line x1="${gx}" y1="${top - 6}" x2="${gx}" y2="${H - 10}" class="${e === 0 ? "one" : "grid"}"/>`);
    grid.push(`<text x="${gx}" y="${top - 10}" class="axis" text-anchor="middle">${escapeXml(e === 0 ? "×1 = hand-written" : formatRatio(10 ** e))}</text>`);
  }
  const legend = BAR_COLUMNS.map((c, i) => {
    const lx = 10 + i * 160;
    return `<rect x="${lx}" y="34" width="12" height="12" fill="${COLORS[c]}"/><text x="${lx + 17}" y="44" class="label">${escapeXml(COLUMN_TITLES[c])}</text>`;
  });
  const m = results.meta;
  const title = `Time relative to the hand-written gradient (= ×1, log scale), median; ${m.mode} run, ${m.date.slice(0, 10)}`;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="Helvetica, Arial, sans-serif">`,
    "<style>" +
      ".group{font-size:13px;font-weight:bold}.label{font-size:11px}.value{font-size:10px;fill:#333}" +
      ".status{font-size:10px;font-style:italic;fill:#777}.axis{font-size:10px;fill:#555}" +
      ".grid{stroke:#ddd;stroke-width:1}.one{stroke:#000;stroke-width:1.5}.title{font-size:15px;font-weight:bold}" +
      "</style>",
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="10" y="20" class="title">${escapeXml(title)}</text>`,
    ...legend,
    ...grid,
    ...parts,
    "</svg>",
    "",
  ].join("\n");
}
