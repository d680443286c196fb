/**
 * A pvws update (spec §a.4–a.5), merged over deltas, as a {@link Reading}
 * and a {@link DeviceInfo}: Base64 little-endian arrays decoded, `"NaN"` read
 * as a disconnect unless the PV is a connected double, enum indices shown as
 * their labels, the alarm status derived from the alarm and warning limits.
 *
 * @module
 */
import type { DeviceInfo, Reading, Severity, Value } from "../adapter.ts";
import { isoFromSecondsNanos, severityFromName } from "./normalise.ts";
import type { PvState } from "./pvws.ts";

const ARRAYS: Record<string, [number, (v: DataView, i: number) => number]> = {
  b64dbl: [8, (v, i) => v.getFloat64(i, true)],
  b64flt: [4, (v, i) => v.getFloat32(i, true)],
  b64int: [4, (v, i) => v.getInt32(i, true)],
  b64srt: [2, (v, i) => v.getInt16(i, true)],
  b64byt: [1, (v, i) => v.getUint8(i)],
};

/** Decodes a pvws Base64 array field (little-endian on the wire, whatever the host). */
export function decodeArray(field: string, b64: string): number[] {
  const spec = ARRAYS[field];
  if (!spec) return [];
  const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  const view = new DataView(bytes.buffer);
  const [size, get] = spec;
  const out: number[] = [];
  for (let i = 0; i + size <= bytes.length; i += size) out.push(get(view, i));
  return out;
}

function num(x: unknown): number | undefined {
  return typeof x === "number" && Number.isFinite(x) ? x : undefined;
}

function isFloatType(vtype: unknown): boolean {
  return vtype === undefined || vtype === "VDouble" || vtype === "VFloat";
}

/** The PV's value, or undefined when the update means "disconnected". */
function valueOf(s: PvState): Value | null | undefined {
  // A disconnect first: it arrives as a "NaN" value whatever the PV's type.
  if (s.value === "NaN" && (s.severity === "UNDEFINED" || !isFloatType(s.vtype))) return undefined;
  for (const field of Object.keys(ARRAYS)) {
    const b64 = s[field];
    if (typeof b64 === "string") {
      // Long strings (CA char waveforms) arrive as bytes; show them as text.
      if (field === "b64byt" && s.vtype !== "VByteArray") {
        return new TextDecoder().decode(Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)))
          .replace(/\0.*$/s, "");
      }
      return decodeArray(field, b64);
    }
  }
  if (s.vtype === "VEnum" && typeof s.text === "string") return s.text;
  if (s.value === "NaN" || s.value === "Infinity" || s.value === "-Infinity") {
    // A disconnect is NaN with severity UNDEFINED, or NaN on a PV that is not a double.
    if (s.severity === "UNDEFINED" || !isFloatType(s.vtype)) return undefined;
    return null;
  }
  if (typeof s.value === "number") return s.value;
  if (typeof s.text === "string") return s.text;
  if (typeof s.value === "string") return s.value;
  return null;
}

/** HIHI / HIGH / LOW / LOLO from the limits pvws sends (alarm_* = LOLO/HIHI, warn_* = LOW/HIGH). */
function statusOf(s: PvState, value: Value | null, severity: Severity): string {
  if (severity === "NONE") return "NO_ALARM";
  if (typeof value === "number") {
    const hihi = num(s.alarm_high), lolo = num(s.alarm_low);
    const high = num(s.warn_high), low = num(s.warn_low);
    if (hihi !== undefined && value >= hihi) return "HIHI";
    if (lolo !== undefined && value <= lolo) return "LOLO";
    if (high !== undefined && value >= high) return "HIGH";
    if (low !== undefined && value <= low) return "LOW";
  }
  return severity === "INVALID" ? "INVALID" : "STATE";
}

/** The reading of one PV named `device` from its merged state. */
export function readingOf(device: string, s: PvState): Reading {
  const timestamp = isoFromSecondsNanos(s.seconds, s.nanos) ?? new Date().toISOString();
  const units = typeof s.units === "string" ? s.units : "";
  const value = valueOf(s);
  if (value === undefined) {
    return {
      device,
      value: null,
      units,
      timestamp,
      severity: "INVALID",
      status: "DISCONNECTED",
      ok: false,
      error: "disconnected: the gateway reports the PV's IOC as unreachable (value NaN)",
    };
  }
  const severity = severityFromName(typeof s.severity === "string" ? s.severity : undefined);
  return {
    device,
    value,
    units,
    timestamp,
    severity,
    status: s.severity === "UNDEFINED" ? "UDF" : statusOf(s, value, severity),
    ok: true,
  };
}

/** Static facts from the first update's metadata. */
export function infoOf(device: string, s: PvState, description = ""): DeviceInfo {
  const labels = Array.isArray(s.labels) ? s.labels.map(String) : undefined;
  const isArray = Object.keys(ARRAYS).some((f) => typeof s[f] === "string");
  const type: DeviceInfo["type"] = s.vtype === "VEnum"
    ? "enum"
    : isArray
    ? "waveform"
    : typeof s.value === "number" || s.value === "NaN"
    ? "number"
    : "string";
  const min = num(s.min), max = num(s.max);
  const alarm = {
    ...(num(s.alarm_low) !== undefined ? { lolo: num(s.alarm_low) } : {}),
    ...(num(s.warn_low) !== undefined ? { low: num(s.warn_low) } : {}),
    ...(num(s.warn_high) !== undefined ? { high: num(s.warn_high) } : {}),
    ...(num(s.alarm_high) !== undefined ? { hihi: num(s.alarm_high) } : {}),
  };
  return {
    device,
    exists: true,
    description: typeof s.description === "string" && s.description ? s.description : description,
    units: typeof s.units === "string" ? s.units : "",
    writable: s.readonly === false,
    type,
    ...(min !== undefined || max !== undefined ? { limits: { min, max } } : {}),
    ...(Object.keys(alarm).length ? { alarm } : {}),
    ...(num(s.precision) !== undefined ? { precision: num(s.precision) } : {}),
    ...(labels ? { labels } : {}),
    subsystem: subsystemOf(device),
  };
}

/** First `:`-segment of an EPICS name, without a `pva://` or `ca://` prefix. */
export function subsystemOf(name: string): string {
  const bare = name.replace(/^[a-z]+:\/\//, "");
  return bare.split(":")[0] ?? bare;
}
