/**
 * An EPICS facility's namespace for the device index (`src/index/record.ts`):
 * every ChannelFinder channel with its properties and tags (spec §e), or,
 * without ChannelFinder, every PV the Archiver Appliance holds (spec §d.4).
 *
 * ChannelFinder is read in pages of `~size` channels sorted by name, the same
 * way its searches are (`cf_pages.ts`: the `~search_after` cursor, else
 * `/scroll/<last name>`, else `~from` inside Elasticsearch's window). Every page is read within `[epics] channelfinder_max_bytes` and at
 * most `~size` elements; the whole namespace is capped by
 * `[epics] index_max_channels`, checked against `channels/count` before the
 * first page and again as pages arrive. Property queries do not come here:
 * ChannelFinder stays the facility-wide engine for them (`channelfinder.ts`).
 *
 * @module
 */
import type { IndexRecord, IndexSource } from "../../index/record.ts";
import { httpRead, type HttpService, httpText, query } from "../http.ts";
import { jsonListPage, jsonReply, pageBody, shaped } from "../reply.ts";
import { OUTPUT_RECORDS } from "./channelfinder.ts";
import { type Channel, channelPages } from "./cf_pages.ts";
import { DESCRIPTION_KEYS, UNITS_KEYS } from "./cf_properties.ts";
import { CountSchema, MatchingPvsSchema } from "./shapes.ts";

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
    let seen = 0;
    for await (const channels of channelPages(svc, { "~name": "*" }, this.#page, signal)) {
      seen += channels.length;
      if (seen > this.#max) throw this.#tooMany(seen);
      yield channels.map(channelRecord);
    }
  }

  #tooMany(n: number): Error {
    return new RangeError(
      `${this.#svc.label} at ${this.#svc.base} holds ${n} channels, more than ` +
        `[epics] index_max_channels = ${this.#max}; raise it to index them all`,
    );
  }
}

/** The first non-empty of these properties ("" when none is). */
function firstOf(properties: Record<string, string>, keys: readonly string[]): string {
  for (const k of keys) {
    const v = properties[k]?.trim();
    if (v) return v;
  }
  return "";
}

/**
 * A ChannelFinder channel as the index holds it: recsync's recordDesc (or a
 * facility's own description property) is its description. Every property
 * and tag goes with it: the index reads them as the facility's own words.
 */
export function channelRecord(c: Channel): IndexRecord {
  const properties: Record<string, string> = {};
  for (const p of c.properties ?? []) {
    properties[p.name] = p.value === null || p.value === undefined ? "" : String(p.value);
  }
  const recordType = properties.recordType ?? "";
  return {
    name: c.name,
    description: firstOf(properties, DESCRIPTION_KEYS),
    units: firstOf(properties, UNITS_KEYS),
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
