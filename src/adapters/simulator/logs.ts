/**
 * Log queries over the generated history. Entries are produced one shift at
 * a time, newest shift first, so a query stops as soon as it has `limit`
 * entries; a scan cap keeps very long, very selective queries bounded.
 *
 * @module
 */

import {
  type LogEntry,
  type LogQuery,
  type LogSource,
  severityAtLeast,
  wildcard,
} from "../adapter.ts";
import { alarmEvents, LiveAlarms, type LiveState } from "../../facility/alarms.ts";
import { ElogWriter } from "../../facility/elog.ts";
import { IncidentBook, SHIFT_MS } from "../../facility/incidents.ts";
import type { Physics } from "../../facility/physics.ts";
import type { PastSetpoints } from "../../facility/routine.ts";

/** Entries per query when the query gives no `limit`. */
export const DEFAULT_LOG_LIMIT = 100;
const MAX_LOG_LIMIT = 10_000;
/**
 * At most this many shifts (about a year) are generated per query. A query
 * over ten years that matches little returns what the newest year holds.
 */
export const MAX_SCAN_SHIFTS = 3 * 366;
const CACHE_SHIFTS = 512;

/** Parses a UTC ISO-8601 time; throws a RangeError naming the field when it is not one. */
export function parseTime(field: string, text: string): number {
  const t = Date.parse(text);
  if (!Number.isFinite(t)) {
    throw new RangeError(`Invalid ${field} time "${text}": expected UTC ISO-8601`);
  }
  return t;
}

/** The e-log and alarm log of one seed. */
export class LogService {
  private readonly writer: ElogWriter;
  private readonly live: LiveAlarms;
  private readonly cache = new Map<string, LogEntry[]>();

  constructor(
    private readonly physics: Physics,
    /** The setpoints as the crews left them (the machine as generated, with its routine work). */
    private readonly sp: PastSetpoints,
    private readonly book: IncidentBook,
    people: Readonly<Record<string, readonly string[]>>,
    corrections: { readonly orbitCorrectors: readonly string[] },
  ) {
    this.writer = new ElogWriter(physics, sp, book, people, corrections);
    this.live = new LiveAlarms(physics);
  }

  /**
   * Entries in [from, to) that pass the filters, newest first. Nothing after
   * `now` is returned, whatever range is asked: the future has no log yet.
   * `live`: the live state, whose writes and faults add their alarms.
   */
  query(q: LogQuery, now = Infinity, live?: LiveState): LogEntry[] {
    const from = parseTime("from", q.from);
    const to = Math.min(parseTime("to", q.to), now + 1);
    const limit = Math.min(MAX_LOG_LIMIT, Math.max(0, Math.floor(q.limit ?? DEFAULT_LOG_LIMIT)));
    const device = q.device ? wildcard(q.device) : undefined;
    const text = q.text?.toLowerCase();
    const out: LogEntry[] = [];
    if (to <= from || limit === 0) return out;
    const first = IncidentBook.shiftOf(from);
    const last = IncidentBook.shiftOf(to - 1);
    const liveEntries = q.source === "alarm" && live !== undefined && Number.isFinite(now)
      ? this.live.entries(live, now)
      : [];
    for (let k = last; k >= first && k > last - MAX_SCAN_SHIFTS; k--) {
      const own = liveEntries.filter((e) => IncidentBook.shiftOf(Date.parse(e.time)) === k);
      const entries = own.length === 0 ? this.inShift(q.source, k) : dedupe(
        [...this.inShift(q.source, k), ...own].sort((
          a,
          b,
        ) => (a.time < b.time ? 1 : a.time > b.time ? -1 : 0)),
      );
      for (const entry of entries) {
        const t = Date.parse(entry.time);
        if (t < from || t >= to) continue;
        if (q.minSeverity && !severityAtLeast(entry.severity, q.minSeverity)) continue;
        if (device && !entry.devices.some((d) => device.test(d))) continue;
        if (text && !`${entry.title}\n${entry.text}`.toLowerCase().includes(text)) continue;
        // A copy: the cached entry must survive callers that edit what they get.
        out.push({ ...entry, devices: [...entry.devices] });
        if (out.length >= limit) return out;
      }
    }
    return out;
  }

  /** Entries timed within shift k (some written for shift k − 1), newest first. */
  private inShift(source: LogSource, k: number): LogEntry[] {
    const key = `${source}:${k}`;
    let entries = this.cache.get(key);
    if (entries !== undefined) return entries;
    const start = k * SHIFT_MS;
    const end = start + SHIFT_MS;
    entries = [
      ...this.generated(source, k - 1).filter((e) => Date.parse(e.time) >= start),
      ...this.generated(source, k).filter((e) => Date.parse(e.time) < end),
    ];
    entries.sort((a, b) => (a.time < b.time ? 1 : a.time > b.time ? -1 : 0));
    if (source === "alarm") entries = dedupe(entries);
    if (this.cache.size >= CACHE_SHIFTS) {
      const oldest = this.cache.keys().next().value;
      if (oldest !== undefined) this.cache.delete(oldest);
    }
    this.cache.set(key, entries);
    return entries;
  }

  private readonly generatedCache = new Map<string, LogEntry[]>();

  /** Everything written about shift k, wherever its time falls. */
  private generated(source: LogSource, k: number): LogEntry[] {
    const key = `${source}:${k}`;
    let entries = this.generatedCache.get(key);
    if (entries !== undefined) return entries;
    const plan = this.book.plan(k);
    entries = source === "elog"
      ? this.writer.entries(plan)
      : [...plan.incidents, ...plan.routine].flatMap((i) => alarmEvents(this.physics, this.sp, i));
    if (this.generatedCache.size >= CACHE_SHIFTS) {
      const oldest = this.generatedCache.keys().next().value;
      if (oldest !== undefined) this.generatedCache.delete(oldest);
    }
    this.generatedCache.set(key, entries);
    return entries;
  }
}

/**
 * Overlapping incidents each report the transitions they see; two reports of
 * one transition differ only by the bisection resolution. Keep the first.
 */
function dedupe(entries: LogEntry[]): LogEntry[] {
  const lastKept = new Map<string, number>();
  return entries.filter((e) => {
    const t = Date.parse(e.time);
    const previous = lastKept.get(e.title);
    if (previous !== undefined && Math.abs(previous - t) < 1000) return false;
    lastKept.set(e.title, t);
    return true;
  });
}
