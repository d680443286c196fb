/**
 * A plot as a line chart in the terminal (simple-ascii-chart): a title with
 * the units, y ticks, x ticks as UTC times or values, one line per series in
 * its own colour, each series' minimum and maximum marked on the curve (●)
 * and written out in the legend. Names, units and titles come from facility
 * services and files: they are shown through {@link untrusted}; only our own
 * numbers go into the chart library.
 *
 * @module
 */
import { type Color, plot } from "simple-ascii-chart";
import { extremes, type PlotData, thin } from "../../plots/data.ts";
import { formatNumber, ticks, timeTicks, xLabelText } from "../../plots/svg.ts";
import { untrusted } from "../../util/untrusted_text.ts";
import { style } from "./style.ts";

const COLORS: Color[] = [
  "ansiCyan",
  "ansiYellow",
  "ansiGreen",
  "ansiMagenta",
  "ansiBlue",
  "ansiRed",
];
const ANSI: Record<Color, string> = {
  ansiBlack: "30",
  ansiRed: "31",
  ansiGreen: "32",
  ansiYellow: "33",
  ansiBlue: "34",
  ansiMagenta: "35",
  ansiCyan: "36",
  ansiWhite: "37",
};

/** Renders `data` for a terminal `columns` wide; `color` adds ANSI colours. */
export function renderChart(
  data: PlotData,
  opts: { columns: number; color: boolean; height?: number },
): string {
  const s = style(opts.color);
  const series = data.series.filter((x) => x.points.length);
  if (!series.length) return `${untrusted(data.title)}: no points to plot\n`;
  const width = Math.max(30, Math.min(opts.columns, 160) - 14);
  const lines = series.map((x) => thin(x.points, Math.ceil(width / 2)));
  const xs = lines.flat().map((p) => p[0]);
  const [x0, x1] = [Math.min(...xs), Math.max(...xs)];
  const maxTicks = Math.max(2, Math.floor(width / 14));
  let xTicks = data.xKind === "time" ? timeTicks(x0, x1) : ticks(x0, x1, maxTicks);
  while (xTicks.length > maxTicks) xTicks = xTicks.filter((_, i) => i % 2 === 0);
  const marks = series.flatMap((x, i) => {
    const { min, max } = extremes(x.points);
    const color = COLORS[i % COLORS.length] as Color;
    return [min, max].map((k) => {
      const [px, py] = x.points[k] as [number, number];
      return { x: px, y: py, ...(opts.color ? { color } : {}) };
    });
  });
  const ys = lines.flat().map((p) => p[1]);
  const yTicks = ticks(Math.min(...ys), Math.max(...ys), 5);
  const body = plot(lines, {
    ...(yTicks.length > 1 ? { customYAxisTicks: yTicks } : {}),
    width,
    height: opts.height ?? 12,
    ...(xTicks.length ? { customXAxisTicks: xTicks } : {}),
    formatter: (v, { axis }) => axis === "x" ? xLabelText(v, data.xKind, x1 - x0) : formatNumber(v),
    points: marks,
    symbols: { point: "●" },
    ...(opts.color ? { color: series.map((_, i) => COLORS[i % COLORS.length] as Color) } : {}),
  });
  const units = [...new Set(series.map((x) => x.units).filter((u) => u))];
  const out = [
    s.bold(untrusted(data.title)) +
    (units.length ? s.dim(` [${untrusted(units.join(", "))}]`) : ""),
    body.replace(/^\n+/, "").trimEnd(),
    s.dim(`  x: ${untrusted(data.xLabel)}`),
  ];
  series.forEach((x, i) => {
    const { min, max } = extremes(x.points);
    const at = (k: number) => xLabelText((x.points[k] as [number, number])[0], data.xKind, x1 - x0);
    const swatch = opts.color ? `\x1b[${ANSI[COLORS[i % COLORS.length] as Color]}m━━\x1b[0m` : "━━";
    const u = x.units ? ` ${untrusted(x.units)}` : "";
    out.push(
      `  ${swatch} ${untrusted(x.name)}${x.units ? s.dim(` [${untrusted(x.units)}]`) : ""}  ` +
        s.dim(
          `● min ${formatNumber((x.points[min] as [number, number])[1])}${u} at ${at(min)}, ` +
            `max ${formatNumber((x.points[max] as [number, number])[1])}${u} at ${at(max)}`,
        ),
    );
  });
  return `${out.join("\n")}\n`;
}
