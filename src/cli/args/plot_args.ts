/**
 * `accel-agent plot`'s command line as the `plot` tool's arguments: one
 * source (devices from the archive, `--live`, `--scan` or `--csv`) and only
 * the options that source takes.
 *
 * @module
 */
import { UsageError } from "../../app/exit.ts";
import { list, str, type Values } from "./table.ts";

/** The `plot` tool's arguments from the command line: one source, its options only. */
export function plotArgs(devices: string[], values: Values): Record<string, unknown> {
  const v = {
    from: str(values, "from"),
    to: str(values, "to"),
    live: str(values, "live"),
    every: str(values, "every"),
    scan: str(values, "scan"),
    csv: str(values, "csv"),
    column: values.column === undefined ? undefined : list(values, "column"),
  };
  const sources = [v.live !== undefined, v.scan !== undefined, v.csv !== undefined];
  if (sources.filter(Boolean).length > 1) {
    throw new UsageError("plot takes one source: devices (archive), --live, --scan or --csv");
  }
  const timeRange = v.from !== undefined || v.to !== undefined;
  if (v.scan !== undefined || v.csv !== undefined) {
    if (devices.length || timeRange || v.live !== undefined || v.every !== undefined) {
      throw new UsageError("--scan and --csv take no devices, --from, --to, --live or --every");
    }
    return v.scan !== undefined
      ? { source: "scan", scan: v.scan, ...(v.column ? { columns: v.column } : {}) }
      : { source: "csv", file: v.csv, ...(v.column ? { columns: v.column } : {}) };
  }
  if (!devices.length) {
    throw new UsageError(
      "plot needs devices, --scan or --csv, e.g. accel-agent plot RING:DCCT:CURRENT --from -8h",
    );
  }
  if (v.column) throw new UsageError("--column goes with --csv or --scan");
  if (v.live === undefined) {
    if (v.every !== undefined) throw new UsageError("--every goes with --live");
    return {
      source: "archive",
      devices,
      ...(v.from ? { from: v.from } : {}),
      ...(v.to ? { to: v.to } : {}),
    };
  }
  if (timeRange) throw new UsageError("--live reads now; --from and --to go with archived series");
  const seconds = duration("live", v.live);
  const every = v.every === undefined ? undefined : duration("every", v.every);
  if (!(seconds > 0 && seconds <= 50)) {
    throw new UsageError("--live is more than 0 s and at most 50 s");
  }
  if (every !== undefined && !(every >= 0.1 && every <= seconds)) {
    throw new UsageError("--every is at least 100ms and at most the --live duration");
  }
  return { source: "live", devices, seconds, ...(every !== undefined ? { every } : {}) };
}

/** `10s`, `500ms`, `2m` or a number of seconds, in seconds. */
function duration(name: string, raw: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*(ms|s|m)?$/.exec(raw.trim());
  if (!m) throw new UsageError(`--${name} "${raw}" is not a duration; use e.g. 10s, 500ms or 1m`);
  const n = Number(m[1]);
  return m[2] === "ms" ? n / 1000 : m[2] === "m" ? n * 60 : n;
}
