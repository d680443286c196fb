/**
 * The simulated facility as an {@link IndexSource}: every device with
 * ChannelFinder-style properties and tags read from its name and description.
 * {@link channelProperties} works on any name in the convention
 * `SECTION:FAMILY[:SUBFAMILY]:ID:SIGNAL`, so generated facilities go through it too.
 *
 * @module
 */
import type { IndexRecord, IndexSource } from "../../index/record.ts";
import type { Facility } from "../../facility/facility.ts";

/** Records per page handed to the index. */
const PAGE = 10_000;

/** What a device is for, from its signal, description and writability. */
export type SignalKind = "setpoint" | "readback" | "status" | "waveform" | "measurement";

/**
 * ChannelFinder-style properties of a device: section, family, device (the
 * id segment), index, plane, signal, kind, cell (from "cell NN" in the
 * description) and units. Absent facts are left out.
 *
 * @example
 * ```ts
 * channelProperties("RING:COR:H07:SETPT", "Storage ring horizontal corrector H07 (cell 04) kick setpoint", "mrad", true);
 * // { section: "RING", family: "COR", device: "H07", index: "7", plane: "H",
 * //   signal: "SETPT", kind: "setpoint", cell: "4", units: "mrad" }
 * ```
 */
export function channelProperties(
  name: string,
  description: string,
  units: string,
  writable: boolean,
): Record<string, string> {
  const segs = name.split(":");
  const props: Record<string, string> = { section: segs[0] ?? name };
  const idAt = segs.findIndex((s, i) => i > 0 && /[0-9]/.test(s));
  const familyEnd = idAt < 0 ? Math.min(2, segs.length) : idAt;
  const family = segs.slice(1, familyEnd).join(":");
  if (family) props.family = family;
  const rest = segs.slice(idAt < 0 ? familyEnd : idAt + 1);
  if (idAt >= 0) {
    const id = segs[idAt] ?? "";
    props.device = id;
    const digits = /[0-9]+/.exec(id)?.[0];
    if (digits !== undefined) props.index = String(Number.parseInt(digits, 10));
  }
  const id = idAt >= 0 ? segs[idAt] ?? "" : "";
  const last = rest[rest.length - 1] ?? "";
  // One lower-case copy and plain look-ups: this runs once per device, 10^6 times at scale.
  const d = description.toLowerCase();
  const plane = /^H[0-9]/.test(id) || last === "X" || d.includes("horizontal")
    ? "H"
    : /^V[0-9]/.test(id) || last === "Y" || d.includes("vertical")
    ? "V"
    : "";
  if (plane) props.plane = plane;
  if (rest.length) props.signal = rest.join(":");
  props.kind = signalKind(rest.join(":"), d, writable);
  const cell = d.includes("cell") ? /\bcell\s+([0-9]+)/.exec(d)?.[1] : undefined;
  if (cell !== undefined) props.cell = String(Number.parseInt(cell, 10));
  if (units) props.units = units;
  return props;
}

/** The kind of a signal: a setpoint, a readback, a state, a waveform or a plain measurement. */
export function signalKind(signal: string, description: string, writable: boolean): SignalKind {
  const d = description.toLowerCase();
  if (writable || /(^|:)(SETPT|SP|SET)$/.test(signal) || /\bsetpoint\b/.test(d)) return "setpoint";
  if (/(^|:)(RDBK|RB)$/.test(signal) || /\breadback\b/.test(d)) return "readback";
  if (/(^|:)(STATUS|STATE|INTLK)$/.test(signal) || /\b(state|interlock)\b/.test(d)) return "status";
  if (/(^|:)(WF|TBT)(:|$)/.test(signal) || /\b(waveform|turn-by-turn)\b/.test(d)) return "waveform";
  return "measurement";
}

/** Tags of a device: its kind, and `writable` for a device that can be set. */
export function channelTags(props: Record<string, string>, writable: boolean): string[] {
  return writable ? [props.kind ?? "setpoint", "writable"] : [props.kind ?? "measurement"];
}

/** One device of any facility in the convention, as the index holds it. */
export function channelRecord(
  name: string,
  description: string,
  units: string,
  writable: boolean,
): IndexRecord {
  const properties = channelProperties(name, description, units, writable);
  return {
    name,
    description,
    units,
    writable,
    properties,
    tags: channelTags(properties, writable),
  };
}

/** Devices digested in full; past them, one in {@link DIGEST_STRIDE} (a grown facility repeats). */
const DIGEST_FULL = 20_000;
const DIGEST_STRIDE = 97;

/**
 * FNV-1a over the names and descriptions (all of the first devices, then a
 * sample; the count is in the id): a new namespace gets a new cache key.
 */
function digest(facility: Facility): string {
  let h = 0x811c9dc5;
  const mix = (text: string) => {
    for (let i = 0; i < text.length; i++) {
      h ^= text.charCodeAt(i);
      h = Math.imul(h, 0x01000193);
    }
    h ^= 10;
    h = Math.imul(h, 0x01000193);
  };
  const devices = facility.devices;
  for (let i = 0; i < devices.length; i += i < DIGEST_FULL ? 1 : DIGEST_STRIDE) {
    const d = devices[i];
    if (d === undefined) break;
    mix(d.name);
    mix(d.info.description);
  }
  return (h >>> 0).toString(16).padStart(8, "0");
}

/**
 * The facility's devices as an index source; its id names the facility and a
 * digest of it. Pass a function to defer building the facility to first use.
 */
export function simulatorIndexSource(facility: Facility | (() => Facility)): IndexSource {
  const get = typeof facility === "function" ? facility : () => facility;
  let id: string | undefined;
  return {
    get id() {
      const f = get();
      id ??= `simulator:${f.spec.name}:${f.devices.length}:${digest(f)}`;
      return id;
    },
    async *records(signal?: AbortSignal) {
      const devices = get().devices;
      for (let i = 0; i < devices.length; i += PAGE) {
        signal?.throwIfAborted();
        yield devices.slice(i, i + PAGE).map((d) =>
          channelRecord(d.name, d.info.description, d.info.units, d.info.writable)
        );
        await Promise.resolve();
      }
    },
  };
}
