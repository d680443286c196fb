/**
 * CSV files as plot data: a header row, the x axis in the first column
 * (ISO-8601 times, or numbers) and one numeric series per other column. A
 * header cell `NAME [UNITS]` or `NAME (UNITS)` gives the series' units. Bad
 * input is a {@link PlotError} of one line naming the file, the line and
 * the column.
 *
 * @module
 */
import type { PlotData, PlotSeries } from "./data.ts";

/** A plot that cannot be made: one line saying what, where and what to do. */
export class PlotError extends Error {
  override name = "PlotError";
}

/** Rows read at most; series (columns after the first) at most. */
export const MAX_ROWS = 100_000;
export const MAX_SERIES = 20;

/** The cells of one CSV record (RFC 4180 quoting); undefined when a quote is left open. */
function cells(line: string): string[] | undefined {
  const out: string[] = [];
  let cur = "";
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string;
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') {
        cur += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cur += c;
    } else if (c === '"' && cur === "") quoted = true;
    else if (c === ",") {
      out.push(cur);
      cur = "";
    } else cur += c;
  }
  if (quoted) return undefined;
  out.push(cur);
  return out.map((x) => x.trim());
}

const ISO_TIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}/;

/** `NAME [UNITS]` or `NAME (UNITS)` → name and units. */
function header(cell: string): { name: string; units: string } {
  const m = /^(.*?)\s*[[(]([^\])]*)[\])]$/.exec(cell);
  return m ? { name: m[1] || cell, units: m[2] as string } : { name: cell, units: "" };
}

/** Which columns: `x` the axis (default 0), `columns` the series by header name (default: the others but `skip`). */
export interface CsvChoice {
  x?: number;
  columns?: string[];
  skip?: number[];
}

/** Parses CSV text into plot data; `file` names it in messages. */
export function parseCsv(text: string, file: string, choice: CsvChoice = {}): PlotData {
  const xCol = choice.x ?? 0;
  const columns = choice.columns;
  const lines = text.split(/\r?\n/);
  while (lines.length && lines[lines.length - 1]?.trim() === "") lines.pop();
  const head = lines[0] === undefined ? undefined : cells(lines[0]);
  if (!head || head.length < 2 || xCol >= head.length) {
    throw new PlotError(
      `${file}:1: needs a header row with the x column and at least one series column`,
    );
  }
  if (lines.length - 1 > MAX_ROWS) {
    throw new PlotError(`${file}: ${lines.length - 1} rows; at most ${MAX_ROWS} are plotted`);
  }
  const names = head.map(header);
  let wanted = names.map((_, i) => i).filter((i) => i !== xCol && !choice.skip?.includes(i));
  if (columns?.length) {
    wanted = columns.map((c) => {
      const at = names.findIndex((n, i) => i !== xCol && (n.name === c || head[i] === c));
      if (at < 0) {
        throw new PlotError(
          `${file}: no column "${c}"; columns: ${names.map((n) => n.name).join(", ")}`,
        );
      }
      return at;
    });
  }
  if (wanted.length > MAX_SERIES) {
    throw new PlotError(
      `${file}: ${wanted.length} series; at most ${MAX_SERIES}, choose some with columns`,
    );
  }
  const first = lines.slice(1).map((l) => cells(l)?.[xCol] ?? "").find((c) => c !== "");
  const time = first !== undefined && ISO_TIME.test(first);
  const series: PlotSeries[] = wanted.map((i) => ({ ...(names[i] as PlotSeries), points: [] }));
  for (let n = 1; n < lines.length; n++) {
    const row = cells(lines[n] as string);
    if (!row) throw new PlotError(`${file}:${n + 1}: a quoted cell is not closed`);
    if (row.every((c) => c === "")) continue;
    const xText = row[xCol] ?? "";
    const x = time
      ? Date.parse(xText.includes("Z") || /[+-]\d\d:?\d\d$/.test(xText) ? xText : `${xText}Z`)
      : Number(xText);
    if (xText === "" || !Number.isFinite(x)) {
      throw new PlotError(
        `${file}:${n + 1}: x "${xText.slice(0, 40)}" is not ${
          time ? "an ISO-8601 time" : "a number"
        }`,
      );
    }
    wanted.forEach((col, k) => {
      const cell = row[col] ?? "";
      if (cell === "") return; // a missing value: a gap, not an error
      const y = Number(cell);
      if (!Number.isFinite(y)) {
        throw new PlotError(
          `${file}:${n + 1}: column ${names[col]?.name}: "${cell.slice(0, 40)}" is not a number`,
        );
      }
      series[k]?.points.push([x, y]);
    });
  }
  if (series.every((s) => s.points.length === 0)) {
    throw new PlotError(`${file}: no numeric values to plot`);
  }
  return {
    title: file.slice(file.lastIndexOf("/") + 1),
    xKind: time ? "time" : "value",
    xLabel: time ? "time (UTC)" : (head[xCol] ?? "x"),
    series,
  };
}
