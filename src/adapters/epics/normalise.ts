/**
 * The EPICS services' vocabularies mapped onto the common types: severities
 * (pvws names, archiver integers, alarm-logger names with `_ACK`), time
 * stamps (seconds + nanos, epoch ms, ISO or `yyyy-MM-dd HH:mm:ss.SSS` UTC).
 *
 * @module
 */
import type { Severity } from "../adapter.ts";

/** pvws and alarm-logger severity names; UNDEFINED (never connected, disconnected) is INVALID. */
export function severityFromName(name: string | undefined): Severity {
  switch ((name ?? "").toUpperCase().replace(/_ACK$/, "")) {
    case "MINOR":
      return "MINOR";
    case "MAJOR":
      return "MAJOR";
    case "INVALID":
    case "UNDEFINED":
      return "INVALID";
    default:
      return "NONE";
  }
}

/** Archiver severities are the EPICS integers 0 NO_ALARM, 1 MINOR, 2 MAJOR, 3 INVALID. */
export function severityFromNumber(n: unknown): Severity {
  return n === 1 ? "MINOR" : n === 2 ? "MAJOR" : n === 3 ? "INVALID" : "NONE";
}

/** Epoch seconds + nanoseconds as UTC ISO-8601 (millisecond resolution). */
export function isoFromSecondsNanos(seconds: unknown, nanos: unknown): string | undefined {
  if (typeof seconds !== "number" || !Number.isFinite(seconds)) return undefined;
  const ms = seconds * 1000 + Math.floor((typeof nanos === "number" ? nanos : 0) / 1e6);
  return new Date(ms).toISOString();
}

/**
 * ISO-8601 with a zone, or Elasticsearch's `yyyy-MM-dd HH:mm:ss.SSS` which
 * the alarm logger stores in UTC. Undefined when unparsable.
 */
export function isoFromText(text: unknown): string | undefined {
  if (typeof text !== "string" || !text) return undefined;
  const zoned = /[zZ]|[+-]\d{2}:?\d{2}$/.test(text) ? text : `${text.replace(" ", "T")}Z`;
  const ms = Date.parse(zoned);
  return Number.isFinite(ms) ? new Date(ms).toISOString() : undefined;
}

/** `2021-01-20 12:00:00.123`: the absolute time form Olog and the alarm logger parse. */
export function serviceTime(iso: string): string {
  return new Date(Date.parse(iso)).toISOString().replace("T", " ").replace("Z", "");
}

/** EPICS-style device names mentioned in free text (`SR:C01:BPM1:X`, `BR-RF{Xmtr}ICS`). */
export function namesInText(text: string): string[] {
  const found = text.match(/\b[A-Za-z][\w{}-]*(?::[\w{}.-]+)+/g) ?? [];
  return [
    ...new Set(found.map((n) => n.replace(/[.-]+$/, "")).filter((n) => !/^https?:/i.test(n))),
  ];
}
