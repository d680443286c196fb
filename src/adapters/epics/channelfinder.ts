/**
 * ChannelFinder name search (spec §e): `~name` globs, property and tag
 * filters, paged the same way as the index reads the namespace
 * (`cf_pages.ts`: `~search_after`, so an offset past Elasticsearch's window
 * of 10,000 works), and the total from `channels/count`.
 * ChannelFinder knows no units or writability; the record type tells the
 * latter (output records are settable).
 *
 * @module
 */
import type { DeviceInfo, DevicePage, DeviceQuery } from "../adapter.ts";
import { type HttpService, httpText, query } from "../http.ts";
import { jsonReply, shaped } from "../reply.ts";
import { subsystemOf } from "./pv_value.ts";
import { CountSchema } from "./shapes.ts";
import { type Channel, type ChannelFilters, channelPages, MAX_PAGE } from "./cf_pages.ts";
import { DESCRIPTION_KEYS, UNITS_KEYS } from "./cf_properties.ts";

/** EPICS record types whose value an operator sets. */
export const OUTPUT_RECORDS = [
  "ao",
  "bo",
  "mbbo",
  "longout",
  "stringout",
  "int64out",
  "lso",
  "aao",
];

/** One page of channels matching the query, with the total number of matches. */
export async function channelFinderSearch(
  svc: HttpService,
  q: DeviceQuery,
  signal?: AbortSignal,
): Promise<DevicePage> {
  const offset = Math.max(0, Math.floor(q.offset ?? 0));
  const limit = Math.max(0, Math.floor(q.limit ?? 50));
  const pattern = namePattern(q);
  if (pattern === undefined) return { total: 0, offset, devices: [] };
  const filters: ChannelFilters = { "~name": pattern };
  for (const [k, v] of Object.entries(q.properties ?? {})) filters[k] = v;
  if (q.tags?.length) filters["~tag"] = q.tags;
  if (q.writable === true) filters.recordType = OUTPUT_RECORDS.join("|");
  if (q.writable === false) filters["recordType!"] = OUTPUT_RECORDS.join("|");
  // The page at `offset` is reached by walking name-sorted pages from the start with the
  // cursor (an offset cannot be asked for past the window); a short page needs one request.
  // A service that ignores ~size must not turn a page of ten into a million rows: each page
  // is read to its size only, the rest of the body dropped unread.
  const walk = { oversized: false };
  const pageSize = Math.min(MAX_PAGE, Math.max(1, offset + limit));
  const collect = async () => {
    const out: Channel[] = [];
    if (limit === 0) return out;
    let skip = offset;
    for await (const page of channelPages(svc, filters, pageSize, signal, walk)) {
      const from = Math.min(skip, page.length);
      skip -= from;
      out.push(...page.slice(from, from + limit - out.length));
      if (out.length >= limit) break;
    }
    return out;
  };
  // Both asked at once; a failing page is what is reported when both fail.
  const counting = httpText(svc, `/channels/count${query(filters)}`, { signal });
  counting.catch(() => {});
  const channels = await collect();
  const count = await counting;
  const total = shaped(
    svc,
    CountSchema,
    jsonReply(svc, count.text, count.status),
    "the number of matching channels",
  );
  return {
    total,
    offset,
    devices: channels.map(toInfo),
    ...(walk.oversized
      ? {
        note: `${svc.label} at ${svc.base} sent more than the ${pageSize} channels asked for ` +
          `(it ignored ~size); the first ${limit} are shown`,
      }
      : {}),
  };
}

/** The `~name` glob, narrowed to the subsystem; undefined when nothing can match. */
function namePattern(q: DeviceQuery): string | undefined {
  const pattern = q.pattern.trim() || "*";
  if (!q.subsystem) return pattern;
  if (pattern.startsWith("*")) return `${q.subsystem}:${pattern}`;
  const first = pattern.split(":")[0] ?? "";
  return new RegExp(`^${first.replace(/\*/g, ".*").replace(/\?/g, ".")}$`, "i").test(q.subsystem)
    ? pattern
    : undefined;
}

function toInfo(c: Channel): DeviceInfo {
  const name = c.name;
  const props = new Map((c.properties ?? []).map((p) => [p.name, String(p.value ?? "")]));
  const recordType = props.get("recordType") ?? "";
  return {
    device: name,
    exists: true,
    description: DESCRIPTION_KEYS.map((k) => props.get(k)?.trim()).find((v) => v) ?? "",
    units: UNITS_KEYS.map((k) => props.get(k)?.trim()).find((v) => v) ?? "",
    writable: OUTPUT_RECORDS.includes(recordType),
    type: /^(bi|bo|mbbi|mbbo)$/.test(recordType)
      ? "enum"
      : /^(stringin|stringout|lsi|lso)$/.test(recordType)
      ? "string"
      : /^(waveform|aai|aao|compress)$/.test(recordType)
      ? "waveform"
      : "number",
    subsystem: subsystemOf(name),
  };
}
