/**
 * An EPICS facility's namespace for the device index (`src/index/record.ts`):
 * every ChannelFinder channel with its properties and tags (spec §e), or,
 * without ChannelFinder, every PV the Archiver Appliance holds (spec §d.4).
 *
 * ChannelFinder is read in pages of `~size` channels sorted by name, with the
 * `~search_after` cursor (Elasticsearch refuses `~from` + `~size` past its
 * window, 10,000 by default); a server that ignores it is read through
 * `/scroll/<last name>` (the same cursor, spec §e.2), and one without `/scroll`
 * with `~from`. Every page is read within `[epics] channelfinder_max_bytes` and at
 * most `~size` elements; the whole namespace is capped by
 * `[epics] index_max_channels`, checked against `channels/count` before the
 * first page and again as pages arrive. Property queries do not come here:
 * ChannelFinder stays the facility-wide engine for them (`channelfinder.ts`).
 *
 * @module
 */
import type { z } from "zod";
import type { IndexRecord, IndexSource } from "../../index/record.ts";
import { httpRead, type HttpService, HttpStatusError, httpText, query } from "../http.ts";
import { jsonListPage, jsonReply, pageBody, shaped } from "../reply.ts";
import { OUTPUT_RECORDS } from "./channelfinder.ts";
import { ChannelsSchema, CountSchema, MatchingPvsSchema, ScrollSchema } from "./shapes.ts";

/** Channels per ChannelFinder page. */
export const CHANNEL_PAGE_SIZE = 1000;
/** Records per page handed to the index from the archiver's one list. */
const ARCHIVER_PAGE = 5000;

/** An index source that says how often its namespace should be read again. */
export interface RefreshingSource extends IndexSource {
  /** Re-read the namespace when the index built from it is older than this (0: only on demand). */
  readonly refreshMs: number;
}

/** Where the EPICS name services are, and the bounds of one walk over them. */
export interface EpicsIndexOptions {
  channelFinder?: HttpService;
  archiver?: HttpService;
  /** At most this many channels (`[epics] index_max_channels`). */
  maxChannels: number;
  /** `[epics] index_refresh_s`, in ms. */
  refreshMs: number;
  /** Channels per page (default {@link CHANNEL_PAGE_SIZE}). */
  pageSize?: number;
}

/** The source for an EPICS facility: ChannelFinder when configured, else the archiver. */
export function epicsIndexSource(o: EpicsIndexOptions): RefreshingSource {
  if (o.channelFinder) return new ChannelFinderSource(o.channelFinder, o);
  if (o.archiver) return new ArchiverSource(o.archiver, o);
  throw new Error(
    "no name service to index: set [epics] channelfinder_url or archiver_url",
  );
}

type Channel = z.infer<typeof ChannelsSchema>[number];

/**
 * How the next page is asked for: the `~search_after` cursor, else `/scroll/<last
 * name>` (the same cursor on servers that have it only there), else `~from`.
 */
type Cursor = "search_after" | "scroll" | "from";
const NEXT: Record<Cursor, Cursor | undefined> = {
  search_after: "scroll",
  scroll: "from",
  from: undefined,
};

/** Every ChannelFinder channel, with its properties and tags. */
export class ChannelFinderSource implements RefreshingSource {
  readonly id: string;
  readonly refreshMs: number;
  readonly #svc: HttpService;
  readonly #max: number;
  readonly #page: number;

  constructor(
    svc: HttpService,
    o: Pick<EpicsIndexOptions, "maxChannels" | "refreshMs" | "pageSize">,
  ) {
    this.#svc = svc;
    this.id = `epics:channelfinder:${svc.base}`;
    this.refreshMs = o.refreshMs;
    this.#max = o.maxChannels;
    this.#page = Math.max(1, o.pageSize ?? CHANNEL_PAGE_SIZE);
  }

  async *records(signal?: AbortSignal): AsyncIterable<IndexRecord[]> {
    const svc = this.#svc;
    const count = await httpText(svc, `/channels/count${query({ "~name": "*" })}`, { signal });
    const total = shaped(
      svc,
      CountSchema,
      jsonReply(svc, count.text, count.status),
      "the number of channels",
    );
    if (total > this.#max) throw this.#tooMany(total);
    let cursor: Cursor = "search_after";
    let seen = 0;
    let last: string | undefined;
    for (;;) {
      signal?.throwIfAborted();
      const channels = await this.#fetch(cursor, last, seen, signal);
      if (channels === undefined) {
        // No /scroll on this server: page with ~from.
        cursor = "from";
        continue;
      }
      const first = channels[0]?.name;
      if (last !== undefined && first !== undefined && first <= last) {
        // The page starts at or before the last one's end: the cursor was ignored.
        const next: Cursor | undefined = NEXT[cursor];
        if (next === undefined) {
          throw new Error(
            `${svc.label} at ${svc.base} ignores ~search_after, /scroll and ~from (page ${seen} ` +
              `started again at ${first}); it cannot be read page by page`,
          );
        }
        cursor = next;
        continue;
      }
      seen += channels.length;
      if (seen > this.#max) throw this.#tooMany(seen);
      if (channels.length > 0) yield channels.map(channelRecord);
      if (channels.length < this.#page) return;
      last = channels[channels.length - 1]?.name;
    }
  }

  /** One page after `last`; undefined when the server has no `/scroll`. */
  async #fetch(
    cursor: Cursor,
    last: string | undefined,
    seen: number,
    signal: AbortSignal | undefined,
  ): Promise<Channel[] | undefined> {
    const svc = this.#svc;
    const params: Record<string, string | number> = { "~name": "*", "~size": this.#page };
    try {
      if (cursor === "scroll" && last !== undefined) {
        // The scroll id is the last hit's id, which ChannelFinder makes the channel's name.
        const { text, status } = await httpText(
          svc,
          `/scroll/${encodeURIComponent(last)}${query(params)}`,
          { signal },
        );
        const reply = shaped(
          svc,
          ScrollSchema,
          jsonReply(svc, text, status),
          "a scroll page ({id, channels})",
        );
        return reply.channels ?? [];
      }
      if (last !== undefined && cursor === "search_after") params["~search_after"] = last;
      if (last !== undefined && cursor === "from") params["~from"] = seen;
      const { body } = await httpRead(
        svc,
        `/channels${query(params)}`,
        { signal },
        jsonListPage(svc, this.#page),
      );
      return shaped(svc, ChannelsSchema, pageBody(body), "a list of channels with names");
    } catch (e) {
      if (e instanceof HttpStatusError && cursor === "scroll" && [404, 405].includes(e.status)) {
        return undefined;
      }
      if (e instanceof HttpStatusError && e.status === 400 && cursor === "from") {
        throw new Error(
          `${svc.label} at ${svc.base} refused the page from channel ${seen} (HTTP 400): ` +
            `it ignores ~search_after, has no /scroll, and its Elasticsearch window ends there; ` +
            `upgrade ChannelFinder or raise its index.max_result_window`,
        );
      }
      throw e;
    }
  }

  #tooMany(n: number): Error {
    return new RangeError(
      `${this.#svc.label} at ${this.#svc.base} holds ${n} channels, more than ` +
        `[epics] index_max_channels = ${this.#max}; raise it to index them all`,
    );
  }
}

/** A ChannelFinder channel as the index holds it: recsync's recordDesc is its description. */
export function channelRecord(c: Channel): IndexRecord {
  const properties: Record<string, string> = {};
  for (const p of c.properties ?? []) {
    properties[p.name] = p.value === null || p.value === undefined ? "" : String(p.value);
  }
  const recordType = properties.recordType ?? "";
  return {
    name: c.name,
    description: properties.recordDesc ?? properties.description ?? properties.DESC ?? "",
    units: properties.EGU ?? properties.units ?? "",
    writable: OUTPUT_RECORDS.includes(recordType),
    properties,
    tags: (c.tags ?? []).map((t) => t.name),
  };
}

/**
 * Every PV the Archiver Appliance holds (`getMatchingPVs?pv=*`), in one list
 * read to at most `index_max_channels` + 1 names. The archiver knows no
 * descriptions, units or writability: records carry the name, the tag
 * `archived`, and `writable: false`.
 */
export class ArchiverSource implements RefreshingSource {
  readonly id: string;
  readonly refreshMs: number;
  readonly #svc: HttpService;
  readonly #max: number;

  constructor(svc: HttpService, o: Pick<EpicsIndexOptions, "maxChannels" | "refreshMs">) {
    this.#svc = svc;
    this.id = `epics:archiver:${svc.base}`;
    this.refreshMs = o.refreshMs;
    this.#max = o.maxChannels;
  }

  async *records(signal?: AbortSignal): AsyncIterable<IndexRecord[]> {
    const svc = this.#svc;
    const { body } = await httpRead(
      svc,
      `/bpl/getMatchingPVs${query({ pv: "*", limit: this.#max + 1 })}`,
      { signal },
      jsonListPage(svc, this.#max + 1),
    );
    const names = shaped(svc, MatchingPvsSchema, pageBody(body), "a list of PV names");
    if (names.length > this.#max || body.more) {
      throw new RangeError(
        `${svc.label} at ${svc.base} holds more than [epics] index_max_channels = ${this.#max} PVs; ` +
          `raise it to index them all`,
      );
    }
    names.sort();
    for (let i = 0; i < names.length; i += ARCHIVER_PAGE) {
      signal?.throwIfAborted();
      yield names.slice(i, i + ARCHIVER_PAGE).map((name) => ({
        name,
        description: "",
        units: "",
        writable: false,
        properties: {},
        tags: ["archived"],
      }));
    }
  }
}
