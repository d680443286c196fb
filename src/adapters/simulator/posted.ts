/**
 * Entries operators posted to the simulator's logbook (a file, see
 * `../file_logbook.ts`), shown by its e-log beside the generated history
 * under the same filters, so `logs elog` and the model's `read_log` see them.
 *
 * @module
 */
import { type LogEntry, type LogQuery, severityAtLeast, wildcard } from "../adapter.ts";
import { DEFAULT_LOG_LIMIT } from "./logs.ts";

/** Where the posted entries come from. */
export interface PostedEntries {
  entries(): Promise<LogEntry[]>;
}

/**
 * `generated` (newest first, already filtered) with the posted entries
 * that pass `q`, newest first, at most the query's limit. Nothing after
 * `now` is shown, as for the generated history.
 */
export function withPosted(
  generated: LogEntry[],
  posted: LogEntry[],
  q: LogQuery,
  now: number,
): LogEntry[] {
  const from = Date.parse(q.from);
  const to = Math.min(Date.parse(q.to), now + 1);
  const device = q.device ? wildcard(q.device) : undefined;
  const text = q.text?.toLowerCase();
  const limit = Math.max(0, Math.floor(q.limit ?? DEFAULT_LOG_LIMIT));
  const mine = posted.filter((e) => {
    const t = Date.parse(e.time);
    if (!(t >= from && t < to)) return false;
    if (q.minSeverity && !severityAtLeast(e.severity, q.minSeverity)) return false;
    if (device && !e.devices.some((d) => device.test(d))) return false;
    return !text || `${e.title}\n${e.text}`.toLowerCase().includes(text);
  });
  if (!mine.length) return generated;
  return [...generated, ...mine]
    .sort((a, b) => (a.time < b.time ? 1 : a.time > b.time ? -1 : 0))
    .slice(0, limit);
}
