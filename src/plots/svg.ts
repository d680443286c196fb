/**
 * A line chart as a standalone SVG document: axes with ticks and labels,
 * one polyline per series, the minimum and maximum of each marked, a
 * legend with units and a title. Written by hand: the charts are simple,
 * and the library that could draw them headless (vega) takes about half a
 * second to load and 17 MB of modules (see docs/architecture.md).
 *
 * Every text from outside (device names, units, file names) is escaped for
 * XML, and characters XML 1.0 cannot hold are shown as `\xHH`.
 *
 * @module
 */
import { bounds, extremes, type PlotData, thin } from "./data.ts";

const W = 900, H = 480;
const M = { left: 80, right: 30, top: 50, bottom: 110 };
/** Series colours (Okabe–Ito, distinguishable by colour-blind readers). */
export const PALETTE = [
  "#0072B2",
  "#D55E00",
  "#009E73",
  "#CC79A7",
  "#E69F00",
  "#56B4E9",
  "#000000",
];

/** The characters XML 1.0 cannot hold. */
// deno-lint-ignore no-control-regex -- control characters are exactly what it finds
const NOT_XML = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g;

/** Text for an XML text node or attribute. */
export function xmlText(s: string): string {
  return s
    .replace(
      NOT_XML,
      (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`,
    )
    .replace(
      /[&<>"']/g,
      (c) =>
        ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;" })[c] as string,
    );
}

/** About `n` round tick values covering [lo, hi]. */
export function ticks(lo: number, hi: number, n = 5): number[] {
  if (hi === lo) return [lo];
  const raw = (hi - lo) / n;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? raw;
  const out: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) {
    out.push(Number(v.toPrecision(12)));
  }
  return out;
}

/** An x value as an axis label: UTC time (with the date when the span passes a day), or a number. */
export function xLabelText(x: number, kind: "time" | "value", spanMs: number): string {
  if (kind === "value") return formatNumber(x);
  const iso = new Date(x).toISOString();
  return spanMs > 86_400_000 ? `${iso.slice(5, 10)} ${iso.slice(11, 16)}` : iso.slice(11, 19);
}

/** A number in at most about six significant digits. */
export function formatNumber(v: number): string {
  if (v === 0) return "0";
  const a = Math.abs(v);
  if (a >= 1e6 || a < 1e-3) return v.toExponential(2);
  return String(Number(v.toPrecision(6)));
}

/** The SVG document of `data`. */
export function chartSvg(data: PlotData): string {
  const series = data.series.filter((s) => s.points.length);
  const range = bounds(series) ?? { x0: 0, x1: 0, y0: 0, y1: 0 };
  let { x0, x1, y0, y1 } = range;
  if (x0 === x1) [x0, x1] = [x0 - 1, x1 + 1];
  if (y0 === y1) [y0, y1] = [y0 - Math.abs(y0 || 1) * 0.05, y1 + Math.abs(y1 || 1) * 0.05];
  const pad = (y1 - y0) * 0.05;
  [y0, y1] = [y0 - pad, y1 + pad];
  const pw = W - M.left - M.right, ph = H - M.top - M.bottom;
  const sx = (x: number) => M.left + ((x - x0) / (x1 - x0)) * pw;
  const sy = (y: number) => M.top + ph - ((y - y0) / (y1 - y0)) * ph;
  const f = (n: number) => n.toFixed(1);
  const units = [...new Set(series.map((s) => s.units).filter((u) => u))];
  const out: string[] = [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="#ffffff"/>`,
    `<text x="${W / 2}" y="24" text-anchor="middle" font-size="15">${xmlText(data.title)}</text>`,
  ];
  out.push(`<g stroke="#dddddd">`);
  const yt = ticks(y0, y1), xt = ticks(x0, x1);
  for (const t of yt) {
    out.push(`<line x1="${M.left}" x2="${W - M.right}" y1="${f(sy(t))}" y2="${f(sy(t))}"/>`);
  }
  out.push(`</g>`, `<g stroke="#333333">`);
  out.push(`<line x1="${M.left}" x2="${M.left}" y1="${M.top}" y2="${M.top + ph}"/>`);
  out.push(
    `<line x1="${M.left}" x2="${W - M.right}" y1="${M.top + ph}" y2="${M.top + ph}"/>`,
    `</g>`,
  );
  for (const t of yt) {
    out.push(
      `<text x="${M.left - 6}" y="${f(sy(t) + 4)}" text-anchor="end">${
        xmlText(formatNumber(t))
      }</text>`,
    );
  }
  const xTicks = data.xKind === "time" ? timeTicks(x0, x1) : xt;
  for (const t of xTicks) {
    out.push(
      `<line x1="${f(sx(t))}" x2="${f(sx(t))}" y1="${M.top + ph}" y2="${
        M.top + ph + 5
      }" stroke="#333333"/>`,
      `<text x="${f(sx(t))}" y="${M.top + ph + 18}" text-anchor="middle">${
        xmlText(xLabelText(t, data.xKind, x1 - x0))
      }</text>`,
    );
  }
  out.push(
    `<text x="${M.left + pw / 2}" y="${M.top + ph + 38}" text-anchor="middle">${
      xmlText(data.xLabel)
    }</text>`,
  );
  if (units.length) {
    out.push(
      `<text transform="translate(16 ${M.top + ph / 2}) rotate(-90)" text-anchor="middle">${
        xmlText(units.join(", "))
      }</text>`,
    );
  }
  series.forEach((s, i) => {
    const color = PALETTE[i % PALETTE.length] as string;
    const pts = thin(s.points, 1000).map(([x, y]) => `${f(sx(x))},${f(sy(y))}`).join(" ");
    out.push(
      `<polyline class="series" data-name="${
        xmlText(s.name)
      }" fill="none" stroke="${color}" stroke-width="1.5" points="${pts}"/>`,
    );
    const { min, max } = extremes(s.points);
    for (const [which, idx, dy] of [["max", max, -8], ["min", min, 16]] as const) {
      const [x, y] = s.points[idx] as [number, number];
      out.push(
        `<circle class="${which}" cx="${f(sx(x))}" cy="${
          f(sy(y))
        }" r="4" fill="none" stroke="${color}" stroke-width="2"/>`,
        `<text x="${f(sx(x))}" y="${f(sy(y) + dy)}" text-anchor="middle" fill="${color}">${which} ${
          xmlText(formatNumber(y))
        }</text>`,
      );
    }
    const ly = H - M.bottom + 58 + 16 * Math.floor(i / 2);
    const lx = M.left + (i % 2) * (pw / 2);
    out.push(
      `<line x1="${lx}" x2="${lx + 24}" y1="${ly - 4}" y2="${
        ly - 4
      }" stroke="${color}" stroke-width="2"/>`,
      `<text x="${lx + 30}" y="${ly}">${
        xmlText(`${s.name}${s.units ? ` [${s.units}]` : ""}`)
      }</text>`,
    );
  });
  out.push(`</svg>`, "");
  return out.join("\n");
}

/** Round time ticks (1 s … 1 day steps) over [t0, t1]: about five. */
export function timeTicks(t0: number, t1: number): number[] {
  const steps = [
    1,
    2,
    5,
    10,
    15,
    30,
    60,
    120,
    300,
    600,
    900,
    1800,
    3600,
    7200,
    10800,
    21600,
    43200,
    86400,
  ]
    .map((s) => s * 1000);
  const step = steps.find((s) => (t1 - t0) / s <= 6) ??
    Math.ceil((t1 - t0) / 6 / 86_400_000) * 86_400_000;
  const out: number[] = [];
  for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) out.push(t);
  return out;
}
