/**
 * A task's starting conditions on a fresh simulator, through its public
 * surface only: setpoints are written before the attempt, and the rest (a
 * tripped station, a drifting BPM, a stuck corrector, log entries of a night
 * shift, a tampered description or archive metadata) is a thin {@link ControlSystem} in front of
 * it. The wrapper keeps the simulator's `kind`, so limits and the profile
 * check treat it as the simulator it is.
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
import type { Simulator } from "../adapters/simulator/mod.ts";
import type { Conditions } from "./task.ts";

/** Applies `conditions` to `sim` (which it then owns) as of `startMs`. */
export async function withConditions(
  sim: Simulator,
  conditions: Conditions,
  startMs: number,
  now: () => number = Date.now,
): Promise<ControlSystem> {
  for (const [device, value] of Object.entries(conditions.writes ?? {})) {
    await sim.write(device, value);
  }
  return new ConditionedSystem(sim, conditions, startMs, now);
}

class ConditionedSystem implements ControlSystem {
  readonly kind: string;
  readonly #extraLogs: LogEntry[];
  readonly #stuck: Set<string>;

  constructor(
    readonly inner: Simulator,
    readonly c: Conditions,
    readonly startMs: number,
    readonly now: () => number,
  ) {
    this.kind = inner.kind;
    this.#stuck = new Set(c.stuck ?? []);
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

  async read(names: string[], signal?: AbortSignal): Promise<Reading[]> {
    const readings = await this.inner.read(names, signal);
    const minutes = (this.now() - this.startMs) / 60_000;
    return readings.map((r) => {
      const o = this.c.override?.find((x) => x.device === r.device);
      if (o) {
        return {
          ...r,
          value: o.value,
          severity: o.severity ?? r.severity,
          status: o.status ?? r.status,
        };
      }
      const d = this.c.drift?.find((x) => x.device === r.device);
      if (d && r.ok && typeof r.value === "number") {
        return { ...r, value: r.value + d.per_minute * Math.max(minutes, 1) };
      }
      return r;
    });
  }

  async write(name: string, value: Value, signal?: AbortSignal): Promise<void> {
    // A stuck device takes the command and does not move: its readback says so.
    if (this.#stuck.has(name)) return;
    await this.inner.write(name, value, signal);
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
