/**
 * TANGO REST replies as the agent's readings and device descriptions: an
 * attribute value with its quality, an attribute's info with units, limits,
 * writability and the readback it has.
 *
 * @module
 */
import type { DeviceInfo, Reading, Severity } from "../adapter.ts";
import { type AttrInfo, type AttrValue, tangoErrorText } from "./rest.ts";
import { QUALITIES, typedValue } from "./shapes.ts";

const QUALITY: Record<string, Severity> = {
  ATTR_VALID: "NONE",
  ATTR_CHANGING: "NONE",
  ATTR_WARNING: "MINOR",
  ATTR_ALARM: "MAJOR",
  ATTR_INVALID: "INVALID",
};

export function toReading(device: string, v: AttrValue | undefined, info?: AttrInfo): Reading {
  const units = unitsOf(info);
  const error = v === undefined ? "no value in the reply" : tangoErrorText(v);
  if (error !== undefined || v === undefined) {
    return failed(device, error ?? "no value in the reply", units);
  }
  const typed = typedValue(v.value, info);
  if ("error" in typed) {
    return failed(device, `TANGO REST ${typed.error}; the value is not used`, units);
  }
  const value = typed.value;
  const quality = v.quality ?? "ATTR_VALID";
  if (!QUALITIES.includes(quality)) {
    return failed(
      device,
      `TANGO REST sent the quality ${JSON.stringify(quality)}, expected one of ${
        QUALITIES.join(", ")
      }; the value is not used`,
      units,
    );
  }
  return {
    device,
    value,
    units,
    timestamp: new Date(typeof v.timestamp === "number" ? v.timestamp : Date.now()).toISOString(),
    severity: QUALITY[quality] ?? "INVALID",
    status: quality.replace(/^ATTR_/, ""),
    ok: true,
  };
}

/**
 * The reply's element for each requested attribute, matched by name (any
 * case): a server may answer in another order. An element without a name (an
 * error in an attribute's place) stands for the attribute at its position, and
 * only when the reply has one element per attribute.
 */
export function matchByName(attrs: string[], values: AttrValue[]): Map<string, AttrValue> {
  const named = new Map<string, AttrValue>();
  for (const v of values) {
    const key = v.name?.toLowerCase();
    if (key !== undefined && !named.has(key)) named.set(key, v);
  }
  const out = new Map<string, AttrValue>();
  attrs.forEach((attr, i) => {
    const byName = named.get(attr.toLowerCase());
    const atPosition = values.length === attrs.length ? values[i] : undefined;
    const v = byName ?? (atPosition && atPosition.name === undefined ? atPosition : undefined);
    if (v) out.set(attr, v);
  });
  return out;
}

export function unitsOf(info?: AttrInfo): string {
  const u = info?.unit ?? "";
  return u === "No unit" ? "" : u;
}

export function limit(s: string | undefined): number | undefined {
  const n = s === undefined ? NaN : Number(s);
  return Number.isFinite(n) ? n : undefined;
}

export function toInfo(device: string, info: AttrInfo): DeviceInfo {
  const type: DeviceInfo["type"] = info.data_type === "DevEnum"
    ? "enum"
    : info.data_format === "SPECTRUM" || info.data_format === "IMAGE"
    ? "waveform"
    : info.data_type === "DevString" || info.data_type === "DevState"
    ? "string"
    : "number";
  const min = limit(info.min_value), max = limit(info.max_value);
  const lolo = limit(info.min_alarm), hihi = limit(info.max_alarm);
  const desc = info.description && !/^No description/.test(info.description)
    ? info.description
    : "";
  return {
    device,
    exists: true,
    description: desc || info.label || info.name,
    units: unitsOf(info),
    writable: info.writable !== undefined && info.writable !== "READ",
    type,
    ...(min !== undefined || max !== undefined ? { limits: { min, max } } : {}),
    ...(lolo !== undefined || hihi !== undefined ? { alarm: { lolo, hihi } } : {}),
    ...(type === "enum" && info.enum_label ? { labels: info.enum_label } : {}),
    subsystem: device.split("/")[0] ?? device,
  };
}

/**
 * The attribute that reads back a writable one: a READ_WRITE attribute's
 * own read value (compared with the value set), or for a WRITE attribute
 * the READ_WITH_WRITE attribute that names it; none for a WRITE attribute
 * alone (reading it returns its set value, which confirms nothing).
 */
export function readbackOf(
  name: string,
  device: string,
  info: AttrInfo,
  all: Map<string, AttrInfo>,
): { readback?: string } {
  if (info.writable === "READ_WRITE") return { readback: name };
  if (info.writable !== "WRITE") return {};
  const own = info.name.toLowerCase();
  const reader = [...all.values()].find((a) =>
    a.writable === "READ_WITH_WRITE" && a.writable_attr_name?.toLowerCase() === own
  );
  return reader ? { readback: `${device}/${reader.name}` } : {};
}

export function failed(device: string, error: string, units = ""): Reading {
  return {
    device,
    value: null,
    units,
    timestamp: new Date().toISOString(),
    severity: "INVALID",
    status: "INVALID",
    ok: false,
    error,
  };
}
