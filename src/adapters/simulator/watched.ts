/**
 * What a prediction of a plan on the simulated facility watches: every
 * device whose reading a write can move anywhere in the machine (the beam
 * and its consequences: orbit, losses, current, lifetime, injection,
 * energy, photon BPMs, temperatures that follow them) that has alarm
 * limits, the ring's tunes and chromaticities (no alarm limits, but what a
 * physicist asks first), and each written device's own readback,
 * temperature and status.
 *
 * @module
 */
import { DERIVED } from "../../facility/alarms.ts";
import type { DeviceDef, Facility } from "../../facility/facility.ts";

const OPTICS = new Set(["tune", "chrom"]);
const known = new WeakMap<Facility, readonly string[]>();

/** The watched devices of `facility` (computed once per facility), by name. */
export function beamDevices(facility: Facility): readonly string[] {
  let names = known.get(facility);
  if (names === undefined) {
    names = facility.devices.filter(watched).map((d) => d.name);
    known.set(facility, names);
  }
  return names;
}

function watched(d: DeviceDef): boolean {
  if (OPTICS.has(d.model)) return true;
  const alarmed = d.info.alarm !== undefined || d.labelSeverity.size > 0;
  return alarmed &&
    (DERIVED.has(d.model) || (d.model === "follow" && DERIVED.has(d.source?.model ?? "")));
}

/** A written device's own readback, power-supply temperature and status, where they exist. */
export function ownDevices(facility: Facility, written: string): string[] {
  const def = facility.byName.get(written);
  if (def === undefined) return [];
  return [def.info.readback, `${def.prefix}:PS:TEMP`, `${def.prefix}:STATUS`]
    .filter((n): n is string => n !== undefined && facility.byName.has(n));
}
