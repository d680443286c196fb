/**
 * The alarm log, derived from incidents by evaluating the affected devices'
 * noise-free values against their thresholds. Because the same physics
 * produces the archive, an alarm's time matches the archived crossing.
 *
 * @module
 */

import type { LogEntry, Value } from "../control/records.ts";
import { effectEnd, type Happening } from "./effects.ts";
import type { DeviceDef } from "./facility.ts";

import { type Alarm, alarmOf, type Physics, type Setpoints } from "./physics.ts";

/** Coarse samples per incident before refining each transition by bisection. */
const GRID_POINTS = 48;
const RESOLUTION_MS = 50;

/**
 * Alarm events (entering and leaving each severity) caused by one incident
 * or routine action, oldest first.
 */
export function alarmEvents(physics: Physics, sp: Setpoints, incident: Happening): LogEntry[] {
  const names = new Set<string>([...incident.effects.map((e) => e.device), ...incident.watch]);
  const events: { t: number; def: DeviceDef; value: Value }[] = [];
  for (const name of names) {
    const def = physics.facility.byName.get(name);
    if (def === undefined || (def.info.alarm === undefined && def.labelSeverity.size === 0)) {
      continue;
    }
    const state = (t: number) => {
      const value = physics.value(def, t, sp, false);
      return { value, alarm: alarmOf(def, value) };
    };
    if (
      onlyDrifts(incident, name) &&
      driftEnds(incident, name).every((t) => farFromAlarm(def, state(t).value))
    ) {
      continue; // a linear drift is largest at its ends: far from every threshold there, it never alarms
    }
    const times = sampleTimes(incident);
    let prevT = times[0] ?? incident.start;
    let prev = state(prevT);
    for (const t of times.slice(1)) {
      const next = state(t);
      // Walk through every change between the two samples, earliest first.
      for (let guard = 0; guard < 4 && !same(prev.alarm, next.alarm); guard++) {
        let lo = prevT;
        let hi = t;
        while (hi - lo > RESOLUTION_MS) {
          const mid = Math.round((lo + hi) / 2);
          if (same(state(mid).alarm, prev.alarm)) lo = mid;
          else hi = mid;
        }
        const found = state(hi);
        events.push({ t: hi, def, value: found.value });
        prevT = hi;
        prev = found;
      }
      prevT = t;
      prev = next;
    }
  }
  events.sort((a, b) => a.t - b.t);
  return events.map((e, i) => entry(`A${incident.id}.${i}`, e.t, e.def, e.value));
}

/** True when every effect of the incident on `device` is a drift, and nothing else watches it. */
function onlyDrifts(incident: Happening, device: string): boolean {
  return !incident.watch.includes(device) &&
    incident.effects.every((e) => e.device !== device || e.kind === "drift");
}

/** Where the drifts on `device` are largest or smallest: their first and last moments. */
function driftEnds(incident: Happening, device: string): number[] {
  return incident.effects.filter((e) => e.device === device).flatMap((e) =>
    "to" in e ? [e.from, e.to - 1] : [e.from]
  );
}

/** True when a number is more than a fifth of a threshold's size away from each threshold. */
function farFromAlarm(def: DeviceDef, value: Value): boolean {
  if (typeof value !== "number") return false;
  return Object.values(def.info.alarm ?? {}).every((x) =>
    x === undefined || Math.abs(value - x) > 0.2 * Math.max(Math.abs(x), 1e-9)
  );
}

function sampleTimes(incident: Happening): number[] {
  const lo = incident.start - 1000;
  const hi = incident.end + 1000;
  const times = new Set<number>();
  for (let i = 0; i <= GRID_POINTS; i++) times.add(Math.round(lo + ((hi - lo) * i) / GRID_POINTS));
  // Step changes happen exactly at effect boundaries; sample on both sides of each.
  for (const e of incident.effects) {
    for (const t of [e.from, "to" in e ? e.to : e.from, effectEnd(e)]) {
      times.add(t - 1);
      times.add(t);
    }
  }
  return [...times].filter((t) => t >= lo && t <= hi).sort((a, b) => a - b);
}

function same(a: Alarm, b: Alarm): boolean {
  return a.severity === b.severity && a.status === b.status;
}

function entry(id: string, t: number, def: DeviceDef, value: Value): LogEntry {
  const alarm = alarmOf(def, value);
  const info = def.info;
  let text: string;
  if (typeof value === "string") {
    text = `${info.description}: ${value}`;
  } else {
    const shown = `${formatValue(value, info.precision)}${info.units ? ` ${info.units}` : ""}`;
    const limit = info.alarm?.[alarm.status.toLowerCase() as "hihi" | "high" | "low" | "lolo"];
    text = alarm.status === "NO_ALARM"
      ? `${info.description}: ${shown}, back within limits`
      : `${info.description}: ${shown} (${alarm.status} limit ${
        formatValue(limit ?? 0, info.precision)
      })`;
  }
  return {
    source: "alarm",
    id,
    time: new Date(t).toISOString(),
    title: `${def.name} ${alarm.status}`,
    text,
    devices: [def.name],
    severity: alarm.severity,
    status: alarm.status,
  };
}

/** A number as an operator would write it: exponential for pressures, fixed otherwise. */
export function formatValue(value: Value | undefined, precision = 2): string {
  if (typeof value !== "number") return String(value);
  if (value !== 0 && Math.abs(value) < 1e-3) return value.toExponential(1);
  return value.toFixed(Math.min(precision, 3));
}
