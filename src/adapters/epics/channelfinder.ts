/**
 * ChannelFinder name search (spec §e): `~name` globs, property and tag
 * filters, `~from`/`~size` paging, and the total from `channels/count`.
 * ChannelFinder knows no units or writability; the record type tells the
 * latter (output records are settable).
 *
 * @module
 */
import type { z } from "zod";
import type { DeviceInfo, DevicePage, DeviceQuery } from "../adapter.ts";
import { httpRead, type HttpService, httpText, query } from "../http.ts";
import { jsonListPage, jsonReply, pageBody, shaped } from "../reply.ts";
import { subsystemOf } from "./pv_value.ts";
import { ChannelsSchema, CountSchema } from "./shapes.ts";

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

type Channel = z.infer<typeof ChannelsSchema>[number];

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
  const filters: Record<string, string | string[] | undefined> = { "~name": pattern };
  for (const [k, v] of Object.entries(q.properties ?? {})) filters[k] = v;
  if (q.tags?.length) filters["~tag"] = q.tags;
  if (q.writable === true) filters.recordType = OUTPUT_RECORDS.join("|");
  if (q.writable === false) filters["recordType!"] = OUTPUT_RECORDS.join("|");
  // A service that ignores ~size must not turn a page of ten into a million rows: only the
  // page is read, the rest of the body is dropped unread.
  const [page, count] = await Promise.all([
    httpRead(
      svc,
      `/channels${query({ ...filters, "~from": offset, "~size": limit })}`,
      { signal },
      jsonListPage(svc, limit),
    ),
    httpText(svc, `/channels/count${query(filters)}`, { signal }),
  ]);
  const channels = shaped(
    svc,
    ChannelsSchema,
    pageBody(page.body),
    "a list of channels with names",
  );
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
    ...(page.body.more
      ? {
        note: `${svc.label} at ${svc.base} sent more than the ${limit} channels asked for ` +
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
    description: props.get("recordDesc") ?? props.get("description") ?? "",
    units: props.get("EGU") ?? props.get("units") ?? "",
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
