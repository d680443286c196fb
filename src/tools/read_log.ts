/**
 * `read_log`: the e-log, the alarm log and the archiver over a time range.
 * Archive data is summarised per device so it never floods the context.
 *
 * @module
 */
import { DeviceName } from "../plan_model/plan.ts";
import { z } from "zod";
import type { LogEntry, Sample, Series, Severity } from "../adapters/adapter.ts";
import { defineTool, ToolError } from "./define.ts";
import { resolveRange } from "../util/time_range.ts";
import { round6 } from "../util/misc.ts";
import { errorMessage } from "../util/errors.ts";

const SEVERITIES = ["NONE", "MINOR", "MAJOR", "INVALID"] as const satisfies readonly Severity[];
/** Points asked of the archiver per device; enough for a faithful min/max/mean. */
const ARCHIVE_POINT_BUDGET = 2_000;
/** Bins in the trend shown to the model. */
const TREND_BINS = 12;
const TEXT_SHOWN = 600;

const Parameters = z.strictObject({
  source: z.enum(["elog", "alarm", "archive"]).describe(
    "elog: operator e-log entries; alarm: alarm history; archive: archived values of devices",
  ),
  from: z.string().optional().describe(
    "Start, ISO-8601 UTC (2026-11-20T22:00:00Z) or relative (-8h, -2d); default 24 h before `to`",
  ),
  to: z.string().optional().describe('End, ISO-8601 UTC, relative, or "now" (default)'),
  devices: z.array(DeviceName).max(50).optional().describe(
    "archive: the devices (required); elog/alarm: only entries about this device (first one, * allowed)",
  ),
  text: z.string().optional().describe(
    "elog/alarm: case-insensitive text that entries must contain",
  ),
  min_severity: z.enum(SEVERITIES).optional().describe("alarm: only events at least this severe"),
  limit: z.int().min(1).max(500).default(50).describe(
    "elog/alarm: at most this many entries, newest first",
  ),
});

/** A log entry as the model reads it (long text cut). */
export interface CompactEntry {
  time: string;
  title: string;
  text: string;
  author?: string;
  logbook?: string;
  devices?: string[];
  severity: Severity;
  status?: string;
}

/** An archived sample as the summary shows it (a waveform by its length only). */
export interface SummaryPoint {
  time: string;
  value: number | string | { waveform: true; length: number };
  since?: string;
}

/** One device's archived history in a few dozen numbers, or why there is none. */
export type SeriesSummary = { device: string; error: string } | {
  device: string;
  units: string;
  points: number;
  first?: SummaryPoint;
  last?: SummaryPoint;
  /** The rest only when some samples are numbers. */
  min?: number;
  max?: number;
  mean?: number;
  worst_severity?: Severity;
  trend?: number[];
};

/** What `read_log` returns: log entries, or a summary per archived device. */
export type ReadLogResult =
  | { source: "archive"; from: string; to: string; series: SeriesSummary[] }
  | { source: "elog" | "alarm"; from: string; to: string; count: number; entries: CompactEntry[] };

export const readLog = defineTool<typeof Parameters, ReadLogResult>({
  name: "read_log",
  description:
    "Read history over a time range: the e-log (operator notes), the alarm log (alarm events), or " +
    "the archive (a summary per device: min, max, mean, first, last, point count and a 12-bin trend).",
  parameters: Parameters,
  readOnly: true,
  outsideText: "facility services (e-log and alarm entries, archive data)",
  async execute(args, { cs, signal, now }) {
    let range;
    try {
      range = resolveRange(args.from, args.to, now());
    } catch (e) {
      throw new ToolError(errorMessage(e));
    }
    if (args.source === "archive") {
      if (!args.devices?.length) {
        throw new ToolError('source "archive" needs devices: the names whose history to summarise');
      }
      const series = await cs.archive(
        { devices: args.devices, ...range, maxPoints: ARCHIVE_POINT_BUDGET },
        signal,
      );
      return { source: "archive", ...range, series: series.map(summarise) };
    }
    const entries = await cs.logs({
      source: args.source,
      ...range,
      device: args.devices?.[0],
      text: args.text,
      minSeverity: args.min_severity,
      limit: args.limit,
    }, signal);
    return {
      source: args.source,
      ...range,
      count: entries.length,
      entries: entries.map(compactEntry),
    };
  },
});

function compactEntry(e: LogEntry): CompactEntry {
  return {
    time: e.time,
    title: e.title,
    text: e.text.length > TEXT_SHOWN ? `${e.text.slice(0, TEXT_SHOWN)}…` : e.text,
    ...(e.author ? { author: e.author } : {}),
    ...(e.logbook ? { logbook: e.logbook } : {}),
    ...(e.devices.length ? { devices: e.devices } : {}),
    severity: e.severity,
    ...(e.status ? { status: e.status } : {}),
  };
}

/** Per-device summary of a series: never more than a few dozen numbers. */
export function summarise(s: Series): SeriesSummary {
  if (!s.ok) return { device: s.device, error: s.error ?? "no data" };
  const numeric = s.samples.filter((p): p is Sample & { value: number } =>
    typeof p.value === "number"
  );
  const last = s.samples[s.samples.length - 1];
  const first = s.samples[0];
  const base = {
    device: s.device,
    units: s.units,
    points: s.samples.length,
    ...(first ? { first: point(first) } : {}),
    ...(last ? { last: point(last) } : {}),
  };
  if (numeric.length === 0) return base;
  let min = Infinity, max = -Infinity, sum = 0;
  for (const p of numeric) {
    min = Math.min(min, p.value);
    max = Math.max(max, p.value);
    sum += p.value;
  }
  const worst = s.samples.reduce<Severity>(
    (w, p) => (SEVERITIES.indexOf(p.severity) > SEVERITIES.indexOf(w) ? p.severity : w),
    "NONE",
  );
  return {
    ...base,
    min: round6(min),
    max: round6(max),
    mean: round6(sum / numeric.length),
    worst_severity: worst,
    trend: trend(numeric.map((p) => p.value)),
  };
}

function trend(values: number[]): number[] {
  const bins = Math.min(TREND_BINS, values.length);
  const out: number[] = [];
  for (let b = 0; b < bins; b++) {
    const lo = Math.floor((b * values.length) / bins);
    const hi = Math.floor(((b + 1) * values.length) / bins);
    let sum = 0;
    for (let i = lo; i < hi; i++) sum += values[i] ?? 0;
    out.push(round6(sum / Math.max(1, hi - lo)));
  }
  return out;
}

/** A sample as the summary shows it; `since` when its value was set before the range. */
function point(p: Sample): SummaryPoint {
  return { time: p.time, value: shown(p.value), ...(p.since ? { since: p.since } : {}) };
}

function shown(v: Sample["value"]): SummaryPoint["value"] {
  return Array.isArray(v)
    ? { waveform: true, length: v.length }
    : typeof v === "number"
    ? round6(v)
    : v;
}
