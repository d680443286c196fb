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
import { resolveRange } from "./time.ts";
import { round6 } from "../util/misc.ts";

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

export const readLog = defineTool({
  name: "read_log",
  description:
    "Read history over a time range: the e-log (operator notes), the alarm log (alarm events), or " +
    "the archive (a summary per device: min, max, mean, first, last, point count and a 12-bin trend).",
  parameters: Parameters,
  readOnly: true,
  async execute(args, { cs, signal, now }) {
    let range;
    try {
      range = resolveRange(args.from, args.to, now());
    } catch (e) {
      throw new ToolError((e as Error).message);
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

function compactEntry(e: LogEntry) {
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
export function summarise(s: Series) {
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
function point(p: Sample) {
  return { time: p.time, value: shown(p.value), ...(p.since ? { since: p.since } : {}) };
}

function shown(v: Sample["value"]): unknown {
  return Array.isArray(v)
    ? { waveform: true, length: v.length }
    : typeof v === "number"
    ? round6(v)
    : v;
}
