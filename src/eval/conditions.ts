/**
 * A task's starting conditions on a fresh simulator: its faults (a tripped
 * station, a pressure burst, a drifting BPM, a failed supply) are causes
 * added to the simulator, whose physics then gives every reading, the
 * archive and the alarm log; setpoints are written before the attempt; what
 * people wrote about it (e-log entries) and what a hostile service sends (a
 * tampered description or archive metadata, an alarm text) is a thin {@link ControlSystem} in
 * front of it. The wrapper keeps the simulator's `kind`, so limits and the
 * profile check treat it as the simulator it is.
 *
 * @module
 */
import type { ArchiveQuery, ControlSystem, DeviceQuery, LogQuery } from "../adapters/adapter.ts";
import type {
  DeviceInfo,
  DevicePage,
  LogEntry,
  Reading,
  Series,
  Value,
} from "../adapters/adapter.ts";
import { wildcard } from "../adapters/adapter.ts";
import { createSimulator, type FaultSpec, type Simulator } from "../adapters/simulator/mod.ts";
import type { Clock } from "../adapters/clock.ts";
import type { Conditions, Fault } from "./task.ts";

const MIN_MS = 60_000;
const HOUR_MS = 60 * MIN_MS;

/**
 * A fresh simulator of `seed` for an attempt starting at `startMs`: its own
 * incidents leave the conditions' quiet hours alone (and the hour after the
 * start), so the faults are what the task is about.
 */
export function simulatorFor(
  seed: number,
  conditions: Conditions,
  startMs: number,
  clock?: Clock,
): Simulator {
  const hours = conditions.quiet_hours;
  return createSimulator({
    seed,
    clock,
    ...(hours === undefined
      ? {}
      : { quiet: { from: startMs - hours * HOUR_MS, to: startMs + HOUR_MS } }),
  });
}

/** Applies `conditions` to `sim` (which it then owns) as of `startMs`. */
export async function withConditions(
  sim: Simulator,
  conditions: Conditions,
  startMs: number,
  now: () => number = Date.now,
): Promise<ControlSystem> {
  for (const fault of conditions.faults ?? []) sim.addFault(faultSpec(fault, startMs));
  for (const [device, value] of Object.entries(conditions.writes ?? {})) {
    await sim.write(device, value);
  }
  return new ConditionedSystem(sim, conditions, startMs, now);
}

/** A task's fault as the simulator takes it, its times counted back from `startMs`. */
export function faultSpec(f: Fault, startMs: number): FaultSpec {
  const at = startMs - f.minutes_ago * MIN_MS;
  const until = (d: number | undefined) => (d === undefined ? {} : { until: at + d * MIN_MS });
  switch (f.kind) {
    case "rf-trip": {
      if (f.reset_after_min === undefined) {
        return { kind: f.kind, station: f.station, cause: f.cause, at };
      }
      const reset = at + f.reset_after_min * MIN_MS;
      return {
        kind: f.kind,
        station: f.station,
        cause: f.cause,
        at,
        reset,
        on: reset + (f.conditioning_min ?? 3) * MIN_MS,
      };
    }
    case "vacuum-burst":
      return { kind: f.kind, gauge: f.gauge, peakMbar: f.peak_mbar, tauMin: f.tau_min, at };
    case "bpm-drift":
      return { kind: f.kind, device: f.device, mmPerMin: f.mm_per_min, at };
    case "supply-fault":
      return { kind: f.kind, device: f.device, at, ...until(f.duration_min) };
    case "overtemp":
      return {
        kind: f.kind,
        device: f.device,
        riseDegC: f.rise_degc,
        rampMin: f.ramp_min,
        at,
        ...until(f.duration_min),
      };
    case "injection":
      return {
        kind: f.kind,
        cause: f.cause,
        at,
        ...(f.device === undefined ? {} : { device: f.device }),
        ...(f.level === undefined ? {} : { level: f.level }),
        ...until(f.duration_min),
      };
    case "id-stall":
      return { kind: f.kind, device: f.device, at, until: at + f.duration_min * MIN_MS };
  }
}

class ConditionedSystem implements ControlSystem {
  readonly kind: string;
  readonly #extraLogs: LogEntry[];

  constructor(
    readonly inner: Simulator,
    readonly c: Conditions,
    readonly startMs: number,
    readonly now: () => number,
  ) {
    this.kind = inner.kind;
    this.#extraLogs = (c.logs ?? []).map((l, i): LogEntry => ({
      source: l.source,
      id: `eval-${i + 1}`,
      time: new Date(startMs - l.minutes_ago * 60_000).toISOString(),
      title: l.title,
      text: l.text,
      ...(l.author ? { author: l.author } : {}),
      devices: l.devices,
      severity: l.severity,
      ...(l.status ? { status: l.status } : {}),
    }));
  }

  read(names: string[], signal?: AbortSignal): Promise<Reading[]> {
    return this.inner.read(names, signal);
  }

  write(name: string, value: Value, signal?: AbortSignal): Promise<void> {
    return this.inner.write(name, value, signal);
  }

  async describe(names: string[], signal?: AbortSignal): Promise<DeviceInfo[]> {
    const infos = await this.inner.describe(names, signal);
    return infos.map((i) => {
      const d = this.c.descriptions?.[i.device];
      return d === undefined ? i : { ...i, description: d };
    });
  }

  async search(q: DeviceQuery, signal?: AbortSignal): Promise<DevicePage> {
    const page = await this.inner.search(q, signal);
    const descriptions = this.c.descriptions;
    if (!descriptions) return page;
    return {
      ...page,
      devices: page.devices.map((i) => {
        const d = descriptions[i.device];
        return d === undefined ? i : { ...i, description: d };
      }),
    };
  }

  async logs(q: LogQuery, signal?: AbortSignal): Promise<LogEntry[]> {
    const entries = await this.inner.logs(q, signal);
    const from = Date.parse(q.from);
    const to = Date.parse(q.to);
    const device = q.device ? wildcard(q.device) : undefined;
    const text = q.text?.toLowerCase();
    const extra = this.#extraLogs.filter((e) => {
      const t = Date.parse(e.time);
      if (e.source !== q.source || t < from || t >= to) return false;
      if (device && !e.devices.some((d) => device.test(d))) return false;
      if (text && !`${e.title} ${e.text}`.toLowerCase().includes(text)) return false;
      return true;
    });
    if (extra.length === 0) return entries;
    const all = [...entries, ...extra].sort((a, b) => Date.parse(b.time) - Date.parse(a.time));
    return q.limit === undefined ? all : all.slice(0, q.limit);
  }

  async archive(q: ArchiveQuery, signal?: AbortSignal): Promise<Series[]> {
    const series = await this.inner.archive(q, signal);
    const units = this.c.archive_units;
    if (!units) return series;
    return series.map((s) => {
      const u = units[s.device];
      return u === undefined ? s : { ...s, units: u };
    });
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
