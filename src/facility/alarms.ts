/**
 * The alarm log: every alarm the machine raises, whatever raised it — an
 * incident of the history, a routine correction, a live write or a live
 * fault — found by evaluating the devices it can reach (noise-free) against
 * their thresholds and refining each change by bisection. Because the same
 * physics produces the archive, an alarm's time matches the archived
 * crossing. A reading that is INVALID (no beam, no injection, a screen out)
 * is masked: it raises no alarm and clears none.
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
const MASKED: Alarm = { severity: "INVALID", status: "MASKED" };

/**
 * Alarm events (entering and leaving each severity) caused by one incident,
 * routine action or fault, up to `until`, oldest first.
 */
export function alarmEvents(
  physics: Physics,
  sp: Setpoints,
  incident: Happening,
  until = Infinity,
): LogEntry[] {
  const names = new Set<string>([...incident.effects.map((e) => e.device), ...incident.watch]);
  const defs: DeviceDef[] = [];
  for (const name of names) {
    const def = physics.facility.byName.get(name);
    if (def !== undefined) defs.push(def);
  }
  const lo = incident.start - 1000;
  const hi = Math.min(incident.end + 1000, until);
  const boundaries = incident.effects.flatMap((
    e,
  ) => [e.from, "to" in e ? e.to : e.from, effectEnd(e)]);
  return scanAlarms(physics, sp, defs, lo, hi, boundaries, `A${incident.id}`);
}

/**
 * The alarm changes of `defs` in [from, to]: a grid of {@link GRID_POINTS},
 * both sides of every boundary (where effects and writes start and end), and
 * bisection between samples that disagree.
 */
export function scanAlarms(
  physics: Physics,
  sp: Setpoints,
  defs: readonly DeviceDef[],
  from: number,
  to: number,
  boundaries: readonly number[],
  idPrefix: string,
): LogEntry[] {
  if (!(to > from)) return [];
  const events: { t: number; def: DeviceDef; value: Value }[] = [];
  const times = sampleTimes(from, to, boundaries);
  for (const def of defs) {
    if (def.info.alarm === undefined && def.labelSeverity.size === 0) continue;
    if (def.info.type === "waveform") continue;
    const state = (t: number) => {
      const value = physics.value(def, t, sp, false);
      const alarm = physics.alarm(def, t, sp, value);
      return { value, alarm: alarm.severity === "INVALID" ? MASKED : alarm };
    };
    let prevT = times[0] ?? from;
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
        // Masking and unmasking into no alarm are not alarms.
        const logged = found.alarm !== MASKED &&
          !(prev.alarm === MASKED && found.alarm.severity === "NONE");
        if (logged) events.push({ t: hi, def, value: found.value });
        prevT = hi;
        prev = found;
      }
      prevT = t;
      prev = next;
    }
  }
  events.sort((a, b) => a.t - b.t);
  return events.map((e, i) => entry(`${idPrefix}.${i}`, e.t, e.def, e.value));
}

/** Models whose readings a write can move anywhere in the machine (the beam and its consequences). */
export const DERIVED: ReadonlySet<string> = new Set([
  "bpm",
  "blm",
  "dcct",
  "lifetime",
  "injeff",
  "energy",
  "espread",
  "rfpower",
  "booster",
  "boostercharge",
  "ringenergy",
  "xbpm",
  "intlk",
  "chrom",
  "bunchlength",
  "screen",
  "coolret",
]);

/** What {@link LiveAlarms} reads of the live state. */
export interface LiveState extends Setpoints {
  readonly faults: readonly Happening[];
  /** Every write: when and to which device. */
  writes(): readonly { t: number; device: string }[];
}

/**
 * The alarms of the live machine: those its faults raise, and those its
 * writes raise anywhere the beam reaches (or in the written devices' own
 * readbacks, temperatures and states), from the first write to now.
 */
export class LiveAlarms {
  private readonly derived: readonly DeviceDef[];
  private readonly memo = new WeakMap<Setpoints, { key: string; entries: LogEntry[] }>();

  constructor(private readonly physics: Physics) {
    this.derived = physics.facility.catalogue.filter((d) =>
      (DERIVED.has(d.model) || (d.model === "follow" && DERIVED.has(d.source?.model ?? ""))) &&
      (d.info.alarm !== undefined || d.labelSeverity.size > 0)
    );
  }

  /** Alarm-log entries of the live state up to `now`, oldest first. */
  entries(sp: LiveState, now: number): LogEntry[] {
    const writes = sp.writes();
    const key = `${sp.revision ?? 0}:${now}`;
    const known = this.memo.get(sp);
    if (known?.key === key) return known.entries;
    const out: LogEntry[] = [];
    for (const fault of sp.faults) out.push(...alarmEvents(this.physics, sp, fault, now));
    if (writes.length > 0) {
      const facility = this.physics.facility;
      // The written devices and their own readbacks, temperatures and states.
      const own: DeviceDef[] = [];
      for (const w of writes) {
        const def = facility.byName.get(w.device);
        if (def === undefined) continue;
        for (
          const name of [
            def.name,
            def.info.readback,
            `${def.prefix}:PS:TEMP`,
            `${def.prefix}:STATUS`,
          ]
        ) {
          const d = name === undefined ? undefined : facility.byName.get(name);
          if (d !== undefined) own.push(d);
        }
      }
      const defs = [...new Set([...this.derived, ...own])];
      const boundaries: number[] = [];
      for (const w of writes) {
        boundaries.push(w.t);
        const def = facility.byName.get(w.device);
        const rate = def?.spec.slew;
        if (def === undefined || rate === undefined) continue;
        // Where the device stops moving: the slew's end is a step in everything that follows it.
        const to = sp.at(def, w.t);
        const from = this.physics.actual(def, w.t - 1, sp);
        if (typeof to === "number" && typeof from === "number") {
          boundaries.push(w.t + Math.ceil((Math.abs(to - from) / rate) * 1000));
        }
      }
      const first = Math.min(...writes.map((w) => w.t));
      out.push(...scanAlarms(this.physics, sp, defs, first - 1000, now, boundaries, "W"));
    }
    out.sort((a, b) => Date.parse(a.time) - Date.parse(b.time));
    this.memo.set(sp, { key, entries: out });
    return out;
  }
}

function sampleTimes(lo: number, hi: number, boundaries: readonly number[]): number[] {
  const times = new Set<number>();
  for (let i = 0; i <= GRID_POINTS; i++) times.add(Math.round(lo + ((hi - lo) * i) / GRID_POINTS));
  // Step changes happen exactly at boundaries; sample on both sides of each.
  for (const t of boundaries) {
    times.add(t - 1);
    times.add(t);
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
