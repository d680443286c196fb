/**
 * Phoebus alarm logger (spec §g) as the alarm log: `GET /search/alarm` over
 * a time range; severities without their `_ACK` suffix; both time formats.
 *
 * @module
 */
import { type LogEntry, type LogQuery, severityAtLeast, wildcard } from "../adapter.ts";
import { httpRead, type HttpService, query } from "../http.ts";
import { jsonListPage, pageBody, shaped } from "../reply.ts";
import { isoFromText, serviceTime, severityFromName } from "./normalise.ts";
import { type AlarmMessage, AlarmMessagesSchema } from "./shapes.ts";

/** The service caps `size`; ask for a generous page and filter here. */
const PAGE = 1000;

/** Alarm events in `[from, to)`, newest first. */
export async function alarmEntries(
  svc: HttpService,
  q: LogQuery,
  signal?: AbortSignal,
): Promise<LogEntry[]> {
  const limit = Math.max(1, q.limit ?? 100);
  // The service wildcards `pv` as *pv*; a pattern is narrowed here.
  const pv = q.device?.replace(/[*?].*$/, "") || undefined;
  const params = { start: serviceTime(q.from), end: serviceTime(q.to), pv, size: PAGE };
  // Only the page asked for is read, whatever the service sends.
  const { body } = await httpRead(
    svc,
    `/search/alarm${query(params)}`,
    { signal },
    jsonListPage(svc, PAGE),
  );
  const messages = shaped(svc, AlarmMessagesSchema, pageBody(body), "a list of alarm messages");
  const fromMs = Date.parse(q.from), toMs = Date.parse(q.to);
  const deviceRe = q.device ? wildcard(q.device) : undefined;
  const needle = q.text?.toLowerCase();
  const out: LogEntry[] = [];
  for (const [i, m] of messages.entries()) {
    const entry = toEntry(m, i);
    if (!entry) continue;
    const t = Date.parse(entry.time);
    if (t < fromMs || t >= toMs) continue;
    if (deviceRe && !entry.devices.some((d) => deviceRe.test(d))) continue;
    if (q.minSeverity && !severityAtLeast(entry.severity, q.minSeverity)) continue;
    if (needle && !`${entry.title}\n${entry.text}`.toLowerCase().includes(needle)) continue;
    out.push(entry);
  }
  out.sort((a, b) => (a.time < b.time ? 1 : a.time > b.time ? -1 : 0));
  return out.slice(0, limit);
}

function toEntry(m: AlarmMessage, index: number): LogEntry | undefined {
  const time = isoFromText(m.message_time) ?? isoFromText(m.time);
  if (!time) return undefined;
  const config = String(m.config ?? "");
  const pv = String(m.pv ?? "") || config.split("/").pop() || "";
  const severityName = String(m.severity ?? "OK");
  const message = String(m.message ?? "");
  const parts = [
    m.value !== undefined ? `value ${m.value}` : "",
    m.current_severity ? `now ${m.current_severity} ${m.current_message ?? ""}`.trim() : "",
    m.command ? `${m.command} by ${m.user ?? "?"}@${m.host ?? "?"}` : "",
    config,
  ].filter(Boolean);
  return {
    source: "alarm",
    id: `${config}@${time}#${index}`,
    time,
    title: `${pv} ${m.command ? String(m.command) : `${severityName} ${message}`}`.trim(),
    text: parts.join("; "),
    ...(typeof m.user === "string" ? { author: m.user } : {}),
    devices: pv ? [pv] : [],
    severity: severityFromName(severityName),
    status: message || severityName,
  };
}
