/**
 * What a plot holds, whatever it came from (archive, live reads, a scan, a
 * CSV file): named series of (x, y) points on one x axis, time or a value,
 * and the summary `--json` and the model read (min/max/mean/n per series).
 *
 * @module
 */
import { round6 } from "../util/misc.ts";

/** One line of a chart. `x` is milliseconds since the epoch on a time axis. */
export interface PlotSeries {
  name: string;
  units: string;
  points: [number, number][];
}

/** A chart's data. */
export interface PlotData {
  title: string;
  /** "time": x is epoch milliseconds; "value": x is `xLabel`'s value (a scan's setpoint…). */
  xKind: "time" | "value";
  xLabel: string;
  series: PlotSeries[];
}

/** The summary of one series. */
export interface SeriesSummary {
  name: string;
  units: string;
  n: number;
  min: number;
  max: number;
  mean: number;
  /** Where the minimum and maximum are on the x axis (ISO time on a time axis). */
  min_at: number | string;
  max_at: number | string;
}

/** The summary of a plot: the x range and each series'. */
export interface PlotSummary {
  title: string;
  x: { kind: "time" | "value"; label: string; from: number | string; to: number | string };
  series: SeriesSummary[];
}

/** The index of the first minimum and of the first maximum of `points`' y. */
export function extremes(points: readonly [number, number][]): { min: number; max: number } {
  let min = 0, max = 0;
  points.forEach(([, y], i) => {
    if (y < (points[min] as [number, number])[1]) min = i;
    if (y > (points[max] as [number, number])[1]) max = i;
  });
  return { min, max };
}

/** The range of x and of y over every point of `series`; undefined when there are none. */
export function bounds(
  series: readonly PlotSeries[],
): { x0: number; x1: number; y0: number; y1: number } | undefined {
  // A loop, not Math.min(...xs): a spread of every point of a large plot
  // (100,000 rows of 20 series) passes the engine's limit on arguments.
  let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
  for (const s of series) {
    for (const [x, y] of s.points) {
      if (x < x0) x0 = x;
      if (x > x1) x1 = x;
      if (y < y0) y0 = y;
      if (y > y1) y1 = y;
    }
  }
  return x0 <= x1 ? { x0, x1, y0, y1 } : undefined;
}

/** Summarises `data`; a series with no points is left out (its source said why). */
export function summarise(data: PlotData): PlotSummary {
  const at = (x: number) => data.xKind === "time" ? new Date(x).toISOString() : round6(x);
  const range = bounds(data.series);
  return {
    title: data.title,
    x: {
      kind: data.xKind,
      label: data.xLabel,
      from: range ? at(range.x0) : "",
      to: range ? at(range.x1) : "",
    },
    series: data.series.filter((s) => s.points.length).map((s) => {
      const { min, max } = extremes(s.points);
      const lo = s.points[min] as [number, number];
      const hi = s.points[max] as [number, number];
      return {
        name: s.name,
        units: s.units,
        n: s.points.length,
        min: round6(lo[1]),
        max: round6(hi[1]),
        mean: round6(s.points.reduce((a, p) => a + p[1], 0) / s.points.length),
        min_at: at(lo[0]),
        max_at: at(hi[0]),
      };
    }),
  };
}

/**
 * At most about `buckets` points: the first and last point of each bucket
 * and its minimum and maximum, in order, so peaks and dips survive.
 */
export function thin(points: readonly [number, number][], buckets: number): [number, number][] {
  if (points.length <= buckets * 4) return [...points];
  const out: [number, number][] = [];
  const size = points.length / buckets;
  for (let b = 0; b < buckets; b++) {
    const part = points.slice(Math.floor(b * size), Math.floor((b + 1) * size));
    if (!part.length) continue;
    const { min, max } = extremes(part);
    const keep = [...new Set([0, min, max, part.length - 1])].sort((x, y) => x - y);
    for (const i of keep) out.push(part[i] as [number, number]);
  }
  return out;
}
