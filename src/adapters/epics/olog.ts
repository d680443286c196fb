/**
 * Phoebus Olog (spec §f) as the e-log: `GET /logs/search` over a time range
 * (absolute UTC times, `tz=UTC`), newest first; levels mapped to severities.
 *
 * @module
 */
import { type LogEntry, type LogQuery, type Severity, severityAtLeast } from "../adapter.ts";
import { httpRead, type HttpService, query } from "../http.ts";
import { jsonListPage, pageBody, shaped } from "../reply.ts";
import { namesInText, serviceTime } from "./normalise.ts";
import { type OlogEntry, OlogSearchSchema } from "./shapes.ts";

/** Olog's default levels as severities: problems are minor, urgent and bad ones major. */
const LEVEL_SEVERITY: Record<string, Severity> = {
  problem: "MINOR",
  urgent: "MAJOR",
  bad: "MAJOR",
};

/** Olog's largest page. */
const MAX_PAGE = 1000;

/** E-log entries in `[from, to)`, newest first. */
export async function ologEntries(
  svc: HttpService,
  q: LogQuery,
  signal?: AbortSignal,
): Promise<LogEntry[]> {
  const limit = Math.min(MAX_PAGE, Math.max(1, q.limit ?? 100));
  const text = [q.text, q.device].filter((x): x is string => !!x);
  const params = {
    start: serviceTime(q.from),
    end: serviceTime(q.to),
    tz: "UTC",
    text: text.length ? text : undefined,
    size: q.minSeverity ? MAX_PAGE : limit,
    from: 0,
    sort: "down",
  };
  // An array answer is read only as far as the page asked for; `{logs: […]}` is cut here.
  const { body } = await httpRead(
    svc,
    `/logs/search${query(params)}`,
    { signal },
    jsonListPage(svc, params.size),
  );
  const parsed = shaped(
    svc,
    OlogSearchSchema,
    pageBody(body),
    "a list of log entries (or {logs: [...]}) with createdDate times",
  );
  const logs = (Array.isArray(parsed) ? parsed : parsed.logs ?? []).slice(0, params.size);
  const fromMs = Date.parse(q.from), toMs = Date.parse(q.to);
  return logs
    .map(toEntry)
    .filter((e) => {
      const t = Date.parse(e.time);
      return t >= fromMs && t < toMs &&
        (!q.minSeverity || severityAtLeast(e.severity, q.minSeverity));
    })
    .sort((a, b) => (a.time < b.time ? 1 : a.time > b.time ? -1 : 0))
    .slice(0, limit);
}

function toEntry(e: OlogEntry): LogEntry {
  const level = String(e.level ?? "Info");
  const text = String(e.description ?? "");
  const title = String(e.title ?? "") || text.split("\n")[0] || "";
  const attrs = (e.properties ?? []).flatMap((p) => p.attributes ?? []);
  const fromProps = attrs.filter((a) => /^(pv|device|channel)s?$/i.test(String(a.name)))
    .map((a) => String(a.value ?? ""));
  return {
    source: "elog",
    id: String(e.id ?? ""),
    time: new Date(typeof e.createdDate === "number" ? e.createdDate : 0).toISOString(),
    title,
    text,
    ...(typeof e.owner === "string" ? { author: e.owner } : {}),
    ...(e.logbooks?.[0]?.name ? { logbook: String(e.logbooks[0].name) } : {}),
    devices: [...new Set([...fromProps, ...namesInText(`${title}\n${text}`)])],
    severity: LEVEL_SEVERITY[level.toLowerCase()] ?? "NONE",
    status: level,
  };
}
